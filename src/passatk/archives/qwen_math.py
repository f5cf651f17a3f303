"""The Qwen2.5-Math evaluation JSONL (also SimpleRL-Zoo, SkyThought and many RL repositories):
one line per problem with ``idx``, ``question``, ``gt``, ``pred`` and ``score``, a list of
booleans, one per sample. n = len(score), c = the number of true entries.

Stored: the ``<stem>_<prompt_type>_metrics.json`` beside ``<stem>.jsonl``. Its ``acc``
(percent) is the accuracy of the first sample of each problem in the original script (a fork
may store the mean over all samples instead), so it is kept as pass@1 only when every problem
has one sample; a ``"pass@k": {"1": ..., "2": ...}`` object (percent) is kept as it is.
"""

from __future__ import annotations

import os

from ._common import (
    BadRecord,
    Context,
    decode_json,
    group_from,
    iter_lines,
    parse_json_line,
    path_groups,
    require,
    task_id,
)
from ._counts import StoredMetric
from ._errors import ArchiveError, location, show
from ._flags import is_flag, pass_flag
from ._sources import logical_name, max_record_bytes, read_all


def looks_like(record: object) -> bool:
    return (isinstance(record, dict) and "idx" in record and isinstance(record.get("score"), list)
            and ("gt" in record or "pred" in record))


def _flags(score: object) -> list[bool]:
    if not isinstance(score, list) or not score:
        raise BadRecord(f'field "score" must be a non-empty list of pass flags, got {show(score)}')
    try:
        return [pass_flag(x) for x in score]
    except BadRecord as e:
        i = next(i for i, x in enumerate(score) if not is_flag(x))
        raise BadRecord(f'field "score": each sample {e.what} (sample {i})') from None


def read(file: str, ctx: Context) -> None:
    ctx.set_metric("pass@k", file)
    o = ctx.options
    pathvals = path_groups(o.by, file)
    records = 0
    skips_before = ctx.skip_count
    groups: dict = {}
    for lineno, line in iter_lines(file, ctx):
        try:
            rec = parse_json_line(file, lineno, line)
            task = task_id(require(rec, "idx"), "idx")
            flags = _flags(require(rec, "score"))
            group = group_from(o.by, pathvals, rec)
        except BadRecord as e:
            ctx.bad(file, e.what, line=lineno)
            continue
        groups[group] = max(groups.get(group, 0), len(flags))
        ctx.add(group, task, len(flags), sum(flags))
        records += 1
    if records == 0 and ctx.skip_count == skips_before:
        raise ArchiveError(file, "empty file (no records)")
    if len(groups) == 1:
        _stored(file, ctx, *next(iter(groups.items())))


def metrics_file(file: str) -> str | None:
    """The one ``<stem>_*_metrics.json`` beside ``<stem>.jsonl``, if there is exactly one."""
    name = logical_name(file)
    if not name.endswith(".jsonl"):
        return None
    stem = name[: -len(".jsonl")]
    folder = os.path.dirname(file) or "."
    found = [f for f in os.listdir(folder)
             if f.startswith(stem + "_") and f.endswith("_metrics.json")]
    return os.path.join(os.path.dirname(file), found[0]) if len(found) == 1 else None


def _stored(file: str, ctx: Context, group: tuple, max_n: int) -> None:
    path = metrics_file(file)
    if path is None:
        return
    try:
        doc = decode_json(read_all(path, max_record_bytes()))
    except BadRecord as e:
        raise ArchiveError(path, e.what, line=e.line) from None
    if not isinstance(doc, dict):
        return
    ctx.sidecars.add(os.path.normpath(path))
    acc = doc.get("acc")
    if max_n == 1 and _percent(acc):
        ctx.stored.append(StoredMetric(group, "pass@k", 1, acc / 100.0,
                                       location(path, path=("acc",)), "percent"))
    per_k = doc.get("pass@k")
    for key, value in (per_k.items() if isinstance(per_k, dict) else ()):
        if str(key).isdigit() and int(key) >= 1 and _percent(value):
            ctx.stored.append(StoredMetric(group, "pass@k", int(key), value / 100.0,
                                           location(path, path=("pass@k", str(key))),
                                           "percent"))


def _percent(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 100
