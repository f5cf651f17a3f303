"""EvalPlus ``eval_results.json`` v1, v2 and v3: group ``metric_set`` ``base`` (base status pass;
v1 success) and ``plus`` (base and plus both pass; absent from base-only runs)."""

from typing import Literal

import msgspec

from passatk.archives.context import BadRecord, Context, doc_scalar_record, group_from
from passatk.archives.errors import ArchiveError, kind, show
from passatk.archives.harnesses._patterns import PASS_AT, stored_numbers
from passatk.archives.harnesses._typed import begin, fatal, means, store, whole
from passatk.archives.harnesses._writers import WriteOptions, check_passes, dump_json
from passatk.archives.harnesses.registry import FormatInfo, FormatSpec, register
from passatk.archives.io.documents import StreamedDict, load

STATUSES = ("pass", "fail", "timeout", None)
V1_STATUSES = ("success", "failed", "timed out", None)
_Status = Literal["pass", "fail", "timeout"] | None
_Scalar = str | int | float | bool | None | msgspec.UnsetType
_UNSET = msgspec.UNSET


class Sample(msgspec.Struct, gc=False):  # the fields counted; strings only: no cycles
    base_status: _Status
    plus_status: _Status = None
    task_id: str | msgspec.UnsetType | None = _UNSET


class View(msgspec.Struct):  # a v2/v3 document (v1 is read from plain values)
    eval: dict[str, list[Sample]]
    pass_at_k: dict[str, dict[str, object]] | None = None
    date: _Scalar = _UNSET
    hash: _Scalar = _UNSET

    def record(self) -> dict:
        return {k: getattr(self, k) for k in ("date", "hash") if getattr(self, k) is not _UNSET}

    def get(self, key: str) -> object:
        return getattr(self, key)


view = whole(View, b'"base_status"', lambda doc: bool(next(iter(doc.eval.values()), None)))


def version(doc: object, file: str = "") -> int | None:
    """1, 2 or 3 when ``doc`` is an EvalPlus results document, else None (the probe)."""
    if isinstance(doc, View):
        return 3 if doc.pass_at_k is not None else 2
    if not isinstance(doc, dict) or not isinstance(doc.get("eval"), dict):
        return None
    first = next(iter(doc["eval"].values()), None)
    if isinstance(first, dict) and "base" in first:
        return 1
    if isinstance(first, list) and first and isinstance(first[0], dict) \
            and "base_status" in first[0]:
        return 3 if "pass_at_k" in doc else 2
    return None


def _status(value: object, allowed: tuple, name: str, path: tuple) -> None:
    if value not in allowed or isinstance(value, bool):
        names = ", ".join("null" if a is None else f'"{a}"' for a in allowed)
        raise BadRecord(f"{name} must be one of {names}, got {show(value)}", path)


def read(file: str, ctx: Context, doc: dict | View) -> None:
    """Add one EvalPlus document; ``$.eval`` is read once, one task at a time."""
    by, pathvals = begin(ctx, file)
    if isinstance(doc, View) and not set(by) <= {*pathvals, "metric_set", *doc.record()}:
        doc = load(file)  # the plain document: ``by`` names a field the view lacks
    if (v := version(doc)) is None:
        raise ArchiveError(file, "not an EvalPlus eval_results.json (no usable $.eval)")
    groups = _groups(file, by, pathvals, doc)
    ev, stored = doc.get("eval"), doc.get("pass_at_k")
    if not ev:
        raise ArchiveError(file, "no tasks under $.eval", path=("eval",))
    rows, has_plus = _rows(file, ctx, ev, v)
    has_plus = has_plus or (v == 3 and isinstance(stored, dict) and "plus" in stored)
    for task, n, cb, cp in rows:
        if has_plus and cp is None:  # v1: a task whose plus results do not match base
            ctx.bad(file, "plus results do not match base (one per base result)",
                    path=("eval", task, "plus"))
            continue
        for group, c in zip(groups, (cb, cp) if has_plus else (cb,), strict=False):
            ctx.add(group, task, n, c)
    if v == 3 and isinstance(stored, dict):
        _stored(file, ctx, stored, groups)


def _stored(file: str, ctx: Context, stored: dict, groups: list) -> None:
    for mset, group in zip(("base", "plus"), groups, strict=True):
        values = stored.get(mset)
        for key, k, value in stored_numbers(values, PASS_AT) if isinstance(values, dict) else ():
            store(ctx, file, group, k, value, ("pass_at_k", mset, key))


def _groups(file: str, by: tuple, pathvals: dict, doc: dict | View) -> list:
    record = doc.record() if isinstance(doc, View) else doc_scalar_record(doc)
    with fatal(file, ()):
        return [group_from(by, pathvals, record, (("metric_set", m),), "document")
                for m in ("base", "plus")]


def _rows(file: str, ctx: Context, ev: dict, v: int) -> tuple[list, bool]:
    """(task, n, base c, plus c or None) per task, and whether any task has plus results."""
    pairs = ev.typed(list[Sample]) if v > 1 and isinstance(ev, StreamedDict) else ev.items()
    rows, has_plus = [], False
    for task, entry in pairs:
        try:
            n, cb, cp, plus = _v1_task(entry) if v == 1 else _v2_task(file, ctx, task, entry)
        except BadRecord as e:
            ctx.bad(file, e.what, path=("eval", task, *(e.path or ())))
            continue
        has_plus = has_plus or plus
        if n:
            rows.append((task, n, cb, cp))
    return rows, has_plus


def _v2_task(file: str, ctx: Context, task: str, samples: object) -> tuple:
    if not isinstance(samples, list):
        raise BadRecord(f"must be a list of samples, got {kind(samples)}")
    if not samples:
        raise BadRecord("no samples for this task")
    if type(samples[0]) is not Sample or not {s.task_id for s in samples} <= {_UNSET, task}:
        samples = [x for i, s in enumerate(samples)
                   if (x := _v2_sample(file, ctx, task, i, s)) is not None]
    return (len(samples), sum(s.base_status == "pass" for s in samples),
            sum(s.base_status == "pass" and s.plus_status == "pass" for s in samples),
            any(s.plus_status is not None for s in samples))


def _v2_sample(file: str, ctx: Context, task: str, i: int, s: object) -> Sample | None:
    """One sample (plain, or typed naming another task) checked; None, told, when bad."""
    if isinstance(s, Sample):
        s = msgspec.to_builtins(s)  # without the unset task_id
    try:
        if not isinstance(s, dict):
            raise BadRecord(f"sample must be an object, got {kind(s)}")
        if "task_id" in s and s["task_id"] != task:
            raise BadRecord(f"task_id {show(s['task_id'])} differs from its key {task!r}",
                            ("task_id",))
        if "base_status" not in s:
            raise BadRecord('missing field "base_status"')
        for name in ("base_status", "plus_status"):
            _status(s.get(name), STATUSES, name, (name,))
    except BadRecord as e:
        ctx.bad(file, e.what, path=("eval", task, i, *(e.path or ())))
        return None
    return Sample(s["base_status"], s.get("plus_status"))


def _v1_passes(results: list, name: str) -> list[bool]:
    for i, r in enumerate(results):
        if not (isinstance(r, list) and len(r) == 2):
            raise BadRecord(f"must be [status, details], got {show(r)}", (name, i))
        _status(r[0], V1_STATUSES, "status", (name, i, 0))
    return [r[0] == "success" for r in results]


def _v1_task(entry: object) -> tuple:
    """(n, base c, plus c or None when plus does not match base, whether plus is non-empty)."""
    if not isinstance(entry, dict):
        raise BadRecord(f"must be an object, got {kind(entry)}")
    base, plus = entry.get("base"), entry.get("plus", [])
    if not isinstance(base, list):
        raise BadRecord(f"base must be a list, got {show(base)}", ("base",))
    n = len(base)
    if "nfiles" in entry and entry["nfiles"] != n:
        raise BadRecord(f"nfiles is {show(entry['nfiles'])} but base has {n} results", ("nfiles",))
    if "files" in entry and (not isinstance(entry["files"], list) or len(entry["files"]) != n):
        raise BadRecord(f"files must list {n} paths, one per base result", ("files",))
    if not isinstance(plus, list):
        raise BadRecord(f"plus must be a list, got {show(plus)}", ("plus",))
    b, p = _v1_passes(base, "base"), _v1_passes(plus, "plus")
    if not base:
        raise BadRecord("no results under base", ("base",))
    cp = sum(x and y for x, y in zip(b, p, strict=True)) if len(p) == len(b) else None
    return n, sum(b), cp, bool(plus)


def _task(version: int, i: int, t: str, base: list, plus: list | None) -> object:
    if version == 1:
        both = [] if plus is None else [b and p for b, p in zip(base, plus, strict=True)]
        return {"nfiles": len(base), "base": [["success" if b else "failed", [b]] for b in base],
                "plus": [["success" if x else "failed", [x]] for x in both]}
    status = {True: "pass", False: "fail", None: None}.get
    return [{"task_id": t, "solution": f"def f_{i}_{j}(): pass\n", "base_status": status(b),
             "plus_status": status(None if plus is None else plus[j]),
             "base_fail_tests": [] if b else [[j]],
             "plus_fail_tests": None if plus is None else ([] if plus[j] else [[j]])}
            for j, b in enumerate(base)]


def _plus(tasks: list, flags: list, opts: WriteOptions) -> list | None:
    plus = None if opts.plus is None else check_passes(tasks, opts.plus)[1]
    for i, (b, p) in enumerate(zip(flags, plus or flags, strict=True)):
        if len(b) != len(p):
            raise ValueError(f"plus[{i}] has {len(p)} samples, passes[{i}] {len(b)}")
    return plus


def write(path: str, tasks: list, flags: list, opts: WriteOptions) -> list[str]:
    version = opts.evalplus_version
    if version not in (1, 2, 3):
        raise ValueError(f"evalplus_version must be 1, 2 or 3, got {version!r}")
    plus = _plus(tasks, flags, opts)
    rows = zip(tasks, flags, plus or [None] * len(tasks), strict=True)
    doc = {"date": "2024-11-30 00:00", "hash": "synthetic" if version > 1 else 0,
           "eval": {t: _task(version, i, t, b, p) for i, (t, b, p) in enumerate(rows)}}
    if version == 3 and opts.stored:
        both = plus and [[b and p for b, p in zip(*bp, strict=True)]
                         for bp in zip(flags, plus, strict=True)]
        doc["pass_at_k"] = {name: means(fl, (1, 10, 100)) for name, fl in
                            (("base", flags), ("plus", both)) if fl is not None}
    dump_json(path, doc)
    return [path]


SPEC = register(FormatSpec(FormatInfo(
    "evalplus", "EvalPlus (v1, v2, v3)", "eval_results.json",
    'JSON document with "eval" mapping tasks to {"base": ...} (v1) or to lists of samples with '
    '"base_status" (v2; v3 adds "pass_at_k")', 'group metric_set=base: base status pass (v1 '
    'success); metric_set=plus: base and plus both pass; base-only runs give only base'),
    kind="document", read=read, write=write, probe=version, view=view,
    names=("eval_results.json",), write_options=("plus", "evalplus_version"), priority=2))
