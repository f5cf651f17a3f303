"""Streaming whole JSON documents: split at member boundaries, decode one member at a time.

A results document such as EvalPlus's ``{"eval": {"T/0": [...], ...}, "pass_at_k": {...}}``
can hold gigabytes under one key. :func:`split_document` reads the (decompressed) bytes in
blocks and cuts them, without decoding, into the members of the top-level container and of
the containers under :data:`STREAM_KEYS`; each member is a :class:`Member` of raw bytes that
any JSON decoder can decode alone (:func:`decode_member` uses the stdlib). Memory is the
largest member (at most the record-length cap), not the document.

The cut is found by a vectorized scan (numpy) for the structural bytes ``{ } [ ] , :``
outside strings: a quote is a string delimiter unless an odd run of backslashes precedes it,
and the string state and depth carry from block to block. Correctness does not rest on the
scan alone: every member is decoded on its own and must hold exactly one value, the bytes
between members must be a single comma, and only whitespace may follow the document, so a
malformed document is an error, never a different valid one.

:func:`load_document` returns a *skeleton* for detection and the readers: the top-level
object with its small members decoded, and each streamed container as a
:class:`StreamedDict` or :class:`StreamedList` that holds its first member and reads all of
them from the file again, one at a time, when iterated.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

import numpy as np

from passatk.archives.errors import ArchiveError
from passatk.archives.io.opening import UTF8_BOM, max_record_bytes, open_binary, too_long

__all__ = ["STREAM_KEYS", "Member", "decode_member", "load_document", "split_document"]

#: top-level keys whose container is streamed member by member (the per-task data)
STREAM_KEYS = frozenset({"eval", "details", "raw_scored_generations", "results",
                         "simulations", "samples"})  # tau2-bench, Inspect AI logs
BLOCK = 1 << 20  # the scan's temporaries are a few times this

_OPEN, _CLOSE, _COMMA, _COLON = 1, 2, 3, 4
_KIND = np.zeros(256, dtype=np.int8)
_KIND[[ord("{"), ord("[")]] = _OPEN
_KIND[[ord("}"), ord("]")]] = _CLOSE
_KIND[ord(",")] = _COMMA
_KIND[ord(":")] = _COLON
_WS = b" \t\r\n"
_BLANK = re.compile(rb"[ \t\r\n]*")


class Member(NamedTuple):
    """One member of a container: ``"key": value`` bytes (object) or ``value`` bytes (array).

    ``path`` is the container's place: ``()`` for the top level, ``(key,)`` for a streamed
    container under the top-level ``key``; ``index`` counts members from 0; ``line`` is the
    1-based line where the member starts. A member with ``text=None`` opens a container
    (``kind`` "object" or "array"), and one with ``kind="value"`` is a whole document that
    is not a container.
    """

    path: tuple
    kind: str
    text: bytes | None
    index: int
    line: int


class _Scanner:
    """Structural bytes outside strings, block by block: (position, kind, depth before)."""

    def __init__(self) -> None:
        self.in_string = False
        self.backslashes = 0  # backslashes at the end of the previous block
        self.depth = 0

    def scan(self, block: bytes, offset: int, max_depth: int):
        a = np.frombuffer(block, dtype=np.uint8)
        quotes = self._real_quotes(a, np.flatnonzero(a == 34))
        end = len(block)
        while end and block[end - 1] == 92:
            end -= 1
        self.backslashes = len(block) - end + (self.backslashes if end == 0 else 0)
        struct = np.flatnonzero(_KIND[a])
        inside = (np.searchsorted(quotes, struct) + self.in_string) % 2 == 1
        struct = struct[~inside]
        self.in_string = bool((quotes.size + self.in_string) % 2)
        kind = _KIND[a[struct]]
        delta = (kind == _OPEN).astype(np.int64) - (kind == _CLOSE)
        after = self.depth + np.cumsum(delta)
        before = after - delta
        if after.size:
            self.depth = int(after[-1])
        keep = np.where(kind == _OPEN, before < max_depth,
                        np.where(kind == _CLOSE, after < max_depth, before <= max_depth))
        return (struct[keep] + offset).tolist(), kind[keep].tolist(), before[keep].tolist()


    def _real_quotes(self, a: np.ndarray, quotes: np.ndarray) -> np.ndarray:
        """The quotes not escaped by an odd run of backslashes (runs may span blocks)."""
        before = quotes - 1
        cand = np.flatnonzero(a[np.maximum(before, 0)] == 92) if quotes.size else quotes
        if quotes.size and quotes[0] == 0 and self.backslashes:
            cand = np.union1d(cand, [0])
        if not cand.size:
            return quotes
        run = np.zeros(cand.size, dtype=np.int64)
        active, k = np.arange(cand.size), 1
        while active.size:
            pos = quotes[cand[active]] - k
            inside = pos >= 0
            more = inside & (a[np.maximum(pos, 0)] == 92)
            run[active[more]] += 1
            run[active[~inside]] += self.backslashes  # the run continues in the last block
            active = active[more]
            k += 1
        keep = np.ones(quotes.size, dtype=bool)
        keep[cand[run % 2 == 1]] = False
        return quotes[keep]


class _Buffer:
    """The bytes from the start of the member being cut, with line numbers."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.data = bytearray()
        self.start = 0  # absolute offset of data[0]
        self.line = 1  # line of data[0]
        self.cap = max_record_bytes()

    def text(self, begin: int, end: int) -> bytes:
        return bytes(self.data[begin - self.start:end - self.start])

    def line_at(self, offset: int) -> int:
        """The line of the first non-blank byte at or after ``offset``."""
        at = offset - self.start
        blank = _BLANK.match(self.data, at)
        return self.line + self.data.count(b"\n", 0, blank.end() if blank else at)

    def drop(self, offset: int) -> None:
        cut = offset - self.start
        self.line += self.data.count(b"\n", 0, cut)
        del self.data[:cut]
        self.start = offset

    def check(self, member_start: int) -> None:
        if self.start + len(self.data) - member_start > self.cap:
            raise too_long(self.file, self.line_at(member_start), self.cap)


def split_document(file: str, stream_keys: frozenset[str] = STREAM_KEYS) -> Iterator[Member]:
    """Yield the members of a JSON document (see :class:`Member`), reading it once.

    Raises
    ------
    ArchiveError
        For malformed structure, a member longer than the record-length cap, or bad
        compressed data.
    """
    with open_binary(file) as f:
        buf = _Buffer(file)
        head = _head(f.stream, file)
        first = head.lstrip(_WS)[:1]
        if first not in (b"{", b"["):
            buf.data += head
            while more := f.stream.read(BLOCK):
                buf.data += more
                buf.check(0)
            yield Member((), "value", bytes(buf.data), 0, 1)
            return
        cutter = _Cutter(buf, stream_keys, 2 if first == b"{" else 1)
        scanner = _Scanner()
        offset = 0
        block = head
        while block:
            buf.data += block
            yield from cutter.feed(*scanner.scan(block, offset, cutter.max_depth))
            offset += len(block)
            buf.check(cutter.member_start)
            block = f.stream.read(BLOCK)
        cutter.finish(offset)


def _head(stream, file: str) -> bytes:
    """The first block, extended past leading whitespace; without a UTF-8 BOM."""
    head = stream.read(max(BLOCK, 3))
    while head and not head.removeprefix(UTF8_BOM).strip(_WS):
        more = stream.read(BLOCK)
        if not more:
            break
        head += more
    head = head.removeprefix(UTF8_BOM)
    if not head.strip(_WS):
        raise ArchiveError(file, "empty file (no records)")
    return head


class _Cutter:
    """The state machine over structural tokens of depth <= 2."""

    def __init__(self, buf: _Buffer, stream_keys: frozenset[str], max_depth: int) -> None:
        self.buf, self.stream_keys, self.max_depth = buf, stream_keys, max_depth
        self.member_start = 0
        self.streaming: tuple | None = None  # path of the streamed container being cut
        self.index = {(): 0}
        self.kinds: dict[tuple, str] = {}
        self.key_end = -1  # position of the top-level member's colon
        self.tail_from = -1  # after a streamed container, where its member's tail starts
        self.done = -1

    def feed(self, positions, kinds, depths) -> Iterator[Member]:
        for pos, kind, depth in zip(positions, kinds, depths, strict=True):
            if self.done >= 0:
                self._bad(pos, "extra data after the JSON document")
            if depth == 0:
                if kind != _OPEN or pos != self._first_byte():
                    self._bad(pos, "malformed JSON document")
                self.kinds[()] = "object" if self.buf.data[pos - self.buf.start] == 123 \
                    else "array"
                yield Member((), self.kinds[()], None, 0, 1)
                self.member_start = pos + 1
            elif kind == _CLOSE and depth == 1:
                self._match(pos, ())
                yield from self._end_member(pos, ())
                self.done = pos
            elif depth == 1 and kind == _COMMA:
                yield from self._end_member(pos, ())
            elif depth == 1 and kind == _COLON and self.key_end < 0:
                self.key_end = pos
            elif depth == 1 and kind == _OPEN:
                yield from self._maybe_stream(pos)
            elif depth == 2 and self.streaming is not None:
                if kind == _CLOSE:
                    self._match(pos, self.streaming)
                if kind in (_COMMA, _CLOSE):
                    yield from self._end_member(pos, self.streaming)
                if kind == _CLOSE:
                    self.streaming = None
                    self.tail_from = pos + 1  # only whitespace may follow, up to ',' or '}'

    def _match(self, pos: int, path: tuple) -> None:
        closer = self.buf.data[pos - self.buf.start]
        if closer != (125 if self.kinds[path] == "object" else 93):
            self._bad(pos, f"malformed JSON: {chr(closer)!r} closes an {self.kinds[path]}")

    def _first_byte(self) -> int:
        data = self.buf.data
        return self.buf.start + len(data) - len(data.lstrip(_WS))

    def _maybe_stream(self, pos: int) -> Iterator[Member]:
        if self.kinds[()] != "object" or self.key_end < 0:
            return
        gap = self.buf.text(self.key_end + 1, pos)
        if gap.strip(_WS):
            return  # the colon is not directly before this container: a nested one
        key = _decode_key(self.buf, self.member_start, self.key_end)
        if key not in self.stream_keys:
            return
        path = (key,)
        self.streaming = path
        self.index[path] = 0
        self.kinds[path] = "object" if self.buf.data[pos - self.buf.start] == 123 else "array"
        yield Member(path, self.kinds[path], None, 0, self.buf.line_at(pos))
        self.member_start = pos + 1
        self.buf.drop(pos + 1)

    def _end_member(self, pos: int, path: tuple) -> Iterator[Member]:
        start = self.member_start
        self.key_end = -1 if path == () else self.key_end
        if path == () and self.tail_from >= 0:  # the end of a streamed container's member
            if self.buf.text(self.tail_from, pos).strip(_WS):
                self._bad(self.tail_from, "malformed JSON: expected ',' or '}' after a value")
            self.tail_from = -1
            self.index[()] += 1
            self.member_start = pos + 1
            self.buf.drop(pos + 1)
            return
        if pos - start > self.buf.cap:
            raise too_long(self.buf.file, self.buf.line_at(start), self.buf.cap)
        text = self.buf.text(start, pos)
        empty = not text.strip(_WS)
        closing = self.buf.data[pos - self.buf.start] in b"}]"
        if empty and closing and self.index[path] == 0:
            pass  # an empty container
        elif empty:
            self._bad(pos, "malformed JSON: an empty element before ',' or the end")
        else:
            yield Member(path, self.kinds[path], text, self.index[path], self.buf.line_at(start))
            self.index[path] += 1
        self.member_start = pos + 1
        self.buf.drop(pos + 1)

    def finish(self, end: int) -> None:
        if self.done < 0:
            raise ArchiveError(self.buf.file, "malformed JSON: the document ends before it is "
                               "complete (a truncated file?)", line=self.buf.line_at(end))
        rest = self.buf.text(self.done + 1, end)
        if rest.strip(_WS):
            self._bad(self.done + 1, "extra data after the JSON document")

    def _bad(self, pos: int, what: str) -> None:
        raise ArchiveError(self.buf.file, what, line=self.buf.line_at(max(pos, self.buf.start)))


def _decode_key(buf: _Buffer, start: int, colon: int) -> str:
    from passatk.archives.context import BadRecord, decode_json

    try:
        key = decode_json(buf.text(start, colon))
    except BadRecord as e:
        raise ArchiveError(buf.file, e.what, line=buf.line_at(start)) from None
    if not isinstance(key, str):
        raise ArchiveError(buf.file, "malformed JSON: an object key must be a string",
                           line=buf.line_at(start))
    return key


def decode_member(file: str, member: Member) -> tuple[object, object]:
    """``(key or index, value)`` of one member, decoded alone (duplicate keys refused)."""
    from passatk.archives.context import BadRecord, decode_json

    if member.kind == "value":
        wrapped = member.text
    elif member.kind == "object":
        wrapped = b"{" + member.text + b"}"
    else:
        wrapped = b"[" + member.text + b"]"
    try:
        value = decode_json(wrapped)
    except BadRecord as e:
        text = member.text
        first = member.line - text[:len(text) - len(text.lstrip(_WS))].count(b"\n")
        raise ArchiveError(file, e.what, line=first + (e.line or 1) - 1) from None
    if member.kind == "value":
        return None, value
    if len(value) != 1:
        raise ArchiveError(file, "malformed JSON: expected one member between commas",
                           line=member.line)
    if member.kind == "object":
        return next(iter(value.items()))
    return member.index, value[0]


class StreamedDict(dict):
    """A streamed JSON object: holds its first member; ``items()``, ``values()``, ``keys()``
    and iteration read every member from the file, one at a time (duplicate keys refused).

    A top level larger than the record-length cap is one too (``path == ()``): it holds the
    members read before the cap was reached, and its ``items()`` gives every member that is
    not a streamed container."""

    def __init__(self, file: str, path: tuple) -> None:
        super().__init__()
        self.file, self.path = file, path

    def items(self):  # type: ignore[override]
        seen: set[str] = set()
        for m in split_document(self.file):
            if m.path == self.path and m.text is not None:
                key, value = decode_member(self.file, m)
                if key in seen:
                    raise ArchiveError(self.file, f"duplicate key {key!r} in "
                                       f"{_where(self.path)} (which one counts is ambiguous)",
                                       line=m.line)
                seen.add(key)
                yield key, value

    def values(self):  # type: ignore[override]
        return (v for _, v in self.items())

    def keys(self):  # type: ignore[override]
        return (k for k, _ in self.items())

    def __iter__(self):
        return self.keys()


class StreamedList(list):
    """A streamed JSON array: holds its first item; iteration reads every item from the file."""

    def __init__(self, file: str, path: tuple) -> None:
        super().__init__()
        self.file, self.path = file, path

    def __iter__(self):
        for m in split_document(self.file):
            if m.path == self.path and m.text is not None:
                yield decode_member(self.file, m)[1]


def _where(path: tuple) -> str:
    return "the top level" if not path else f"$.{path[0]}"


def load_document(file: str) -> object:
    """The skeleton of a JSON document (see the module docstring), read in one pass."""
    top: object = None
    budget = max_record_bytes()  # the decoded top level holds no more than one record's bytes
    for m in split_document(file):
        if m.kind == "value":
            return decode_member(file, m)[1]
        if m.text is None:
            container = (StreamedDict if m.kind == "object" else StreamedList)(file, m.path)
            if m.path == ():
                top = container if m.kind == "array" else {}
            elif m.path[0] in top:  # type: ignore[operator]
                raise ArchiveError(file, f"duplicate key {m.path[0]!r} at the top level (which "
                                   "one counts is ambiguous)", line=m.line)
            else:
                top[m.path[0]] = container  # type: ignore[index]
            continue
        if m.path == () and isinstance(top, dict):
            budget -= len(m.text)
            if budget < 0:  # a big top level (code_eval: task -> samples): stream it too
                lazy = StreamedDict(file, ())
                dict.update(lazy, top)
                return lazy
            key, value = decode_member(file, m)
            if key in top:
                raise ArchiveError(file, f"duplicate key {key!r} at the top level (which one "
                                   "counts is ambiguous)", line=m.line)
            top[key] = value
        else:
            holder = top if m.path == () else top[m.path[0]]  # type: ignore[index]
            if m.index == 0:
                key, value = decode_member(file, m)
                if isinstance(holder, dict):
                    dict.__setitem__(holder, key, value)
                else:
                    list.append(holder, value)
    return top
