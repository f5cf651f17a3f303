"""LiveCodeBench ``*_eval_all.json``: a list of problems with ``graded_list``; filters ``since``,
``until`` (contest date) and ``difficulty``; each problem's stored ``pass@1`` kept per task."""

import json

from passatk.archives.context import BadRecord, Context, group_from, task_id
from passatk.archives.errors import ArchiveError, kind, show
from passatk.archives.harnesses import _hints as hints
from passatk.archives.harnesses._flags import is_flag
from passatk.archives.harnesses._patterns import DATE
from passatk.archives.harnesses._typed import begin, store
from passatk.archives.harnesses._writers import WriteOptions, dump_json
from passatk.archives.harnesses.registry import FormatInfo, FormatSpec, register


def _error(meta: object) -> object:
    """A failed sample's exception: ``error`` in its ``metadata`` entry (JSON text or object)."""
    if isinstance(meta, str):
        try:
            meta = json.loads(meta)
        except (ValueError, RecursionError):  # only a hint: unreadable metadata gives none
            return None
    return meta.get("error") if isinstance(meta, dict) else None


def _problem(p: object) -> tuple:
    """A problem's (task, graded_list), checked."""
    if not isinstance(p, dict):
        raise BadRecord(f"problem must be an object, got {kind(p)}")
    for key in ("question_id", "graded_list"):
        if key not in p:
            raise BadRecord(f'missing field "{key}"')
    task, graded = task_id(p["question_id"], "question_id"), p["graded_list"]
    if not isinstance(graded, list) or not graded or not all(map(is_flag, graded)):
        raise BadRecord("graded_list must be a non-empty list of pass flags (true/false, "
                        f"1/0, 1.0/0.0), got {show(graded)}", ("graded_list",))
    return task, graded


def _kept(p: dict, o) -> bool:
    """Whether the problem passes the date and difficulty filters."""
    if o.since is not None or o.until is not None:
        date = p.get("contest_date")
        if not isinstance(date, str) or not DATE.match(date):
            raise BadRecord(f"contest_date must be an ISO date, got {show(date)}",
                            ("contest_date",))
        if (o.since is not None and date[:10] < o.since) or (o.until is not None
                                                             and date[:10] > o.until):
            return False
    if o.difficulty is not None:
        d = p.get("difficulty")
        if not isinstance(d, str):
            raise BadRecord(f"difficulty must be a string, got {show(d)}", ("difficulty",))
        return d.lower() in o.difficulty
    return True


def read(file: str, ctx: Context, doc: list) -> None:
    by, pathvals = begin(ctx, file)
    if not isinstance(doc, list) or not doc:
        raise ArchiveError(file, "no problems in the list", path=())
    failures = hints.failures(ctx, file)
    for i, p in enumerate(doc):
        try:
            task, graded = _problem(p)
            if not _kept(p, ctx.options):
                continue
            group = group_from(by, pathvals, p)
        except BadRecord as e:
            ctx.bad(file, e.what, path=(i, *(e.path or ())))
            continue
        ctx.add(group, task, len(graded), sum(g == 1 for g in graded))
        meta = p.get("metadata")
        for j, g in enumerate(graded):
            failures.add(g == 1, _error(meta[j] if isinstance(meta, list) and j < len(meta)
                                        else None))
        value = p.get("pass@1")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            store(ctx, file, group, 1, value, (i, "pass@1"), task=task)


def write(path: str, tasks: list, flags: list, opts: WriteOptions) -> list[str]:
    doc = []
    for i, (t, p) in enumerate(zip(tasks, flags, strict=True)):
        date = f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}" if opts.dates is None else opts.dates[i]
        doc.append({"question_id": t, "question_title": f"problem {t}",
                    "contest_date": f"{date}T00:00:00", "platform": "leetcode",
                    "difficulty": ("easy", "medium", "hard")[i % 3] if opts.difficulties is None
                    else opts.difficulties[i], "graded_list": p, "code_list": ["" for _ in p],
                    **({"pass@1": sum(p) / len(p)} if opts.stored else {})})
    return dump_json(path, doc)


SPEC = register(FormatSpec(FormatInfo(
    "livecodebench", "LiveCodeBench", "*_eval_all.json", 'JSON list of problems with "graded_list"',
    "true entries of graded_list; filters: since, until (contest_date), difficulty"),
    kind="document", read=read, write=write,
    probe=lambda doc, file: (isinstance(doc, list) and bool(doc) and isinstance(doc[0], dict)
                             and "graded_list" in doc[0]),
    aliases=("lcb",), names=("*_eval_all.json",), filters=True))
