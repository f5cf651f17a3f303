"""JSON Lines: blocks of whole lines, decoded at once by msgspec into a reader's typed view.

A reader gives ``msgspec.json.Decoder(type=View)``, ``View`` holding only the fields it reads
(msgspec skips the rest), and decodes each block of whole lines with :func:`decode`. A block
that msgspec refuses (a malformed line, a value of another type, ``NaN``, a lone surrogate),
or whose values the reader does not accept, is read again line by line by the standard
library's ``json``, so every line that is read is read as ``json`` reads it and every bad line
is named alone, with its line number and ``json``'s message.

msgspec and ``json`` differ in two places, and both are closed here: a key given twice keeps
its last value in both (the ``strict_json`` option refuses it, see ``io/strict.py``); msgspec
does not check the UTF-8 of the values it skips, so :func:`decode` checks the whole block
(``bytes.decode``: about 5% of the read, measured in bench/test_bench_lines.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any

from passatk.archives.io.opening import UTF8_BOM, max_record_bytes, too_long

__all__ = ["BLOCK", "blocks", "decode", "decoder", "names_occur", "needles_occur", "newlines",
           "objects"]

#: bytes read at once: 512 KiB, below where each new buffer costs page faults (2 MiB blocks
#: took 0.98 s of CPU for 600 MB against 0.60 s, measured: docs/benchmarks.md)
BLOCK = 1 << 19


@lru_cache(maxsize=64)
def decoder(kind: Any):
    """A cached ``msgspec.json.Decoder`` for ``kind`` (msgspec is imported on first use)."""
    import msgspec

    return msgspec.json.Decoder(kind)


def decode(dec, block: bytes) -> list | None:
    """The values of the non-blank lines of ``block`` decoded by ``dec``, or None when any
    line is not such a value, the block is not UTF-8 or it is longer than the record-length
    cap (a block of one line may be: it is then read line by line, which states the error).

    >>> decode(decoder(dict[str, int]), b'{"a": 1}\\n\\n{"b": 2, "b": 3}\\n')
    [{'a': 1}, {'b': 3}]
    >>> decode(decoder(dict[str, int]), b'{"a": "x"}\\n') is None
    True
    """
    import msgspec

    if len(block) > max_record_bytes():
        return None
    if block[:3] == UTF8_BOM:  # json's path drops it from a line that holds a value
        end = block.find(b"\n")
        if not block[3:end if end >= 0 else len(block)].strip():
            return None
        block = block[3:]
    try:
        block.decode()  # msgspec leaves the values it skips unchecked; json checks them all
        return dec.decode_lines(block)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return None


def objects(block: bytes) -> list[dict] | None:
    """The JSON objects on the non-blank lines of ``block``, or None when a line is not one.

    >>> objects(b'{"task_id": "T/0", "x": {"y": 1}}\\n{"task_id": "T/1"}\\n')
    [{'task_id': 'T/0', 'x': {'y': 1}}, {'task_id': 'T/1'}]
    >>> objects(b'[1, 2]\\n') is None
    True
    """
    values = decode(decoder(Any), block)
    if values is None or not all(type(v) is dict for v in values):
        return None
    return values


def newlines(buf: bytes) -> int:
    """``buf.count(b"\\n")``, three times faster (numpy; measured: 10 ms against 30 ms for
    100 MB, a fifth of the whole read).

    >>> newlines(b"a\\nb\\n\\n")
    3
    """
    import numpy as np

    return int(np.count_nonzero(np.frombuffer(buf, dtype=np.uint8) == 10))


def blocks(stream, file: str, report: Callable[[], None] | None = None,
           size: int | None = None) -> Iterator[tuple[int, bytes]]:
    """(lines before it, block) for the binary ``stream``: each block is whole lines ending
    with a newline, except the file's unfinished last line.

    An unfinished line longer than the record-length cap is an ArchiveError, so memory stays
    near the cap whatever the input (a block's own lines are checked by its reader).
    ``report`` is called after each block (progress).

    >>> import io
    >>> list(blocks(io.BytesIO(b'{"a": 1}\\n{"a": 2}\\n\\n{"a"'), "f", size=12))
    [(0, b'{"a": 1}\\n'), (1, b'{"a": 2}\\n\\n'), (3, b'{"a"')]
    """
    cap, size = max_record_bytes(), size or BLOCK
    rest = b""
    lineno = 0
    while block := stream.read(size):
        cut = block.rfind(b"\n") + 1
        if not cut:
            rest += block
            if len(rest) > cap:
                raise too_long(file, lineno + 1, cap)
            continue
        whole = rest + block[:cut] if rest else block[:cut]
        rest = block[cut:]
        yield lineno, whole
        lineno += newlines(whole)
        if report is not None:
            report()
    if len(rest) > cap:
        raise too_long(file, lineno + 1, cap)
    if rest:
        yield lineno, rest


# -------------------------------------------------------------- for the document fast path
# ``_docfast`` and ``io/docbuffer.py`` (issue 19 deletes them) prove their field counts with
# these; they go with those modules.
_ASCII_ESCAPE = re.compile(rb"\\u00[3-7]")  # \u0030-\u007f spell the letters of field names


def names_occur(buf: bytes | bytearray, expected: dict[bytes, int], start: int = 0,
                end: int | None = None) -> bool:
    """True when each quoted name occurs in ``buf[start:end]`` exactly ``expected[name]`` times.

    ``expected`` maps a name's bytes (without quotes) to the number of times the decoded
    records account for. False when an escape could spell a name.

    >>> names_occur(b'{"passed": true, "result": "passed"}', {b"passed": 2})
    True
    >>> names_occur(b'{"passed": true, "passed": false}', {b"passed": 1})
    False
    >>> names_occur(b'{"passed": true, "pass\\\\u0065d": false}', {b"passed": 1})
    False
    >>> names_occur(b'{"a": 1} {"a": 1, "a": 2}', {b"a": 1}, 0, 8)
    True
    """
    return needles_occur(buf, {b'"' + name + b'"': count for name, count in expected.items()},
                         start, end)


def needles_occur(buf: bytes | bytearray, expected: dict[bytes, int], start: int = 0,
                  end: int | None = None) -> bool:
    """:func:`names_occur` for raw needles: each ``needle`` occurs ``expected[needle]`` times.

    A needle that is part of several quoted names, once in each (``_status"`` in
    ``"base_status"`` and ``"plus_status"``), proves them all with one count: the count is at
    least the sum of their occurrences, each at least what the records account for.

    >>> needles_occur(b'{"base_status": 1, "plus_status": 2}', {b'_status"': 2})
    True
    """
    end = len(buf) if end is None else end
    if _ASCII_ESCAPE.search(buf, start, end):  # faster than a find of the prefix alone
        return False
    if len(expected) == 1:
        (needle, count), = expected.items()
        return buf.count(needle, start, end) == count
    found = _alternation(tuple(expected)).findall(buf, start, end)
    return all(found.count(needle) == count for needle, count in expected.items())


@lru_cache(maxsize=64)
def _alternation(needles: tuple[bytes, ...]) -> re.Pattern:
    """One regex for several needles: one pass over the bytes instead of one per needle.

    Its matches do not overlap, where ``bytes.count`` of each would; in JSON that msgspec
    accepted this loses no key: the byte before a key's opening quote is ``{``, ``,`` or a
    blank, never the quote that ends a needle."""
    first = needles[0][:1]
    if first and all(n[:1] == first for n in needles):  # a literal first byte: a fast search
        return re.compile(re.escape(first) + b"(?:" + b"|".join(re.escape(n[1:]) for n in needles)
                          + b")")
    return re.compile(b"|".join(re.escape(n) for n in needles))
