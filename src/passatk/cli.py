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
import contextlib
import os
import sys
from collections.abc import Iterator, Sequence
from typing import Any

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

__all__ = ["EXIT_ERROR", "EXIT_FINDINGS", "EXIT_OK", "EXIT_STATUS_HELP", "MAX_KS", "MAX_RESAMPLES",
           "UsageError", "build_parser", "console", "main", "parse_ks", "run"]

# -------------------------------------------------------------------------------------------------
# commands


#: --ci names -> the ``interval`` of :func:`passatk.score`
_INTERVALS = {"t": "t", "fixed": "fixed", "bootstrap": "percentile", "bca": "bca",
              "auto": "auto", "wilson": "wilson", "clopper-pearson": "clopper-pearson",
              "cluster": "cluster"}

#: fields scaled by --percent (all are fractions of tasks solved, or differences of them)
_SCALED = (
    "value", "se", "ci_low", "ci_high", "se_super", "se_fixed", "se_cluster", "sd_between",
    "percentile_low", "percentile_high", "bca_low", "bca_high",
    "diff", "value_a", "value_b", "boot_low", "boot_high", "band_low", "band_high",
)

_SCORE_COLUMNS = ("metric", "k", "value", "se", "ci_low", "ci_high", "tasks", "samples",
                  "estimand")
_COMPARE_SPEC = ("metric", "k", "diff", "se", "ci_low", "ci_high", "p_value", "tasks")
_COMPARE_COLUMNS = (
    "metric", "k", "value_a", "value_b", "diff", "se", "ci_low", "ci_high", "p_value", "tasks",
    "estimand",
)


def _note(args: argparse.Namespace, message: str) -> None:
    print(f"{PROG}: {message}", file=sys.stderr)


def _read(args: argparse.Namespace, paths: Sequence[str]) -> Any:
    """Read archives with the reader flags of ``args``; report skipped records on stderr."""
    from passatk import archives

    from ._output import Progress

    filters: dict[str, Any] = {}
    if args.since is not None:
        filters["since"] = args.since
    if args.until is not None:
        filters["until"] = args.until
    if args.difficulty:
        filters["difficulty"] = tuple(args.difficulty)
    local = [p for p in paths if "://" not in str(p)]
    # a bad local path fails here, before any reader (or numpy) is loaded
    if local:
        archives.expand_paths(local)
    from .archives._processes import launching

    warm = _Warm()
    if args.scheduler is not None:
        warm.start()  # the cluster reads; this process only waits
    progress = Progress(enabled=not args.quiet, units="tasks" if args.scheduler else None,
                        force=args.progress)
    try:
        with launching(after_start=warm.start):
            counts = archives.read_counts(
                list(paths),
                format=args.input_format,
                by=tuple(getattr(args, "by", ()) or ()),
                task=args.task,
                passed=args.passed,
                reward=args.reward,
                threshold=args.threshold,
                n=args.n_field,
                c=args.c_field,
                skip_bad=args.skip_bad,
                filters=filters or None,
                merge=args.merge,
                progress=progress,
                scheduler=_cluster(args),
                workers=args.jobs,
                storage_options=dict(args.storage_options) or None,
            )
    finally:
        progress.close()
        warm.join()
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
    if len(counts) == 0:
        raise ValueError(f"no tasks found in {', '.join(paths)}")
    return counts


class _Warm:
    """The kernels loaded in a thread while others read (``passatk._warm``): at once when a
    cluster reads, or when the local worker processes have started (``launching``)."""

    def __init__(self) -> None:
        self.thread: Any = None

    def start(self) -> None:
        if self.thread is None:
            from ._warm import start

            self.thread = start()

    def join(self) -> None:
        if self.thread is not None:
            self.thread.join()


def _cluster(args: argparse.Namespace) -> Any:
    """The Dask client of ``--scheduler``, opened once per command (compare reads twice)."""
    if args.scheduler is None:
        return None
    if getattr(args, "_cluster", None) is None:
        from .archives._dask import connect

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
    if percent:
        for key in _SCALED:
            value = record.get(key)
            if isinstance(value, float):
                record[key] = value * 100.0
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
) -> None:
    from ._output import render, write_text

    if args.format in ("json", "jsonl"):
        text = render(records, args.format)
    else:
        if decimals is None:
            decimals = 2 if getattr(args, "percent", False) else 4
        text = render(_compact(records, columns, extra), args.format, decimals=decimals)
    write_text(text, args.output)


def _skipped_fields(args: argparse.Namespace, counts: Any) -> dict[str, Any]:
    return {"skipped": counts.skipped.to_dict()} if args.skip_bad else {}


def _score_counts(args: argparse.Namespace, counts: Any, metric: str | list[str], k: Any,
                  rng: Any) -> list[Any]:
    """Score each group of ``counts``; return the library's rows with the group labels set."""
    import dataclasses

    import passatk

    rows = []
    for g in counts.iter_groups():
        result = passatk.score(
            g.n, g.c, k(g) if callable(k) else k,
            metric=metric,
            task_ids=g.task,
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
    extra = _skipped_fields(args, counts)
    records = [
        _percent(_ordered({**row.to_dict(), **extra}, _SCORE_COLUMNS), args.percent)
        for row in rows
    ]
    _emit(args, records, _SCORE_COLUMNS)
    return EXIT_OK


def cmd_compare(args: argparse.Namespace) -> int:
    import numpy as np

    import passatk
    from passatk import archives
    from passatk.archives._pairs import group_label

    if args.ci not in ("t", "bootstrap"):
        raise ValueError(f"compare offers --ci t or --ci bootstrap, not {args.ci}")
    counts_a = _read(args, [args.a])
    counts_b = _read(args, [args.b])
    if args.metric is None and counts_a.metric != counts_b.metric:
        raise ValueError(
            f"run A holds {counts_a.metric} data and run B {counts_b.metric} data; "
            "they cannot be compared"
        )
    metric = _metric(args, counts_a)
    rng = np.random.default_rng(args.seed)
    records = []
    for group, ga, gb in archives.pair_runs(counts_a, counts_b):
        result = passatk.compare(
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
        for row in result.rows:
            record = row.to_dict()
            if args.ci == "bootstrap":
                # the paired bootstrap interval and the sign-flip permutation p-value
                record.update(ci_low=record["boot_low"], ci_high=record["boot_high"],
                              p_value=record["perm_p_value"], ci_method="paired studentized "
                              "bootstrap; sign-flip permutation p-value")
            else:
                record.setdefault("ci_method", "paired t")
            if args.unmatched == "exclude":
                record["only_in_a"] = list(result.only_in_a)
                record["only_in_b"] = list(result.only_in_b)
            records.append(_percent(_ordered(record, _COMPARE_SPEC), args.percent))
    _emit(args, records, _COMPARE_COLUMNS)
    return EXIT_OK


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
    from passatk.archives._registry import get as format_spec

    fmt = args.archive_format
    fmt = archives.format_for_path(args.output) if fmt is None else fmt
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
    else:
        text = render(records, args.format)
    write_text(text, args.output)
    return EXIT_OK


#: the function of each subcommand
_COMMANDS = {"score": cmd_score, "compare": cmd_compare, "check": cmd_check, "plot": cmd_plot,
             "simulate": cmd_simulate, "formats": cmd_formats}


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


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status.

    0 success, 1 findings (``check`` found a disagreement), 2 a usage, input or output error
    (also a closed standard output), 130 interrupted.
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as exc:
        return _error(_one_line(exc))
    except SystemExit as exc:  # --help and --version
        return exc.code if isinstance(exc.code, int) else 0
    if args.command is None:
        parser.print_help()
        return EXIT_OK
    try:
        code = _COMMANDS[args.command](args)
        sys.stdout.flush()  # surface a broken pipe here rather than at interpreter exit
        return code
    except BrokenPipeError:
        # The reader of stdout went away (e.g. `| head`): stop quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_ERROR
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


_SCIPY_BLAS = "scipy.linalg.cython_blas"


@contextlib.contextmanager
def _without_scipy_blas() -> Iterator[None]:
    """numba's first compile probes for BLAS by importing scipy.linalg (0.2 s of its 0.5 s
    start when scipy is installed). passatk's kernels use no BLAS and the command line no
    scipy, so in this process the probe is told there is none; the entry is removed after."""
    blocked = "scipy.linalg" not in sys.modules and _SCIPY_BLAS not in sys.modules
    if blocked:
        sys.modules[_SCIPY_BLAS] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        if blocked and _SCIPY_BLAS in sys.modules and sys.modules[_SCIPY_BLAS] is None:
            del sys.modules[_SCIPY_BLAS]


@contextlib.contextmanager
def console() -> Iterator[None]:
    """The process settings of the console entry point, around :func:`main` (tests that run
    the command line in one process use them too)."""
    # numpy's OpenBLAS starts a thread per core at import that spins for about 0.1-0.2 s of
    # CPU; passatk calls no BLAS, and on a small machine the spinning takes the cores the
    # worker processes read on (they inherit this). A value the user set is kept.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    with _without_scipy_blas():
        yield


def run() -> None:
    """The console entry point (``passatk`` and ``python -m passatk``): :func:`main`, then exit.

    It keeps OpenBLAS to one thread and answers numba's BLAS probe without scipy (passatk
    calls no BLAS). Once numba is loaded, a normal interpreter exit spends 0.1-0.2 s tearing
    LLVM and numba's modules down; by then everything passatk wrote is closed or flushed here,
    and no exit handler is left with work (pools and clusters are shut by ``main``), so the
    process ends at once with ``os._exit``.
    """
    with console():
        code = main()
    if "numba" not in sys.modules:
        raise SystemExit(code)
    try:
        sys.stdout.flush()
    except (BrokenPipeError, ValueError):
        code = code or EXIT_ERROR
    try:
        sys.stderr.flush()
    finally:
        os._exit(code)


if __name__ == "__main__":
    run()
