"""Many members of a whole-document container in one typed decode (see ``_docfast``).

The container walkers of ``_docfast`` read a member at a time; for summaries of small members
(``Summary.pieces``) they hand the bytes already read to :class:`Pieces`, which decodes all
the members up to the last separator that proves as one array or object.
"""

from __future__ import annotations

from typing import Any

import msgspec

from passatk.archives.io.docbuffer import Summary, Unproved, _Buffer
from passatk.archives.io.lines import decoder

__all__ = ["Pieces"]


class Pieces:
    """Many members of a container in one typed decode, for summaries of small members
    (``Summary.pieces``), found as ``_docfast._Batch`` finds tau-bench trials: the bytes between
    the first two members are searched for from the end of the buffer, and a cut there that
    decodes is a true boundary. In an object msgspec keeps the last of two equal keys, so its
    members are counted (``Summary.piece_members``: a ``__post_init__`` of each, or the quotes
    of a piece whose only strings are its keys): a count that differs from the keys decoded is
    a duplicate."""

    TRIES = 4

    def __init__(self, summary: Summary, sep: bytes, keyed: bool) -> None:
        self.summary, self.sep, self.keyed = summary, sep, keyed
        self.close_at = len(sep) - len(sep.lstrip(b" \t\r\n"))
        schema = summary.schema  # type: ignore[attr-defined]
        self.decoder = decoder(dict[str, schema] if keyed else list[schema])
        self.until = -1  # no piece up to this position (after one that did not prove)
        self.index = 0

    @classmethod
    def learned(cls, summary: Summary, buf: _Buffer, sep: int, keyed: bool) -> Pieces | None:
        """The pieces reader with the separator after the first member (``sep``: its ``,``),
        or None (no separator, another layout, a summary of large members)."""
        if buf.data[sep] != 44:
            return None
        close = sep - 1
        while close > 0 and buf.data[close] in b" \t\r\n":
            close -= 1
        nxt = buf.skip(sep + 1)
        if buf.data[close] not in b"}]" or buf.data[nxt] != (34 if keyed else 123):
            return None
        begin = close
        while begin > 0 and buf.data[begin - 1] in b" \t":
            begin -= 1
        if begin > 0 and buf.data[begin - 1] == 10:
            begin -= 1 + (begin > 1 and buf.data[begin - 2] == 13)
        return cls(summary, bytes(buf.data[begin:nxt + 1]), keyed)

    def read(self, buf: _Buffer, pos: int, seen: Any) -> int:
        """Read the members from ``pos`` up to the last separator that proves; return where
        the next member starts (``pos`` when none did: those go one at a time). ``seen``: the
        keys so far (an object), or the index of the member at ``pos`` (an array)."""
        if not self.keyed:
            self.index = seen
        limit = buf.n
        for _ in range(self.TRIES):
            cut = buf.data.rfind(self.sep, pos, limit)
            if cut < 0:
                return pos
            limit = cut + len(self.sep) - 1
            close = cut + self.close_at
            if close + 1 - pos > buf.cap:
                continue
            before = self.summary.decoded() if self.keyed else 0
            try:
                members = self._decode(buf.data, pos, close)
            except msgspec.ValidationError:
                break
            except msgspec.DecodeError:
                continue  # not a boundary: an earlier one
            if self.keyed and self.summary.piece_members(
                    buf.data, pos, close + 1, before) != len(members):
                raise Unproved  # a key twice in the piece (or no proof that none is)
            self._add(members, seen)
            return cut + len(self.sep) - 1
        else:
            self.until = 1 << 62  # separators that do not cut: one at a time from now
            return pos
        self.until = close + 1  # these one at a time, then pieces again
        return pos

    def _decode(self, data: bytearray, pos: int, close: int) -> Any:
        """Decode ``data[pos:close + 1]`` as one object or array, in place (see
        ``_docfast._batch_fields``)."""
        saved = data[pos - 1], data[close + 1]
        data[pos - 1], data[close + 1] = (123, 125) if self.keyed else (91, 93)
        try:
            with memoryview(data) as whole, whole[pos - 1:close + 2] as view:
                return self.decoder.decode(view)
        finally:
            data[pos - 1], data[close + 1] = saved

    def _add(self, members: Any, seen: Any) -> None:
        summary = self.summary
        if not self.keyed:
            for i, member in enumerate(members, seen):
                summary.add(i, member)  # type: ignore[attr-defined]
            self.index = seen + len(members)
            return
        for key, member in members.items():
            if key in seen:
                raise Unproved
            seen.add(key)
            summary.add(key, member)  # type: ignore[attr-defined]
