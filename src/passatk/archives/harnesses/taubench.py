"""tau-bench trial lists (pass^k): a trial succeeds when ``|reward - 1| <= 1e-6``; n per task."""

from passatk.archives.context import BadRecord, Context, finite_number, group_from, require, task_id
from passatk.archives.errors import ArchiveError, kind
from passatk.archives.harnesses._typed import begin
from passatk.archives.harnesses._writers import WriteOptions, dump_json
from passatk.archives.harnesses.registry import FormatInfo, FormatSpec, register

SUCCESS_TOLERANCE = 1e-6


def read(file: str, ctx: Context, doc: list) -> None:
    by, pathvals = begin(ctx, file, "pass^k")
    if not isinstance(doc, list) or not doc:
        raise ArchiveError(file, "no trials in the list", path=())
    for i, t in enumerate(doc):
        try:
            if not isinstance(t, dict):
                raise BadRecord(f"trial must be an object, got {kind(t)}")
            task = task_id(require(t, "task_id"))
            reward = finite_number(require(t, "reward"), "reward")
            group = group_from(by, pathvals, t)
        except BadRecord as e:
            ctx.bad(file, e.what, path=(i,))
            continue
        ctx.add(group, task, 1, int(abs(reward - 1.0) <= SUCCESS_TOLERANCE))


def write(path: str, tasks: list, flags: list, opts: WriteOptions) -> list[str]:
    return dump_json(path, [{"task_id": t, "reward": 1.0 if x else 0.0, "trial": j, "info": {},
                             "traj": []} for t, p in zip(tasks, flags, strict=True)
                            for j, x in enumerate(p)])


SPEC = register(FormatSpec(FormatInfo(
    "tau-bench", "tau-bench", "results JSON (list of trials)",
    'JSON list of trials with "task_id" and "reward"',
    "a trial succeeds when |reward - 1| <= 1e-6; n counted per task", "pass^k"),
    kind="document", read=read, write=write,
    probe=lambda doc, file: (isinstance(doc, list) and bool(doc) and isinstance(doc[0], dict)
                             and "reward" in doc[0] and "task_id" in doc[0]),
    aliases=("taubench", "tau_bench"), native_ids=True))
