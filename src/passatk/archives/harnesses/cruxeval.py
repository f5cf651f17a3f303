"""CRUXEval scored generations: ``raw_scored_generations`` maps ``sample_<i>`` to pass flags;
stored ``pass_at_1`` / ``pass_at_5`` in percent."""

from passatk.archives.context import Context, document_group
from passatk.archives.errors import ArchiveError, show
from passatk.archives.harnesses._flags import RULE, Flag, is_flag
from passatk.archives.harnesses._patterns import PASS_UNDERSCORE_AT, stored_numbers
from passatk.archives.harnesses._typed import Member, means, member, store
from passatk.archives.harnesses._writers import WriteOptions, dump_json
from passatk.archives.harnesses.registry import FormatInfo, FormatSpec, register

KEY = "raw_scored_generations"
#: evalplus, bigcodebench and inspect-ai (probed first) need "eval"
view = member(KEY, dict[str, list[Flag]], frozenset({"eval"}))


def read(file: str, ctx: Context, doc: dict | Member) -> None:
    ctx.set_metric("pass@k", file)
    record, scored = Member.of(doc, KEY)
    group = document_group(file, ctx, record)
    if not scored:
        raise ArchiveError(file, f"no tasks under $.{KEY}", path=(KEY,))
    for task, flags in scored.items():
        if not isinstance(flags, list) or not flags:
            ctx.bad(file, f"must be a non-empty list of pass flags, got {show(flags)}",
                    path=(KEY, task))
            continue
        bad = next((i for i, f in enumerate(flags) if not is_flag(f)), None)
        if bad is not None:
            ctx.bad(file, f"must be {RULE}, got {show(flags[bad])}", path=(KEY, task, bad))
            continue
        ctx.add(group, task, len(flags), sum(f == 1 for f in flags))
    for key, k, value in stored_numbers(record, PASS_UNDERSCORE_AT):
        store(ctx, file, group, k, value, (key,), "percent")


def write(path: str, tasks: list, flags: list, opts: WriteOptions) -> list[str]:
    doc = {"raw_generations": {t: ["" for _ in p] for t, p in zip(tasks, flags, strict=True)},
           KEY: dict(zip(tasks, flags, strict=True))}
    return dump_json(path, {**doc, **(means(flags, (1, 5), "pass_at_{}", 100) if opts.stored
                                      else {})})


SPEC = register(FormatSpec(FormatInfo(
    "cruxeval", "CRUXEval", "scored generations JSON", f'JSON document with "{KEY}"',
    "each sample_<i> is a task with its list of pass flags; stored pass_at_k in percent"),
    kind="document", read=read, write=write, view=view,
    probe=lambda doc, file: isinstance(doc, dict) and isinstance(doc.get(KEY), dict),
    priority=1))  # after evalplus and bigcodebench, before multipl-e and opencompass
