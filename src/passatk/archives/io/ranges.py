"""Byte ranges of line-oriented files, cut at line boundaries.

A range ``[start, end)`` of a file owns the lines that *start* in it. Line starts are byte 0
and every byte after a newline, so with ``ls(x)`` the first line start at or after ``x`` (the
file size when there is none) a range reads the bytes ``[ls(start), ls(end))``. Ranges that
tile the file therefore read every line exactly once, whatever the cut points, and a line
longer than a range belongs to the range where it starts (the others read nothing). A line
number within a range becomes a line number of the file by adding the newlines before the
range's first line start (``LineRange.first``); they are counted only when a line number is
needed (:func:`newlines_before`), not while reading.

The pipeline reads the ranges that :mod:`passatk.archives.engine.plan` cuts; nothing here
depends on either.
"""

from __future__ import annotations

import io
from typing import Any

from passatk.archives.io.opening import read_into

__all__ = ["LineRange", "newlines_before"]

_SCAN = 1 << 16  # bytes read at a time while looking for a line end


class LineRange(io.RawIOBase):
    """The lines of a seekable binary file that start in ``[start, end)``, as a raw stream.

    ``prefix`` is returned first (for example the header line of a CSV file, so that a range
    parses like a whole table). ``first`` is the offset of the range's first line. While
    reading it notes in ``quote_or_cr`` whether a ``"`` or a carriage return that is not part
    of ``\\r\\n`` appeared: then a CSV row may span lines, and the cut points need not be row
    boundaries.

    >>> data = io.BytesIO(b"a\\nbb\\nccc\\nd")
    >>> [LineRange(data, s, e).read() for s, e in [(0, 4), (4, 8), (8, 11)]]
    [b'a\\nbb\\n', b'ccc\\n', b'd']
    >>> r = LineRange(io.BytesIO(b"h\\n1\\n2\\n"), 3, 6, prefix=b"h\\n")
    >>> r.read(), r.first
    (b'h\\n2\\n', 4)
    """

    def __init__(self, raw: Any, start: int, end: int, prefix: bytes = b"") -> None:
        super().__init__()
        self._raw = raw
        self._prefix = prefix
        self._end = end
        self.quote_or_cr = False
        self._last = b""
        self._done = start >= end
        self._pos = start
        if start > 0 and not self._done:
            self._pos = self._line_start(start)
            self._done = self._pos >= end
        self.first = self._pos
        if not self._done:
            raw.seek(self._pos)

    def _line_start(self, x: int) -> int:
        """ls(x) for x > 0: one past the first newline at or after byte x - 1."""
        self._raw.seek(x - 1)
        pos = x - 1
        while True:
            chunk = self._raw.read(_SCAN)
            if not chunk:
                return pos
            i = chunk.find(b"\n")
            if i >= 0:
                return pos + i + 1
            pos += len(chunk)

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        view = memoryview(b).cast("B")
        if self._prefix:
            k = min(len(view), len(self._prefix))
            view[:k] = self._prefix[:k]
            self._prefix = self._prefix[k:]
            return k
        if self._done or not len(view):
            return 0
        got = read_into(self._raw, view)  # into the caller's buffer: no copy
        if not got:
            self._done = True
            return 0
        if self._pos + got >= self._end:  # the range may stop in this chunk
            i = _find_newline(view, max(self._end - 1 - self._pos, 0), got)
            if i >= 0:
                got = i + 1
                self._done = True
        self._pos += got
        if not self.quote_or_cr:
            self._note(view[:got].tobytes())
        self._last = view[got - 1:got].tobytes()
        return got

    def _note(self, chunk: bytes) -> None:
        if b'"' in chunk:
            self.quote_or_cr = True
        elif b"\r" in chunk or self._last == b"\r":
            joined = self._last + chunk
            # a \r at the very end is judged with the next chunk, which may start with \n
            lone_cr = (joined.count(b"\r") - joined.count(b"\r\n")
                       - int(joined.endswith(b"\r")))
            self.quote_or_cr = lone_cr > 0


def _find_newline(view: memoryview, start: int, stop: int) -> int:
    """The offset of the first newline in ``view[start:stop]``, or -1; copied a window at a
    time, since the line that ends a range is short next to the chunk."""
    while start < stop:
        i = view[start:min(start + _SCAN, stop)].tobytes().find(b"\n")
        if i >= 0:
            return start + i
        start += _SCAN
    return -1


def newlines_before(raw: Any, offset: int) -> int:
    """The newlines in the first ``offset`` bytes of the seekable binary file ``raw``.

    >>> newlines_before(io.BytesIO(b"a\\nbb\\nccc\\n"), 5)
    2
    """
    raw.seek(0)
    count = 0
    while offset > 0:
        chunk = raw.read(min(offset, 1 << 22))
        if not chunk:
            break
        count += chunk.count(b"\n")
        offset -= len(chunk)
    return count
