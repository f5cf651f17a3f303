"""msgspec decoding for the readers' fast paths, and the duplicate-key check that goes with it.

msgspec decodes a typed :class:`msgspec.Struct` holding only the fields a reader needs, several
times faster than ``json.loads``, but when a key occurs twice in one object it keeps the last
value silently, and passatk refuses duplicate keys (which value counts is ambiguous). A fast
path therefore proves, per buffer, that no field it reads occurs twice:
:func:`names_occur` checks that each quoted field name occurs in the raw bytes exactly as often
as the decoded records account for (once as a key per record that has the field, plus once per
decoded string *value* that equals the name). An escape such as ``\\u0061`` could spell a name
without its bytes, so a buffer holding ``\\u0030`` to ``\\u007f`` is not proved.
A buffer that is not proved is decoded again by the exact path (``json`` with a duplicate-key
hook), which also locates every error; a false alarm (a name inside some other text) only costs
speed, never a different number. Fields the reader does not use are not checked.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["decoder", "names_occur", "needles_occur"]

# \u0030-\u007f spell the digits, letters and "_" of field names; the other escapes cannot
_ASCII_ESCAPE = re.compile(rb"\\u00[3-7]")


@lru_cache(maxsize=64)
def decoder(kind: type):
    """A cached ``msgspec.json.Decoder`` for ``kind`` (msgspec is imported on first use)."""
    import msgspec

    return msgspec.json.Decoder(kind)


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
