"""EvalPlus ``eval_results.json``, generations v1, v2 and v3; base and plus as two metric sets.

Every row gets the group field ``metric_set`` (``"base"`` or ``"plus"``). A sample passes base
when its base status is ``pass`` (v1: ``success``); it passes plus when both its base and plus
statuses are. A base-only run (v2/v3: every ``plus_status`` null; v1: ``"plus": []``) yields
only ``base``.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from passatk.archives.context import BadRecord, Context, doc_scalar_record, group_from, path_groups
from passatk.archives.counts import StoredMetric
from passatk.archives.errors import ArchiveError, kind, location, show, stored_float
from passatk.archives.harnesses._patterns import PASS_AT, stored_numbers
from passatk.archives.harnesses._writers import (
    WriteOptions,
    check_passes,
    dump_json,
    mean_pass_at_k,
)
from passatk.archives.harnesses.registry import FormatInfo, FormatSpec, register
from passatk.archives.io.documents import StreamedDict, load

STATUSES = ("pass", "fail", "timeout", None)
V1_STATUSES = ("success", "failed", "timed out", None)


_Status = Literal["pass", "fail", "timeout"] | None
_Scalar = str | int | float | bool | None


class Sample(msgspec.Struct, gc=False):  # strings only: no cycles to collect
    """One v2/v3 sample: only the fields counted (the solution is skipped, not decoded)."""

    base_status: _Status
    plus_status: _Status = None
    task_id: str | msgspec.UnsetType | None = msgspec.UNSET


class View(msgspec.Struct):
    """The typed view of a v2/v3 document (v1 is read from plain values)."""

    eval: dict[str, list[Sample]]
    pass_at_k: dict[str, dict[str, object]] | None = None
    date: _Scalar | msgspec.UnsetType = msgspec.UNSET
    hash: _Scalar | msgspec.UnsetType = msgspec.UNSET

    def record(self) -> dict:
        return {k: getattr(self, k) for k in ("date", "hash") if getattr(self, k) is not
                msgspec.UNSET}


_DECODER = msgspec.json.Decoder(View)
_UNSET = msgspec.UNSET


def view(data: bytes) -> View | None:
    """The typed view of a v2/v3 ``eval_results.json``; None when the bytes are not one.
    (A document without "base_status" in its first MiB is left to the plain decode: a
    view tried in vain costs a pass over the whole document.)"""
    if data.find(b'"base_status"', 0, 1 << 20) < 0:
        return None
    try:
        doc = _DECODER.decode(data)
    except (msgspec.DecodeError, RecursionError):
        return None
    first = next(iter(doc.eval.values()), None)
    return doc if first else None


def version(doc: object) -> int | None:
    """1, 2 or 3 when ``doc`` is an EvalPlus results document, else None."""
    if isinstance(doc, View):
        return 3 if doc.pass_at_k is not None else 2
    if not isinstance(doc, dict) or not isinstance(doc.get("eval"), dict):
        return None
    ev = doc["eval"]
    first = next(iter(ev.values()), None)
    if isinstance(first, dict) and "base" in first:
        return 1
    if isinstance(first, list) and first and isinstance(first[0], dict) \
            and "base_status" in first[0]:
        return 3 if "pass_at_k" in doc else 2
    return None


def matches(doc: object, file: str = "") -> bool:
    return version(doc) is not None


def _status(value: object, allowed: tuple, name: str) -> None:
    if value not in allowed or isinstance(value, bool):
        names = ", ".join("null" if a is None else f'"{a}"' for a in allowed)
        raise BadRecord(f"{name} must be one of {names}, got {show(value)}", (name,))


def _groups(file: str, ctx: Context, doc: dict | View) -> tuple:
    by = ctx.options.by
    pathvals = path_groups(by, file)
    record = doc.record() if isinstance(doc, View) else doc_scalar_record(doc)
    try:
        return tuple(group_from(by, pathvals, record, (("metric_set", m),), "document")
                     for m in ("base", "plus"))
    except BadRecord as e:
        raise ArchiveError(file, e.what, path=()) from None


def _plain_if_needed(file: str, ctx: Context, doc: dict | View) -> dict | View:
    """The plain document instead of the view when ``by`` names a field the view lacks."""
    by = ctx.options.by
    if isinstance(doc, View) and not set(by) <= {*path_groups(by, file), "metric_set",
                                                 *doc.record()}:
        return load(file)
    return doc


def read(file: str, ctx: Context, doc: dict | View) -> None:
    """Add one EvalPlus document; ``$.eval`` is read once, one task at a time."""
    ctx.set_metric("pass@k", file)
    doc = _plain_if_needed(file, ctx, doc)
    v = version(doc)
    if v is None:
        raise ArchiveError(file, "not an EvalPlus eval_results.json (no usable $.eval)")
    typed = isinstance(doc, View)
    gbase, gplus = _groups(file, ctx, doc)
    ev = doc.eval if typed else doc["eval"]
    if not ev:
        raise ArchiveError(file, "no tasks under $.eval", path=("eval",))
    rows, has_plus = (_v1_rows if v == 1 else _v2_rows)(file, ctx, ev)
    stored = doc.pass_at_k if typed else doc.get("pass_at_k")
    has_plus = has_plus or (v == 3 and isinstance(stored, dict) and "plus" in stored)
    for task, n, cb, cp in rows:
        if has_plus and cp is None:  # v1: a task whose plus results do not match base
            ctx.bad(file, "plus results do not match base (one per base result)",
                    path=("eval", task, "plus"))
            continue
        ctx.add(gbase, task, n, cb)
        if has_plus:
            ctx.add(gplus, task, n, cp)
    if v == 3:
        _stored(file, ctx, stored, gbase, gplus)


def _v1_rows(file: str, ctx: Context, ev: dict) -> tuple[list, bool]:
    rows, has_plus = [], False  # (task, n, base c, plus c or None)
    for task, entry in ev.items():
        try:
            n, cb, cp, plus = _v1_task(entry)
        except BadRecord as e:
            ctx.bad(file, e.what, path=("eval", task, *(e.path or ())))
            continue
        has_plus = has_plus or plus
        rows.append((task, n, cb, cp))
    return rows, has_plus


def _v2_rows(file: str, ctx: Context, ev: dict) -> tuple[list, bool]:
    """(task, n, base c, plus c) per task; typed samples (the view, or a streamed task that
    decodes as one) and plain ones alike."""
    pairs = ev.typed(list[Sample]) if isinstance(ev, StreamedDict) else ev.items()
    rows, has_plus = [], False
    for task, samples in pairs:
        if not isinstance(samples, list):
            ctx.bad(file, f"must be a list of samples, got {kind(samples)}",
                    path=("eval", task))
            continue
        if not samples:
            ctx.bad(file, "no samples for this task", path=("eval", task))
            continue
        row = _typed_task(samples, task) or _v2_task(file, ctx, task, samples)
        if row[0]:
            rows.append((task, *row[:3]))
        has_plus = has_plus or row[3]
    return rows, has_plus


def _typed_task(samples: list, task: str) -> tuple[int, int, int, bool] | None:
    """(n, base c, plus c, any plus status) of a task msgspec decoded as typed samples; None
    when it is not typed or a sample names another task (:func:`_v2_task` reports it)."""
    if type(samples[0]) is not Sample or not {s.task_id for s in samples} <= {_UNSET, task}:
        return None
    return (len(samples), sum(s.base_status == "pass" for s in samples),
            sum(s.base_status == "pass" and s.plus_status == "pass" for s in samples),
            any(s.plus_status is not None for s in samples))


def _v2_task(file: str, ctx: Context, task: str, samples: list) -> tuple[int, int, int, bool]:
    """The same, sample by sample: each bad sample skipped with its error."""
    n = cb = cp = 0
    has_plus = False
    for i, s in enumerate(samples):
        try:
            s = _v2_sample(s, task)
        except BadRecord as e:
            ctx.bad(file, e.what, path=("eval", task, i, *(e.path or ())))
            continue
        n += 1
        b = s.base_status == "pass"
        cb += b
        cp += b and s.plus_status == "pass"
        has_plus = has_plus or s.plus_status is not None
    return n, cb, cp, has_plus


def _v2_sample(s: object, task: str) -> Sample:
    """Check one v2/v3 sample (plain or typed)."""
    if isinstance(s, Sample):
        s = {"task_id": s.task_id, "base_status": s.base_status, "plus_status": s.plus_status}
        s = {k: v for k, v in s.items() if v is not _UNSET}
    if not isinstance(s, dict):
        raise BadRecord(f"sample must be an object, got {kind(s)}")
    if "task_id" in s and s["task_id"] != task:
        raise BadRecord(f"task_id {show(s['task_id'])} differs from its key {task!r}",
                        ("task_id",))
    if "base_status" not in s:
        raise BadRecord('missing field "base_status"')
    _status(s["base_status"], STATUSES, "base_status")
    ps = s.get("plus_status")
    _status(ps, STATUSES, "plus_status")
    return Sample(s["base_status"], ps)


def _stored(file: str, ctx: Context, stored: object, gbase, gplus) -> None:
    if not isinstance(stored, dict):
        return
    for mset, group in (("base", gbase), ("plus", gplus)):
        values = stored.get(mset)
        for key, k, value in stored_numbers(values, PASS_AT) if isinstance(values, dict) \
                else ():
            ctx.stored.append(StoredMetric(
                group, "pass@k", k, stored_float(value, file, ("pass_at_k", mset, key)),
                location(file, path=("pass_at_k", mset, key)), "fraction"))


def _v1_checks(entry: object) -> tuple[list, list]:
    """``base`` and ``plus`` of a v1 entry, with nfiles and files checked against base."""
    if not isinstance(entry, dict):
        raise BadRecord(f"must be an object, got {kind(entry)}")
    base, plus = entry.get("base"), entry.get("plus", [])
    if not isinstance(base, list):
        raise BadRecord(f"base must be a list, got {show(base)}", ("base",))
    n = len(base)
    if "nfiles" in entry and entry["nfiles"] != n:
        raise BadRecord(f"nfiles is {show(entry['nfiles'])} but base has {n} results",
                        ("nfiles",))
    if "files" in entry and (not isinstance(entry["files"], list) or len(entry["files"]) != n):
        raise BadRecord(f"files must list {n} paths, one per base result", ("files",))
    if not isinstance(plus, list):
        raise BadRecord(f"plus must be a list, got {show(plus)}", ("plus",))
    return base, plus


def _v1_passes(results: list, name: str) -> list[bool]:
    out = []
    for i, r in enumerate(results):
        if not (isinstance(r, list) and len(r) == 2):
            raise BadRecord(f"must be [status, details], got {show(r)}", (name, i))
        try:
            _status(r[0], V1_STATUSES, "status")
        except BadRecord as e:
            raise BadRecord(e.what, (name, i, 0)) from None
        out.append(r[0] == "success")
    return out


def _v1_task(entry: object) -> tuple:
    """(n, base c, plus c or None when plus does not match base, whether plus is non-empty)."""
    base, plus = _v1_checks(entry)
    b, p = _v1_passes(base, "base"), _v1_passes(plus, "plus")
    if not base:
        raise BadRecord("no results under base", ("base",))
    cp = sum(x and y for x, y in zip(b, p, strict=True)) if len(p) == len(b) else None
    return len(b), sum(b), cp, bool(plus)


_V1_STATUS = {True: "success", False: "failed"}


def _v1_entry(base: list, plus: list | None) -> dict:
    return {"nfiles": len(base), "base": [[_V1_STATUS[b], [b]] for b in base],
            "plus": [] if plus is None else [[_V1_STATUS[b and p], [b and p]]
                                             for b, p in zip(base, plus, strict=True)]}


def _v2_samples(i: int, t: str, base: list, plus: list | None) -> list:
    def status(x):
        return None if x is None else "pass" if x else "fail"

    return [{"task_id": t, "solution": f"def f_{i}_{j}(): pass\n", "base_status": status(b),
             "plus_status": status(None if plus is None else plus[j]),
             "base_fail_tests": [] if b else [[j]],
             "plus_fail_tests": None if plus is None else ([] if plus[j] else [[j]])}
            for j, b in enumerate(base)]


def _plus_flags(tasks: list, flags: list, opts: WriteOptions) -> list | None:
    if opts.plus is None:
        return None
    _, plus = check_passes(tasks, opts.plus)
    for i, (b, p) in enumerate(zip(flags, plus, strict=True)):
        if len(b) != len(p):
            raise ValueError(f"plus[{i}] has {len(p)} samples, passes[{i}] {len(b)}")
    return plus


def _stored_doc(flags: list, plus: list | None) -> dict:
    nmin = min(len(b) for b in flags)
    sets = {"base": flags} if plus is None else {"base": flags, "plus": [
        [b and p for b, p in zip(bs, ps, strict=True)] for bs, ps in zip(flags, plus, strict=True)]}
    return {name: {f"pass@{k}": mean_pass_at_k(fl, k) for k in (1, 10, 100) if k <= nmin}
            for name, fl in sets.items()}


def write(path: str, tasks: list, flags: list, opts: WriteOptions) -> list[str]:
    version = opts.evalplus_version
    if version not in (1, 2, 3):
        raise ValueError(f"evalplus_version must be 1, 2 or 3, got {version!r}")
    plus = _plus_flags(tasks, flags, opts)
    ev = {t: _v1_entry(b, plus and plus[i]) if version == 1
          else _v2_samples(i, t, b, plus and plus[i])
          for i, (t, b) in enumerate(zip(tasks, flags, strict=True))}
    doc = {"date": "2024-11-30 00:00", "hash": "synthetic" if version > 1 else 0, "eval": ev}
    if version == 3 and opts.stored:
        doc["pass_at_k"] = _stored_doc(flags, plus)
    dump_json(path, doc)
    return [path]


SPEC = register(FormatSpec(
    FormatInfo(
        "evalplus", "EvalPlus (v1, v2, v3)", "eval_results.json",
        'JSON document with "eval" mapping tasks to {"base": ...} (v1) or to lists of '
        'samples with "base_status" (v2; v3 adds "pass_at_k")',
        'group metric_set=base: base status pass (v1 success); metric_set=plus: base and '
        'plus both pass; base-only runs give only base'),
    kind="document", read=read, write=write, probe=matches, view=view,
    names=("eval_results.json",), write_options=("plus", "evalplus_version"), priority=2,
))
