"""LiveCodeBench ``*_eval.json``, ``[metrics, results, metadata]``: a generation passes when all
its per-test results are ``true`` (``np.all(gen > 0)``); stored ``pass@k`` and ``detail`` kept."""

import json
import re
from itertools import islice

import msgspec

from passatk.archives.context import BadRecord, Context, group_from
from passatk.archives.errors import ArchiveError
from passatk.archives.harnesses._typed import begin, fatal, store, whole
from passatk.archives.harnesses._writers import WriteOptions, atomic_stream
from passatk.archives.harnesses.registry import FormatInfo, FormatSpec, register
from passatk.archives.io.views import shape, view

_METRIC = re.compile(r"pass@([1-9][0-9]{0,5})\Z")
_Metrics = dict[str, float | dict[str, dict[str, float]]]


class View(msgspec.Struct, array_like=True):  # the whole [metrics, results, metadata]
    metrics: _Metrics
    results: dict[str, list[list[bool | int]]]
    metadata: msgspec.Raw


typed_view = whole(View, b'"detail"', lambda doc: isinstance(doc.metrics.get("detail"), dict))


def matches(doc: object, file: str = "") -> bool:
    if not isinstance(doc, list) or not doc:
        return False
    first = list.__getitem__(doc, 0)  # a streamed list holds its first value only
    return isinstance(first, dict) and isinstance(first.get("detail"), dict)


def _parts(file: str, doc: list) -> tuple:
    parts = list(islice(iter(doc), 4))
    if len(parts) != 3 or not isinstance(parts[0], dict) or not isinstance(parts[1], dict):
        raise ArchiveError(file, "a LiveCodeBench eval file is a JSON list of 3 values "
                           f"(metrics object, results object, metadata list); this is "
                           f"{shape(parts if len(parts) < 4 else doc)}", path=())
    return parts[0], parts[1]


def _passed(generation: list, where: tuple) -> bool:
    if not generation:
        raise BadRecord("a generation has no test results", where)
    for j, r in enumerate(generation):
        if not isinstance(r, bool) and r >= 0:
            raise BadRecord(f"a test result must be true, false or a negative error code, "
                            f"got {r}", (*where, j))
    return all(r is True for r in generation)


def read(file: str, ctx: Context, doc: list | View) -> None:
    by, pathvals = begin(ctx, file)
    typed = isinstance(doc, View)
    metrics, results = (doc.metrics, doc.results) if typed else _parts(file, doc)
    with fatal(file):
        metrics = metrics if typed else view(metrics, _Metrics, (0,))
        group = group_from(by, pathvals, None, (), "document")
    for task, gens in results.items():
        try:
            gens = gens if typed else view(gens, list[list[bool | int]], (1, task))
            if not gens:
                raise BadRecord("a problem has no generations", (1, task))
            c = sum(_passed(g, (1, task, i)) for i, g in enumerate(gens))
        except BadRecord as e:
            ctx.bad(file, e.what, path=e.path)
            continue
        ctx.add(group, task, len(gens), c)
    _stored(file, ctx, group, metrics)


def _stored(file: str, ctx: Context, group: tuple, metrics: dict) -> None:
    for key, value in metrics.items():
        if (m := _METRIC.match(key)) is not None and isinstance(value, float):
            store(ctx, file, group, int(m.group(1)), value, (0, key))
    detail = metrics.get("detail")
    for key, per_task in detail.items() if isinstance(detail, dict) else ():
        for task, value in per_task.items() if (m := _METRIC.match(key)) is not None else ():
            store(ctx, file, group, int(m.group(1)), value, (0, "detail", key, task), task=task)


def write(path: str, tasks: list, flags: list, opts: WriteOptions) -> list[str]:
    results = {str(t): [[True, True] if x else [True, -1] for x in p]
               for t, p in zip(tasks, flags, strict=True)}
    detail = {str(t): sum(p) / len(p) for t, p in zip(tasks, flags, strict=True)}
    metrics = {"pass@1": sum(detail.values()) / len(detail), "detail": {"pass@1": detail}}
    metadata = [[json.dumps({"execution time": 0.1}) for _ in p] for p in flags]
    with atomic_stream(path) as f:
        f.write(json.dumps([metrics if opts.stored else {"detail": {}}, results, metadata],
                           indent=4).encode())
    return [path]


SPEC = register(FormatSpec(FormatInfo(
    "livecodebench-eval", "LiveCodeBench", "*_eval.json",
    "JSON list [metrics with \"detail\", results, metadata]",
    "a generation passes when all its per-test results are true; check compares the "
    "stored pass@k and detail"),
    kind="document", read=read, write=write, probe=matches, view=typed_view,
    aliases=("lcb-eval", "livecodebench_eval"), names=("*_eval.json",)))
