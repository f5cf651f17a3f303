"""What a unit of work read (:class:`Part`), and the one merge of a read's parts into Counts in
file order: the result of one sequential read, its first failure in file order included."""

from __future__ import annotations

import dataclasses
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


@dataclass(frozen=True)
class Part:
    """What a unit of work read, per file in order: each archive's counts and stored numbers
    or a walked summary's document, and what else its Context gathered, or its first failure."""

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
    part: Part | None = None  # the range's counts, metric, failure text and skip count
    skips: tuple[tuple[int, str], ...] = ()  # (line in the range, why)
    first: int = 0  # the offset of the range's first line
    prefix_lines: int = 0
    quote_or_cr: bool = False  # a CSV range held a quote or a CR: read the file whole


def part_of(ctx: Context, **outcome: Any) -> Part:
    """The Part of one file read into ``ctx``; ``outcome``: its ``runs`` or ``summaries``."""
    return Part(notes=tuple(ctx.notes), sidecars=frozenset(ctx.sidecars),
                failures=tuple(ctx.failures.items()), metric=ctx.metric,
                metric_file=ctx.metric_file, skipped=ctx.skipped, **outcome)


def join_ranges(file: str, results: list[RangeResult]) -> Part | None:
    """The Part of a whole file from its ranges, in order; None: read the file again whole."""
    if results[0].whole is not None:
        return results[0].whole
    if any(r.fallback or r.part is None or r.quote_or_cr for r in results):
        return None
    first, records = results[0].part, []
    for r in results[1:]:  # the first range's rows gather the others: no copy
        first.runs[0][1].merge(r.part.runs[0][1])
    for r in results:
        if r.skips:  # count the newlines before the range (rare: only for skipped lines)
            with open_raw(file) as raw:
                before = newlines_before(raw, r.first) - r.prefix_lines
            records += [SkippedRecord(location(file, i + before), what) for i, what in r.skips]
    texts = [t for r in results for _, t in r.part.failures]
    return dataclasses.replace(
        first, failures=((file, _merged(texts)),) if texts else (),
        skipped=Skipped(sum(r.part.skipped.count for r in results),
                        tuple(records[:MAX_SKIPPED_KEPT])))


def _merged(texts: list[Any]) -> Any:
    """The FailureText of parts read one after the other (the first failed text decides)."""
    out = hints.FailureText()
    for f in texts:
        if f.failed and out.failed:
            out.same = out.same and f.same and f.text == out.text
        elif f.failed:
            out.text, out.raw, out.same = f.text, f.raw, f.same
        out.failed += f.failed
        out.samples += f.samples
    return out


def counts_of(parts: list[Part], options: Options, files: list[str]) -> Counts:
    """The Counts of a read from its parts in file order (the one merge), or its first failure."""
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
            if part.metric is not None:  # the files of one archive hold one metric
                metric, file = metrics.setdefault(archive, (part.metric,
                                                            part.metric_file or archive))
                if metric != part.metric:
                    raise ArchiveError(part.metric_file or archive, f"holds {part.metric} data, "
                                       f"but {file} holds {metric} data; score them separately")
            run = runs.setdefault(archive, (acc, []))
            if run[0] is not acc:
                run[0].merge(acc)
            run[1].extend(stored)
        summaries.extend(part.summaries)
        ctx.notes.extend(part.notes)
        ctx.sidecars |= part.sidecars
        for archive, texts in part.failures:
            had = ctx.failures.get(archive)
            ctx.failures[archive] = texts if had is None else _merged([had, texts])
        skipped = skipped + part.skipped
    ctx.skip_count, ctx.skip_records = skipped.count, list(skipped.records)
    return assemble(runs, summaries, ctx, files, metrics)


def _shown(group: tuple) -> str:
    return ", ".join(f"{k}={v}" for k, v in group) or "(no group fields)"


def _group_metrics(metrics: dict, groups: dict) -> dict | None:
    """group -> metric (None: all pass@k); one group holding two metrics is refused."""
    if not any(m == "pass^k" for m, _ in metrics.values()):
        return None
    out: dict = {}
    for archive, keys in groups.items():
        metric, file = metrics.get(archive, ("pass@k", archive))
        for g in keys:
            first, first_file = out.setdefault(g, (metric, file))
            if first != metric:
                raise ArchiveError(file, f"holds {metric} data, but {first_file} holds {first} "
                                   f"data in the same group {_shown(g)}; score them separately")
    return {g: m for g, (m, _) in out.items()}


def assemble(runs: dict, summaries: list, ctx: Context, files: list[str], metrics: dict) -> Counts:
    """The Counts of the runs and summaries read (see read_counts' ``merge``)."""
    hints.add_notes(ctx)
    if ctx.options.merge is True and len(runs) > 1:  # before pooling: _combine adds into the first
        check_overlap(tallies := {a: part for a, (part, _) in runs.items()})
        check_repeated_records(files, tallies)
    acc, stored, groups = _combine(runs, ctx.options.merge, ctx.options.by)
    if summaries := [(f, d) for f, d in summaries if os.path.normpath(f) not in ctx.sidecars]:
        stored += _summary.use(summaries, groups, ctx)
    found = {m for m, _ in metrics.values()}  # pass@k where they differ: see group_metrics
    counts = Counts._from_acc(
        acc, metric=ctx.metric or (found.pop() if len(found) == 1 else "pass@k"),
        stored=tuple(stored), skipped=ctx.skipped, files=tuple(files),
        group_metric=_group_metrics(metrics, groups))
    return dataclasses.replace(counts, notes=tuple(ctx.notes)) if ctx.notes else counts


def _combine(runs: dict[str, tuple[Tally, list]], merge: bool | str,
             by: tuple[str, ...]) -> tuple[Tally, list, dict]:
    """Pool the runs (``merge``, or one archive), or give each the group field ``path`` (a path
    spec in ``by`` must keep them apart instead): the counts, stored numbers, archives' groups."""
    labels = _labels(runs, merge, by)
    acc = Tally() if labels or not runs else next(iter(runs.values()))[0]  # pools the others
    stored: list = []
    groups: dict[str, set] = {}
    for archive, (part, part_stored) in runs.items():
        label = (("path", labels[archive]),) if labels else ()  # each archive its own run
        groups[archive] = {label + g for g in part.group_keys()}
        if part is not acc:
            acc.merge(part, label)
        stored += [dataclasses.replace(s, group=label + tuple(s.group)) if label else s
                   for s in part_stored]
    return acc, stored, groups


def _labels(runs: dict, merge: bool | str, by: tuple[str, ...]) -> dict[str, str]:
    """Each archive's path relative to the common parent folder, when it keeps them apart; with
    a path spec in ``by``, none (and no two archives may share a group: that would pool them)."""
    if len(runs) < 2 or merge:
        return {}
    if not any(is_path_spec(b) for b in by):
        full = [os.path.abspath(a) for a in runs]
        common = os.path.commonpath([os.path.dirname(f) for f in full])
        return {a: os.path.relpath(f, common) for a, f in zip(runs, full, strict=True)}
    owner: dict = {}
    for archive, (part, _) in runs.items():
        for g in sorted(part.group_keys(), key=repr):
            if (first := owner.setdefault(g, archive)) != archive:
                raise ArchiveError(archive, Message(
                    f"shares the group {_shown(g)} with {first}: by {list(by)} does not keep "
                    "these archives apart; choose a path spec that differs between them "
                    "(path:name, path:dir, path), or pass ", Option("merge", True),
                    " to pool them as shards of one run"))
    return {}
