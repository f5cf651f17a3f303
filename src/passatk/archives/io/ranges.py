"""Byte ranges of line-oriented files: a range ``[start, end)`` owns the lines that *start* in
it, so ranges that tile a file read each line once, whatever the cut points."""

from __future__ import annotations

import io
import re
from typing import Any

_SCAN = 1 << 16  # bytes read at a time while looking for a line end
_QUOTE_OR_CR = re.compile(rb'"|\r[^\n]')  # a \r at a chunk's end is judged with the next one


class LineRange(io.RawIOBase):
    """The lines of a seekable binary file that start in ``[start, end)``, as a raw stream,
    after ``prefix`` (a CSV header); ``first`` is the offset of its first line;
    ``quote_or_cr`` notes a ``"`` or a lone ``\\r`` (a CSV row may then span lines).

    >>> data = io.BytesIO(b"a\\nbb\\nccc\\nd")
    >>> [LineRange(data, s, e).read() for s, e in [(0, 4), (4, 8), (8, 11)]]
    [b'a\\nbb\\n', b'ccc\\n', b'd']
    """

    def __init__(self, raw: Any, start: int, end: int, prefix: bytes = b"") -> None:
        super().__init__()
        self._raw, self._prefix, self._end = raw, prefix, end
        self.quote_or_cr = False
        self._last, pos = b"", start
        if 0 < start < end:  # the first line: one past the first newline at or after start - 1
            raw.seek(pos := start - 1)
            while (chunk := raw.read(_SCAN)) and (i := chunk.find(b"\n")) < 0:
                pos += len(chunk)
            pos += i + 1 if chunk else 0
        self._pos = self.first = pos
        self._done = pos >= end
        if not self._done:
            raw.seek(pos)

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        view = memoryview(b).cast("B")
        if self._prefix:
            chunk, self._prefix = self._prefix[:len(view)], self._prefix[len(view):]
            view[:len(chunk)] = chunk
            return len(chunk)
        if self._done or not len(view):
            return 0
        got = self._raw.readinto(view) or 0  # into the caller's buffer: no copy
        self._done = not got
        if self._pos + got >= self._end and (i := view[:got].tobytes().find(  # it may stop here
                b"\n", max(self._end - 1 - self._pos, 0))) >= 0:
            got, self._done = i + 1, True
        self._pos += got
        if got and not self.quote_or_cr:
            self.quote_or_cr = bool(_QUOTE_OR_CR.search(self._last + view[:1].tobytes())
                                    or _QUOTE_OR_CR.search(view[:got]))
        self._last = view[got - 1:got].tobytes() if got else self._last
        return got


def newlines_before(raw: Any, offset: int) -> int:
    """The newlines in the first ``offset`` bytes of the seekable binary file ``raw``."""
    raw.seek(0)  # 4 MiB at a time
    return sum(raw.read(min(offset - at, 1 << 22)).count(b"\n") for at in range(0, offset, 1 << 22))
