"""One file through the pipeline: detect its format, check the options against it, read it
into a fresh Tally; then the runs of a whole read assembled into Counts. Every engine (this
process, worker processes, Dask) calls these; none of them is called back from here."""

from __future__ import annotations

import dataclasses
import os
import posixpath

from passatk.archives import summary as _summary
from passatk.archives.context import Context
from passatk.archives.counts import Counts, Tally
from passatk.archives.detect import UnknownDocument, detect, document_format, document_hint
from passatk.archives.errors import ArchiveError
from passatk.archives.harnesses import _hints as hints
from passatk.archives.harnesses import tables
from passatk.archives.harnesses.registry import get, specs
from passatk.archives.io.documents import load_json_document
from passatk.archives.io.opening import is_path_spec, logical_name
from passatk.archives.io.remote import is_url
from passatk.archives.overlap import check_overlap, check_repeated_records
from passatk.errors import Message, Option

__all__ = ["ALLOW_DUPLICATES", "add_outcome", "assemble", "read_into"]


def read_into(file: str, fmt: str | None, ctx: Context, filtering: bool,
              named: set[str]) -> tuple[str, object]:
    """Read one file into a fresh ``ctx.acc`` and ``ctx.stored``: ``("run", archive)``, or
    ``("summary", document)`` for a walked JSON document no reader recognizes."""
    ctx.acc, ctx.stored = Tally(), []
    try:
        kind = _read_one(file, fmt, ctx, filtering, os.path.normpath(file) in named)
    except UnknownDocument as e:
        if os.path.normpath(file) in named:
            raise
        return "summary", e.doc
    return "run", _archive_of(file, kind)


def add_outcome(runs: dict, summaries: list, file: str, outcome: tuple[str, object],
                acc: Tally, stored: list) -> None:
    """Add what :func:`read_into` read from ``file`` to the runs or the summaries."""
    what, value = outcome
    if what == "summary":
        summaries.append((file, value))
        return
    run = runs.setdefault(value, (acc, []))  # no copy
    if run[0] is not acc:
        run[0].merge(acc)
    run[1].extend(stored)


def assemble(runs: dict, summaries: list, ctx: Context, files: list[str], merge: bool,
             groups: dict | None = None) -> Counts:
    """The Counts of the runs and summaries read (see read_counts' ``merge``). ``groups``:
    each archive's groups, when the runs' counts were pooled before (merge=True)."""
    hints.add_notes(ctx)
    if merge is True and len(runs) > 1:  # before pooling: _combine adds into the first run
        check_overlap({a: part for a, (part, _) in runs.items()})
        check_repeated_records(files, {a: part for a, (part, _) in runs.items()})
    acc, stored, run_groups = _combine(runs, merge, ctx.options.by)
    groups = run_groups if groups is None else groups
    summaries = [(f, d) for f, d in summaries if os.path.normpath(f) not in ctx.sidecars]
    if summaries:
        stored += _summary.use(summaries, groups, ctx)
    counts = Counts._from_acc(
        acc, metric=ctx.metric or "pass@k", stored=tuple(stored),
        skipped=ctx.skipped, files=tuple(files),
    )
    return dataclasses.replace(counts, notes=tuple(ctx.notes)) if ctx.notes else counts


#: the group field that keeps several archives apart (each is its own run)
RUN_FIELD = "path"
#: read_counts' ``merge`` that pools archives even when one repeats what others hold
ALLOW_DUPLICATES = "allow-duplicates"


def _archive_of(file: str, kind: str) -> str:
    """The archive a file belongs to: itself, or its folder for MultiPL-E (a file per task)."""
    if not get(kind).per_directory:
        return file
    return posixpath.dirname(file) if is_url(file) else os.path.dirname(os.path.abspath(file))


def _combine(runs: dict[str, tuple[Tally, list]], merge: bool,
             by: tuple[str, ...] = ()) -> tuple[Tally, list, dict]:
    """Pool the runs (``merge``, or one archive), or label each by its path.

    Several archives get the group field ``path``, unless ``by`` holds a path spec, which
    must then keep their groups apart. Returns the counts, the stored numbers and the groups
    of each archive."""
    labels: dict[str, str] = {}
    if not merge and len(runs) > 1:
        if any(is_path_spec(b) for b in by):
            _check_apart(runs, by)
        else:
            labels = _relative_labels(list(runs))
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


def _check_options(file: str, kind: str, ctx: Context, filtering: bool) -> None:
    spec = get(kind)
    if spec.kind != "table":
        o = ctx.options
        allowed = spec.column_options
        mapped = [name for name in ("task", "passed", "reward", "threshold", "n", "c")
                  if getattr(o, name) is not None and name not in allowed]
        if mapped:
            named = [part for m in mapped for part in (", ", Option(m))][1:]
            raise ArchiveError(file, Message(
                f"is a {kind} archive, but column options (", *named, ") apply only to count "
                "and per-sample tables; pass ", Option("format", "samples"), " or ",
                Option("format", "counts"), " to read it as a table"))
    if filtering and not spec.filters:
        takers = ", ".join(s.info.harness for s in specs() if s.filters)
        raise ArchiveError(file, f"is a {kind} archive, but filters (since, until, difficulty) "
                           f"apply only to {takers}")


def _walked_document(file: str, kind: str) -> object:
    """With a forced format, a .json file found by a walk or glob: its parsed document, or
    UnknownDocument when no reader recognizes it (a summary next to the archives)."""
    if not logical_name(file).endswith(".json"):
        return None
    try:
        doc = load_json_document(file)
    except ArchiveError:
        if get(kind).kind == "document":
            raise
        return None  # JSON Lines named .json: the forced line reader reads it
    document_format(file, doc)  # raises UnknownDocument
    return doc if get(kind).kind == "document" else None


def _read_one(file: str, fmt: str | None, ctx: Context, filtering: bool, named: bool) -> str:
    """Read one file into ``ctx``; return its format. ``named``: given explicitly."""
    doc = None
    if fmt is None:
        kind, doc = detect(file, ctx)
    else:
        kind = fmt
        if not named:
            doc = _walked_document(file, kind)
    _check_options(file, kind, ctx, filtering)
    spec = get(kind)
    if spec.kind != "document":
        hint = document_hint(file) if spec.kind == "lines" or _jsonl_table(file) else None
        if hint is not None:
            raise ArchiveError(file, hint)
        spec.read(file, ctx)
        return kind
    if doc is None:
        doc = load_json_document(file)
        if not spec.probe(doc, file):
            raise ArchiveError(file, f"is not a {kind} archive (see passatk formats)")
    spec.read(file, ctx, doc)
    return kind


def _jsonl_table(file: str) -> bool:
    return tables.container(file) == "jsonl"
