"""BigCodeBench ``*_eval_results.json``; stored numbers from ``*_pass_at_k.json`` beside it."""

from __future__ import annotations

import os
import re

from . import _hints as hints
from ._common import BadRecord, Context, decode_json, document_group
from ._counts import StoredMetric
from ._errors import ArchiveError, location, show
from ._sources import COMPRESSED_SUFFIXES, logical_name, max_record_bytes, read_all

STATUSES = ("pass", "fail", "timeout")
_PASS_KEY = re.compile(r"pass@([1-9][0-9]*)\Z")


def matches(doc: object) -> bool:
    if not isinstance(doc, dict) or not isinstance(doc.get("eval"), dict):
        return False
    first = next(iter(doc["eval"].values()), None)
    return (isinstance(first, list) and bool(first) and isinstance(first[0], dict)
            and "status" in first[0] and "base_status" not in first[0])


def sidecar(file: str) -> str | None:
    """The ``<prefix>_pass_at_k.json`` next to ``<prefix>_eval_results.json``, if it exists."""
    name = logical_name(file)
    if not name.endswith("_eval_results.json"):
        return None
    base = os.path.join(os.path.dirname(file), name[: -len("_eval_results.json")])
    for suffix in ("", *COMPRESSED_SUFFIXES):
        p = f"{base}_pass_at_k.json{suffix}"
        if os.path.isfile(p):
            return p
    return None


def _error(details: object) -> object:
    """The harness-level error of a sample (``details["ALL"]``: the program could not run);
    per-test tracebacks are the model's own failures."""
    return details.get("ALL") if isinstance(details, dict) else None


def read(file: str, ctx: Context, doc: dict) -> None:
    ctx.set_metric("pass@k", file)
    group = document_group(file, ctx, doc)
    ev = doc.get("eval")
    if not isinstance(ev, dict) or not ev:
        raise ArchiveError(file, "no tasks under $.eval", path=("eval",))
    failures = hints.failures(ctx, file)
    for task, samples in ev.items():
        if not isinstance(samples, list):
            ctx.bad(file, f"must be a list of samples, got {type(samples).__name__}",
                    path=("eval", task))
            continue
        n = c = 0
        for i, s in enumerate(samples):
            if not isinstance(s, dict) or "status" not in s:
                ctx.bad(file, 'sample must be an object with a "status"', path=("eval", task, i))
                continue
            if s["status"] not in STATUSES or isinstance(s["status"], bool):
                ctx.bad(file, f'status must be one of "pass", "fail", "timeout", got '
                        f"{show(s['status'])}", path=("eval", task, i, "status"))
                continue
            n += 1
            c += s["status"] == "pass"
            failures.add(s["status"] == "pass", _error(s.get("details")))
        if not samples:
            ctx.bad(file, "no samples for this task", path=("eval", task))
        if n:
            ctx.add(group, task, n, c)
    side = sidecar(file)
    if side is not None:
        try:
            stored = decode_json(read_all(side, max_record_bytes()))
        except BadRecord as e:
            raise ArchiveError(side, e.what, line=e.line) from None
        if not isinstance(stored, dict):
            raise ArchiveError(side, "must be a JSON object", path=())
        for key, value in stored.items():
            m = _PASS_KEY.match(key)
            if m and isinstance(value, (int, float)) and not isinstance(value, bool):
                ctx.stored.append(StoredMetric(group, "pass@k", int(m.group(1)), float(value),
                                               location(side, path=(key,)), "fraction"))
