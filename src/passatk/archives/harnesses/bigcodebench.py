"""BigCodeBench ``*_eval_results.json``; stored numbers from ``*_pass_at_k.json`` beside it."""

from __future__ import annotations

import os

from passatk.archives.context import Context, document_group, find_beside, load_sidecar
from passatk.archives.counts import StoredMetric
from passatk.archives.errors import ArchiveError, kind, location, show, stored_float
from passatk.archives.harnesses import _hints as hints
from passatk.archives.harnesses._patterns import PASS_AT, stored_numbers
from passatk.archives.harnesses._writers import WriteOptions, dump_json, mean_pass_at_k
from passatk.archives.harnesses.registry import FormatInfo, FormatSpec, register
from passatk.archives.io.opening import logical_name

STATUSES = ("pass", "fail", "timeout")


def matches(doc: object, file: str = "") -> bool:
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
    prefix = name[: -len("_eval_results.json")]
    return find_beside(os.path.dirname(file), f"{prefix}_pass_at_k.json")


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
    _walk(file, ctx, group, ev)
    side = sidecar(file)
    if side is not None:
        stored = load_sidecar(side)
        if not isinstance(stored, dict):
            raise ArchiveError(side, "must be a JSON object", path=())
        for key, k, value in stored_numbers(stored, PASS_AT):
            ctx.stored.append(StoredMetric(group, "pass@k", k, stored_float(value, side, (key,)),
                                           location(side, path=(key,)), "fraction"))


def _walk(file: str, ctx: Context, group, ev: dict) -> None:
    """The exact path: every sample checked in order."""
    failures = hints.failures(ctx, file)
    for task, samples in ev.items():
        if not isinstance(samples, list):
            ctx.bad(file, f"must be a list of samples, got {kind(samples)}",
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


def write(path: str, tasks: list, flags: list, opts: WriteOptions) -> list[str]:
    doc = {"date": "2024-11-30 00:00", "eval": {
        t: [{"task_id": t, "solution": f"def task_func(): return {j}\n",
             "status": "pass" if x else "fail", "details": {}} for j, x in enumerate(p)]
        for t, p in zip(tasks, flags, strict=True)}}
    dump_json(path, doc)
    out = [path]
    name = logical_name(path)
    if opts.stored and name.endswith("_eval_results.json"):
        side = os.path.join(os.path.dirname(path),
                            name[: -len("_eval_results.json")] + "_pass_at_k.json")
        nmin = min(len(p) for p in flags)
        numbers = {f"pass@{k}": mean_pass_at_k(flags, k) for k in (1, 5, 10) if k <= nmin}
        dump_json(side, {**numbers, "model": "synthetic", "split": "complete",
                         "subset": "full", "calibrated": True})
        out.append(side)
    return out


def summary(file: str, doc: object) -> str | None:
    if logical_name(file).endswith("_pass_at_k.json"):
        return ("a BigCodeBench pass@k file holds only aggregate numbers; read the "
                "*_eval_results.json next to it")
    return None


SPEC = register(FormatSpec(
    FormatInfo(
        "bigcodebench", "BigCodeBench", "*_eval_results.json (+ *_pass_at_k.json)",
        'JSON document with "eval" mapping tasks to lists of samples with "status"',
        'status "pass"'),
    kind="document", read=read, write=write, probe=matches,
    summary=summary, priority=2,  # with evalplus, before cruxeval
))
