"""CRUXEval scored generations: ``raw_scored_generations`` maps ``sample_<i>`` to booleans.

Stored ``pass_at_1`` / ``pass_at_5`` are in percent.
"""

from __future__ import annotations

from passatk.archives.context import Context, document_group
from passatk.archives.counts import StoredMetric
from passatk.archives.errors import ArchiveError, location, show, stored_float
from passatk.archives.harnesses._flags import RULE, is_flag
from passatk.archives.harnesses._patterns import PASS_UNDERSCORE_AT, stored_numbers
from passatk.archives.harnesses._writers import WriteOptions, dump_json, mean_pass_at_k
from passatk.archives.harnesses.registry import FormatInfo, FormatSpec, register


def matches(doc: object, file: str = "") -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("raw_scored_generations"), dict)


def read(file: str, ctx: Context, doc: dict) -> None:
    ctx.set_metric("pass@k", file)
    group = document_group(file, ctx, doc)
    scored = doc["raw_scored_generations"]
    if not scored:
        raise ArchiveError(file, "no tasks under $.raw_scored_generations",
                           path=("raw_scored_generations",))
    for task, flags in scored.items():
        if not isinstance(flags, list) or not flags:
            ctx.bad(file, f"must be a non-empty list of pass flags, got {show(flags)}",
                    path=("raw_scored_generations", task))
            continue
        bad = next((i for i, f in enumerate(flags) if not is_flag(f)), None)
        if bad is not None:
            ctx.bad(file, f"must be {RULE}, got {show(flags[bad])}",
                    path=("raw_scored_generations", task, bad))
            continue
        ctx.add(group, task, len(flags), sum(f == 1 for f in flags))
    for key, k, value in stored_numbers(doc, PASS_UNDERSCORE_AT):
        ctx.stored.append(StoredMetric(group, "pass@k", k,
                                       stored_float(value, file, (key,)) / 100.0,
                                       location(file, path=(key,)), "percent"))


def write(path: str, tasks: list, flags: list, opts: WriteOptions) -> list[str]:
    doc = {"raw_generations": {t: ["" for _ in p] for t, p in zip(tasks, flags, strict=True)},
           "raw_scored_generations": dict(zip(tasks, flags, strict=True))}
    if opts.stored:
        nmin = min(len(p) for p in flags)
        for k in (1, 5):
            if k <= nmin:
                doc[f"pass_at_{k}"] = 100 * mean_pass_at_k(flags, k)
    dump_json(path, doc)
    return [path]


SPEC = register(FormatSpec(
    FormatInfo(
        "cruxeval", "CRUXEval", "scored generations JSON",
        'JSON document with "raw_scored_generations"',
        "each sample_<i> is a task with its list of pass flags; stored pass_at_k in percent"),
    kind="document", read=read, write=write, probe=matches,
    priority=1,  # after evalplus and bigcodebench, before multipl-e and opencompass
))
