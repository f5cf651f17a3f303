"""The Qwen2.5-Math evaluation JSONL (also SimpleRL-Zoo, SkyThought and many RL repositories):
one line per problem with ``idx``, ``question``, ``gt``, ``pred`` and ``score``, a list of
booleans, one per sample. n = len(score), c = the number of true entries.

Stored: the ``<stem>_<prompt_type>_metrics.json`` beside ``<stem>.jsonl``. Its ``acc``
(percent) is the accuracy of the first sample of each problem in the original script (a fork
may store the mean over all samples instead), so it is kept as pass@1 only when every problem
has one sample; a ``"pass@k": {"1": ..., "2": ...}`` object (percent) is kept as it is.
"""

from __future__ import annotations

import json
import os

from passatk.archives.context import (
    BadRecord,
    Context,
    group_from,
    json_records,
    load_sidecar,
    path_groups,
    require,
    task_id,
)
from passatk.archives.counts import StoredMetric
from passatk.archives.errors import ArchiveError, location, show
from passatk.archives.harnesses._flags import is_flag, pass_flag
from passatk.archives.harnesses._writers import (
    WriteOptions,
    atomic_stream,
    dump_json,
    mean_pass_at_k,
)
from passatk.archives.harnesses.registry import FormatInfo, FormatSpec, register
from passatk.archives.io.opening import list_names, logical_name


def looks_like(record: object, file: str = "") -> bool:
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
    for lineno, rec in json_records(file, ctx):
        try:
            if isinstance(rec, BadRecord):
                raise rec
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
    found = [f for f in list_names(folder)
             if f.startswith(stem + "_") and f.endswith("_metrics.json")]
    return os.path.join(os.path.dirname(file), found[0]) if len(found) == 1 else None


def _stored(file: str, ctx: Context, group: tuple, max_n: int) -> None:
    path = metrics_file(file)
    if path is None:
        return
    doc = load_sidecar(path)
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


def write(path: str, tasks: list, flags: list, opts: WriteOptions) -> list[str]:
    with atomic_stream(path) as f:
        for t, p in zip(tasks, flags, strict=True):
            rec = {"idx": int(t) if t.isdigit() else t, "question": f"problem {t}", "gt": "1",
                   "pred": ["1" if x else "0" for x in p], "score": p}
            f.write(json.dumps(rec).encode() + b"\n")
    out = [path]
    name = logical_name(path)
    if opts.stored and name.endswith(".jsonl"):
        nmax = max(len(p) for p in flags)
        side = os.path.join(os.path.dirname(path), name[: -len(".jsonl")] + "_cot_metrics.json")
        doc = {"num_samples": len(tasks), "num_scores": sum(map(len, flags)),
               "timeout_samples": 0, "empty_samples": 0}
        if nmax == 1:
            doc["acc"] = 100 * mean_pass_at_k(flags, 1)
        nmin = min(len(p) for p in flags)
        doc["pass@k"] = {str(k): 100 * mean_pass_at_k(flags, k) for k in (1, 2, 4, 8)
                         if k <= nmin}
        dump_json(side, doc)
        out.append(side)
    return out


SPEC = register(FormatSpec(
    FormatInfo(
        "qwen-math", "Qwen2.5-Math evaluation (SimpleRL-Zoo, SkyThought, ...)",
        "<split>_<prompt>_..._e-1.jsonl (+ *_metrics.json)",
        'JSON Lines whose first record has "idx", a "score" list and "gt" or "pred"',
        "score is one pass flag per sample: n = its length, c = its true entries"),
    kind="lines", read=read, write=write, probe=looks_like,
    aliases=("qwen_math", "qwen2.5-math"), priority=3,  # before humaneval, after lm-eval
))
