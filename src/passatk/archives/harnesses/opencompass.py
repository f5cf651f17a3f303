"""OpenCompass results JSON with per-sample ``details``; stored ``*pass@k`` numbers in percent."""

from __future__ import annotations

from passatk.archives.context import (
    BadRecord,
    Context,
    doc_scalar_record,
    group_from,
    path_groups,
    require,
    task_id,
)
from passatk.archives.counts import StoredMetric
from passatk.archives.errors import ArchiveError, kind, location, stored_float
from passatk.archives.harnesses import _hints as hints
from passatk.archives.harnesses._flags import pass_flag
from passatk.archives.harnesses._patterns import PREFIXED_PASS_AT, stored_numbers
from passatk.archives.harnesses._writers import WriteOptions, dump_json, mean_pass_at_k
from passatk.archives.harnesses.registry import FormatInfo, FormatSpec, register


def matches(doc: object, file: str = "") -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("details"), (dict, list))


def read(file: str, ctx: Context, doc: dict) -> None:
    ctx.set_metric("pass@k", file)
    by = ctx.options.by
    pathvals = path_groups(by, file)
    top = doc_scalar_record(doc)
    details = doc.get("details")
    if not details:
        raise ArchiveError(file, "no samples under $.details", path=("details",))
    groups = set()
    failures = hints.failures(ctx, file)
    items = details.items() if isinstance(details, dict) else enumerate(details)
    for key, d in items:
        try:
            if not isinstance(d, dict):
                raise BadRecord(f"must be an object, got {kind(d)}")
            task = task_id(require(d, "task_id"))
            passed = pass_flag(require(d, "passed"), 'field "passed"')
            group = group_from(by, pathvals, {**top, **d})
        except BadRecord as e:
            ctx.bad(file, e.what, path=("details", key))
            continue
        groups.add(group)
        ctx.add(group, task, 1, int(passed))
        failures.add(passed, d.get("result"))
    for key, k, value in stored_numbers(doc, PREFIXED_PASS_AT):
        for group in sorted(groups, key=repr) or [()]:
            ctx.stored.append(StoredMetric(group, "pass@k", k,
                                           stored_float(value, file, (key,)) / 100.0,
                                           location(file, path=(key,)), "percent"))


def write(path: str, tasks: list, flags: list, opts: WriteOptions) -> list[str]:
    details = {}
    for t, p in zip(tasks, flags, strict=True):
        for x in p:
            details[str(len(details))] = {"task_id": t, "completion": "",
                                          "result": "passed" if x else "failed",
                                          "passed": x}
    doc = {"details": details}
    if opts.stored:
        doc = {"humaneval_pass@1": 100 * mean_pass_at_k(flags, 1), **doc}
    dump_json(path, doc)
    return [path]


SPEC = register(FormatSpec(
    FormatInfo(
        "opencompass", "OpenCompass", "results JSON per (model, dataset)",
        'JSON document with "details"',
        'one detail per sample: "passed" is a true pass flag; stored *pass@k in percent'),
    kind="document", read=read, write=write, probe=matches,
))
