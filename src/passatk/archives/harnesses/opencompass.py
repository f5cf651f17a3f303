"""OpenCompass results JSON with per-sample ``details``; stored ``*pass@k`` numbers in percent."""

from typing import NotRequired, TypedDict

from passatk.archives.context import BadRecord, Context, group_from, require, task_id
from passatk.archives.errors import ArchiveError, kind
from passatk.archives.harnesses import _hints as hints
from passatk.archives.harnesses._flags import Flag, pass_flag
from passatk.archives.harnesses._patterns import PREFIXED_PASS_AT, stored_numbers
from passatk.archives.harnesses._typed import Member, begin, means, member, store
from passatk.archives.harnesses._writers import WriteOptions, dump_json
from passatk.archives.harnesses.registry import FormatInfo, FormatSpec, register
from passatk.archives.io.documents import load


class _Detail(TypedDict):  # msgspec decodes it as a dict of these keys only
    task_id: str | int
    passed: Flag
    result: NotRequired[object]


#: the keys the formats probed before need (tau2-bench "info", multipl-e "name", ...)
view = member("details", dict[str, _Detail] | list[_Detail],
              frozenset({"eval", "raw_scored_generations", "info", "name"}))


def read(file: str, ctx: Context, doc: dict | Member) -> None:
    by, pathvals = begin(ctx, file)
    if isinstance(doc, Member) and set(by) - set(pathvals):
        doc = load(file)  # group fields of the details: the plain document
    top, details = Member.of(doc, "details")
    if not details:
        raise ArchiveError(file, "no samples under $.details", path=("details",))
    groups, failures = set(), hints.failures(ctx, file)
    for key, d in details.items() if isinstance(details, dict) else enumerate(details):
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
    for key, k, value in stored_numbers(top, PREFIXED_PASS_AT):
        for group in sorted(groups, key=repr) or [()]:
            store(ctx, file, group, k, value, (key,), "percent")


def write(path: str, tasks: list, flags: list, opts: WriteOptions) -> list[str]:
    samples = [(t, x) for t, p in zip(tasks, flags, strict=True) for x in p]
    details = {"details": {str(i): {"task_id": t, "completion": "",
                                    "result": "passed" if x else "failed", "passed": x}
                           for i, (t, x) in enumerate(samples)}}
    return dump_json(path, {**(means(flags, (1,), "humaneval_pass@{}", 100) if opts.stored
                               else {}), **details})


SPEC = register(FormatSpec(FormatInfo(
    "opencompass", "OpenCompass", "results JSON per (model, dataset)",
    'JSON document with "details"',
    'one detail per sample: "passed" is a true pass flag; stored *pass@k in percent'),
    kind="document", read=read, write=write, view=view,
    probe=lambda doc, file: isinstance(doc, dict) and isinstance(doc.get("details"), (dict, list))))
