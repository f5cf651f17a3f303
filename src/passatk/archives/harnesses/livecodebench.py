"""LiveCodeBench ``*_eval_all.json`` (problems with ``graded_list``, stored ``pass@1`` per task)
and ``*_eval.json`` (``[metrics, results, metadata]``; the rules: each SPEC, docs/formats.md)."""

import contextlib
import json
import re
from itertools import islice

import msgspec

from passatk.archives.context import BadRecord, Context, group_from, require, task_id
from passatk.archives.errors import ArchiveError, kind, show
from passatk.archives.harnesses import _hints as hints
from passatk.archives.harnesses._flags import is_flag
from passatk.archives.harnesses._patterns import DATE, stored_numbers
from passatk.archives.harnesses._typed import begin, fatal, store, whole
from passatk.archives.harnesses._writers import WriteOptions, dump_json
from passatk.archives.harnesses.registry import FormatInfo, FormatSpec, register
from passatk.archives.io.views import shape, view

_METRIC = re.compile(r"pass@([1-9][0-9]{0,5})\Z")
_Metrics = dict[str, float | dict[str, dict[str, float]]]


def _error(meta: object) -> object:
    """A failed sample's exception: ``error`` in its ``metadata`` entry (JSON text or object)."""
    with contextlib.suppress(ValueError, RecursionError):  # unreadable metadata: no hint
        meta = json.loads(meta) if isinstance(meta, str) else meta
    return meta.get("error") if isinstance(meta, dict) else None


def _problem(p: object) -> tuple:
    """A problem's (task, graded_list), checked."""
    if not isinstance(p, dict):
        raise BadRecord(f"problem must be an object, got {kind(p)}")
    question, graded = require(p, "question_id"), require(p, "graded_list")
    task = task_id(question, "question_id")
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
        if not (o.since or "") <= date[:10] <= (o.until or "~"):  # ("~" after every date)
            return False
    d = p.get("difficulty")
    if o.difficulty is not None and not isinstance(d, str):
        raise BadRecord(f"difficulty must be a string, got {show(d)}", ("difficulty",))
    return o.difficulty is None or d.lower() in o.difficulty


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
        meta = p.get("metadata") if isinstance(p.get("metadata"), list) else []
        failures.add_all(len(graded), [_error(meta[j] if j < len(meta) else None)
                                       for j, g in enumerate(graded) if g != 1])
        value = p.get("pass@1")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            store(ctx, file, group, 1, value, (i, "pass@1"), task=task)


def write(path: str, tasks: list, flags: list, opts: WriteOptions) -> list[str]:
    dates = ([f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}" for i in range(len(tasks))]
             if opts.dates is None else opts.dates)
    return dump_json(path, [{
        "question_id": t, "question_title": f"problem {t}", "contest_date": f"{dates[i]}T00:00:00",
        "platform": "leetcode", "difficulty": ("easy", "medium", "hard")[i % 3]
        if opts.difficulties is None else opts.difficulties[i], "graded_list": p,
        "code_list": ["" for _ in p], **({"pass@1": sum(p) / len(p)} if opts.stored else {})}
        for i, (t, p) in enumerate(zip(tasks, flags, strict=True))])


SPEC = register(FormatSpec(FormatInfo(
    "livecodebench", "LiveCodeBench", "*_eval_all.json", 'JSON list of problems with "graded_list"',
    "true entries of graded_list; filters: since, until (contest_date), difficulty"),
    kind="document", read=read, write=write,
    probe=lambda doc, file: (isinstance(doc, list) and bool(doc) and isinstance(doc[0], dict)
                             and "graded_list" in doc[0]),
    aliases=("lcb",), names=("*_eval_all.json",), filters=True))


class View(msgspec.Struct, array_like=True):  # the whole [metrics, results, metadata]
    metrics: _Metrics
    results: dict[str, list[list[bool | int]]]
    metadata: msgspec.Raw


typed_view = whole(View, b'"detail"', lambda doc: isinstance(doc.metrics.get("detail"), dict))


def eval_matches(doc: object, file: str = "") -> bool:
    # (a streamed list holds its first value only)
    first = list.__getitem__(doc, 0) if isinstance(doc, list) and doc else None
    return isinstance(first, dict) and isinstance(first.get("detail"), dict)


def _passed(generation: list, where: tuple) -> bool:
    if not generation:
        raise BadRecord("a generation has no test results", where)
    for j, r in enumerate(generation):
        if not isinstance(r, bool) and r >= 0:
            raise BadRecord(f"a test result must be true, false or a negative error code, "
                            f"got {r}", (*where, j))
    return all(r is True for r in generation)  # LiveCodeBench's np.all(gen > 0)


def read_eval(file: str, ctx: Context, doc: list | View) -> None:
    by, pathvals = begin(ctx, file)
    typed = isinstance(doc, View)
    parts = [doc.metrics, doc.results] if typed else list(islice(iter(doc), 4))
    if not typed and (len(parts) != 3 or not isinstance(parts[0], dict)
                      or not isinstance(parts[1], dict)):
        raise ArchiveError(file, "a LiveCodeBench eval file is a JSON list of 3 values "
                           f"(metrics object, results object, metadata list); this is "
                           f"{shape(parts if len(parts) < 4 else doc)}", path=())
    with fatal(file):
        metrics = parts[0] if typed else view(parts[0], _Metrics, (0,))
        group = group_from(by, pathvals, None, (), "document")
    for task, gens in parts[1].items():
        try:
            gens = gens if typed else view(gens, list[list[bool | int]], (1, task))
            if not gens:
                raise BadRecord("a problem has no generations", (1, task))
            ctx.add(group, task, len(gens), sum(_passed(g, (1, task, i))
                                                for i, g in enumerate(gens)))
        except BadRecord as e:
            ctx.bad(file, e.what, path=e.path)
    _stored(file, ctx, group, metrics)


def _stored(file: str, ctx: Context, group: tuple, metrics: dict) -> None:
    for key, k, value in stored_numbers(metrics, _METRIC):
        store(ctx, file, group, k, value, (0, key))
    detail = metrics.get("detail")
    for key, per_task in detail.items() if isinstance(detail, dict) else ():
        for task, value in per_task.items() if (m := _METRIC.match(key)) is not None else ():
            store(ctx, file, group, int(m.group(1)), value, (0, "detail", key, task), task=task)


def write_eval(path: str, tasks: list, flags: list, opts: WriteOptions) -> list[str]:
    results = {str(t): [[True, True] if x else [True, -1] for x in p]
               for t, p in zip(tasks, flags, strict=True)}
    detail = {str(t): sum(p) / len(p) for t, p in zip(tasks, flags, strict=True)}
    metrics = {"pass@1": sum(detail.values()) / len(detail), "detail": {"pass@1": detail}}
    metadata = [[json.dumps({"execution time": 0.1}) for _ in p] for p in flags]
    return dump_json(path, [metrics if opts.stored else {"detail": {}}, results, metadata])


EVAL_SPEC = register(FormatSpec(FormatInfo(
    "livecodebench-eval", "LiveCodeBench", "*_eval.json",
    "JSON list [metrics with \"detail\", results, metadata]",
    "a generation passes when all its per-test results are true; check compares the "
    "stored pass@k and detail"),
    kind="document", read=read_eval, write=write_eval, probe=eval_matches, view=typed_view,
    aliases=("lcb-eval", "livecodebench_eval"), names=("*_eval.json",)))
