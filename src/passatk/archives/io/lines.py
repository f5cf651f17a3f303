"""msgspec decoding for the readers' fast paths, and the duplicate-key proofs that go with it.

msgspec decodes JSON several times faster than ``json.loads``, but when a key occurs twice in
one object it keeps the last value silently, and passatk refuses duplicate keys (which value
counts is ambiguous). A fast path therefore proves, per buffer, that no object in it repeats a
key; a buffer that is not proved is decoded again by the exact path (``json`` with a
duplicate-key hook, ``_common.decode_json``), which also locates every error. A false alarm
only costs speed, never a different number.

The proof, :func:`key_colons`: the colons that end an object key, counted in the raw bytes,
equal the keys of the decoded objects (a duplicate is a raw key that decodes to nothing). In
valid JSON a colon outside strings follows a key: its closing quote (not escaped: an even run
of backslashes before it), then blanks. A colon inside a string can follow a quote only when
that quote opens the string, and an opening quote always follows one of ``{[,:``, a blank or
a line start, which a closing quote follows only when the key's raw spelling ends in that
byte. Such keys are not counted, so a buffer whose decoded keys may end so is not proved
(:data:`KEY_END_UNSEEN`). Every key is counted, nested ones too, and every object is checked,
whether or not its reader uses it: the fast path accepts exactly what ``json`` accepts.
The whole-document fast path (``_docfast``) uses a narrower proof, :func:`names_occur` and
:func:`needles_occur`: each quoted name it reads occurs in the raw bytes exactly as often as
the decoded records account for.

msgspec and ``json`` agree on everything else the fast paths accept (checked in
``tests/test_archives_msgspec.py``); where msgspec refuses (a lone surrogate escape, ``NaN``,
``1e400``) the buffer goes to the exact path; a BOM is dropped from the buffer's first line,
as ``json``'s path drops it from every line. msgspec does not check the UTF-8 of values it
skips, so fast paths decode every value (no unknown field skipped). Nesting is capped below
both parsers' limits (:data:`MAX_DEPTH`).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

__all__ = ["FLAT", "MAX_DEPTH", "decode_lines", "decoder", "key_colons", "names_occur",
           "needles_occur", "objects", "typed_records"]

# \u0030-\u007f spell the digits, letters and "_" of field names; the other escapes cannot
_ASCII_ESCAPE = re.compile(rb"\\u00[3-7]")
_Scalar = str | int | float | bool | None
#: a record of scalars and lists of scalars (the common case: no walk needed)
FLAT = dict[str, _Scalar | list[_Scalar]]
#: deeper records go to the exact path (``json`` stops near 990 levels, msgspec a bit later)
MAX_DEPTH = 200


@lru_cache(maxsize=64)
def decoder(kind: type):
    """A cached ``msgspec.json.Decoder`` for ``kind`` (msgspec is imported on first use)."""
    import msgspec

    return msgspec.json.Decoder(kind)


def decode_lines(kind: Any, buf) -> list | None:
    """The values of the non-blank JSON lines of ``buf`` as ``kind``, or None on any error.

    >>> decode_lines(FLAT, b'{"a": 1}\\n\\n{"b": [true]}\\n')
    [{'a': 1}, {'b': [True]}]
    >>> decode_lines(FLAT, b'{"a": {"b": 1}}\\n') is None
    True
    """
    import msgspec

    try:
        return decoder(kind).decode_lines(buf)
    except (msgspec.DecodeError, RecursionError):  # ValidationError is a DecodeError
        return None


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


#: a key whose raw spelling ends in one of these bytes is not counted by key_colons
KEY_END_UNSEEN = frozenset(" {[,:")


@lru_cache(maxsize=1)
def _tables():
    import numpy as np

    blank = np.zeros(256, dtype=bool)
    blank[list(b" \t\r")] = True
    opens = np.zeros(256, dtype=bool)  # the bytes that may stand before an opening quote
    opens[list(b" \t\r\n{[,:")] = True
    return blank, opens


def key_colons(buf) -> int:
    """The object keys of ``buf`` (whole valid JSON lines), counted by their colons.

    Exact when no key's raw spelling ends in a byte of :data:`KEY_END_UNSEEN` (those keys
    are not counted); see the module docstring.

    >>> key_colons(b'{"a": 1, "b" :"x:", "c": ":", "d": [":", " :"]}\\n')
    4
    >>> key_colons(b'{"\\\\"": 1, "x\\\\\\\\": 2, "q": "\\\\":"}\\n')
    3
    """
    import numpy as np

    blank, opens = _tables()
    a = np.frombuffer(buf, dtype=np.uint8)
    p = np.flatnonzero(a == 58) - 1  # in valid JSON a key precedes every structural colon
    more = np.flatnonzero(blank[a[p]])
    while more.size:
        p[more] -= 1
        more = more[blank[a[p[more]]]]
    before = p[a[p] == 34] - 1  # the byte before each quote that precedes a colon
    before = before[~opens[a[before]]]  # an opening quote: the colon is inside a string
    run = before[a[before] == 92]  # the quote may be escaped: count the backslashes
    odd = np.zeros(run.size, dtype=bool)
    k = np.arange(run.size)
    back = 0
    while k.size:
        odd[k] = ~odd[k]
        back += 1
        k = k[a[run[k] - back] == 92]
    return int(before.size - np.count_nonzero(odd))


class _TooDeep(Exception):
    pass


def _keys(value: Any, depth: int, names: set) -> int:
    """The keys of all objects inside ``value`` (a list or dict); their names go to
    ``names``."""
    if depth > MAX_DEPTH:
        raise _TooDeep
    if type(value) is dict:
        n, items = len(value), value.values()
        names.update(value)
    else:
        n, items = 0, value
    for v in items:
        if type(v) is dict or type(v) is list:
            n += _keys(v, depth + 1, names)
    return n


def _seen(names) -> bool:
    """Whether key_colons counts every key named in ``names``."""
    return not any(name[-1:] in KEY_END_UNSEEN for name in names)


def _without_bom(buf: bytes) -> bytes | None:
    """``buf`` without a UTF-8 BOM at its start (``json``'s path drops it from a line), or
    None when the BOM's line holds nothing else (``json`` finds no value there)."""
    if buf[:3] != b"\xef\xbb\xbf":
        return buf
    end = buf.find(b"\n")
    return buf[3:] if buf[3:end if end >= 0 else len(buf)].strip() else None


def objects(buf) -> list[dict] | None:
    """The JSON objects on the non-blank lines of ``buf``, decoded by msgspec and proved free
    of duplicate keys; None when any line is not such an object or the proof fails.

    >>> objects(b'{"task_id": "T/0", "passed": true}\\n{"task_id": "T/1", "x": {"y": 1}}\\n')
    [{'task_id': 'T/0', 'passed': True}, {'task_id': 'T/1', 'x': {'y': 1}}]
    >>> objects(b'{"task_id": "T/0", "passed": true, "passed": false}\\n') is None
    True
    >>> objects(b'[1, 2]\\n') is None
    True
    """
    buf = _without_bom(buf)
    if buf is None:
        return None
    records = decode_lines(FLAT, buf)
    names: set = set()
    if records is not None:
        keys = sum(map(len, records))
        names.update(*records)
    else:
        records = decode_lines(Any, buf)
        if records is None or not all(type(r) is dict for r in records):
            return None
        try:
            keys = sum(_keys(r, 1, names) for r in records)
        except _TooDeep:
            return None
    if not _seen(names):
        return None
    return records if key_colons(buf) == keys else None


@lru_cache(maxsize=16)
def _record_type(fields: tuple[tuple[str, Any], ...]) -> type:
    import msgspec

    assert _seen(name for name, _ in fields)  # key_colons counts them all
    return msgspec.defstruct("Record", list(fields), forbid_unknown_fields=True, gc=False)


def typed_records(fields: tuple[tuple[str, Any], ...], buf) -> list | None:
    """The records on the non-blank lines of ``buf`` when each is an object with exactly the
    keys ``fields`` names, once each, with values of their types; else None.

    ``fields`` is ``((name, type), ...)``; every value is decoded (nothing skipped unchecked).

    >>> fields = (("task_id", str), ("passed", bool))
    >>> [r.task_id for r in typed_records(fields, b'{"task_id": "T/0", "passed": true}\\n')]
    ['T/0']
    >>> typed_records(fields, b'{"task_id": "T/0", "passed": true, "passed": false}\\n') is None
    True
    >>> typed_records(fields, b'{"task_id": "T/0", "passed": true, "x": 1}\\n') is None
    True
    """
    buf = _without_bom(buf)
    records = None if buf is None else decode_lines(_record_type(fields), buf)
    if records is None or key_colons(buf) != len(fields) * len(records):
        return None
    return records
