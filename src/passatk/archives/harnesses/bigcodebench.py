"""BigCodeBench ``*_eval_results.json``; stored numbers from ``*_pass_at_k.json`` beside it."""

import os
from typing import Any

from passatk.archives import context as cx
from passatk.archives.errors import ArchiveError, kind, show
from passatk.archives.harnesses._flags import count_tasks
from passatk.archives.harnesses._patterns import PASS_AT, stored_numbers
from passatk.archives.harnesses._typed import means, store
from passatk.archives.harnesses._writers import WriteOptions, dump_json
from passatk.archives.harnesses.registry import FormatInfo, FormatSpec, register
from passatk.archives.io.opening import logical_name

STATUSES = ("pass", "fail", "timeout")


def matches(doc: object, file: str = "") -> bool:
    if not isinstance(doc, dict) or not isinstance(doc.get("eval"), dict):
        return False
    first = next(iter(doc["eval"].values()), None)
    return (isinstance(first, list) and bool(first) and isinstance(first[0], dict)
            and "status" in first[0] and "base_status" not in first[0])

def _check(task: str, s: object) -> tuple[bool, object]:
    if not isinstance(s, dict) or "status" not in s:
        raise cx.BadRecord('sample must be an object with a "status"')
    if s["status"] not in STATUSES:
        raise cx.BadRecord(f'status must be one of "pass", "fail", "timeout", got '
                           f"{show(s['status'])}", ("status",))
    details = s.get("details")  # its "ALL": the program could not run (per-test ones: the model)
    return s["status"] == "pass", details.get("ALL") if isinstance(details, dict) else None

def _tasks(file: str, ctx: cx.Context, ev: dict):
    for task, samples in ev.items():
        if isinstance(samples, list) and samples:
            yield ("eval", task), task, samples
        else:
            ctx.bad(file, f"must be a list of samples, got {kind(samples)}" if samples != []
                    else "no samples for this task", path=("eval", task))

def read(file: str, ctx: cx.Context, doc: dict) -> None:
    ctx.set_metric("pass@k", file)
    group = cx.document_group(file, ctx, doc)
    ev = doc.get("eval")
    if not isinstance(ev, dict) or not ev:
        raise ArchiveError(file, "no tasks under $.eval", path=("eval",))
    # the plain document, sample by sample (a msgspec Struct copy of it measured no faster)
    count_tasks(file, ctx, group, file, _tasks(file, ctx, ev), Any, _check, _check)
    name = logical_name(file)  # stored numbers: <prefix>_pass_at_k.json
    side = cx.find_beside(os.path.dirname(file), name.removesuffix("_eval_results.json")
                          + "_pass_at_k.json") if name.endswith("_eval_results.json") else None
    stored = {} if side is None else cx.load_sidecar(side)
    if not isinstance(stored, dict):
        raise ArchiveError(side, "must be a JSON object", path=())
    for key, k, value in stored_numbers(stored, PASS_AT):
        store(ctx, side, group, k, value, (key,))

def write(path: str, tasks: list, flags: list, opts: WriteOptions) -> list[str]:
    written = dump_json(path, {"date": "2024-11-30 00:00", "eval": {
        t: [{"task_id": t, "solution": f"def task_func(): return {j}\n",
             "status": "pass" if x else "fail", "details": {}} for j, x in enumerate(p)]
        for t, p in zip(tasks, flags, strict=True)}})
    name = logical_name(path)
    if not (opts.stored and name.endswith("_eval_results.json")):
        return written
    side = os.path.join(os.path.dirname(path),
                        name.removesuffix("_eval_results.json") + "_pass_at_k.json")
    return written + dump_json(side, {**means(flags, (1, 5, 10)), "model": "synthetic",
                                      "split": "complete", "subset": "full", "calibrated": True})

SPEC = register(FormatSpec(FormatInfo(
    "bigcodebench", "BigCodeBench", "*_eval_results.json (+ *_pass_at_k.json)",
    'JSON document with "eval" mapping tasks to lists of samples with "status"',
    'status "pass"'),
    kind="document", read=read, write=write, probe=matches,
    summary=lambda file, doc: (
        "a BigCodeBench pass@k file holds only aggregate numbers; read the *_eval_results.json "
        "next to it") if logical_name(file).endswith("_pass_at_k.json") else None,
    priority=2))  # with evalplus, before cruxeval
