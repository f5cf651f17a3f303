"""lm-evaluation-harness ``samples_<task>_<date>.jsonl``: one line per document, grouped by
``lm_eval_task`` (from the file name) and ``filter``; see docs/formats.md for the counting."""

import os
import re
from functools import lru_cache

import msgspec

from passatk.archives import context as cx
from passatk.archives.context import BadRecord
from passatk.archives.errors import show
from passatk.archives.harnesses._flags import Flag, Lines, pass_flag
from passatk.archives.harnesses._typed import store
from passatk.archives.harnesses._writers import WriteOptions, dump_json, dump_lines, mean_pass_at_k
from passatk.archives.harnesses.registry import FormatInfo, FormatSpec, register
from passatk.archives.io.opening import logical_name
from passatk.errors import Message, Option

INTEGRAL_TOLERANCE = 1e-9
KNOWN_METRICS = ("exact_match", "acc", "acc_norm", "em")  # 0/1 metrics, when none is listed
SAMPLES = re.compile(r"samples_(.+)_([^_]+)\.jsonl\Z")
PASS_AT_FILTER = re.compile(r"pass@([1-9][0-9]*),(.*)\Z")  # pass@1,create_test: k, filter
_Scalar = str | int | float | bool | None

def _n(resps: object) -> int:
    """n: ``resps`` is one request with n responses or n requests with one response each."""
    if not isinstance(resps, list) or not resps or not all(isinstance(r, list) for r in resps):
        raise BadRecord(f"resps must be a non-empty list of lists, got {show(resps)}")
    if len(resps) > 1 and any(len(r) != 1 for r in resps):
        raise BadRecord("resps must be one request with n responses or n requests with one "
                        f"response each, got lengths {[len(r) for r in resps][:8]}")
    if not resps[0]:
        raise BadRecord("resps holds no responses")
    return len(resps[0]) if len(resps) == 1 else len(resps)

def metric_field(rec: dict) -> str:
    """The field that scores a document without ``passed``: pass@1, else the one numeric
    metric the line lists under ``metrics`` (or one of KNOWN_METRICS)."""
    if "pass@1" in rec:
        return "pass@1"
    listed = rec.get("metrics")
    found = [m for m in (listed if isinstance(listed, list) else KNOWN_METRICS)
             if isinstance(m, str) and isinstance(rec.get(m), (int, float))]
    if len(found) != 1:
        raise BadRecord(Message(f"no pass@1, and {f'metrics {found}' if found else 'no 0/1 metric'}"
                                " to read instead; name the field that holds 0/1 with ",
                                Option("passed")))
    return found[0]

def _counts(field: str, value: object, resps: object) -> tuple[int, int]:
    """(n, c) of one document: pass@1 is c/n of its responses, another metric one sample's 0/1."""
    if field != "pass@1":
        return 1, int(pass_flag(value, f'field "{field}" (one sample\'s score)'))
    value = cx.finite_number(value, field)
    n = _n(resps)
    if not 0.0 <= value <= 1.0:
        raise BadRecord(f'field "pass@1" must be in [0, 1], got {show(value)}')
    if abs(value * n - round(value * n)) > INTEGRAL_TOLERANCE:
        raise BadRecord(f"pass@1 = {value!r} is not c/n for n = {n} responses "
                        f"(pass@1 * n = {value * n!r})")
    return n, round(value * n)

@lru_cache(maxsize=8)
def _decoder(field: str) -> msgspec.json.Decoder:
    """The view of a line scored by ``field`` (of ``resps`` only the lengths count)."""
    one = field == "pass@1"
    fields = [("doc_id", str | int), ("score", float if one else Flag),
              ("resps", list[list[msgspec.Raw]] if one else msgspec.Raw, ()),
              ("filter", _Scalar | msgspec.UnsetType, msgspec.UNSET)]
    return msgspec.json.Decoder(msgspec.defstruct("View", fields, rename={"score": field},
                                                  gc=False))

class _Reader(Lines):
    def __init__(self, file: str, ctx: cx.Context) -> None:
        super().__init__(file, ctx)
        m = SAMPLES.match(logical_name(file))  # the lm-eval task, the date
        self.task, self.date = m.groups() if m else (logical_name(file).removesuffix(".jsonl"),
                                                     None)
        self.field = self.opts.passed

    def view(self) -> msgspec.json.Decoder | None:
        typed = set(self.opts.record_by) <= {"lm_eval_task", "filter"} and self.field not in (
            None, "doc_id", "resps", "filter")  # (a view's names must differ)
        return _decoder(self.field) if typed else None

    def views(self, views: list) -> bool:
        try:
            rows = [(self._group(None, v.filter), cx.task_id(v.doc_id, "doc_id"),
                     *_counts(self.field, v.score, v.resps)) for v in views]
        except BadRecord:
            return False
        for row in rows:
            self.add(*row)
        return True

    def _group(self, rec: dict | None, flt: object) -> tuple:
        if not (flt is msgspec.UNSET or isinstance(flt, (str, int, float, bool, type(None)))):
            raise BadRecord(f'field "filter" must be a string, got {show(flt)}')
        extra = (("lm_eval_task", self.task),) + ((("filter", flt),) * (flt is not msgspec.UNSET))
        return cx.group_from(self.opts.by, self.pathvals, rec, extra)

    def count(self, rec: dict) -> None:
        task = cx.task_id(cx.require(rec, "doc_id"), "doc_id")
        self.field = self.field or metric_field(rec)
        n, c = _counts(self.field, cx.require(rec, self.field),
                       cx.require(rec, "resps") if self.field == "pass@1" else None)
        self.add(self._group(rec, rec.get("filter", msgspec.UNSET)), task, n, c)

    def read(self) -> None:
        super().read()
        if self.field not in (None, "pass@1") and self.opts.passed is None:
            self.ctx.notes.append(f"{self.file}: no pass@1; read the 0/1 metric \"{self.field}\" "
                                  "as the pass flag (one sample per document); --passed FIELD "
                                  "chooses another")
        if self.date is not None and self.field == "pass@1":
            self.stored(cx.find_beside(os.path.dirname(self.file), f"results_{self.date}.json"))

    def stored(self, path: str | None) -> None:
        """The run's ``pass@k,<filter>`` numbers, each of the one group of its filter."""
        doc = {} if path is None else cx.load_sidecar(path)
        entry = doc.get("results") if isinstance(doc, dict) else None
        entry = entry.get(self.task) if isinstance(entry, dict) else None
        filters = [dict(g).get("filter") for g in self.groups]
        for key, value in entry.items() if isinstance(entry, dict) else ():
            m = PASS_AT_FILTER.match(key)
            if m and filters.count(m.group(2)) == 1 and type(value) in (int, float):
                store(self.ctx, path, [*self.groups][filters.index(m.group(2))],
                      int(m.group(1)), value, ("results", self.task, key))

def write(path: str, tasks: list, flags: list, opts: WriteOptions) -> list[str]:
    written = dump_lines(path, ({
        "doc_id": int(t) if t.isdigit() else t, "doc": {"task_id": t}, "target": "",
        "arguments": {}, "resps": [[f"r{j}" for j in range(len(p))]],
        "filtered_resps": [[f"r{j}" for j in range(len(p))]], "filter": "create_test",
        "metrics": ["pass@1"], "pass@1": sum(p) / len(p)}
        for t, p in zip(tasks, flags, strict=True)))
    m = SAMPLES.match(logical_name(path))
    if not (opts.stored and m):
        return written
    return written + dump_json(os.path.join(os.path.dirname(path), f"results_{m.group(2)}.json"), {
        "results": {m.group(1): {"alias": m.group(1), "pass@1,create_test": mean_pass_at_k(
            flags, 1), "pass@1_stderr,create_test": 0.0}}, "configs": {}, "versions": {}})

def summary(file: str, doc: object) -> str | None:
    if isinstance(doc, dict) and isinstance(doc.get("results"), dict) and (
            "configs" in doc or "versions" in doc):
        return ("an lm-eval results file holds only aggregate numbers; read the "
                "samples_*.jsonl files next to it")
    return None

SPEC = register(FormatSpec(FormatInfo(
    "lm-eval", "lm-evaluation-harness", "samples_<task>_<date>.jsonl (+ results_<date>.json)",
    'JSON Lines whose first record has "doc_id" and "resps"',
    "c = round(pass@1 * n), n = number of responses; grouped by lm_eval_task and filter"),
    kind="lines", read=lambda file, ctx: _Reader(file, ctx).read(), write=write,
    probe=lambda record, file: (isinstance(record, dict) and "doc_id" in record
                                and "resps" in record),
    aliases=("lm-evaluation-harness", "lm_eval"), names=("samples_*.jsonl",),
    summary=summary,
    priority=3,  # before humaneval (a line may pass both), and before
    column_options=("passed",)))  # BigCodeBench's summary
