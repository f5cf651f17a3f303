"""LiveCodeBench ``*_eval.json``: the list ``[metrics, results, metadata]``.

What ``lcb_runner.runner.main`` dumps beside ``*_eval_all.json`` (and what repositories
commit when that file is too big): ``metrics`` holds ``pass@k`` and a per-problem
``detail`` (``{"pass@1": {"0": 0.4, ...}}``); ``results`` maps each problem index to one
list per generation of per-test results, ``true``, ``false`` or a negative error code
(-1 timeout, -2 compile error, ...); ``metadata`` is not read. A generation passes when all
its tests are ``true`` (LiveCodeBench's ``np.all(gen > 0)``). The stored ``pass@k`` and
``detail`` values are kept for ``check``.
"""

from __future__ import annotations

import re
from itertools import islice

import msgspec

from passatk.archives.context import BadRecord, Context, group_from, path_groups
from passatk.archives.counts import StoredMetric
from passatk.archives.errors import ArchiveError, location
from passatk.archives.harnesses._writers import WriteOptions, atomic_stream
from passatk.archives.harnesses.registry import FormatInfo, FormatSpec, register
from passatk.archives.io.views import shape, view

_METRIC = re.compile(r"pass@([1-9][0-9]{0,5})\Z")
_Metrics = dict[str, float | dict[str, dict[str, float]]]
_Results = dict[str, list[list[bool | int]]]


class View(msgspec.Struct, array_like=True):
    """The typed view of the whole ``[metrics, results, metadata]`` list."""

    metrics: _Metrics
    results: _Results
    metadata: msgspec.Raw


_DECODER = msgspec.json.Decoder(View)


def typed_view(data: bytes) -> View | None:
    """The typed view of a LiveCodeBench eval file; None when the bytes are not (cleanly) one
    (not tried unless a list with "detail" in its first MiB)."""
    if data[:4096].lstrip()[:1] != b"[" or data.find(b'"detail"', 0, 1 << 20) < 0:
        return None
    try:
        doc = _DECODER.decode(data)
    except (msgspec.DecodeError, RecursionError):
        return None
    return doc if isinstance(doc.metrics.get("detail"), dict) else None


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


def _stored(file: str, ctx: Context, group, metrics: dict) -> None:
    for key, value in metrics.items():
        m = _METRIC.match(key)
        if m is not None and isinstance(value, float):
            ctx.stored.append(StoredMetric(group, "pass@k", int(m.group(1)), value,
                                           location(file, path=(0, key)), "fraction"))
    detail = metrics.get("detail")
    for key, per_task in (detail.items() if isinstance(detail, dict) else ()):
        m = _METRIC.match(key)
        for task, value in per_task.items() if m is not None else ():
            ctx.stored.append(StoredMetric(group, "pass@k", int(m.group(1)), value,
                                           location(file, path=(0, "detail", key, task)),
                                           "fraction", task))


def read(file: str, ctx: Context, doc: list | View) -> None:
    ctx.set_metric("pass@k", file)
    o = ctx.options
    typed = isinstance(doc, View)
    metrics, results = (doc.metrics, doc.results) if typed else _parts(file, doc)
    try:
        metrics = metrics if typed else view(metrics, _Metrics, (0,))
        group = group_from(o.by, path_groups(o.by, file), None, (), "document")
    except BadRecord as e:
        raise ArchiveError(file, e.what, path=e.path) from None
    for task, generations in results.items():
        try:
            gens = generations if typed else view(generations, list[list[bool | int]],
                                                  (1, task))
            if not gens:
                raise BadRecord("a problem has no generations", (1, task))
            c = sum(_passed(g, (1, task, i)) for i, g in enumerate(gens))
        except BadRecord as e:
            ctx.bad(file, e.what, path=e.path)
            continue
        ctx.add(group, task, len(gens), c)
    _stored(file, ctx, group, metrics)


def write(path: str, tasks: list, flags: list, opts: WriteOptions) -> list[str]:
    import json

    results = {str(t): [[True, True] if x else [True, -1] for x in p]
               for t, p in zip(tasks, flags, strict=True)}
    detail = {str(t): sum(p) / len(p) for t, p in zip(tasks, flags, strict=True)}
    metrics = {"pass@1": sum(detail.values()) / len(detail), "detail": {"pass@1": detail}}
    if not opts.stored:
        metrics = {"detail": {}}
    metadata = [[json.dumps({"execution time": 0.1}) for _ in p] for p in flags]
    with atomic_stream(path) as f:
        f.write(json.dumps([metrics, results, metadata], indent=4).encode())
    return [path]


SPEC = register(FormatSpec(
    FormatInfo(
        "livecodebench-eval", "LiveCodeBench", "*_eval.json",
        "JSON list [metrics with \"detail\", results, metadata]",
        "a generation passes when all its per-test results are true; check compares the "
        "stored pass@k and detail"),
    kind="document", read=read, write=write, probe=matches, view=typed_view,
    aliases=("lcb-eval", "livecodebench_eval"), names=("*_eval.json",),
))
