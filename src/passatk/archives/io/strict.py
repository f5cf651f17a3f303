"""``strict_json``: refuse any key given twice in a JSON object, checked by the stdlib ``json``
with an ``object_pairs_hook``; the one such check, for every format (docs/robustness.md)."""

from __future__ import annotations

import json
from collections.abc import Callable

from passatk.archives.errors import ArchiveError, json_path, show
from passatk.archives.io.lines import blocks
from passatk.archives.io.opening import UTF8_BOM, max_record_bytes, open_binary

__all__ = ["check", "duplicate_key"]

RULE = "strict_json refuses a key given twice"


def _first(value: object, found: dict) -> tuple[tuple, str]:
    """(JSON path, key) of the first object of ``found`` in ``value``, in document order."""
    stack: list[tuple[object, tuple]] = [(value, ())]
    while stack:
        node, path = stack.pop()
        if id(node) in found:  # an object dropped as a duplicate's value: its dropper is too
            return path, found[id(node)][1]
        items = node.items() if isinstance(node, dict) else enumerate(node)  # type: ignore
        stack.extend(reversed([(v, (*path, k)) for k, v in items if isinstance(v, (dict, list))]))
    raise AssertionError("an object of found is in the value")  # pragma: no cover


def duplicate_key(text: bytes | bytearray | str) -> str | None:
    """The first key of ``text`` given twice and where; None when there is none or ``json``
    cannot parse it (its reader says why).

    >>> duplicate_key(b'{"a": 1, "b": {"c": [{"d": 1, "d": 2}]}}')
    "duplicate key 'd' in $.b.c[0] (strict_json refuses a key given twice)"
    """
    found: dict = {}  # id -> (an object giving a key twice, held: its id stays its own; the key)

    def hook(pairs: list[tuple[str, object]]) -> dict:
        obj = dict(pairs)
        if len(obj) != len(pairs):
            seen: set[str] = set()
            found[id(obj)] = (obj, next(k for k, _ in pairs if k in seen or seen.add(k)))
        return obj
    try:
        if isinstance(text, (bytes, bytearray)):
            text = text.removeprefix(UTF8_BOM).decode("utf-8")
        value = json.JSONDecoder(object_pairs_hook=hook).decode(text)
    except (ValueError, RecursionError):  # JSONDecodeError and UnicodeDecodeError are too
        return None
    if not found:
        return None
    path, key = _first(value, found)
    return f"duplicate key {show(key)} {f'in {json_path(path)}' if path else 'at the top level'}" \
        f" ({RULE})"


def check(file: str, kind: str, open_lines: Callable = open_binary) -> None:
    """Refuse ``file`` when a JSON object in it gives a key twice: a ``"document"`` held whole
    (refused past the record cap), ``"lines"`` (read by ``open_lines``) line by line; any other
    ``kind`` holds no JSON to check."""
    if kind == "lines":
        with open_lines(file) as f:
            for lineno, block in blocks(f.stream, file):
                for n, line in enumerate(block.split(b"\n"), lineno + 1):
                    if line.strip() and (what := duplicate_key(line)) is not None:
                        raise ArchiveError(file, what, line=n)
    if kind != "document":
        return
    cap = max_record_bytes()
    with open_binary(file) as f:
        data = f.stream.read(cap + 1)
    if len(data) > cap:
        raise ArchiveError(file, f"a JSON document longer than {cap} bytes cannot be checked "
                           f"whole for keys given twice ({RULE}); set PASSATK_MAX_RECORD_BYTES "
                           "to check a longer one")
    if (what := duplicate_key(data)) is not None:
        raise ArchiveError(file, what)
