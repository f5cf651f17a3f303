"""The byte buffer of the document fast path (:mod:`._docfast`): one reused buffer read block by
block, values found where msgspec says they end, and the per-block text checks."""

from __future__ import annotations

import codecs
import re

import msgspec

from passatk.archives.io.lines import needles_occur
from passatk.archives.io.opening import max_record_bytes, read_into

__all__ = ["Unproved"]

_BLANK = re.compile(rb"[ \t\r\n]*")
_TRAILING = re.compile(r"trailing characters \(byte (\d+)\)")


class Unproved(Exception):
    """The fast path cannot vouch for this document: the exact path reads it."""


class _Buffer:
    """The document's bytes from the member being walked on: ``data[:n]``, read block by
    block into one reused buffer (fresh memory for every block costs more than the parse)."""

    def __init__(self, stream, block: int) -> None:
        self.stream, self.block = stream, block
        self.data = bytearray()
        self.n = 0
        self.eof = False
        self.cap = max_record_bytes()

    def more(self, start: int, size: int = 0) -> None:
        """Read on (``size`` bytes, a block by default); Unproved at the end or past the
        record-length cap from ``start``."""
        if self.eof or self.n - start > self.cap + self.block:
            raise Unproved
        size = size or self.block
        if self.n + size > len(self.data):
            self.data.extend(bytes(self.n + size - len(self.data)))
        with memoryview(self.data) as whole, whole[self.n:self.n + size] as view:
            got = read_into(self.stream, view)
        if not got:
            self.eof = True
            raise Unproved
        self.n += got

    def skip(self, pos: int) -> int:
        """The first non-blank byte at or after ``pos``."""
        while True:
            end = _BLANK.match(self.data, pos, self.n).end()  # type: ignore[union-attr]
            if end < self.n:
                return end
            self.more(pos)

    def end(self, pos: int) -> int:
        """Where the JSON value at ``pos`` ends: its first non-blank byte after (msgspec)."""
        while True:
            error = None
            with memoryview(self.data) as whole, whole[pos:self.n] as view:
                try:
                    msgspec.json.decode(view, type=msgspec.Raw)
                except msgspec.DecodeError as e:
                    error = str(e)
            if error is not None:
                m = _TRAILING.search(error)
                if m:
                    return pos + int(m.group(1)) - 1
            # truncated, or malformed: more bytes may complete it; as many again as the
            # value has so far, so a large value is parsed a few times, not once per block
            self.more(pos, max(self.block, min(self.n - pos, self.cap)))

    def drop(self, pos: int) -> None:
        """Forget ``data[:pos]``; positions after it move down by ``pos``."""
        rest = self.n - pos
        self.data[:rest] = self.data[pos:self.n]
        self.n = rest

    def blank_to_end(self, pos: int) -> bool:
        return _BLANK.match(self.data, pos, self.n).end() == self.n  # type: ignore[union-attr]

    def check_text(self, start: int, end: int, needles: dict[bytes, int] | None) -> None:
        """UTF-8 (as the exact path decodes it) and the field-name counts of ``[start, end)``."""
        import numpy as np

        if np.frombuffer(self.data, np.uint8, end - start, start).max(initial=0) >= 128:
            with memoryview(self.data) as whole, whole[start:end] as view:
                try:
                    codecs.utf_8_decode(view, "strict", True)
                except UnicodeDecodeError:
                    raise Unproved from None
        if needles and not needles_occur(self.data, needles, start, end):
            raise Unproved


class Summary:
    """What the fast pass found in the per-task container, for one reader (``kind``)."""

    kind = ""
    pieces = False  # members small enough to decode many at a time (see _docpieces)

    def __init__(self) -> None:
        self.rows: list[tuple[str, int, int, int]] = []  # (task, n, c, plus c)
        self.expected: dict[bytes, int] = {}

    def count(self, name: bytes, times: int) -> None:
        self.expected[name] = self.expected.get(name, 0) + times

    def finish(self) -> None:
        """Checks that need the whole container (none but EvalPlus v1's)."""

    def decoded(self) -> int:
        """How many members of an object were decoded so far (see _docpieces), if counted."""
        return -1

    def piece_members(self, data: bytearray, start: int, end: int, before: int) -> int:
        """How many members the piece ``data[start:end]`` of an object holds (``before``:
        :meth:`decoded` before it was decoded); -1 when it cannot be told."""
        return -1 if before < 0 else self.decoded() - before
