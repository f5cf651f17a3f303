"""Typed views (msgspec) of parsed JSON values; errors name the field's JSON path and JSON
shapes ("a number", "an object"), never a Python class."""

from __future__ import annotations

import re
from itertools import islice

import msgspec

from passatk.archives.context import BadRecord
from passatk.archives.errors import kind

__all__ = ["decoded", "shape", "view"]

_AT = re.compile(r" - at `\$(.*)`\Z")
_PART = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\[\"((?:[^\"\\]|\\.)*)\"\]")
_SHAPES = {"str": "a string", "int": "an integer", "float": "a number", "bool": "true/false",
           "null": "null", "object": "an object", "array": "a list"}
_WORD = re.compile(r"`([^`]*)`")


def _bad(e: msgspec.ValidationError, path: tuple) -> BadRecord:
    message = str(e)
    m = _AT.search(message)
    where = [name or (int(index) if index else key)
             for name, index, key in _PART.findall(m.group(1))] if m else []
    text = _WORD.sub(lambda w: " or ".join(dict.fromkeys(_SHAPES.get(a.strip(), a.strip())
                                                         for a in w.group(1).split("|"))),
                     message[:m.start()] if m else message)
    return BadRecord(text[:1].lower() + text[1:], (*path, *where))


def view(value: object, typ: object, path: tuple = ()) -> object:
    """``value`` as ``typ`` (a msgspec type); BadRecord at the field's path when not.

    >>> class T(msgspec.Struct):
    ...     reward: float
    >>> try:
    ...     view({"reward": "1"}, T, ("simulations", 3))
    ... except BadRecord as e:
    ...     print(e.path, e.what)
    ('simulations', 3, 'reward') expected a number, got a string
    """
    try:
        return msgspec.convert(value, typ, strict=True)
    except msgspec.ValidationError as e:
        raise _bad(e, path) from None


def decoded(decoder: msgspec.json.Decoder, data: bytes, path: tuple = ()) -> object:
    """``decoder.decode(data)``; BadRecord in JSON shapes (as :func:`view`) when it fails."""
    try:
        return decoder.decode(data)
    except msgspec.ValidationError as e:
        raise _bad(e, path) from None
    except msgspec.DecodeError as e:
        raise BadRecord(f"malformed JSON: {str(e).removeprefix('JSON is malformed: ')}",
                        path) from None


def shape(value: object) -> str:
    """What a JSON value is, in words.

    >>> shape([{}, {"a": 1}, []]), shape({"a": 1, "b": 2}), shape(None)
    ('a JSON list of 3 values (object, object, list)', "a JSON object with keys ['a', 'b']", \
'JSON null')
    """
    if isinstance(value, dict):
        keys = sorted(str(k) for k in value)
        shown = repr(keys[:10]) + (f" and {len(keys) - 10} more" if len(keys) > 10 else "")
        return f"a JSON object with keys {shown}"
    if isinstance(value, list):
        items = list(islice(value, 11))  # a streamed list reads its items: the first few
        if not items:
            return "an empty JSON list"
        kinds = ", ".join(kind(v).split()[-1] for v in items[:10])  # "an object" -> "object"
        if len(items) > 10:
            return f"a JSON list of more than 10 values ({kinds}, ...)"
        return f"a JSON list of {len(items)} value{'s' * (len(items) > 1)} ({kinds})"
    return "JSON null" if value is None else f"a JSON {kind(value).split()[-1]}"
