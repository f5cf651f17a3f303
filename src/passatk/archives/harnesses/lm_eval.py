"""lm-evaluation-harness ``samples_<task>_<date>.jsonl``: one line per document, grouped by
``lm_eval_task`` (the file name) and ``filter``.

``pass@1`` is c/n over the n responses of ``resps`` (one request with n responses, or n requests
with one each): c = round(pass@1 * n), an error unless within 1e-9 of an integer. Another 0/1
metric (``passed=FIELD``, or the one numeric metric a line lists) scores one sample per document.
The stored ``pass@1,<filter>`` of ``results_<date>.json`` beside it is kept.
"""

from __future__ import annotations

import json
import os
import re
from functools import lru_cache

import msgspec

from passatk.archives.context import (
    BadRecord,
    Context,
    find_beside,
    finite_number,
    group_from,
    load_sidecar,
    require,
    task_id,
)
from passatk.archives.counts import StoredMetric
from passatk.archives.errors import location, show, stored_float
from passatk.archives.harnesses._flags import Flag, Lines, pass_flag
from passatk.archives.harnesses._writers import WriteOptions, atomic_stream, dump_json
from passatk.archives.harnesses._writers import mean_pass_at_k as mean
from passatk.archives.harnesses.registry import FormatInfo, FormatSpec, register
from passatk.archives.io.opening import logical_name
from passatk.errors import Message, Option

INTEGRAL_TOLERANCE = 1e-9
#: 0/1 metrics looked for when a line has no pass@1 and no "metrics" list
KNOWN_METRICS = ("exact_match", "acc", "acc_norm", "em")
SAMPLES = re.compile(r"samples_(.+)_([^_]+)\.jsonl\Z")
PASS_AT_FILTER = re.compile(r"pass@([1-9][0-9]*),(.*)\Z")  # pass@1,create_test: k, filter
_Scalar = str | int | float | bool | None


def task_and_date(file: str) -> tuple[str, str | None]:
    """The lm-eval task and date from a ``samples_<task>_<date>.jsonl`` name.

    >>> task_and_date("out/samples_humaneval_instruct_2024-05-13T15-20-30.jsonl")
    ('humaneval_instruct', '2024-05-13T15-20-30')
    """
    name = logical_name(file)
    m = SAMPLES.match(name)
    return (m.group(1), m.group(2)) if m else (name.removesuffix(".jsonl"), None)


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


def metric_field(rec: dict) -> str:
    """The field that scores a document without ``passed``: pass@1, else the one numeric
    metric the line lists under ``metrics`` (or one of KNOWN_METRICS)."""
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


def _counts(field: str, value: object, resps: object = None) -> tuple[int, int]:
    """(n, c) of one document: pass@1 is c/n over the responses; any other metric is the 0/1
    score of one sample (lm-eval scores the filtered response)."""
    if field != "pass@1":
        return 1, int(pass_flag(value, f'field "{field}" (one sample\'s score)'))
    value = finite_number(value, field)
    n = _n(resps)
    if not 0.0 <= value <= 1.0:
        raise BadRecord(f'field "pass@1" must be in [0, 1], got {show(value)}')
    c = round(value * n)
    if abs(value * n - c) > INTEGRAL_TOLERANCE:
        raise BadRecord(f"pass@1 = {value!r} is not c/n for n = {n} responses "
                        f"(pass@1 * n = {value * n!r})")
    return n, c


@lru_cache(maxsize=8)
def _decoder(field: str):
    """The view of a line scored by ``field``: only the fields read (``resps``: its lengths)."""
    one = field == "pass@1"
    fields = [("doc_id", str | int), ("score", float if one else Flag),
              ("resps", list[list[msgspec.Raw]] if one else msgspec.Raw, ()),
              ("filter", _Scalar | msgspec.UnsetType, msgspec.UNSET)]
    return msgspec.json.Decoder(msgspec.defstruct("View", fields, rename={"score": field},
                                                  gc=False))


class _Reader(Lines):
    def __init__(self, file: str, ctx: Context) -> None:
        super().__init__(file, ctx)
        self.task, self.date = task_and_date(file)
        self.field, self.groups = self.opts.passed, set()
        self.typed = set(self.opts.record_by) <= {"lm_eval_task", "filter"}

    def view(self):
        return _decoder(self.field) if self.typed and self.field is not None else None

    def views(self, views: list) -> bool:
        try:
            rows = [(self._group(None, v.filter), task_id(v.doc_id, "doc_id"),
                     *_counts(self.field, v.score, v.resps)) for v in views]
        except BadRecord:
            return False
        for group, task, n, c in rows:
            self.groups.add(group)
            self.ctx.add(group, task, n, c)
        return True

    def _group(self, rec: dict | None, flt: object) -> tuple:
        if not (flt is msgspec.UNSET or isinstance(flt, (str, int, float, bool, type(None)))):
            raise BadRecord(f'field "filter" must be a string, got {show(flt)}')
        extra = (("lm_eval_task", self.task),) + ((("filter", flt),) * (flt is not msgspec.UNSET))
        return group_from(self.opts.by, self.pathvals, rec, extra)

    def count(self, rec: dict) -> None:
        task = task_id(require(rec, "doc_id"), "doc_id")
        self.field = self.field or metric_field(rec)
        n, c = _counts(self.field, require(rec, self.field),
                       require(rec, "resps") if self.field == "pass@1" else None)
        group = self._group(rec, rec.get("filter", msgspec.UNSET))
        self.groups.add(group)
        self.ctx.add(group, task, n, c)

    def read(self) -> None:
        super().read()
        if self.field not in (None, "pass@1") and self.opts.passed is None:
            self.ctx.notes.append(f"{self.file}: no pass@1; read the 0/1 metric \"{self.field}\" "
                                  "as the pass flag (one sample per document); --passed FIELD "
                                  "chooses another")
        if self.date is not None and self.field == "pass@1":
            _stored(self.file, self.ctx, self.task, self.date, self.groups)


def read(file: str, ctx: Context) -> None:
    _Reader(file, ctx).read()


def _stored(file: str, ctx: Context, lm_task: str, date: str, groups: set) -> None:
    path = find_beside(os.path.dirname(file), f"results_{date}.json")
    doc = {} if path is None else load_sidecar(path)
    entry = doc.get("results") if isinstance(doc, dict) else None
    entry = entry.get(lm_task) if isinstance(entry, dict) else None
    by_filter: dict = {}
    for g in groups:
        by_filter.setdefault(dict(g).get("filter"), []).append(g)
    for key, value in entry.items() if isinstance(entry, dict) else ():
        m = PASS_AT_FILTER.match(key)
        matching = by_filter.get(m.group(2), []) if m else []
        if len(matching) == 1 and type(value) in (int, float):  # a run's number: one group
            where = ("results", lm_task, key)
            ctx.stored.append(StoredMetric(matching[0], "pass@k", int(m.group(1)),
                                           stored_float(value, path, where),
                                           location(path, path=where), "fraction"))


def write(path: str, tasks: list, flags: list, opts: WriteOptions) -> list[str]:
    with atomic_stream(path) as f:
        for t, p in zip(tasks, flags, strict=True):
            resps = [[f"r{j}" for j in range(len(p))]]
            rec = {"doc_id": int(t) if t.isdigit() else t, "doc": {"task_id": t},
                   "target": "", "arguments": {}, "resps": resps, "filtered_resps": resps,
                   "filter": "create_test", "metrics": ["pass@1"], "pass@1": sum(p) / len(p)}
            f.write(json.dumps(rec).encode() + b"\n")
    m = SAMPLES.match(logical_name(path))
    if not (opts.stored and m):
        return [path]
    side = os.path.join(os.path.dirname(path), f"results_{m.group(2)}.json")
    dump_json(side, {"results": {m.group(1): {
        "alias": m.group(1), "pass@1,create_test": mean(flags, 1),
        "pass@1_stderr,create_test": 0.0}}, "configs": {}, "versions": {}})
    return [path, side]


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
    summary=summary, priority=3,  # before humaneval (a line may pass both), and before
    column_options=("passed",),  # BigCodeBench's summary
))
