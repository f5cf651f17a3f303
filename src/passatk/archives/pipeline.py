"""read_counts = plan -> engine map of read_part -> merge; read_part = open -> detect -> count."""

import contextlib
import csv
import dataclasses
import io
import itertools
import json
import os
import re
import types
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import Any

from passatk._limits import check_worker_count
from passatk.archives import detect as detection
from passatk.archives.context import Context
from passatk.archives.counts import Counts
from passatk.archives.engine import plan, processes
from passatk.archives.engine.processes import map_processes
from passatk.archives.errors import ArchiveError, SkippedRecord
from passatk.archives.harnesses import _table_rules, lookup, registry, tables
from passatk.archives.io import documents, opening, ranges, remote
from passatk.archives.io.paths import expand_paths, named_files
from passatk.archives.options import Options, make_options
from passatk.archives.parts import Part, RangeResult, counts_of, join_ranges, part_of

#: imported once by the fork server, so that each worker forked from it starts warm
PRELOAD = ("numpy", "msgspec", __name__,
           *(f"passatk.archives.harnesses.{h}" for h in registry.HARNESSES))


def read_counts(
    paths: str | os.PathLike | Iterable[str | os.PathLike], *, format: str | None = None,
    by: Iterable[str] = (), task: str | None = None, passed: str | None = None,
    reward: str | None = None, threshold: float | None = None, n: str | None = None,
    c: str | None = None, skip_bad: bool = False, filters: Mapping[str, object] | None = None,
    merge: bool | str = False, progress: Callable[[int, int], None] | None = None,
    scheduler: object | None = None, storage_options: Mapping[str, object] | None = None,
    split_bytes: int | None = None, workers: int | None = 1, strict_json: bool = False,
) -> Counts:
    """Read result archives into per-(group, task) counts (n, c); docs/api.md describes every
    parameter in full ("read_counts, parameter by parameter").

    Parameters
    ----------
    paths : path, glob, directory, fsspec URL or ``"-"`` (standard input), or an iterable
        Files, gzip or zstd; a walk or a glob skips JSON documents no reader recognizes.
    format, by : str, sequence of str, optional
        Skip detection (see :func:`formats`); group fields: record fields or path parts.
    task, passed, reward, n, c, threshold : str or float, optional
        Columns of count and per-sample tables; ``reward >= threshold`` passes.
    skip_bad, strict_json : bool, default False
        Skip bad records (``Counts.skipped``); refuse a key given twice in a JSON object.
    filters, merge : optional
        LiveCodeBench's ``since``, ``until`` and ``difficulty``; pool the archives as shards
        of one run (``"allow-duplicates"``: even one that repeats others).
    progress, scheduler, storage_options, workers, split_bytes : optional
        ``progress(done, total)``, in bytes; a Dask cluster (``"local:N"``, an address, a
        Client); fsspec options for URLs; local processes (``None``: every CPU for large
        input); the byte-range size.

    Returns
    -------
    Counts
        The same for every engine and split, skipped records and errors included; a bad file
        raises ArchiveError (a ValueError, ``file:line: what is wrong``).

    Examples
    --------
    >>> from passatk.archives import example_path
    >>> len(read_counts(example_path()))
    20
    """
    format = None if format is None else lookup.canonical_format(format)
    options = make_options(format=format, by=by, task=task, passed=passed, reward=reward,
                           threshold=threshold, n=n, c=c, skip_bad=skip_bad, filters=filters,
                           merge=merge, strict_json=strict_json)
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be callable, got {type(progress).__name__}")
    split_bytes = _positive(split_bytes, "split_bytes", "an int")
    workers = _positive(workers, "workers", "an int or None")
    run = (progress, scheduler, split_bytes, workers and check_worker_count(workers, "workers"))
    try:
        with remote.storage_options(storage_options):
            files = expand_paths(paths)
            options = dataclasses.replace(options, named=named_files(paths),
                                          storage=remote.current_options())
            return counts_of(_read(files, options, *run), options, files)
    finally:
        opening.release_pipes()  # standard input and pipes are read once per call


def _positive(value: object, name: str, kind: str) -> Any:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise TypeError(f"{name} must be {kind}, got {type(value).__name__}")
    if value is not None and value < 1:
        raise ValueError(f"{name} must be at least 1, got {value}")
    return value


@dataclasses.dataclass(frozen=True)
class Unit:
    """Whole files in order, or the lines of one file that start in ``[start, end)``;
    ``pin``: the ETag the object at a URL must still have."""
    files: tuple[str, ...]
    start: int = 0
    end: int | None = None
    pin: str | None = None


def _read(files: list[str], options: Options, progress: Callable | None, scheduler: object,
          split_bytes: int | None, workers: int | None) -> list[Part]:
    """The parts in file order: each engine maps read_part over the units of its plan."""
    read = partial(read_part, options=options)
    if scheduler is not None:
        from passatk.archives.engine import dask_engine
        known = iter(_sizes([f for f in files if _splittable(f)]))  # the others need no size
        units = _units(files, [next(known) if _splittable(f) else 0 for f in files], 1,
                       split_bytes or plan.DEFAULT_SPLIT_BYTES, options, batched=False)
        return _parts_of(units, dask_engine.map_dask(read, units, scheduler=scheduler,
                                                     progress=progress), options)
    sizes = _sizes(files)
    if (pool := _pool_size(files, sizes, workers)) > 1:
        units, size = _units(files, sizes, pool, split_bytes, options), dict(
            zip(files, sizes, strict=True))
        weights = [sum(map(size.get, u.files)) if u.end is None else u.end - u.start for u in units]
        from concurrent.futures.process import BrokenProcessPool
        with contextlib.suppress(BrokenProcessPool):  # a worker died or could not start
            if sum(len(u.files) for u in units) > 1:  # one file whole: read here, no copy
                return _parts_of(units, map_processes(read, units, workers=pool, weights=weights,
                                                      progress=progress, preload=PRELOAD), options)
    return _read_here(files, sizes, options, progress)


def _read_here(files: list[str], sizes: list[int], options: Options,
               progress: Callable | None) -> list[Part]:
    """In this process, to the first failed part (an error, or pooled, a second metric)."""
    starts, parts, first = list(itertools.accumulate(sizes, initial=0)), [], None
    for i, file in enumerate(files):
        ctx = Context(options, progress=progress, total_bytes=starts[-1], done_bytes=starts[i])
        parts.append(part := _read_file(file, ctx))
        ctx.done_bytes = starts[i + 1]
        ctx.report(0)
        first = first or part.metric
        if part.error is not None or (options.merge and part.metric not in (None, first)):
            break
    return parts


def _sizes(files: list[str]) -> list[int]:
    """The sizes of the files (0 for a stream); a URL's from its listing, or asked in threads."""
    known, storage = remote.known_sizes(), remote.current_options()
    def size(file: str) -> int:
        with remote.storage_options(storage):  # a pool thread does not inherit the caller's
            return known[file] if file in known else opening.file_size(file)
    if sum(remote.is_url(f) and f not in known for f in files) < 2:
        return [size(f) for f in files]
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=16) as pool:
        return list(pool.map(size, files))


def _pool_size(files: list[str], sizes: list[int], workers: int | None) -> int:
    """How many processes to read in (1: this one); streams and URLs are read here."""
    if workers == 1 or any(opening.is_stream(f) or remote.is_url(f) for f in files) \
            or not processes.main_importable():
        return 1
    if workers is not None:
        return workers
    forked, spawned, total = (processes.MIN_FORKED_PARALLEL_BYTES, processes.MIN_PARALLEL_BYTES,
                              sum(sizes))
    if total < min(forked, spawned):  # below both bars: forks() (imports multiprocessing) unasked
        return 1
    return (os.cpu_count() or 1) if total >= (forked if processes.forks() else spawned) else 1


def _splittable(file: str) -> bool:
    compressed = file.rsplit("/", 1)[-1].endswith(opening.COMPRESSED_SUFFIXES)
    return not compressed and opening.logical_name(file).endswith((".jsonl", ".ndjson", ".csv",
                                                                   ".tsv"))


def _units(files: list[str], sizes: list[int], workers: int, split_bytes: int | None,
           options: Options, batched: bool = True) -> list[Unit]:
    """The units: ranges of a large file (pinned to a URL's ETag), batches of whole files."""
    least = split_bytes or plan.DEFAULT_SPLIT_BYTES
    split = [_splittable(f) and size > least and split_plan(f, options) is not None
             for f, size in zip(files, sizes, strict=True)]
    plans = plan.plan_files(sizes, split, workers, split_bytes)
    units: list[Unit] = []
    for batch in plan.plan_batches(sizes, plans, workers) if batched else [[i] for i in range(
            len(files))]:
        cuts, file = plans[batch[0]], files[batch[0]]
        pin = remote.etag(file) if cuts and remote.is_url(file) else None
        units += [Unit((file,), s, e, pin) for s, e in cuts] or [Unit(tuple(files[j]
                                                                          for j in batch))]
    return units


def _parts_of(units: list[Unit], results: list[Any], options: Options) -> list[Part]:
    """The parts in file order: a file's ranges joined (or the file read again whole)."""
    parts: list[Part] = []
    for (ranged, files), run in itertools.groupby(zip(units, results, strict=True),
                                                  lambda p: (p[0].end is not None, p[0].files)):
        pins, got = zip(*((unit.pin, result) for unit, result in run), strict=True)
        if not ranged:
            parts += [part for result in got for part in result]
        else:
            parts.append(join_ranges(files[0], list(got))
                         or read_part(Unit(files, pin=pins[0]), options)[0])
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
    named = os.path.normpath(file) in ctx.options.named
    try:
        kind = _read_one(file, ctx.options.format, ctx, named)
    except ArchiveError as e:
        if isinstance(e, detection.UnknownDocument) and not named:
            return part_of(ctx, summaries=((file, e.doc),))
        return Part(metric=ctx.metric, metric_file=ctx.metric_file, error=e)
    archive = file
    if lookup.get(kind).per_directory:  # MultiPL-E: a file per task, its folder is the archive
        archive = file.rsplit("/", 1)[0] if remote.is_url(file) else os.path.dirname(
            os.path.abspath(file))
    return part_of(ctx, runs=((archive, ctx.acc, tuple(ctx.stored)),))


def _read_one(file: str, fmt: str | None, ctx: Context, named: bool) -> str:
    """Open -> detect -> count: read one file into ``ctx``; return its format."""
    doc = None
    if fmt is None:
        fmt, doc = detection.detect(file, ctx)
    elif not named and opening.logical_name(file).endswith(".json"):
        doc = _walked_document(file, fmt)
    spec = lookup.get(fmt)
    spec.check_options(file, ctx.options)
    if ctx.options.strict_json:  # refuse a key given twice in a JSON file (io/strict.py)
        from passatk.archives.io import strict
        jsonl = spec.kind == "table" and tables.container(file) == "jsonl"  # a JSON Lines table
        strict.check(file, "lines" if jsonl else spec.kind, ctx.open)
    if spec.kind == "document":
        if doc is None:
            doc = detection.load_document(file, fmt)
            if not isinstance(doc, documents.Typed) and not spec.probe(doc, file):
                raise ArchiveError(file, f"is not a {fmt} archive (see passatk formats)")
        spec.read(file, ctx, doc.view if isinstance(doc, documents.Typed) else doc)
    elif (spec.kind == "lines" or tables.container(file) == "jsonl") and (
            hint := detection.document_hint(file)) is not None:
        raise ArchiveError(file, hint)
    else:
        spec.read(file, ctx)
    return fmt


def _walked_document(file: str, kind: str) -> object:
    """A walked .json file's document, or UnknownDocument (a summary beside the archives)."""
    document = lookup.get(kind).kind == "document"
    try:
        doc = detection.load_document(file, kind)
    except ArchiveError:
        if document:
            raise
        return None  # JSON Lines named .json: the forced line reader reads it
    if isinstance(doc, documents.Typed):
        return doc.view
    detection.document_format(file, doc)  # raises UnknownDocument
    return doc if document else None


# ------------------------------------------------------------------ byte ranges
def _range_skip(file: str, record: SkippedRecord) -> tuple[int, str] | None:
    """A range's skip as (its line in the range, why); None: a skip without a line."""
    line = record.location.removeprefix(f"{file}:")
    return (int(line), record.reason) if line != record.location and line.isdigit() else None


def split_plan(file: str, options: Options) -> tuple[str, bytes, Any] | None:
    """``(kind, prefix, first record's columns)`` when ranges of ``file`` stand alone."""
    try:
        with opening.open_binary(file) as f:
            if f.compression is not None:
                return None
        spec = lookup.get(options.format or detection.detect(file, Context(options))[0])
        if not spec.byte_ranges:
            return None
        return _table_plan(file, options) if spec.kind == "table" else (spec.name, b"", None)
    except (ArchiveError, csv.Error):
        return None


def _table_plan(file: str, opts: Options) -> tuple[str, bytes, Any] | None:
    """A CSV range's header line, a JSON Lines range's first columns; None: a run column."""
    if (box := tables.container(file)) not in ("csv", "jsonl"):
        return None
    head = opening.read_head(file)  # to the end of the first non-blank line
    if box == "csv":
        if b"\n" not in head and not head.strip():
            return None
        first = head[:head.find(b"\n") + 1] or head
        names = next(csv.reader([first.decode("utf-8", "replace")],
                                delimiter=tables._delimiter(file)), [])
    else:
        if (line := re.search(rb"(?m)^.*\S.*$\n?", head)) is None:
            return None
        first, names = line.group(), []
        with contextlib.suppress(ValueError):
            names = list(record) if isinstance(record := json.loads(first), dict) else []
    if any(c.strip() in _table_rules.RUN_COLUMNS and c.strip() not in opts.by for c in names):
        return None
    return ("samples", first, None) if box == "csv" else ("samples", b"", names)


def _read_range(file: str, start: int, end: int, options: Options) -> RangeResult:
    """Read the lines of ``file`` that start in ``[start, end)``."""
    if (how := split_plan(file, options)) is None:
        return RangeResult(covered=True) if start else RangeResult(
            whole=_read_file(file, Context(options)))
    kind, header, names = how
    prefix = header if start > 0 else b""
    cut: list[ranges.LineRange] = []  # what the opener opened

    @contextlib.contextmanager
    def opener(f: str) -> Any:  # the lines of ``f`` that start in the range, after ``prefix``
        with opening.open_raw(f) as raw:
            cut.append(ranges.LineRange(raw, start, end, prefix))
            stream = io.BufferedReader(cut[-1], buffer_size=1 << 20)
            yield types.SimpleNamespace(stream=stream, raw_position=lambda: 0)

    ctx = Context(options, first_names=names, opener=opener)
    try:
        _read_one(file, kind, ctx, os.path.normpath(file) in options.named)
    except ArchiveError:
        return RangeResult(fallback=True)
    skips = [_range_skip(file, record) for record in ctx.skip_records]
    if (not cut or None in skips or ctx.notes or ctx.stored or ctx.sidecars
            or ctx.layout_seen or set(ctx.failures) - {file}):  # pragma: no cover - not lines
        return RangeResult(fallback=True)
    return RangeResult(part=part_of(ctx, runs=((file, ctx.acc, ()),)), skips=tuple(skips),
                       first=cut[-1].first, prefix_lines=prefix.count(b"\n"),
                       quote_or_cr=bool(header) and cut[-1].quote_or_cr)
