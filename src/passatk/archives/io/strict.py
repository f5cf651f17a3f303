"""``strict_json``: refuse any key given twice in a JSON object, checked by the standard library.

By default passatk reads JSON as Python's ``json`` module reads it: a key given twice keeps its
last value, as msgspec, orjson and the harness reading its own file back all do. With
``strict_json=True`` (``--strict-json``) each JSON file of a read is read once more, here, by
``json`` with an ``object_pairs_hook`` that sees every pair of every object (nested ones too,
read by a reader or not): JSON Lines line by line, naming ``file:line``; a JSON document whole,
naming the JSON path of the object. This is the only place that checks, and it knows no
format. A line or document that ``json`` cannot parse is left to its reader, which names the
error. A document is held whole while it is checked, so it is refused past the record-length
cap (``PASSATK_MAX_RECORD_BYTES``), which bounds the memory.
"""

from __future__ import annotations

import json

from passatk.archives.errors import ArchiveError, json_path, show
from passatk.archives.io.lines import blocks
from passatk.archives.io.opening import UTF8_BOM, max_record_bytes, open_binary

__all__ = ["check_document", "check_lines", "duplicate_key"]

RULE = "strict_json refuses a key given twice"


def _decoder(found: dict) -> json.JSONDecoder:
    """A decoder whose hook keeps each object with a key given twice (by id, the object held
    so that its id stays its own) and that key."""

    def hook(pairs: list[tuple[str, object]]) -> dict:
        obj = dict(pairs)
        if len(obj) != len(pairs):
            seen: set[str] = set()
            found[id(obj)] = (obj, next(k for k, _ in pairs if k in seen or seen.add(k)))
        return obj

    return json.JSONDecoder(object_pairs_hook=hook)


def _first(value: object, found: dict) -> tuple[tuple, str]:
    """(JSON path, key) of the first object of ``found`` in ``value``, in document order.

    An object with a key given twice may have been dropped (the value of a key given twice);
    then the object that dropped it is in ``found`` too, so one of them is in ``value``.
    Walked without recursion: a document may nest as deep as ``json`` allows."""
    stack: list[tuple[object, tuple]] = [(value, ())]
    while stack:
        node, path = stack.pop()
        if id(node) in found:
            return path, found[id(node)][1]
        if isinstance(node, dict):
            items = node.items()
        elif isinstance(node, list):
            items = enumerate(node)
        else:
            continue
        stack.extend(reversed([(v, (*path, k)) for k, v in items if isinstance(v, (dict, list))]))
    raise AssertionError("an object of found is in the value")  # pragma: no cover


def duplicate_key(text: bytes | str) -> str | None:
    """What is wrong with ``text`` (one JSON value) under strict_json, or None: its first key
    given twice and where, or None also when ``json`` cannot parse it (its reader says why).

    >>> duplicate_key(b'{"a": 1, "b": {"c": [{"d": 1, "d": 2}]}}')
    "duplicate key 'd' in $.b.c[0] (strict_json refuses a key given twice)"
    >>> duplicate_key(b'{"a": 1, "a": 1}')
    "duplicate key 'a' at the top level (strict_json refuses a key given twice)"
    >>> duplicate_key(b'{"a": 1}'), duplicate_key(b'{"a": 1, "a"')
    (None, None)
    """
    found: dict = {}
    try:
        if isinstance(text, bytes):
            text = text.removeprefix(UTF8_BOM).decode("utf-8")
        value = _decoder(found).decode(text)
    except (ValueError, RecursionError):  # JSONDecodeError and UnicodeDecodeError are too
        return None
    if not found:
        return None
    path, key = _first(value, found)
    where = f"in {json_path(path)}" if path else "at the top level"
    return f"duplicate key {show(key)} {where} ({RULE})"


def check_lines(stream, file: str) -> None:
    """Refuse the first line of the JSON Lines ``stream`` with a key given twice."""
    for lineno, block in blocks(stream, file):
        for n, line in enumerate(block.split(b"\n"), lineno + 1):
            if line.strip() and (what := duplicate_key(line)) is not None:
                raise ArchiveError(file, what, line=n)


def check_document(file: str) -> None:
    """Refuse the JSON document ``file`` when an object in it gives a key twice."""
    cap = max_record_bytes()
    with open_binary(file) as f:
        data = f.stream.read(cap + 1)
    if len(data) > cap:
        raise ArchiveError(file, f"a JSON document longer than {cap} bytes cannot be checked "
                           f"whole for keys given twice ({RULE}); set PASSATK_MAX_RECORD_BYTES "
                           "to check a longer one")
    what = duplicate_key(data)
    if what is not None:
        raise ArchiveError(file, what)
