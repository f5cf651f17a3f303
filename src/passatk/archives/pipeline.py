"""read_counts = plan -> engine map of read_part -> one merge (parts.counts_of, in file order);
read_part = open -> detect -> count, alike for every engine (docs/architecture.md)."""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import io
import itertools
import json
import os
import posixpath
import types
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
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
from passatk.archives.engine import plan, processes
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

SPLIT_SUFFIXES = (".jsonl", ".ndjson", ".csv", ".tsv")  # names that may be read in byte ranges
_HEAD_LIMIT = 16 << 20  # the first line of a splittable file must end within this many bytes
#: imported once by the fork server, so that each worker forked from it starts warm
PRELOAD = ("numpy", "msgspec", __name__, *(f"passatk.archives.harnesses.{h}" for h in HARNESSES))


def read_counts(
    paths: str | os.PathLike | Iterable[str | os.PathLike], *, format: str | None = None,
    by: Iterable[str] = (), task: str | None = None, passed: str | None = None,
    reward: str | None = None, threshold: float | None = None, n: str | None = None,
    c: str | None = None, skip_bad: bool = False, filters: Mapping[str, object] | None = None,
    merge: bool | str = False, progress: Callable[[int, int], None] | None = None,
    scheduler: object | None = None, storage_options: Mapping[str, object] | None = None,
    split_bytes: int | None = None, workers: int | None = 1, strict_json: bool = False,
) -> Counts:
    """Read result archives into per-(group, task) counts (n, c); every parameter in full:
    docs/api.md, "read_counts, parameter by parameter".

    Parameters
    ----------
    paths : path, glob, directory, fsspec URL or ``"-"`` (standard input), or an iterable
        Files, gzip or zstd; a walk or a glob skips JSON documents no reader recognizes.
    format : str, optional
        Skip detection: read every file in this format (see :func:`formats`).
    by : sequence of str
        Group fields: record fields or path parts (``"path"``, ``"path:stem"``, ``"path:-2"``).
    task, passed, reward, n, c, threshold : str or float, optional
        Columns of count and per-sample tables; ``reward >= threshold`` passes.
    skip_bad, strict_json : bool, default False
        Skip bad records (``Counts.skipped``); refuse a key given twice in a JSON object.
    filters : mapping, optional
        LiveCodeBench: ``since``, ``until`` (YYYY-MM-DD) and ``difficulty``.
    merge : bool or "allow-duplicates", default False
        Pool the archives as shards of one run (else each archive is a ``path`` group).
    progress : callable(done, total), optional
        Told the bytes read so far (the tasks done, with a ``scheduler``).
    scheduler, workers, split_bytes : optional
        A Dask cluster (``"tcp://host:8786"``, ``"local:N"``, a Client), or local processes
        (``workers=None``: every CPU for large input); byte ranges of large files.
    storage_options : mapping, optional
        fsspec options for URLs (a key ``"PROTOCOL.KEY"`` for one protocol only).

    Returns
    -------
    Counts
        Identical for every engine and split, skipped records and errors included.

    Raises
    ------
    ArchiveError
        A ValueError, ``file:line: what is wrong``; TypeError, ValueError: bad arguments.

    Examples
    --------
    >>> from passatk.archives import example_path, read_counts
    >>> counts = read_counts(example_path())
    >>> len(counts), counts.samples
    (20, 200)
    """
    options = make_options(by=by, task=task, passed=passed, reward=reward, threshold=threshold,
                           n=n, c=c, skip_bad=skip_bad, filters=filters, merge=merge,
                           format=None if format is None else canonical_format(format),
                           strict_json=strict_json)
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be callable, got {type(progress).__name__}")
    run = _Run(progress, scheduler, plan.check_split_bytes(split_bytes), check_workers(workers))
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
    """How a read runs (never leaves the driver)."""

    progress: Callable[[int, int], None] | None = None
    scheduler: object = None
    split_bytes: int | None = None
    workers: int | None = 1


@dataclass(frozen=True)
class Unit:
    """Whole files in order, or the lines of one file that start in ``[start, end)``;
    ``pin``: the ETag the object at a URL must still have."""

    files: tuple[str, ...]
    start: int = 0
    end: int | None = None
    pin: str | None = None


def _read(files: list[str], options: Options, run: _Run) -> Counts:
    if run.scheduler is not None:
        from passatk.archives.engine.dask_engine import map_dask

        units = _dask_plan(files, run.split_bytes or plan.DEFAULT_SPLIT_BYTES)
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
    here = _Here(options, sizes, run.progress, sum(sizes))
    return counts_of(map_local(here, list(enumerate(files)), stop=here.stop), options, files)


@dataclass
class _Here:
    """Reads a file in this process, telling progress within each file (in bytes)."""

    options: Options
    sizes: list[int]
    progress: Callable[[int, int], None] | None
    total: int
    done: int = 0
    metric: str | None = None

    def __call__(self, item: tuple[int, str]) -> Part:
        ctx = Context(self.options, progress=self.progress, total_bytes=self.total,
                      done_bytes=self.done)
        part = _read_file(item[1], ctx)
        ctx.done_bytes = self.done = self.done + self.sizes[item[0]]
        ctx.report(0)
        return part

    def stop(self, part: Part) -> bool:
        """An error, or, pooling, a metric other than the first: the read fails here."""
        self.metric = self.metric or part.metric
        return part.error is not None or (
            bool(self.options.merge) and part.metric not in (None, self.metric))


def _sizes(files: list[str]) -> list[int]:
    """The sizes of the files (0 for a stream); a URL's from its listing, or asked in threads."""
    known, storage = remote.known_sizes(), remote.current_options()

    def size(file: str) -> int:
        with remote.storage_options(storage):  # a pool thread does not inherit the caller's
            return known[file] if file in known else file_size(file)

    if sum(remote.is_url(f) and f not in known for f in files) < 2:
        return [size(f) for f in files]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=16) as pool:
        return list(pool.map(size, files))


def _pool_size(files: list[str], sizes: list[int], workers: int | None) -> int:
    """How many processes to read in (1: this one); streams and URLs are read here."""
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


def _splittable(file: str) -> bool:
    name = file.rsplit("/", 1)[-1]
    return not name.endswith(COMPRESSED_SUFFIXES) and logical_name(file).endswith(SPLIT_SUFFIXES)


def _process_plan(files: list[str], sizes: list[int], workers: int,
                  split_bytes: int | None) -> tuple[list[Unit], list[int]]:
    """Units for a pool (byte ranges of a large file, batches of small ones), their bytes."""
    plans = plan.plan_files(sizes, [_splittable(f) for f in files], workers, split_bytes)
    units, weights = [], []
    for batch in plan.plan_batches(sizes, plans, workers):
        ranges = plans[batch[0]] or [(0, None)]
        units += [Unit(tuple(files[j] for j in batch), s, e) for s, e in ranges]
        weights += [sum(sizes[j] for j in batch) if e is None else e - s for s, e in ranges]
    return units, weights


def _dask_plan(files: list[str], split_bytes: int) -> list[Unit]:
    """A unit per file and per ``split_bytes`` range of a large one (a URL's pinned to its
    ETag, so that a range read after the object changed is an error)."""
    splittable = [f for f in files if _splittable(f)]
    sizes = dict(zip(splittable, _sizes(splittable), strict=True))
    units = []
    for f in files:
        if sizes.get(f, 0) <= split_bytes:
            units.append(Unit((f,)))
            continue
        pin = remote.etag(f) if remote.is_url(f) else None
        units += [Unit((f,), s, e, pin) for s, e in plan.plan_ranges(sizes[f], split_bytes)]
    return units


def _parts_of(units: list[Unit], results: list[Any], options: Options) -> list[Part]:
    """The parts in file order: a file's ranges joined (or the file read again whole)."""
    parts: list[Part] = []
    pairs = zip(units, results, strict=True)
    for (ranged, files), run in itertools.groupby(pairs, lambda p: (p[0].end is not None,
                                                                    p[0].files)):
        run = list(run)
        if not ranged:
            parts += [part for _, result in run for part in result]
            continue
        joined = join_ranges(files[0], [result for _, result in run])
        parts.append(joined if joined is not None
                     else read_part(Unit(files, pin=run[0][0].pin), options)[0])
    return parts


def read_part(unit: Unit, options: Options) -> tuple[Part, ...] | RangeResult:
    """One unit of work, on any engine: a Part per whole file, or a byte range's RangeResult."""
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
    if not get(kind).per_directory:  # MultiPL-E: a file per task, the folder is the archive
        return part_of(ctx, file, ("run", file))
    folder = posixpath.dirname(file) if remote.is_url(file) else os.path.dirname(
        os.path.abspath(file))
    return part_of(ctx, file, ("run", folder))


def _read_one(file: str, fmt: str | None, ctx: Context, named: bool) -> str:
    """Open -> detect -> count: read one file into ``ctx``; return its format."""
    doc = None
    if fmt is None:
        fmt, doc = detect(file, ctx)
    elif not named:
        doc = _walked_document(file, fmt)
    spec = get(fmt)
    _check_options(file, fmt, ctx.options)
    if ctx.options.strict_json:
        _strict(file, spec.kind, ctx)
    if spec.kind != "document":
        jsonl = spec.kind == "lines" or tables.container(file) == "jsonl"
        hint = document_hint(file) if jsonl else None
        if hint is not None:
            raise ArchiveError(file, hint)
        spec.read(file, ctx)
        return fmt
    if doc is None:
        doc = load_document(file, fmt)
        if isinstance(doc, Typed):
            doc = doc.view
        elif not spec.probe(doc, file):
            raise ArchiveError(file, f"is not a {fmt} archive (see passatk formats)")
    spec.read(file, ctx, doc)
    return fmt


def _strict(file: str, kind: str, ctx: Context) -> None:
    """strict_json: refuse a key given twice in a JSON file (io/strict.py)."""
    from passatk.archives.io import strict

    if kind == "document":
        strict.check_document(file)
    elif kind == "lines" or (kind == "table" and tables.container(file) == "jsonl"):
        with ctx.open(file) as f:
            strict.check_lines(f.stream, file)


def _check_options(file: str, kind: str, o: Options) -> None:
    """Column options only for tables (or a format that takes them), filters likewise."""
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
    """A forced format's .json file found by a walk: its document, or UnknownDocument when no
    reader recognizes it (a summary next to the archives)."""
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
@dataclass
class _RangeContext(Context):
    """A Context whose line readers see one byte range, and whose skips keep raw lines."""

    start: int = 0
    end: int = 0
    prefix: bytes = b""
    lines: LineRange | None = None
    raw_skips: list[tuple[int, str]] = field(default_factory=list)

    @contextlib.contextmanager
    def open(self, file: str) -> Any:
        with open_raw(file) as raw:
            self.lines = LineRange(raw, self.start, self.end, self.prefix)
            stream = io.BufferedReader(self.lines, buffer_size=1 << 20)
            yield types.SimpleNamespace(stream=stream, raw_position=lambda: 0)

    def bad(self, file: str, what: str, *, line: int | None = None,
            path: tuple | None = None) -> None:
        if not self.options.skip_bad or line is None:
            raise ArchiveError(file, what, line=line, path=path)
        self.skip_count += 1
        if len(self.raw_skips) < MAX_SKIPPED_KEPT:
            self.raw_skips.append((line, what))


def _first_line(file: str, blank_ok: bool) -> bytes | None:
    """The first line (the first non-blank one unless ``blank_ok``), with its newline."""
    with open_raw(file) as raw:
        for line in iter(partial(raw.readline, _HEAD_LIMIT), b""):
            if not line.endswith(b"\n"):  # the end of the file, or a line too long
                return line if line.strip() and len(line) < _HEAD_LIMIT else None
            if blank_ok or line.strip():
                return line
    return None


def split_plan(file: str, options: Options) -> tuple[str, bytes, Any] | None:
    """``(kind, prefix, first record's columns)`` when ranges of ``file`` can be read on their
    own, else None (compressed, another format, not detectable, ...)."""
    try:
        with open_binary(file) as f:
            if f.compression is not None:
                return None
        spec = get(options.format or detect(file, Context(options))[0])
        if not spec.byte_ranges:
            return None
        return _table_plan(file, options) if spec.kind == "table" else (spec.name, b"", None)
    except (ArchiveError, csv.Error):
        return None


def _table_plan(file: str, opts: Options) -> tuple[str, bytes, Any] | None:
    """CSV ranges get the header line, JSON Lines ranges the columns of the first record;
    None when a run column (whose values must agree over a task) rules ranges out."""
    box = tables.container(file)
    first = _first_line(file, blank_ok=box == "csv") if box in ("csv", "jsonl") else None
    if first is None:
        return None
    if box == "csv":
        delimiter = "\t" if logical_name(file).endswith(".tsv") else ","
        names = next(csv.reader([first.decode("utf-8", "replace")], delimiter=delimiter), [])
    else:
        try:
            record = json.loads(first)
        except ValueError:
            record = None
        names = list(record) if isinstance(record, dict) else []
    if any(c.strip() in RUN_COLUMNS and c.strip() not in opts.by for c in names):
        return None
    return ("samples", first, None) if box == "csv" else ("samples", b"", names)


def _read_range(file: str, start: int, end: int, options: Options) -> RangeResult:
    """Read the lines of ``file`` that start in ``[start, end)``."""
    how = split_plan(file, options)
    if how is None:
        return RangeResult(whole=_read_file(file, Context(options))) if start == 0 else \
            RangeResult(covered=True)
    kind, header, names = how
    prefix = header if start > 0 else b""
    ctx = _RangeContext(options, start=start, end=end, prefix=prefix, first_names=names)
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
        failures=ctx.failures.get(file))
