"""``write_archive``: a synthetic archive in any registered format, by its spec's writer (for
``passatk simulate`` and tests); files are written atomically (``_writers.atomic_stream``)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from passatk.archives.harnesses._writers import WriteOptions, check_passes
from passatk.archives.harnesses.lookup import by_file_name, get, specs
from passatk.archives.io.opening import logical_name

__all__ = ["format_for_path", "write_archive"]


def format_for_path(path: str | os.PathLike) -> str:
    """The format ``write_archive`` uses for a path when ``format`` is not given.

    ``*_results.jsonl`` is human-eval, ``samples_*.jsonl`` lm-eval, ``*_eval_all.json``
    LiveCodeBench, ``eval_results.json`` EvalPlus, ``*.csv``/``*.tsv``/``*.parquet`` a count
    table, any other ``*.jsonl`` a per-sample table: the most specific of the formats' name
    patterns (``FormatSpec.names``) that matches. Other names need an explicit format.

    >>> format_for_path("demo_results.jsonl")
    'humaneval'
    >>> format_for_path("runs/counts.csv.gz")
    'counts'
    """
    spec = by_file_name(logical_name(path))
    if spec is not None:
        return spec.name
    name = logical_name(path)
    raise ValueError(
        f"cannot tell the archive format from the file name {name!r}; give format= "
        "(see passatk formats)"
    )


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
        A name from :func:`passatk.archives.harnesses`; default :func:`format_for_path`.
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
    spec = get(format) if format is not None else get(format_for_path(path))
    tasks, flags = check_passes(task_ids, passes)
    if not spec.native_ids:
        tasks = [str(t) for t in tasks]
    if plus is not None and "plus" not in spec.write_options:
        takers = ", ".join(s.name for s in specs() if "plus" in s.write_options)
        raise ValueError(f"plus= applies only to format {takers}, not {spec.name}")
    if spec.write is None:
        raise ValueError(f"format {spec.name} has no writer")
    options = WriteOptions(stored, plus, evalplus_version, completion, dates, difficulties)
    return spec.write(path, tasks, flags, options)
