"""read_counts: files, globs and directories in, per-(group, task) counts out.

``read_counts`` = plan -> engine map of :func:`read_part` -> one merge. The plan lists the files
and cuts them into units of work (a file, a batch of small files, a byte range of a large
line-oriented one); an engine of :mod:`passatk.archives.engine` (this process, worker processes,
Dask) maps :func:`read_part` over them; :func:`passatk.archives.parts.counts_of` merges the
parts once, in file order. ``read_part`` = open -> detect -> count, for every engine alike.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
import posixpath
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from passatk.archives.context import Context
from passatk.archives.counts import Counts
from passatk.archives.detect import (
    UnknownDocument,
    detect,
    document_format,
    document_hint,
    load_document,
)
from passatk.archives.engine import plan as engine_plan
from passatk.archives.engine import processes
from passatk.archives.engine.local import map_local
from passatk.archives.engine.processes import check_workers, map_processes
from passatk.archives.errors import MAX_SKIPPED_KEPT, ArchiveError
from passatk.archives.harnesses import tables
from passatk.archives.harnesses._table_rules import RUN_COLUMNS
from passatk.archives.harnesses.lookup import canonical_format, get, specs
from passatk.archives.harnesses.registry import HARNESSES
from passatk.archives.io import remote
from passatk.archives.io.documents import Typed
from passatk.archives.io.opening import (
    COMPRESSED_SUFFIXES,
    file_size,
    is_stream,
    logical_name,
    open_binary,
    open_raw,
    release_pipes,
)
from passatk.archives.io.paths import expand_paths, named_files
from passatk.archives.io.ranges import LineRange
from passatk.archives.options import Options, make_options
from passatk.archives.parts import Part, RangeResult, counts_of, join_ranges, part_of
from passatk.errors import Message, Option

__all__ = ["Unit", "read_counts", "read_part"]

#: files whose name allows byte ranges (the content decides in :func:`read_part`)
SPLIT_SUFFIXES = (".jsonl", ".ndjson", ".csv", ".tsv")
_HEAD_LIMIT = 16 << 20  # the first line of a splittable file must end within this many bytes
#: imported once by the fork server, so that each worker forked from it starts warm
PRELOAD = ("numpy", "msgspec", __name__, *(f"passatk.archives.harnesses.{h}" for h in HARNESSES))


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
    strict_json: bool = False,
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

    strict_json : bool, default False
        Refuse any key given twice in a JSON object (``file:line`` or the JSON path), checked
        by a second read of each JSON file with the standard library (about as slow as
        ``json.loads``). By default a key given twice keeps its last value, as Python's
        ``json`` reads it.

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
    options = make_options(by=by, task=task, passed=passed, reward=reward, threshold=threshold,
                           n=n, c=c, skip_bad=skip_bad, filters=filters, merge=merge,
                           format=canonical_format(format) if format is not None else None,
                           strict_json=strict_json)
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be callable, got {type(progress).__name__}")
    run = _Run(progress, scheduler, engine_plan.check_split_bytes(split_bytes),
               check_workers(workers))
    try:
        with remote.storage_options(storage_options):
            files = expand_paths(paths)
            options = dataclasses.replace(options, named=named_files(paths),
                                          storage=remote.current_options())
            return _read(files, options, run)
    finally:
        release_pipes()  # standard input and pipes are read once per call


@dataclass(frozen=True)
class _Run:
    """How a read runs (not what it reads): the engine and its settings."""

    progress: Callable[[int, int], None] | None = None
    scheduler: object = None
    split_bytes: int | None = None
    workers: int | None = 1


@dataclass(frozen=True)
class Unit:
    """One unit of work: whole files in order, or the byte range ``[start, end)`` of one file
    (its lines that start there); ``pin``: the ETag the object at a URL must still have."""

    files: tuple[str, ...]
    start: int = 0
    end: int | None = None
    pin: str | None = None


def _read(files: list[str], options: Options, run: _Run) -> Counts:
    """Plan, map read_part on the chosen engine, merge once."""
    if run.scheduler is not None:
        from passatk.archives.engine.dask_engine import map_dask

        units = _dask_plan(files, run.split_bytes or engine_plan.DEFAULT_SPLIT_BYTES)
        results = map_dask(partial(read_part, options=options), units,
                           scheduler=run.scheduler, progress=run.progress)
        return counts_of(_parts_of(units, results, options), options, files)
    sizes = _sizes(files)
    workers = _pool_size(files, sizes, run.workers)
    if workers > 1:
        from concurrent.futures.process import BrokenProcessPool

        units, weights = _process_plan(files, sizes, workers, run.split_bytes)
        try:
            results = map_processes(partial(read_part, options=options), units, workers=workers,
                                    weights=weights, progress=run.progress, preload=PRELOAD)
            return counts_of(_parts_of(units, results, options), options, files)
        except BrokenProcessPool:
            pass  # a worker could not start (a __main__ read from stdin) or died: read here
    here = _Here(options, sizes, run.progress)
    results = map_local(here, [Unit((f,)) for f in files], stop=here.stop)
    return counts_of([p for r in results for p in r], options, files)


class _Here:
    """read_part in this process, reporting progress within each file (in bytes)."""

    def __init__(self, options: Options, sizes: list[int],
                 progress: Callable[[int, int], None] | None) -> None:
        self.options, self.sizes, self.progress = options, sizes, progress
        self.total, self.done, self.index, self.metric = sum(sizes), 0, 0, None

    def __call__(self, unit: Unit) -> tuple[Part, ...]:
        ctx = Context(self.options, progress=self.progress, total_bytes=self.total,
                      done_bytes=self.done)
        part = _read_file(unit.files[0], ctx)
        self.done += self.sizes[self.index]
        self.index += 1
        ctx.done_bytes = self.done
        ctx.report(0)
        return (part,)

    def stop(self, result: tuple[Part, ...]) -> bool:
        """The read fails here (an error, or, pooling, a metric other than the first): stop
        reading."""
        part = result[0]
        if self.metric is None:
            self.metric = part.metric
        clash = bool(self.options.merge) and part.metric not in (None, self.metric)
        return part.error is not None or clash


def _sizes(files: list[str]) -> list[int]:
    """The sizes of the files (0 for a stream); a URL's from its listing, or asked in threads."""
    known = remote.known_sizes()  # from the listing: no request for these
    storage = remote.current_options()

    def size(file: str) -> int:
        if file in known:
            return known[file]
        with remote.storage_options(storage):  # a pool thread does not inherit the caller's
            return file_size(file)

    urls = [f for f in files if remote.is_url(f) and f not in known]
    if len(urls) < 2:
        return [size(f) for f in files]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=16) as pool:
        return list(pool.map(size, files))


def _pool_size(files: list[str], sizes: list[int], workers: int | None) -> int:
    """How many processes to read ``files`` in (1: in this process). ``None``: every CPU
    when the files hold at least MIN_PARALLEL_BYTES (MIN_FORKED_PARALLEL_BYTES where the
    command line forks its workers). Standard input, pipes and URLs are read here, and so is
    everything when ``__main__`` is a script read from stdin."""
    if workers == 1 or any(is_stream(f) or remote.is_url(f) for f in files) \
            or not processes.main_importable():
        return 1
    if workers is None:
        if sum(sizes) < min(processes.MIN_FORKED_PARALLEL_BYTES, processes.MIN_PARALLEL_BYTES):
            return 1  # below both bars: forks() (which imports multiprocessing) is not asked
        least = (processes.MIN_FORKED_PARALLEL_BYTES if processes.forks()
                 else processes.MIN_PARALLEL_BYTES)
        return (os.cpu_count() or 1) if sum(sizes) >= least else 1
    return workers


def split_candidate(file: str) -> bool:
    """Files whose name allows byte ranges (the content decides in :func:`read_part`)."""
    name = file.rsplit("/", 1)[-1]
    return not name.endswith(COMPRESSED_SUFFIXES) and logical_name(file).endswith(SPLIT_SUFFIXES)


def _process_plan(files: list[str], sizes: list[int], workers: int,
                  split_bytes: int | None) -> tuple[list[Unit], list[int]]:
    """Units for a process pool (see engine.plan): byte ranges of a large file, consecutive
    small files in batches; and the bytes of each unit, for progress."""
    plans = engine_plan.plan_files(sizes, [split_candidate(f) for f in files], workers,
                                   split_bytes)
    units, weights = [], []
    for batch in engine_plan.plan_batches(sizes, plans, workers):
        first = batch[0]
        if plans[first]:
            units += [Unit((files[first],), s, e) for s, e in plans[first]]
            weights += [e - s for s, e in plans[first]]
        else:
            units.append(Unit(tuple(files[j] for j in batch)))
            weights.append(sum(sizes[j] for j in batch))
    return units, weights


def _dask_plan(files: list[str], split_bytes: int) -> list[Unit]:
    """A unit per file, and per ``split_bytes`` range of a large splittable file (a range of
    a URL pinned to the object's ETag, so that a range read after it changed is an error)."""
    candidates = [f for f in files if split_candidate(f)]
    sizes = dict(zip(candidates, _sizes(candidates), strict=True))
    units = []
    for f in files:
        size = sizes.get(f, 0)
        if size > split_bytes:
            pin = remote.etag(f) if remote.is_url(f) else None
            units += [Unit((f,), s, e, pin) for s, e in engine_plan.plan_ranges(size, split_bytes)]
        else:
            units.append(Unit((f,)))
    return units


def _parts_of(units: list[Unit], results: list[Any], options: Options) -> list[Part]:
    """The parts of the files in order: a ranged file's ranges joined (or read again whole)."""
    parts: list[Part] = []
    i = 0
    while i < len(units):
        unit = units[i]
        if unit.end is None:
            parts.extend(results[i])
            i += 1
            continue
        j = i
        while j < len(units) and units[j].end is not None and units[j].files == unit.files:
            j += 1
        joined = join_ranges(unit.files[0], results[i:j])
        parts.append(joined if joined is not None
                     else read_part(Unit(unit.files, pin=unit.pin), options)[0])
        i = j
    return parts


def read_part(unit: Unit, options: Options) -> tuple[Part, ...] | RangeResult:
    """Read one unit of work (any engine runs this): a Part per whole file, or the
    RangeResult of a byte range."""
    storage = options.storage
    if unit.pin is not None:
        storage = {**(storage or {}), remote.PIN_KEY: {unit.files[0]: unit.pin}}
    with remote.storage_options(storage):
        if unit.end is None:
            return tuple(_read_file(f, Context(options)) for f in unit.files)
        return _read_range(unit.files[0], unit.start, unit.end, options)


def _read_file(file: str, ctx: Context) -> Part:
    """One whole file read into ``ctx``: its Part, an error included."""
    named = ctx.options.is_named(file)
    try:
        try:
            kind = _read_one(file, ctx.options.format, ctx, named)
        except UnknownDocument as e:
            if named:
                raise
            return part_of(ctx, file, ("summary", e.doc))
    except ArchiveError as e:
        return Part(metric=ctx.metric, metric_file=ctx.metric_file, error=e)
    return part_of(ctx, file, ("run", _archive_of(file, kind)))


def _archive_of(file: str, kind: str) -> str:
    """The archive a file belongs to: itself, or its folder for MultiPL-E (a file per task)."""
    if not get(kind).per_directory:
        return file
    return posixpath.dirname(file) if remote.is_url(file) else os.path.dirname(
        os.path.abspath(file))


def _read_one(file: str, fmt: str | None, ctx: Context, named: bool) -> str:
    """Open -> detect -> count: read one file into ``ctx``; return its format."""
    doc = None
    if fmt is None:
        kind, doc = detect(file, ctx)
    else:
        kind = fmt
        if not named:
            doc = _walked_document(file, kind)
    _check_options(file, kind, ctx.options)
    spec = get(kind)
    if ctx.options.strict_json:
        _strict(file, spec.kind, ctx)
    if spec.kind != "document":
        jsonl = spec.kind == "lines" or tables.container(file) == "jsonl"
        hint = document_hint(file) if jsonl else None
        if hint is not None:
            raise ArchiveError(file, hint)
        spec.read(file, ctx)
        return kind
    if doc is None:
        doc = load_document(file, kind)
        if isinstance(doc, Typed):
            doc = doc.view
        elif not spec.probe(doc, file):
            raise ArchiveError(file, f"is not a {kind} archive (see passatk formats)")
    spec.read(file, ctx, doc)
    return kind


def _strict(file: str, kind: str, ctx: Context) -> None:
    """strict_json: refuse a key given twice in a JSON file (io/strict.py)."""
    from passatk.archives.io import strict

    if kind == "document":
        strict.check_document(file)
    elif kind == "lines" or (kind == "table" and tables.container(file) == "jsonl"):
        with ctx.open(file) as f:
            strict.check_lines(f.stream, file)


def _check_options(file: str, kind: str, o: Options) -> None:
    """Column options only for tables (or a format that takes them); filters only for
    the formats that take them."""
    spec = get(kind)
    mapped = [name for name in ("task", "passed", "reward", "threshold", "n", "c")
              if getattr(o, name) is not None and name not in spec.column_options]
    if spec.kind != "table" and mapped:
        named = [part for m in mapped for part in (", ", Option(m))][1:]
        raise ArchiveError(file, Message(
            f"is a {kind} archive, but column options (", *named, ") apply only to count "
            "and per-sample tables; pass ", Option("format", "samples"), " or ",
            Option("format", "counts"), " to read it as a table"))
    if o.filtering and not spec.filters:
        takers = ", ".join(s.info.harness for s in specs() if s.filters)
        raise ArchiveError(file, f"is a {kind} archive, but filters (since, until, difficulty) "
                           f"apply only to {takers}")


def _walked_document(file: str, kind: str) -> object:
    """With a forced format, a .json file found by a walk or glob: its parsed document, or
    UnknownDocument when no reader recognizes it (a summary next to the archives)."""
    if not logical_name(file).endswith(".json"):
        return None
    try:
        doc = load_document(file, kind)
    except ArchiveError:
        if get(kind).kind == "document":
            raise
        return None  # JSON Lines named .json: the forced line reader reads it
    if isinstance(doc, Typed):
        return doc.view
    document_format(file, doc)  # raises UnknownDocument
    return doc if get(kind).kind == "document" else None


# ------------------------------------------------------------------ byte ranges
class _Opened:
    def __init__(self, raw: Any, lines: LineRange) -> None:
        self.raw, self.lines = raw, lines
        self.stream = io.BufferedReader(lines, buffer_size=1 << 20)

    def raw_position(self) -> int:
        return 0

    def __enter__(self) -> _Opened:
        return self

    def __exit__(self, *exc: object) -> None:
        self.raw.close()


class _RangeContext(Context):
    """A Context whose line readers see one byte range, and whose skips keep raw lines."""

    def __init__(self, opts: Options, start: int, end: int, prefix: bytes) -> None:
        super().__init__(opts)
        self.start, self.end, self.prefix = start, end, prefix
        self.lines: LineRange | None = None
        self.raw_skips: list[tuple[int, str]] = []

    def open(self, file: str) -> _Opened:
        raw = open_raw(file)
        try:
            self.lines = LineRange(raw, self.start, self.end, self.prefix)
        except BaseException:
            raw.close()
            raise
        return _Opened(raw, self.lines)

    def bad(self, file: str, what: str, *, line: int | None = None,
            path: tuple | None = None) -> None:
        if not self.options.skip_bad or line is None:
            raise ArchiveError(file, what, line=line, path=path)
        self.skip_count += 1
        if len(self.raw_skips) < MAX_SKIPPED_KEPT:
            self.raw_skips.append((line, what))


def _first_line(file: str, blank_ok: bool) -> bytes | None:
    """The first line of a file (the first non-blank one unless ``blank_ok``), with its newline."""
    with open_raw(file) as raw:
        rest, read = b"", 0
        while read < _HEAD_LIMIT:
            block = raw.read(1 << 16)
            if not block:
                return rest if rest.strip() else None
            read += len(block)
            lines = (rest + block).split(b"\n")
            rest = lines.pop()
            for line in lines:
                if blank_ok or line.strip():
                    return line + b"\n"
    return None


def split_plan(file: str, options: Options) -> tuple[str, bytes, Any] | None:
    """``(kind, prefix, first record's columns)`` when ranges of ``file`` can be read on their
    own, else None (compressed, another format, not detectable, ...)."""
    try:
        with open_binary(file) as f:
            if f.compression is not None:
                return None
        kind = options.format or detect(file, Context(options))[0]
        spec = get(kind)
        if not spec.byte_ranges:
            return None
        return _table_plan(file, options) if spec.kind == "table" else (spec.name, b"", None)
    except (ArchiveError, csv.Error):
        return None


def _table_plan(file: str, opts: Options) -> tuple[str, bytes, Any] | None:
    """The plan of a per-sample table: CSV ranges get the header line, JSON Lines ranges the
    columns of the first record (the whole-file read takes both from the start)."""
    box = tables.container(file)
    if box == "csv":
        header = _first_line(file, blank_ok=True)
        if header is None:
            return None
        delimiter = "\t" if logical_name(file).endswith(".tsv") else ","
        row = next(csv.reader([header.decode("utf-8", "replace")], delimiter=delimiter), [])
        return ("samples", header, None) if _rows_stand_alone(row, opts) else None
    if box != "jsonl":
        return None
    first = _first_line(file, blank_ok=False)
    if first is None:
        return None
    try:
        record = json.loads(first)
    except ValueError:
        record = None
    names = list(record) if isinstance(record, dict) else []
    return ("samples", b"", names) if _rows_stand_alone(names, opts) else None


def _rows_stand_alone(names: list[str], opts: Options) -> bool:
    """No run column whose values must agree over all rows of a task (a whole-file check)."""
    return not any(c.strip() in RUN_COLUMNS and c.strip() not in opts.by for c in names)


def _read_range(file: str, start: int, end: int, options: Options) -> RangeResult:
    """Read the lines of ``file`` that start in ``[start, end)``."""
    plan = split_plan(file, options)
    if plan is None:
        if start == 0:
            return RangeResult(whole=_read_file(file, Context(options)))
        return RangeResult(covered=True)
    kind, header, names = plan
    prefix = header if start > 0 else b""
    ctx = _RangeContext(options, start, end, prefix)
    ctx.first_names = names
    try:
        _read_one(file, kind, ctx, options.is_named(file))
    except ArchiveError:
        return RangeResult(fallback=True)
    if (ctx.lines is None or ctx.notes or ctx.stored or ctx.sidecars or ctx.layout_seen
            or set(ctx.failures) - {file}):  # pragma: no cover - not a plain line reader
        return RangeResult(fallback=True)
    return RangeResult(
        part=Part(runs=((file, ctx.acc, ()),), metric=ctx.metric, metric_file=ctx.metric_file),
        skips=tuple(ctx.raw_skips), skip_count=ctx.skip_count, first=ctx.lines.first,
        prefix_lines=prefix.count(b"\n"), csv=bool(header), quote_or_cr=ctx.lines.quote_or_cr,
        failures=ctx.failures.get(file),
    )
