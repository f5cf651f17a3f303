"""read_counts: files, globs and directories in, per-(group, task) counts out."""

from __future__ import annotations

import datetime as _dt
import itertools
import math
import os
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures.process import BrokenProcessPool

from passatk._show import show
from passatk.archives.context import Context, Options
from passatk.archives.counts import Counts, Tally
from passatk.archives.engine.processes import check_workers, pool_size, read_in_processes
from passatk.archives.harnesses._patterns import DATE
from passatk.archives.harnesses.registry import canonical_format
from passatk.archives.io.opening import (
    expand_paths,
    file_size,
    is_file,
    is_path_spec,
    is_stream,
    path_group_value,
    release_pipes,
)
from passatk.archives.io.remote import is_url
from passatk.archives.io.remote import storage_options as _use_storage
from passatk.archives.pipeline import ALLOW_DUPLICATES, add_outcome, assemble, read_into
from passatk.errors import HintedError, Option

__all__ = ["read_counts"]

_DIFFICULTIES = ("easy", "medium", "hard")


def _column(value: object, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise TypeError(f"{name} must be a non-empty str (a column name), got {value!r}")
    return value


def _date(value: object, name: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, _dt.date):
        return value.isoformat()[:10]
    if not isinstance(value, str):
        raise TypeError(f"filters[{name!r}] must be a YYYY-MM-DD str or a date, got {value!r}")
    if not DATE.fullmatch(value):
        raise HintedError(Option("filters", key=name), f" must be a date YYYY-MM-DD, got {value!r}")
    return value


_MAX_BY = 64  # group fields one read may name


def _by_fields(by) -> tuple:
    """``by`` as a tuple of distinct, non-empty field names (path specs checked)."""
    if isinstance(by, str):
        by = (by,)
    if isinstance(by, bytes) or not hasattr(by, "__iter__"):
        raise TypeError(f"by must be a sequence of field names, got {show(by)}")
    try:
        by = tuple(itertools.islice(by, _MAX_BY + 1))  # range(2**62) is never built
    except TypeError:  # a 0-d array
        raise TypeError(f"by must be a sequence of field names, got {show(by)}") from None
    if len(by) > _MAX_BY:
        raise ValueError(f"by must name at most {_MAX_BY} fields, got more")
    for b in by:
        if not isinstance(b, str) or not b:
            raise TypeError(f"by must hold non-empty str field names, got {show(b)}")
        if is_path_spec(b):
            path_group_value(b, os.path.join("a", "b", "c"))  # validates the spec's form
    if len(set(by)) != len(by):
        raise ValueError(f"by must not repeat a field, got {list(by)}")
    return by


def _threshold(threshold) -> float | None:
    """``threshold`` checked to be a finite number, as a float (None stays None)."""
    if threshold is None:
        return None
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        raise TypeError(f"threshold must be a number, got {threshold!r}")
    if not math.isfinite(threshold):
        raise ValueError(f"threshold must be finite, got {threshold!r}")
    return float(threshold)


def _difficulty(d) -> frozenset | None:
    """The ``difficulty`` filter as a lower-case frozenset (None or empty: no filter)."""
    if d is None or (isinstance(d, (list, tuple, set, frozenset)) and not d):
        return None
    items = (d,) if isinstance(d, str) else tuple(d)
    for x in items:
        if not isinstance(x, str) or x.lower() not in _DIFFICULTIES:
            raise HintedError(Option("filters", key="difficulty"),
                              f" must be among {_DIFFICULTIES}, got {x!r}")
    return frozenset(x.lower() for x in items)


def _filters(filters) -> tuple:
    """``filters`` checked, as (since, until, difficulty)."""
    if filters is None:
        return None, None, None
    if not isinstance(filters, Mapping):
        raise TypeError(f"filters must be a mapping, got {type(filters).__name__}")
    unknown = set(filters) - {"since", "until", "difficulty"}
    if unknown:
        raise ValueError(f"filters: unknown key(s) {sorted(unknown)}; known: since, until, "
                         "difficulty")
    since = _date(filters.get("since"), "since")
    until = _date(filters.get("until"), "until")
    if since and until and since > until:
        raise HintedError(Option("filters", key="since"), f" {since} is after ",
                          Option("filters", key="until"), f" {until}")
    return since, until, _difficulty(filters.get("difficulty"))


def _options(by, task, passed, reward, threshold, n, c, skip_bad, filters) -> Options:
    by = _by_fields(by)
    threshold = _threshold(threshold)
    if not isinstance(skip_bad, bool):
        raise TypeError(f"skip_bad must be a bool, got {show(skip_bad)}")
    since, until, difficulty = _filters(filters)
    return Options(
        by=by, task=_column(task, "task"), passed=_column(passed, "passed"),
        reward=_column(reward, "reward"), threshold=threshold, n=_column(n, "n"),
        c=_column(c, "c"), skip_bad=skip_bad, since=since, until=until, difficulty=difficulty,
    )


def read_counts(
    paths: str | os.PathLike | Iterable[str | os.PathLike],
    *,
    format: str | None = None,
    by: Iterable[str] = (),
    task: str | None = None,
    passed: str | None = None,
    reward: str | None = None,
    threshold: float | None = None,
    n: str | None = None,
    c: str | None = None,
    skip_bad: bool = False,
    filters: Mapping[str, object] | None = None,
    merge: bool | str = False,
    progress: Callable[[int, int], None] | None = None,
    scheduler: object | None = None,
    storage_options: Mapping[str, object] | None = None,
    split_bytes: int | None = None,
    workers: int | None = 1,
) -> Counts:
    """Read result archives into per-(group, task) counts (n, c).

    Parameters
    ----------
    paths : path, glob or directory, or an iterable of them
        Files may be gzip- or zstd-compressed (zstd needs the optional ``zstandard``).
        Directories are walked recursively for data files; globs may use ``**``. A walk or a
        glob skips JSON documents no reader recognizes (summaries; see ``Counts.notes``); a
        file named explicitly is always read. ``"-"`` is standard input; it and other pipes
        are streamed once (the start that detection reads is kept for the reader).
    format : str, optional
        Skip detection and read every file in this format (see :func:`formats`):
        ``humaneval``, ``evalplus``, ``bigcodebench``, ``multipl-e``, ``lm-eval``,
        ``livecodebench``, ``opencompass``, ``cruxeval``, ``code-eval``, ``qwen-math``,
        ``tau-bench``, ``counts``, ``samples``.
    by : sequence of str
        Group fields, in order. A name is a record field (``"model"``; for JSON documents, a
        top-level field of the document) or a path part: ``"path"``, ``"path:name"``,
        ``"path:stem"``, ``"path:parent"``, ``"path:dir"``, ``"path:N"`` (N-th part,
        negative from the end). Some formats always add a group field: EvalPlus
        ``metric_set`` (base/plus), lm-eval ``lm_eval_task`` and ``filter``.
    task, passed, reward, n, c : str, optional
        Column names for count and per-sample tables (defaults: task is the first of
        ``task_id``, ``task``, ``id``; ``passed``; ``reward``; ``n``; ``c``). ``passed`` also
        names the 0/1 metric of lm-eval samples (``"exact_match"``). Given with any other
        format they raise ArchiveError rather than being ignored.
    threshold : float, optional
        With a reward column, a sample passes when ``reward >= threshold``. Required there.
        With a flag column, numbers other than 0 and 1 are compared with it.
    skip_bad : bool, default False
        Skip bad records instead of raising; ``Counts.skipped`` says how many and where.
        Problems with a whole file (empty, unreadable, undetectable) still raise.
    filters : mapping, optional
        LiveCodeBench only: ``since`` and ``until`` (contest date ``YYYY-MM-DD``, both
        inclusive) and ``difficulty`` (a level or a collection of easy/medium/hard).
    merge : bool or "allow-duplicates", default False
        Pool the archives as shards of one run: n and c of a (group, task) found in several
        archives are summed. An archive whose tasks and samples are those of other archives
        together (a merged file beside the shards it was made from, or a copy) raises
        ArchiveError naming the files; ``"allow-duplicates"`` pools them anyway (the repeats
        are real samples). By default archives are never pooled: when several archives
        (files; a MultiPL-E directory is one archive) are read, every row gets the group field
        ``path``, its archive's path relative to the common parent folder, unless ``by`` holds
        a path spec, which must then keep the archives' groups apart.
    progress : callable(done, total), optional
        Called during reading with the (compressed) bytes read so far and the total; with a
        ``scheduler``, with the tasks done so far and the number of tasks.
    scheduler : str or distributed.Client, optional
        Read on a Dask cluster (needs ``passatk[dask]``): ``"tcp://host:8786"`` (a running
        scheduler), ``"local:N"`` (a LocalCluster of N worker processes, closed afterwards) or a
        ``distributed.Client``. One task per file, and one per ``split_bytes`` byte range of
        large uncompressed JSON Lines and CSV files; the result is identical to the local read.
    storage_options : mapping, optional
        Options for the fsspec file systems of URL inputs (``s3://``, ``gs://``, ``https://``,
        ...), on top of fsspec's own configuration. A key ``"PROTOCOL.KEY"`` applies to that
        protocol only.
    split_bytes : int, optional
        The byte-range size for splitting large files, with a ``scheduler`` (default 64 MiB)
        or ``workers``.
    workers : int or None, default 1
        Read in this many local worker processes (started with forkserver or spawn, never
        fork): a task per file (consecutive small files batched, 16 MiB or more a task), and
        one per byte range of a large uncompressed JSON Lines or CSV file, cut at line
        boundaries (``split_bytes`` if given; else only where whole files would leave the
        workers out of balance, in ranges of 64 MiB or larger while the files that remain
        give each worker two tasks). The Counts, errors
        included, are those of ``workers=1``. ``None``: every CPU when the files hold at
        least 256 MiB (64 MiB in the command line, whose workers fork), else one (workers
        take about 0.1-0.3 s to start). Processes are
        opt-in here because each worker imports the caller's ``__main__`` module: a script
        must guard its top level with ``if __name__ == "__main__":``. Standard input, pipes and
        URLs are read in this process; ``scheduler`` takes precedence.

    Returns
    -------
    Counts
        Rows per (group, task), with stored numbers, skipped records and notes (files skipped
        in a walk, a field chosen by detection, one error text on every failed sample).

    Raises
    ------
    ArchiveError
        (a ValueError) with a one-line ``file:line: what is wrong`` message for bad input.
    TypeError, ValueError
        For bad arguments.

    Examples
    --------
    >>> import json, os, tempfile
    >>> from passatk.archives import read_counts
    >>> d = tempfile.mkdtemp()
    >>> path = os.path.join(d, "s.jsonl_results.jsonl")
    >>> with open(path, "w") as f:
    ...     for t, ok in [("T/0", True), ("T/0", False), ("T/1", True)]:
    ...         _ = f.write(json.dumps({"task_id": t, "completion": "", "passed": ok}) + "\\n")
    >>> counts = read_counts(path)
    >>> counts.task.tolist(), counts.n.tolist(), counts.c.tolist()
    (['T/0', 'T/1'], [2, 1], [1, 1])
    """
    opts = _options(by, task, passed, reward, threshold, n, c, skip_bad, filters)
    fmt = canonical_format(format) if format is not None else None
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be callable, got {type(progress).__name__}")
    if not isinstance(merge, bool) and not (isinstance(merge, str) and merge == ALLOW_DUPLICATES):
        if not isinstance(merge, str):
            raise TypeError(f"merge must be a bool or {ALLOW_DUPLICATES!r}, got {show(merge)}")
        raise ValueError(f"merge must be True, False or {ALLOW_DUPLICATES!r}, got {show(merge)}")
    filtering = opts.since is not None or opts.until is not None or opts.difficulty is not None
    try:
        return _read(paths, fmt, opts, filtering, merge, progress, scheduler, storage_options,
                     split_bytes, check_workers(workers))
    finally:
        release_pipes()  # standard input and pipes are read once per call


def _read(paths, fmt, opts, filtering, merge, progress, scheduler, storage_options,
          split_bytes, workers) -> Counts:
    with _use_storage(storage_options):
        files = expand_paths(paths)
        named = _named_files(paths)
        if scheduler is not None:
            from passatk.archives.engine.dask_engine import read_on_cluster

            return read_on_cluster(files, fmt, opts, filtering, named, merge, scheduler=scheduler,
                                   progress=progress, split_bytes=split_bytes)
        workers = pool_size(files, workers)
        if workers > 1:
            try:
                return read_in_processes(files, fmt, opts, filtering, named, merge,
                                         workers=workers, progress=progress,
                                         **({"split_bytes": split_bytes} if split_bytes else {}))
            except BrokenProcessPool:
                pass  # a worker could not start (a __main__ read from stdin) or died: read here
        ctx = Context(opts, progress=progress)
        sizes = [file_size(f) for f in files]
        ctx.total_bytes = sum(sizes)
        runs: dict[str, tuple[Tally, list]] = {}
        summaries: list[tuple[str, object]] = []
        for file, size in zip(files, sizes, strict=True):
            outcome = read_into(file, fmt, ctx, filtering, named)
            add_outcome(runs, summaries, file, outcome, ctx.acc, ctx.stored)
            ctx.done_bytes += size
            ctx.report(0)
        return assemble(runs, summaries, ctx, files, merge)


def _named_files(paths: object) -> set[str]:
    """Files named explicitly (not found by a walk or a glob): they are read, whatever they are."""
    items = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    return {os.path.normpath(os.fspath(p)) for p in items
            if isinstance(p, (str, os.PathLike)) and _names_a_file(os.fspath(p))}


def _names_a_file(p: str) -> bool:
    if is_url(p):
        return not any(ch in p for ch in "*?[") and is_file(p)
    return os.path.isfile(p) or is_stream(p)
