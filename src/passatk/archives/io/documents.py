"""Whole JSON documents by msgspec: read whole up to a size threshold (a format's typed view
first), streamed member by member past it, parsed once (docs/architecture.md)."""

from __future__ import annotations

import collections
import contextlib
import itertools
import json
import os
import re
import tempfile
import weakref
from collections.abc import Callable, Iterator
from typing import IO, NamedTuple

import msgspec

from passatk.archives.context import BadRecord, decode_json
from passatk.archives.errors import ArchiveError
from passatk.archives.io import opening
from passatk.archives.io.remote import is_url

__all__ = ["GENERIC_BYTES", "STREAM_KEYS", "WHOLE_BYTES", "StreamedDict", "StreamedList",
           "Typed", "decode", "load", "members"]

#: the largest document read whole for a typed view (bench: typed decode peaks near 1.2x it)
WHOLE_BYTES = 128 << 20
#: the largest document decoded whole to plain values (those take about 3x the bytes)
GENERIC_BYTES = 48 << 20
#: top-level keys whose container is streamed member by member (the per-task data)
STREAM_KEYS = frozenset({"eval", "details", "raw_scored_generations", "results",
                         "simulations", "samples"})
BLOCK = 1 << 22
#: members of a streamed container whose place the first pass keeps (about 100 bytes each),
#: so that the reader decodes them without splitting the document again; past it, it does
INDEXED = 1 << 17
BOM = opening.UTF8_BOM
_BLANK = re.compile(rb"[ \t\r\n]*")
_STDLIB = json.JSONDecoder()
_AT_BYTE = re.compile(r"\(byte (\d+)\)")


class Typed(NamedTuple):
    """A document decoded by the typed view of the format ``format``."""

    format: str
    view: object


def decode(file: str, data: bytes | memoryview, offset: int | None = None) -> object:
    """Plain values of one JSON text (msgspec; ``json`` for NaN and to word an error)."""
    try:
        return msgspec.json.decode(data)
    except (msgspec.DecodeError, RecursionError):  # (not contextlib.suppress: 3x the cost)
        pass
    try:
        return decode_json(data, bom=False)
    except BadRecord as e:
        line = line_of(file, offset) if offset is not None else 1
        raise ArchiveError(file, e.what, line=line + (e.line or 1) - 1) from None


def line_of(file: str, offset: int) -> int:
    """The line of the byte at ``offset`` of the text after a BOM (the document read again:
    errors only)."""
    with _open(file) as f:
        block = f.stream.read(len(BOM)).removeprefix(BOM)
        line, seen = 1 + block[:offset].count(b"\n"), len(block)
        while seen < offset and (block := f.stream.read(min(BLOCK, offset - seen))):
            line += block.count(b"\n")
            seen += len(block)
    return line


def load(file: str, views: tuple[tuple[str, Callable[[bytes], object]], ...] = ()) -> object:
    """The document of ``file``: a :class:`Typed` view (``views``: (format, decode or None)
    pairs tried in turn), plain values, or a streamed skeleton (past the size thresholds)."""
    cap = opening.max_record_bytes()
    whole, generic = min(WHOLE_BYTES, 2 * cap), min(GENERIC_BYTES, cap)
    local = opening.is_regular(file) and not is_url(file)
    if local and os.path.getsize(file) > whole:
        return _skeleton(file)  # (compressed, it is larger still)
    if (data := _mapped(file) if local else None) is None:
        with opening.open_binary(file) as f:
            data = f.stream.read(whole + 1)  # a buffered stream: short only at its end
            if len(data) > whole and not opening.is_regular(file):
                return _spooled(file, f.stream, data)
        data = data.removeprefix(BOM) if len(data) <= whole else data
    if len(data) <= whole:
        if _BLANK.fullmatch(data):
            raise ArchiveError(file, "empty file (no records)")
        for name, view in views:
            if (value := view(data)) is not None:
                return Typed(name, value)
        if len(data) <= generic:
            return decode(file, data)
    del data
    return _skeleton(file)


def _mapped(file: str) -> opening.Mapped | None:
    """A local uncompressed file without a BOM, mapped (bench: a 114 MB document decodes in
    0.13 s of CPU instead of the 0.20 s of read() and decode)."""
    with opening.open_binary(file) as f:
        data = opening.mapped(f)
    return None if data is None or data[:len(BOM)] == BOM else data


class _Cursor:
    """A document's bytes from the value being read on (each block also written to ``copy``)."""

    def __init__(self, file: str, stream, head: bytes = b"", copy=None) -> None:
        self.file, self.stream, self.copy = file, stream, copy
        self.data = (head or stream.read(BLOCK)).removeprefix(BOM)  # data[0] is at base
        self.pos = self.base = 0
        self.eof, self.cap = False, opening.max_record_bytes()

    def more(self, size: int = 0) -> bool:
        if self.eof or not (block := self.stream.read(size or BLOCK)):
            self.eof = True
            return False
        if self.copy is not None:
            self.copy.write(block)
            self.copy.flush()  # an error's line is counted in what was written
        if self.pos:  # forget what was read
            self.base += self.pos
            self.data = self.data[self.pos:]
            self.pos = 0
        self.data += block
        return True

    @property
    def offset(self) -> int:
        return self.base + self.pos

    def peek(self) -> bytes:
        """The next non-blank byte (b"" at the end), not consumed."""
        while True:
            self.pos = _BLANK.match(self.data, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.data) or not self.more():
                return self.data[self.pos:self.pos + 1]

    def expect(self, allowed: bytes) -> bytes:
        if not (got := self.peek()) or got not in allowed:
            what = "the end of the file" if not got else repr(got.decode("latin-1"))
            self.bad(f"expected one of {' '.join(allowed.decode())}, got {what}")
        self.pos += 1
        return got

    def value(self) -> memoryview:
        """The bytes of the next JSON value (where it ends: msgspec, or the stdlib for NaN)."""
        self.peek()
        while (end := self._end(view := memoryview(self.data)[self.pos:])) is None:
            if len(view) > self.cap or self.eof:
                break
            self.more(max(BLOCK, len(view)))
        if end is None and len(view) <= self.cap:  # at the end of the file
            decode(self.file, view, offset=self.offset)  # raises unless it is whole
            end = len(view)
        if end is None or end > self.cap:
            raise opening.too_long(self.file, line_of(self.file, self.offset), self.cap)
        self.pos += end
        return view[:end]

    def take(self, at: int, size: int) -> memoryview:
        """The ``size`` bytes at offset ``at`` (on from the last taken)."""
        while True:
            self.pos = min(at - self.base, len(self.data))
            if self.base + len(self.data) >= at + size or not self.more():
                break
        self.pos += size
        return memoryview(self.data)[self.pos - size:self.pos]

    def _end(self, view: memoryview) -> int | None:
        """Where the value at the start of ``view`` ends; None when more bytes are needed."""
        try:
            msgspec.json.decode(view, type=msgspec.Raw)
            return None if not self.eof else len(view)  # a number may go on
        except msgspec.DecodeError as e:
            error = str(e)
        except RecursionError:
            raise ArchiveError(self.file, "JSON nested too deeply",
                               line=line_of(self.file, self.offset)) from None
        if (m := _AT_BYTE.search(error)) and "trailing characters" in error:
            return int(m.group(1)) - 1
        far = m is not None and int(m.group(1)) + 64 < len(view)
        if "truncated" in error or not (self.eof or far):
            return None  # more bytes may complete it
        text = bytes(view).decode("utf-8", "surrogateescape")
        try:
            end = _STDLIB.raw_decode(text)[1]
        except (ValueError, RecursionError) as e:  # msgspec refused early (a lone surrogate):
            if isinstance(e, json.JSONDecodeError) and not self.eof and (  # the stdlib needs more
                    e.msg.startswith("Unterminated string") or e.pos + 64 >= len(text)):
                return None
            decode(self.file, view, offset=self.offset)  # the stdlib words the error
            raise
        return len(text[:end].encode("utf-8", "surrogateescape"))

    def bad(self, what: str, at: int | None = None):
        raise ArchiveError(self.file, f"malformed JSON: {what}",
                           line=line_of(self.file, self.offset if at is None else at))


class Member(NamedTuple):
    """A member of the top level (``path`` ()) or of a streamed container (``(its key,)``); no
    ``text`` when it is a container (of ``kind``) that opens."""

    path: tuple
    key: object
    text: memoryview | None
    offset: int
    kind: str = "value"


def _container(cur: _Cursor, path: tuple, key: object, at: int) -> Iterator[Member]:
    """The container at ``cur``: its Member without text, then each of its members."""
    is_object = cur.expect(b"{[") == b"{"
    yield Member(path, key, None, at, "object" if is_object else "array")
    path, close = () if key is None else (key,), b"}" if is_object else b"]"
    if cur.peek() == close:
        cur.pos += 1
        return
    for index in itertools.count():
        cur.peek()
        at = cur.offset
        key = decode(cur.file, cur.value(), offset=at) if is_object else index
        if is_object and not isinstance(key, str):
            cur.bad("an object key must be a string", at)
        if is_object:
            cur.expect(b":")
        start, at = cur.peek(), cur.offset
        if path == () and key in STREAM_KEYS and start in (b"{", b"["):
            yield from _container(cur, path, key, at)
        else:
            yield Member(path, key, cur.value(), at)
        if cur.expect(b"," + close) == close:
            return


def members(file: str, cur: _Cursor | None = None) -> Iterator[Member]:
    """Every member of the top level and of its streamed containers, in one pass (of ``cur``
    when given); first ``Member((), None, None, 0, kind)`` for an object or an array, or
    ``Member((), None, text, 0)`` for a scalar document."""
    if cur is None:
        with _open(file) as f:
            yield from members(file, _Cursor(file, f.stream))
        return
    if not (first := cur.peek()):
        raise ArchiveError(file, "empty file (no records)")
    if first in (b"{", b"["):
        yield from _container(cur, (), None, 0)
    else:
        text = cur.value()
    if cur.peek():
        cur.bad("extra data after the JSON document")
    if first not in (b"{", b"["):
        yield Member((), None, text, 0)


class _Streamed:
    """The container under the top-level ``key`` (None: the top level), member by member."""

    index: list | None = None  # None: they are split again

    def __init__(self, file: str, key: str | None) -> None:
        self.file, self.path = file, () if key is None else (key,)

    def _members(self) -> Iterator[Member]:
        if self.index is None:
            yield from (m for m in members(self.file) if m.path == self.path and m.text)
            return
        with _open(self.file) as f:
            cur = _Cursor(self.file, f.stream)
            for key, at, size in self.index:
                yield Member(self.path, key, cur.take(at, size), at)


class StreamedDict(_Streamed, dict):
    """A streamed JSON object: holds its first member; ``items()``, ``values()``, ``keys()``
    and iteration read every member, one at a time. ``typed(T)`` gives each value decoded as
    the msgspec type ``T``, or its plain value when it is not one."""

    def typed(self, typ: object) -> Iterator[tuple[object, object]]:
        decoder = msgspec.json.Decoder(typ)
        for m in self._members():
            try:
                yield m.key, decoder.decode(m.text)
            except (msgspec.DecodeError, RecursionError):  # NaN, a bad record: plain values
                yield m.key, decode(self.file, m.text, m.offset)

    def items(self):  # type: ignore[override]
        return ((m.key, decode(self.file, m.text, m.offset)) for m in self._members())

    def values(self):  # type: ignore[override]
        return (v for _, v in self.items())

    def keys(self):  # type: ignore[override]
        return (k for k, _ in self.items())

    __iter__ = keys


class StreamedList(_Streamed, list):
    """A streamed JSON array: holds its first item; iteration reads every item."""

    def __iter__(self):
        return (decode(self.file, m.text, m.offset) for m in self._members())


_SPOOLS: dict[str, IO[bytes]] = {}  # a pipe's name -> the temporary file its document went to


class _Reread:
    """A spooled document read from its start (``os.pread``: reads share no offset)."""

    def __init__(self, spool) -> None:
        self.fd, self.pos, self.stream = spool.fileno(), 0, self

    def read(self, size: int) -> bytes:
        self.pos += len(data := os.pread(self.fd, size, self.pos))
        return data


def _open(file: str):
    if (spool := _SPOOLS.get(file)) is None or spool.closed:
        return opening.open_binary(file)
    return contextlib.nullcontext(_Reread(spool))


def _spooled(file: str, stream, head: bytes) -> object:
    """A pipe's document past the threshold, copied to a temporary file as it is checked."""
    with contextlib.ExitStack() as stack:
        spool = _SPOOLS[file] = stack.enter_context(tempfile.TemporaryFile())
        spool.write(head)
        found = members(file, _Cursor(file, stream, head, spool))
        top = _skeleton(file, found)
        collections.deque(found, maxlen=0)  # the rest, checked, into the copy
        if isinstance(top, (dict, list)):  # the copy goes with the document (a scalar: now)
            weakref.finalize(top, stack.pop_all().close)
    return top


class _Skeleton(dict):
    """The top level of a streamed document (a dict that can be referred to weakly)."""


def _skeleton(file: str, found: Iterator[Member] | None = None) -> object:
    """The top level, its small members decoded, its per-task containers streamed (holding
    their first member, for detection; indexed, for the reader). A top level larger than the
    record cap (code_eval: task -> samples) is a StreamedDict of the top level."""
    if (first := next(found := members(file) if found is None else found)).text is not None:
        return decode(file, first.text, first.offset)  # a scalar
    if first.kind == "array":
        items = StreamedList(file, None)
        if (m := next(found, None)) is not None:
            list.append(items, decode(file, m.text, m.offset))
        return items
    top, budget = _Skeleton(), opening.max_record_bytes()
    places: dict = {}  # a streamed key -> (its container, its index)
    for m in found:
        if m.text is None:  # a streamed container opens
            top[m.key] = (StreamedDict if m.kind == "object" else StreamedList)(file, m.key)
            places[m.key] = (top[m.key], [])
        elif m.path == ():
            if (budget := budget - len(m.text)) < 0:
                dict.update(lazy := StreamedDict(file, None), top)
                return lazy
            top[m.key] = decode(file, m.text, m.offset)
        else:
            _place(file, places, m)
    for holder, index in places.values():
        holder.index = index
    return top


def _place(file: str, places: dict, m: Member) -> None:
    holder, index = places[m.path[0]]
    if not holder and isinstance(holder, dict):
        dict.__setitem__(holder, m.key, decode(file, m.text, m.offset))
    elif not holder:
        list.append(holder, decode(file, m.text, m.offset))
    if index is not None:
        index.append((m.key, m.offset, len(m.text)))  # type: ignore[arg-type]
        if len(index) > INDEXED:
            places[m.path[0]] = (holder, None)

