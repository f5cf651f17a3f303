"""The ``passatk`` command line.

The command only parses arguments, calls the library and formats what it returns: every number comes
from the Python API (:func:`passatk.score`, :func:`passatk.compare`, :mod:`passatk.archives`).
Library modules are imported inside the commands, so that ``passatk --help`` stays fast.

Every bad input (a usage error, an unreadable archive, an invalid k) is reported as one line
``passatk: error: ...`` on stderr, never a traceback. Exit status (the convention of diff and
ruff): 0 success, 1 findings (``check`` found a stored number that does not agree), 2 a usage,
input or output error; 130 when interrupted. A library error that names an option to pass
(:class:`passatk.errors.HintedError`) is shown with the matching flag (``missing='report'`` ->
``--missing report``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from . import _console
from ._cli_args import (
    EXIT_ERROR,
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_STATUS_HELP,
    MAX_KS,
    MAX_RESAMPLES,
    PROG,
    UsageError,
    parse_ks,
)
from ._cli_args import build_parser as _build_parser
from ._console import Warm, console

__all__ = ["EXIT_ERROR", "EXIT_FINDINGS", "EXIT_OK", "EXIT_STATUS_HELP", "MAX_KS", "MAX_RESAMPLES",
           "UsageError", "build_parser", "console", "main", "parse_ks", "run"]

# -------------------------------------------------------------------------------------------------
# commands


#: --ci names -> the ``interval`` of :func:`passatk.score`
_INTERVALS = {"t": "t", "fixed": "fixed", "bootstrap": "percentile", "bca": "bca",
              "auto": "auto", "wilson": "wilson", "clopper-pearson": "clopper-pearson",
              "cluster": "cluster"}

_SCORE_COLUMNS = ("metric", "k", "value", "se", "ci_low", "ci_high", "confidence", "ci_method",
                  "tasks", "samples", "estimand")
_COMPARE_SPEC = ("metric", "k", "diff", "se", "ci_low", "ci_high", "p_value", "tasks")
_COMPARE_COLUMNS = (
    "metric", "k", "value_a", "value_b", "diff", "se", "ci_low", "ci_high", "confidence",
    "ci_method", "p_value", "tasks", "estimand",
)


def _note(args: argparse.Namespace, message: str) -> None:
    print(f"{PROG}: {message}", file=sys.stderr)


def _kernels_wanted(args: argparse.Namespace) -> bool:
    """Whether the command calls numba's kernels (their load overlaps the workers' reading):
    not ``score`` at k = 1 with a closed-form interval, whose c/n and variance need none."""
    return not (args.command == "score" and set(args.k or [1]) == {1}
                and getattr(args, "metric", None) in (None, "pass@k", "pass^k")
                and getattr(args, "ci", "auto") in ("auto", "t", "wilson", "fixed"))


def _filters(args: argparse.Namespace) -> dict[str, Any]:
    """The record filters of ``--since``, ``--until`` and ``--difficulty`` (those given)."""
    filters: dict[str, Any] = {}
    if args.since is not None:
        filters["since"] = args.since
    if args.until is not None:
        filters["until"] = args.until
    if args.difficulty:
        filters["difficulty"] = tuple(args.difficulty)
    return filters


def _check_paths(args: argparse.Namespace, paths: Sequence[str]) -> None:
    """Expand the local paths and refuse an ``-o`` that is one of the inputs."""
    from passatk import archives

    local = [p for p in paths if "://" not in str(p)]
    # a bad local path fails here, before any reader (or numpy) is loaded
    files = archives.expand_paths(local) if local else []
    _output_is_no_input(getattr(args, "output", None), files + [p for p in paths
                                                                if str(p).startswith("file://")])


def _reader_options(args: argparse.Namespace, filters: dict[str, Any],
                    progress: Any) -> dict[str, Any]:
    """The keywords of :func:`passatk.archives.read_counts` from the reader flags; called
    inside ``launching``, since ``--scheduler`` connects to its cluster here."""
    return dict(
        format=args.input_format,
        by=tuple(getattr(args, "by", ()) or ()),
        task=args.task,
        passed=args.passed,
        reward=args.reward,
        threshold=args.threshold,
        n=args.n_field,
        c=args.c_field,
        skip_bad=args.skip_bad,
        strict_json=args.strict_json,
        filters=filters or None,
        merge="allow-duplicates" if args.allow_duplicates else args.merge,
        progress=progress,
        scheduler=_cluster(args),
        workers=args.jobs,
        storage_options=dict(args.storage_options) or None,
    )


def _read_counts(args: argparse.Namespace, paths: Sequence[str],
                 filters: dict[str, Any]) -> Any:
    """Read ``paths`` while numba's kernels load, with a progress bar unless ``--quiet``."""
    from passatk import archives

    from ._output import Progress
    from .archives.engine.processes import launching

    warm = Warm(wanted=_kernels_wanted(args))
    if args.scheduler is not None:
        warm.start()  # the cluster reads; this process only waits
    progress = Progress(enabled=not args.quiet, units="tasks" if args.scheduler else None,
                        force=args.progress)
    try:
        with launching(after_start=warm.start):
            return archives.read_counts(list(paths), **_reader_options(args, filters, progress))
    finally:
        progress.close()
        warm.join()


def _report_read(args: argparse.Namespace, counts: Any) -> None:
    """The reader's notes (unless ``--quiet``) and the first skipped records, on stderr."""
    if not args.quiet:
        for message in counts.notes:
            _note(args, message)
    skipped = counts.skipped
    if skipped.count:
        _note(args, f"skipped {skipped.count} bad record(s) (--skip-bad):")
        shown = skipped.records[:10]
        for record in shown:
            print(f"  {record}", file=sys.stderr)
        if skipped.count > len(shown):
            print(f"  ... and {skipped.count - len(shown)} more", file=sys.stderr)


def _read(args: argparse.Namespace, paths: Sequence[str], run: str | None = None) -> Any:
    """Read archives with the reader flags of ``args``; report skipped records on stderr.
    The files read are kept in ``args._files`` (with ``run``) for the JSON envelope."""
    filters = _filters(args)
    _check_paths(args, paths)
    counts = _read_counts(args, paths, filters)
    _report_read(args, counts)
    if len(counts) == 0:
        raise ValueError(f"no tasks found in {', '.join(paths)}")
    _keep_files(args, counts, run)
    return counts


def _keep_files(args: argparse.Namespace, counts: Any, run: str | None) -> None:
    """Note the files read, for the inputs of the JSON envelope."""
    args._files = [*getattr(args, "_files", ()), *((run, f) for f in counts.files)]


def _identity(path: str) -> tuple[int, int] | None:
    """(device, inode) of the regular file a name reaches (symlinks followed; ``-`` is standard
    input, ``file://`` its path), or None (none, or a device or pipe: written through, never
    replaced)."""
    try:
        if path == "-":
            st = os.fstat(sys.stdin.fileno())
        elif path.startswith("file://"):
            from urllib.parse import urlsplit
            from urllib.request import url2pathname

            st = os.stat(url2pathname(urlsplit(path).path))
        else:
            st = os.stat(path)
    except (OSError, ValueError, AttributeError):  # absent, or stdin closed or replaced
        return None
    import stat

    return (st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None


def _output_is_no_input(output: str | None, inputs: Sequence[str]) -> None:
    """Refuse an ``-o`` that reaches one of the inputs (directly, by a symlink or a hard link,
    found by a walk): the atomic write would replace the archive with the report."""
    if not output or output == "-":
        return
    target = _identity(output)
    if target is None:
        return
    for path in inputs:
        if _identity(path) == target:
            same = "" if os.path.abspath(path) == os.path.abspath(output) else (
                f" (the file {output!r} reaches)")
            raise ValueError(f"-o {output!r} is the input {path!r}{same}: writing it would "
                             "replace that archive; name another output file")


def _cluster(args: argparse.Namespace) -> Any:
    """The Dask client of ``--scheduler``, opened once per command (compare reads twice)."""
    if args.scheduler is None:
        return None
    if getattr(args, "_cluster", None) is None:
        from .archives.engine.dask_engine import connect

        args._cluster, args._close_cluster = connect(args.scheduler)
    return args._cluster


def _clusters(args: argparse.Namespace, task_ids: Any) -> Any:
    """Cluster labels from the task ids by --cluster-by, or None."""
    if getattr(args, "cluster_by", None) is None:
        return None
    if task_ids is None:
        raise ValueError("--cluster-by needs task ids, and these archives carry none")
    out = []
    for t in task_ids.tolist():
        m = args.cluster_by.search(str(t))
        if m is None:
            raise ValueError(f"--cluster-by {args.cluster_by.pattern!r} does not match task "
                             f"id {t!r}")
        out.append(m.group(0))
    return out


def _metric(args: argparse.Namespace, counts: Any) -> str:
    """The metric asked for, or the archive's own (pass^k for tau-bench trials)."""
    return args.metric if args.metric is not None else counts.metric


def _percent(record: dict[str, Any], percent: bool) -> dict[str, Any]:
    """``record`` unchanged: ``--percent`` is applied (and the fields renamed ``*_pct``) by
    :func:`_emit` in every format; kept so that a command written against the older helper
    does not scale its records twice."""
    return record


def _ordered(record: dict[str, Any], first: Sequence[str]) -> dict[str, Any]:
    """``record`` with the fields of the spec first, then the library's other fields."""
    out = {key: record[key] for key in ("group", *first) if key in record}
    out.update((key, value) for key, value in record.items() if key not in out)
    return out


def _compact(
    records: Sequence[dict[str, Any]], columns: Sequence[str], extra: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """The columns a table shows, plus a note column when some row has a reason."""
    with_note = any(r.get("reason") for r in records)
    out = []
    for r in records:
        row = {"group": r["group"], **{c: r.get(c) for c in columns}}
        row.update((c, r[c]) for c in extra if c in r)
        if with_note:
            row["note"] = r.get("reason") or ""
        out.append(row)
    return out


def _emit(
    args: argparse.Namespace,
    records: list[dict[str, Any]],
    columns: Sequence[str],
    extra: Sequence[str] = (),
    decimals: int | None = None,
    rename: dict[str, str] | None = None,
    **fields: Any,
) -> None:
    """Write ``records`` in ``args.format``: JSON as the envelope of docs/cli.md (``fields``
    are its command's own keys), the flat formats with ``columns`` (renamed by ``rename``)."""
    from ._output import write_text

    if args.format in ("json", "jsonl"):
        text = _json_text(args, records, fields)
    else:
        text = _flat_text(args, _compact(records, columns, extra), decimals, rename)
    if getattr(args, "seed_drawn", False) and not getattr(args, "quiet", False):
        _note(args, f"--seed random drew seed {args.seed}")
    write_text(text, args.output)


def _json_text(args: argparse.Namespace, records: list[dict[str, Any]],
               fields: dict[str, Any]) -> str:
    from . import _cli_output as O
    from ._output import render

    pct = getattr(args, "percent", False)
    rows: Any = [O.percent(r) for r in records] if pct else records
    if args.format == "json":
        unit = ("percent" if pct else "fraction") if hasattr(args, "percent") else None
        rows = O.cli_envelope(args.command, rows, files=getattr(args, "_files", ()),
                              seed=getattr(args, "seed", None), argv=args.argv, unit=unit,
                              **fields)
    return render(rows, args.format)


def _flat_text(args: argparse.Namespace, flat: list[dict[str, Any]], decimals: int | None,
               rename: dict[str, str] | None) -> str:
    from . import _cli_output as O
    from ._output import render

    pct = getattr(args, "percent", False)
    if rename:
        flat = [{rename.get(key, key): value for key, value in r.items()} for r in flat]
    flat = [O.percent(r) for r in flat] if pct else flat
    return render(flat, args.format, decimals=(2 if pct else 4) if decimals is None else decimals,
                  csv_safe=O.csv_safe_default(getattr(args, "csv_safe", None), args.output),
                  escape=O.to_terminal(args.output))


def _skipped_fields(args: argparse.Namespace, counts: Any) -> dict[str, Any]:
    return {"skipped": counts.skipped.to_dict()} if args.skip_bad else {}


def _run_label(args: argparse.Namespace, group: dict[str, Any]) -> str:
    """The run a score row belongs to, for an error: its group, or the paths read."""
    from passatk.archives.pairs import group_label

    return group_label(group) if group else ", ".join(args.paths)


def _named(label: str | None, call: Any, *args: Any, **kwargs: Any) -> Any:
    """``call(*args, **kwargs)``; a library error that names an option is prefixed with the
    run it is about (several archives are read at once), unless ``label`` is None."""
    from .errors import HintedError

    try:
        return call(*args, **kwargs)
    except HintedError as exc:
        if label is None:
            raise
        raise HintedError(f"{label}: ", *exc.message.parts) from None


def _score_counts(args: argparse.Namespace, counts: Any, metric: str | list[str], k: Any,
                  rng: Any) -> list[Any]:
    """Score each group of ``counts``; return the library's rows with the group labels set."""
    import dataclasses

    import passatk

    rows = []
    for i, g in enumerate(counts.iter_groups()):
        result = _named(  # a group of a Counts: its ids are distinct, so none is sorted
            _run_label(args, dict(g.group)), passatk.score, g, None, k(g) if callable(k) else k,
            metric=counts.metric_of(i) if metric == "mixed" else metric,
            clusters=_clusters(args, g.task),
            interval=_INTERVALS[args.ci],
            confidence=args.level,
            seed=rng,
            missing=args.missing,
            **({"n_resamples": args.resamples} if args.resamples else {}),
        )
        rows.extend(dataclasses.replace(row, group=dict(g.group)) for row in result.rows)
    return rows


def cmd_score(args: argparse.Namespace) -> int:
    counts = _read(args, args.paths)
    import numpy as np  # after reading: a bad path is reported without loading numpy

    metric = _metric(args, counts)
    rows = _score_counts(args, counts, metric, args.k or [1], np.random.default_rng(args.seed))
    records = [_ordered(row.to_dict(), _SCORE_COLUMNS) for row in rows]
    _emit(args, records, _SCORE_COLUMNS, confidence=args.level, interval=_INTERVALS[args.ci],
          **_skipped_fields(args, counts))
    return EXIT_OK


def _check_compare_metrics(args: argparse.Namespace, counts_a: Any, counts_b: Any) -> None:
    """Without ``--metric``, both runs must hold one and the same metric."""
    if args.metric is None and "mixed" in (counts_a.metric, counts_b.metric):
        raise ValueError("a run holds both pass@k and pass^k archives; compare the runs of "
                         "one metric, or pass --metric")
    if args.metric is None and counts_a.metric != counts_b.metric:
        raise ValueError(
            f"run A holds {counts_a.metric} data and run B {counts_b.metric} data; "
            "they cannot be compared"
        )


def _compare_record(args: argparse.Namespace, row: Any) -> dict[str, Any]:
    """A compare row as a record, with the interval and p-value of ``--ci``."""
    record = row.to_dict()
    if args.ci == "bootstrap":
        # the paired bootstrap interval and the sign-flip permutation p-value
        record.update(ci_low=record["boot_low"], ci_high=record["boot_high"],
                      p_value=record["perm_p_value"], ci_method="paired-bootstrap-t",
                      ci_text="paired studentized bootstrap; sign-flip permutation "
                      "p-value")
    elif record.get("ci_method") is None:
        record.update(ci_method="paired-t", ci_text="paired t")
    return _ordered(record, _COMPARE_SPEC)


def _compare_group(args: argparse.Namespace, group: Any, ga: Any, gb: Any, metric: str,
                   rng: Any) -> Any:
    """:func:`passatk.compare` of one group of the two runs; notes the tasks excluded."""
    import passatk
    from passatk.archives.pairs import group_label

    result = _named(  # A and B are named by the error; a group of them is named here
        group_label(group) if group else None, passatk.compare,
        ga.n, ga.c, gb.n, gb.c, args.k or [1],
        task_ids_a=ga.task,
        task_ids_b=gb.task,
        clusters=_clusters(args, ga.task),
        metric=metric,
        unmatched=args.unmatched,
        missing=args.missing,
        confidence=args.level,
        seed=rng,
        group=group,
        **({"n_resamples": args.resamples} if args.resamples else {}),
    )
    if result.only_in_a or result.only_in_b:
        _note(
            args,
            f"{group_label(group)}: excluded {len(result.only_in_a)} task(s) only in A and "
            f"{len(result.only_in_b)} only in B (--unmatched exclude)",
        )
    return result


def cmd_compare(args: argparse.Namespace) -> int:
    import numpy as np

    from passatk import archives

    if args.ci not in ("t", "bootstrap"):
        raise ValueError(f"compare offers --ci t or --ci bootstrap, not {args.ci}")
    counts_a = _read(args, [args.a], run="a")
    counts_b = _read(args, [args.b], run="b")
    _check_compare_metrics(args, counts_a, counts_b)
    metric = _metric(args, counts_a)
    rng = np.random.default_rng(args.seed)
    records, unmatched = [], []
    for group, ga, gb in archives.pair_runs(counts_a, counts_b):
        result = _compare_group(args, group, ga, gb, metric, rng)
        if args.unmatched == "exclude":
            unmatched.append({"group": dict(group), "only_in_a": list(result.only_in_a),
                              "only_in_b": list(result.only_in_b)})
        records.extend(_compare_record(args, row) for row in result.rows)
    columns, rename = _compare_columns(args, records)
    _emit(args, records, columns, rename=rename, confidence=args.level,
          **({"unmatched": unmatched} if args.unmatched == "exclude" else {}))
    return EXIT_OK


def _compare_columns(args: argparse.Namespace,
                     records: Sequence[dict[str, Any]]) -> tuple[list[str], dict[str, str]]:
    """The flat columns of compare: the runs by name rather than value_a/value_b (table and
    Markdown), and McNemar's p-value, the paired test of binary outcomes, when every task has
    n = 1 in both runs."""
    columns = list(_COMPARE_COLUMNS)
    if records and all(r.get("mcnemar_p_value") is not None for r in records):
        columns[columns.index("p_value")] = "mcnemar_p_value"
    if args.format not in ("table", "markdown"):
        return columns, {}
    from ._cli_output import varying_labels

    a, b = varying_labels([args.a, args.b])
    return columns, {"value_a": f"A: {a}", "value_b": f"B: {b}", "diff": "diff (A-B)",
                     "mcnemar_p_value": "p (McNemar)"}


def cmd_check(args: argparse.Namespace) -> int:
    from passatk import archives

    counts = _read(args, args.paths)
    result = archives.check(counts, tolerance=args.tolerance, strict=args.strict)
    records = [row.to_dict() for row in result]
    columns = ["metric", "k", "stored", "recomputed", "rel_diff", "status", "source"]
    if any(r["task"] is not None for r in records):
        columns.insert(2, "task")
    _emit(args, records, columns, decimals=10)
    if not args.quiet:
        _note(args, result.summary())
    return EXIT_OK if result.ok else EXIT_FINDINGS


#: plot's default k: every k up to min(n) when that is at most this, else the ladder 1, 2, 5, ...
PLOT_ALL_K = 200


def _plot_ks(group: Any) -> str:
    return "all" if int(group.n.min()) <= PLOT_ALL_K else "ladder"


def cmd_plot(args: argparse.Namespace) -> int:
    import numpy as np

    from . import plot
    from ._output import atomic_path

    try:
        plot._matplotlib()  # fail before reading when matplotlib is missing
    except ImportError as exc:
        raise ValueError(str(exc)) from None
    ext = os.path.splitext(args.output)[1].lstrip(".").lower()
    if not ext:
        raise ValueError(f"cannot tell the image format of {args.output!r}: name it .pdf, .svg "
                         "or .png")
    counts = _read(args, args.paths)
    metric = _metric(args, counts)
    if args.plugin and metric != "pass@k":
        raise ValueError(f"--plugin overlays the plug-in estimate of pass@k, not of {metric}")
    metrics = [metric, "plugin"] if args.plugin else metric
    rows = _score_counts(args, counts, metrics, args.k or _plot_ks,
                         np.random.default_rng(args.seed))
    ax = plot.plot_pass_at_k(rows, log_k=args.log_k, width=args.width, height=args.height)
    if args.title:
        ax.set_title(args.title, fontsize=plot.FONT_SIZE + 1)
    with atomic_path(args.output) as tmp:
        plot.save(ax.figure, tmp, image_format=ext)
    if not args.quiet:
        _note(args, f"wrote {args.output} ({plot.caption(rows)})")
    return EXIT_OK


def cmd_simulate(args: argparse.Namespace) -> int:
    import passatk
    from passatk import archives
    from passatk.archives.harnesses.lookup import get as format_spec

    fmt = args.archive_format
    fmt = archives.format_for_path(args.output) if fmt is None else fmt
    if not args.force and os.path.isfile(args.output):
        raise ValueError(f"-o {args.output!r} exists; pass --force to replace it")
    sim = passatk.simulate(args.tasks, args.n, args.a, args.b, seed=args.seed)
    native = format_spec(fmt).native_ids  # tau-bench's task ids are integers
    task_ids = [i if native else f"task/{i}" for i in range(args.tasks)]
    passes = [[j < c for j in range(n)] for n, c in zip(sim.n.tolist(), sim.c.tolist(),
                                                        strict=True)]
    written = archives.write_archive(args.output, task_ids, passes, format=fmt,
                                     stored=not args.no_stored)
    for path in written:
        print(path)
    if not args.quiet:
        _note(args, f"simulated {args.tasks} tasks x {args.n} samples, p ~ Beta({args.a:g}, "
                    f"{args.b:g}), seed {args.seed}, as {fmt}")
    return EXIT_OK


def cmd_formats(args: argparse.Namespace) -> int:
    from passatk import archives

    from ._output import render, write_text

    records = [
        {"name": f.name, "harness": f.harness, "metric": f.metric, "files": f.files,
         "detection": f.detection, "passes": f.passes}
        for f in archives.formats()
    ]
    if args.format == "table":
        width = max(len(r["name"]) for r in records)
        lines = []
        for r in records:
            lines.append(f"{r['name']:<{width}}  {r['harness']}  ({r['metric']})")
            lines.append(f"{'':<{width}}  files:     {r['files']}")
            lines.append(f"{'':<{width}}  detected:  {r['detection']}")
            lines.append(f"{'':<{width}}  pass:      {r['passes']}")
        lines.append("")
        lines.append("Detection reads the file name and the first record; --input-format NAME "
                     "overrides it.")
        text = "\n".join(lines) + "\n"
    elif args.format == "json":
        from ._cli_output import cli_envelope

        text = render(cli_envelope("formats", records, argv=args.argv), "json")
    else:
        from ._cli_output import csv_safe_default, to_terminal

        text = render(records, args.format, escape=to_terminal(args.output),
                      csv_safe=csv_safe_default(args.csv_safe, args.output))
    write_text(text, args.output)
    return EXIT_OK


def cmd_warm(args: argparse.Namespace) -> int:
    from ._warm import GROUPS, describe, warm

    result = warm(tuple(args.only or GROUPS))
    if not args.quiet:
        for line in describe(result):
            print(line)
    return EXIT_OK


#: the function of each subcommand
_COMMANDS = {"score": cmd_score, "compare": cmd_compare, "check": cmd_check, "plot": cmd_plot,
             "simulate": cmd_simulate, "formats": cmd_formats, "warm": cmd_warm}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``passatk`` command, with the commands of their own
    modules (``leaderboard``, ``plan``)."""
    from . import _cli_leaderboard as LB

    return _build_parser((LB.add_leaderboard_parser, LB.add_plan_parser))


def _cmd_leaderboard(args: argparse.Namespace) -> int:
    from ._cli_leaderboard import cmd_leaderboard

    return cmd_leaderboard(args, _read, _INTERVALS)


def _cmd_plan(args: argparse.Namespace) -> int:
    from ._cli_leaderboard import cmd_plan

    return cmd_plan(args, _read)


_COMMANDS.update(leaderboard=_cmd_leaderboard, plan=_cmd_plan)


# -------------------------------------------------------------------------------------------------
# main


#: API keywords whose flag is not ``--`` and the keyword (the others: ``by`` -> ``--by``, ...)
_FLAGS = {"format": "--input-format", "interval": "--ci", "confidence": "--level",
          "n_resamples": "--resamples"}


def _flag(option: Any) -> str:
    """The command-line spelling of an option named in a library error."""
    from .errors import UNSET

    if option.key is not None:  # filters['since'] -> --since
        return "--" + option.key.replace("_", "-")
    flag = _FLAGS.get(option.name, "--" + option.name.replace("_", "-"))
    if option.name == "merge" and option.value == "allow-duplicates":
        return "--allow-duplicates"
    if option.value is UNSET or option.value is True:
        return flag
    if isinstance(option.value, (list, tuple)):  # by=['model'] -> --by model
        return " ".join(f"{flag} {v}" for v in option.value)
    return f"{flag} {option.value}"


def _one_line(exc: BaseException) -> str:
    from .errors import HintedError

    if isinstance(exc, OSError) and exc.strerror and not exc.args[2:]:
        where = exc.filename if exc.filename is not None else ""
        text = f"{where}: {exc.strerror}" if where else exc.strerror
    elif isinstance(exc, HintedError):
        text = exc.render(_flag)
    else:
        text = str(exc) or type(exc).__name__
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return "; ".join(lines) if lines else type(exc).__name__


def _error(message: str) -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return EXIT_ERROR


def _bare_dashes(argv: Sequence[str]) -> str | None:
    """The first ``--opt=--`` before a lone ``--``: argparse turns that value into an empty
    list that no option's type sees (a traceback later, or a silent default)."""
    for arg in argv:
        if arg == "--":
            return None
        if arg.startswith("-") and arg.endswith("=--"):
            return arg
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status.

    0 success (also when the reader of standard output leaves early, ``| head``), 1 findings
    (``check`` found a disagreement), 2 a usage, input or output error, 130 interrupted (143
    SIGTERM, 129 SIGHUP while worker processes read: they are ended first).
    """
    parser = build_parser()
    bare = _bare_dashes(list(sys.argv[1:] if argv is None else argv))
    if bare is not None:
        return _error(f"argument {bare[:-3]}: expected one argument, got '--', which "
                      "argparse reads as the end of options")
    try:
        args = parser.parse_args(argv)
    except UsageError as exc:
        return _error(_one_line(exc))
    except SystemExit as exc:  # --help and --version
        return exc.code if isinstance(exc.code, int) else 0
    if args.command is None:  # as git: the usage, then status 2
        sys.stderr.write(parser.format_usage())
        return _error("a command is required; run 'passatk --help' for the list")
    args.argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if "format" in vars(args):
            from ._cli_output import output_format

            args.format = output_format(args.format, args.output)
        code = _COMMANDS[args.command](args)
        sys.stdout.flush()  # surface a broken pipe here rather than at interpreter exit
        return code
    except BrokenPipeError:
        # The reader of stdout went away (e.g. `| head`): stop quietly, with status 0, as when
        # the output fitted in the pipe before the reader left (the same status whatever the
        # timing; the reader chose to stop reading).
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except MemoryError:
        return _error("out of memory; use fewer values of k, fewer resamples or smaller inputs")
    except (ValueError, TypeError, OSError) as exc:
        return _error(_one_line(exc))
    finally:
        close = getattr(args, "_close_cluster", None)
        if close is not None:
            close()


def run() -> None:
    """The console entry point (``passatk`` and ``python -m passatk``): :func:`main` in the
    process that :mod:`passatk._console` tunes (OpenBLAS to one thread, numba's BLAS probe
    answered without scipy, ``os._exit`` after flushing), then exit with its status."""
    _console.run(main)


if __name__ == "__main__":
    run()
