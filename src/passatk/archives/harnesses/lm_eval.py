"""lm-evaluation-harness ``samples_<task>_<date>.jsonl``: one line per document.

Each line's ``pass@1`` is c/n for that document, where n is the number of responses: ``resps``
is either one request with n responses (``[[r1, ..., rn]]``) or n requests with one response
each. c = round(pass@1 * n), and it is an error when pass@1 * n is not within 1e-9 of an
integer. Rows are grouped by ``lm_eval_task`` (from the file name) and ``filter``. The stored
``pass@1,<filter>`` of ``results_<date>.json`` in the same directory is kept.

Tasks scored by another 0/1 metric (``exact_match``, ``acc`` on gsm8k and MATH) are read
through ``passed=FIELD``, or by detection (the one numeric metric the line lists under
``metrics``), with a note naming the field: each document is then one sample, c = the value.
"""

from __future__ import annotations

import json
import os

from passatk.archives.context import (
    BadRecord,
    Context,
    find_beside,
    finite_number,
    group_from,
    json_records,
    load_sidecar,
    path_groups,
    require,
    task_id,
)
from passatk.archives.counts import StoredMetric
from passatk.archives.errors import ArchiveError, location, show, stored_float
from passatk.archives.harnesses._flags import pass_flag
from passatk.archives.harnesses._patterns import LM_EVAL_SAMPLES, PASS_AT_FILTER
from passatk.archives.harnesses._writers import (
    WriteOptions,
    atomic_stream,
    dump_json,
    mean_pass_at_k,
)
from passatk.archives.harnesses.registry import FormatInfo, FormatSpec, register
from passatk.archives.io.opening import logical_name
from passatk.errors import Message, Option

INTEGRAL_TOLERANCE = 1e-9


def task_and_date(file: str) -> tuple[str, str | None]:
    """The lm-eval task and date from a ``samples_<task>_<date>.jsonl`` name.

    >>> task_and_date("out/samples_humaneval_instruct_2024-05-13T15-20-30.jsonl")
    ('humaneval_instruct', '2024-05-13T15-20-30')
    """
    m = LM_EVAL_SAMPLES.match(logical_name(file))
    if m is None:
        name = logical_name(file)
        return (name[: -len(".jsonl")] if name.endswith(".jsonl") else name), None
    return m.group(1), m.group(2)


def looks_like(record: object, file: str = "") -> bool:
    return isinstance(record, dict) and "doc_id" in record and "resps" in record


def _n(resps: object) -> int:
    if not isinstance(resps, list) or not resps or not all(isinstance(r, list) for r in resps):
        raise BadRecord(f"resps must be a non-empty list of lists, got {show(resps)}")
    if len(resps) == 1:
        n = len(resps[0])
    elif all(len(r) == 1 for r in resps):
        n = len(resps)
    else:
        raise BadRecord("resps must be one request with n responses or n requests with one "
                        f"response each, got lengths {[len(r) for r in resps][:8]}")
    if n == 0:
        raise BadRecord("resps holds no responses")
    return n


#: 0/1 metrics looked for when a line has no pass@1 and no "metrics" list
KNOWN_METRICS = ("exact_match", "acc", "acc_norm", "em")


def metric_field(rec: dict, passed: str | None) -> str:
    """The field that scores a document: ``passed`` if given, else pass@1, else the one
    numeric metric the line lists under ``metrics`` (or one of KNOWN_METRICS)."""
    if passed is not None:
        return passed
    if "pass@1" in rec:
        return "pass@1"
    listed = rec.get("metrics")
    names = listed if isinstance(listed, list) else KNOWN_METRICS
    found = [m for m in names if isinstance(m, str) and isinstance(rec.get(m), (int, float))]
    if len(found) != 1:
        what = f"metrics {found}" if found else "no 0/1 metric"
        raise BadRecord(Message(f"no pass@1, and {what} to read instead; name the field that "
                                "holds 0/1 with ", Option("passed")))
    return found[0]


def _counts(rec: dict, field: str) -> tuple[int, int]:
    """(n, c) of one document: pass@1 is c/n over the responses; any other metric must be
    0 or 1, the score of one sample (lm-eval scores the filtered response)."""
    if field != "pass@1":
        return 1, int(pass_flag(require(rec, field), f'field "{field}" (one sample\'s score)'))
    value = finite_number(require(rec, field), field)
    n = _n(require(rec, "resps"))
    if not 0.0 <= value <= 1.0:
        raise BadRecord(f'field "pass@1" must be in [0, 1], got {show(value)}')
    c = round(value * n)
    if abs(value * n - c) > INTEGRAL_TOLERANCE:
        raise BadRecord(f"pass@1 = {value!r} is not c/n for n = {n} responses "
                        f"(pass@1 * n = {value * n!r})")
    return n, c


def read(file: str, ctx: Context) -> None:
    ctx.set_metric("pass@k", file)
    o = ctx.options
    pathvals = path_groups(o.by, file)
    lm_task, date = task_and_date(file)
    records = 0
    skips_before = ctx.skip_count
    groups = set()
    field = None
    for lineno, rec in json_records(file, ctx):
        try:
            if isinstance(rec, BadRecord):
                raise rec
            task = task_id(require(rec, "doc_id"), "doc_id")
            if field is None:
                field = metric_field(rec, o.passed)
            n, c = _counts(rec, field)
            extra = [("lm_eval_task", lm_task)]
            if "filter" in rec:
                f = rec["filter"]
                if not (f is None or isinstance(f, (str, int, float, bool))):
                    raise BadRecord(f'field "filter" must be a string, got {show(f)}')
                extra.append(("filter", f))
            group = group_from(o.by, pathvals, rec, tuple(extra))
        except BadRecord as e:
            ctx.bad(file, e.what, line=lineno)
            continue
        groups.add(group)
        ctx.add(group, task, n, c)
        records += 1
    if records == 0 and ctx.skip_count == skips_before:
        raise ArchiveError(file, "empty file (no records)")
    if field not in (None, "pass@1") and o.passed is None:
        ctx.notes.append(f"{file}: no pass@1; read the 0/1 metric \"{field}\" as the pass flag "
                         "(one sample per document); --passed FIELD chooses another")
    if date is not None and field == "pass@1":
        _stored(file, ctx, lm_task, date, groups)


def _stored(file: str, ctx: Context, lm_task: str, date: str, groups: set) -> None:
    path = find_beside(os.path.dirname(file), f"results_{date}.json")
    if path is None:
        return
    doc = load_sidecar(path)
    results = doc.get("results") if isinstance(doc, dict) else None
    entry = results.get(lm_task) if isinstance(results, dict) else None
    if not isinstance(entry, dict):
        return
    by_filter: dict = {}
    for g in groups:
        by_filter.setdefault(dict(g).get("filter"), []).append(g)
    for key, value in entry.items():
        m = PASS_AT_FILTER.match(key)
        if not m or isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        matching = by_filter.get(m.group(2), [])
        if len(matching) == 1:  # a run-level number belongs to one group only
            ctx.stored.append(StoredMetric(matching[0], "pass@k", int(m.group(1)),
                                           stored_float(value, path, ("results", lm_task, key)),
                                           location(path, path=("results", lm_task, key)),
                                           "fraction"))


def write(path: str, tasks: list, flags: list, opts: WriteOptions) -> list[str]:
    with atomic_stream(path) as f:
        for t, p in zip(tasks, flags, strict=True):
            rec = {"doc_id": int(t) if t.isdigit() else t, "doc": {"task_id": t},
                   "target": "", "arguments": {}, "resps": [[f"r{j}" for j in range(len(p))]],
                   "filtered_resps": [[f"r{j}" for j in range(len(p))]],
                   "filter": "create_test", "metrics": ["pass@1"],
                   "pass@1": sum(p) / len(p)}
            f.write(json.dumps(rec).encode() + b"\n")
    out = [path]
    m = LM_EVAL_SAMPLES.match(logical_name(path))
    if opts.stored and m:
        value = mean_pass_at_k(flags, 1)
        side = os.path.join(os.path.dirname(path), f"results_{m.group(2)}.json")
        dump_json(side, {"results": {m.group(1): {"alias": m.group(1),
                                              "pass@1,create_test": value,
                                              "pass@1_stderr,create_test": 0.0}},
                     "configs": {}, "versions": {}})
        out.append(side)
    return out


def summary(file: str, doc: object) -> str | None:
    if isinstance(doc, dict) and isinstance(doc.get("results"), dict) and (
            "configs" in doc or "versions" in doc):
        return ("an lm-eval results file holds only aggregate numbers; read the "
                "samples_*.jsonl files next to it")
    return None


SPEC = register(FormatSpec(
    FormatInfo(
        "lm-eval", "lm-evaluation-harness",
        "samples_<task>_<date>.jsonl (+ results_<date>.json)",
        'JSON Lines whose first record has "doc_id" and "resps"',
        "c = round(pass@1 * n), n = number of responses; grouped by lm_eval_task and filter"),
    kind="lines", read=read, write=write, probe=looks_like,
    aliases=("lm-evaluation-harness", "lm_eval"), names=("samples_*.jsonl",),
    summary=summary, priority=3,  # before humaneval (a line may pass both), and its summary
    # before BigCodeBench's
    column_options=("passed",),
))
