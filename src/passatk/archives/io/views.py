"""Typed views of parsed JSON values (msgspec), with errors located by their JSON path.

A reader declares a :class:`msgspec.Struct` holding only the fields it reads and converts the
value detection parsed (no second parse). A value of the wrong type is a
:class:`~passatk.archives.context.BadRecord` whose path is that of the offending field, and
whose text names JSON shapes ("a number", "an object"), never a Python class.
"""

from __future__ import annotations

import re
from itertools import islice

import msgspec

from passatk.archives.context import BadRecord

__all__ = ["decoded", "shape", "view"]

_AT = re.compile(r" - at `\$(.*)`\Z")
_PART = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\[\"((?:[^\"\\]|\\.)*)\"\]")
_SHAPES = {"str": "a string", "int": "an integer", "float": "a number", "bool": "true/false",
           "null": "null", "object": "an object", "array": "a list"}
_WORD = re.compile(r"`([^`]*)`")


def _path(text: str) -> tuple:
    out: list = []
    for m in _PART.finditer(text):
        name, index, key = m.groups()
        out.append(name if name is not None else int(index) if index is not None else key)
    return tuple(out)


def _words(message: str) -> str:
    """msgspec's ``Expected `float`, got `str``` in JSON shapes: ``expected a number, got a
    string``."""
    def one(m: re.Match) -> str:
        alts = [_SHAPES.get(a.strip(), a.strip()) for a in m.group(1).split("|")]
        return " or ".join(dict.fromkeys(alts))
    text = _WORD.sub(one, message)
    return text[:1].lower() + text[1:]


def view(value: object, typ: object, path: tuple = ()) -> object:
    """``value`` as ``typ`` (a msgspec Struct or a container of them); BadRecord when not.

    >>> class T(msgspec.Struct):
    ...     reward: float
    >>> view({"reward": 1, "other": []}, T)
    T(reward=1.0)
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
    """``decoder.decode(data)``; BadRecord in JSON shapes (as :func:`view`) when it fails.

    >>> class T(msgspec.Struct):
    ...     epoch: int
    >>> try:
    ...     decoded(msgspec.json.Decoder(T), b'{"epoch": "1"}')
    ... except BadRecord as e:
    ...     print(e.path, e.what)
    ('epoch',) expected an integer, got a string
    """
    try:
        return decoder.decode(data)
    except msgspec.ValidationError as e:
        raise _bad(e, path) from None
    except msgspec.DecodeError as e:
        raise BadRecord(f"malformed JSON: {str(e).removeprefix('JSON is malformed: ')}",
                        path) from None


def _bad(e: msgspec.ValidationError, path: tuple) -> BadRecord:
    message = str(e)
    m = _AT.search(message)
    where = _path(m.group(1)) if m else ()
    return BadRecord(_words(message[:m.start()] if m else message), (*path, *where))


def shape(value: object) -> str:
    """What a JSON value is, in words (for errors that must not name Python classes).

    >>> shape([{}, {"a": 1}, []])
    'a JSON list of 3 values (object, object, list)'
    >>> shape({"a": 1, "b": 2}), shape("x"), shape(None)
    ("a JSON object with keys ['a', 'b']", 'a JSON string', 'JSON null')
    """
    if isinstance(value, dict):
        keys = sorted(str(k) for k in value)
        shown = repr(keys[:10]) + (f" and {len(keys) - 10} more" if len(keys) > 10 else "")
        return f"a JSON object with keys {shown}"
    if isinstance(value, list):
        items = list(islice(value, 11))  # a streamed list reads its items: the first few
        if not items:
            return "an empty JSON list"
        kinds = ", ".join(_kind(v) for v in items[:10])
        if len(items) > 10:
            return f"a JSON list of more than 10 values ({kinds}, ...)"
        return f"a JSON list of {len(items)} value{'s' * (len(items) > 1)} ({kinds})"
    return "JSON null" if value is None else f"a JSON {_kind(value)}"


def _kind(value: object) -> str:
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "list"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "number"
    return "string" if isinstance(value, str) else "null"
