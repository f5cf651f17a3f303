"""The ``passatk leaderboard`` and ``passatk plan`` commands (parsers and commands).

Both only parse, call the library (:func:`passatk.leaderboard`, the planning functions of
:mod:`passatk.stats`) and format what it returns.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from ._cli_args import (
    EXIT_OK,
    SCORE_CIS,
    _add_reader_args,
    _add_run_args,
    _finite_float,
    _level,
    _positive_float,
    _positive_int,
    _subparser,
)

LEADERBOARD_FORMATS = ("table", "markdown", "latex", "csv", "json", "jsonl")
_ROW_COLUMNS = ("model", "k", "value", "se", "ci_low", "ci_high", "rank_low", "rank_high",
                "groups", "tasks")
_PAIR_COLUMNS = ("model_a", "model_b", "k", "diff", "se", "ci_low", "ci_high", "p_value",
                 "p_adjusted", "significant", "tasks")


def add_leaderboard_parser(sub: Any) -> None:
    """Add the ``leaderboard`` subcommand."""
    p = _subparser(
        sub,
        "leaderboard",
        "rank many runs: every pair compared, rank intervals and tied groups",
        "Rank several runs on the same tasks: each run's score with its interval, every pair's "
        "paired difference with a p-value adjusted over all pairs (Holm by default), each "
        "run's rank interval and the groups of runs that cannot be told apart. One run per "
        "PATH, or one PATH split into runs by --by.",
        "  passatk leaderboard run_a/ run_b/ run_c/ -k 1,10\n"
        "  passatk leaderboard results.jsonl --by model --adjust max-t --seed 0\n"
        "  passatk leaderboard runs/*.jsonl --format latex -o table.tex\n"
        "  passatk leaderboard a.jsonl b.jsonl --matrix --format markdown\n",
    )
    # no --ci cluster (no --cluster-by here), no --missing: a missing score has no rank
    _add_run_args(p, "one run per path (or --by)",
                  cis=tuple(c for c in SCORE_CIS if c != "cluster"), missing=False)
    g = p.add_argument_group("leaderboard")
    g.add_argument("--adjust", choices=("holm", "bh", "max-t"), default="holm",
                   help="adjustment of the pairwise p-values over all pairs: holm "
                   "(family-wise), bh (false discovery rate) or max-t (family-wise, with "
                   "simultaneous intervals) (default: %(default)s)")
    g.add_argument("--unmatched", choices=("raise", "exclude"), default="raise",
                   help="a task some run lacks: fail, or compare each pair on the tasks it "
                   "shares (default: %(default)s)")
    what = g.add_mutually_exclusive_group()
    what.add_argument("--pairs", action="store_true",
                      help="print the pairwise comparisons instead of the ranking")
    what.add_argument("--matrix", action="store_true",
                      help="print the matrix of differences (row minus column) and of the "
                      "adjusted p-values at each k")
    g.add_argument("--plot", metavar="FILE", default=None,
                   help="also draw a forest plot of the scores to FILE (.pdf, .svg, .png)")
    o = p.add_argument_group("output")
    o.add_argument("--format", choices=LEADERBOARD_FORMATS, default="table",
                   help="output format (default: %(default)s); latex is a booktabs table")
    o.add_argument("-o", "--output", metavar="FILE",
                   help="write to FILE (atomically) instead of stdout")


def _runs(args: argparse.Namespace, _read: Any) -> Any:
    if len(args.paths) == 1:
        return _read(args, args.paths)
    runs = {}
    for path in args.paths:
        if path in runs:
            raise ValueError(f"run {path!r} is named twice")
        runs[path] = _read(args, [path])
    return runs


def _matrix_records(result: Any) -> list[dict[str, Any]]:
    from .stats._report import matrix_records

    out = []
    for k in dict.fromkeys(r.k for r in result.rows):
        for what in ("diff", "p_adjusted"):
            for rec in matrix_records(result, k, what):
                out.append({"k": k, "quantity": what, **rec})
    return out


def _records(args: argparse.Namespace, result: Any) -> list[dict[str, Any]]:
    if args.format == "latex" and (args.pairs or args.matrix):
        raise ValueError("--format latex prints the ranking; use another format with "
                         "--pairs or --matrix")
    if args.matrix:
        return _matrix_records(result)
    return result.pair_records() if args.pairs else result.records()


def _table_rows(args: argparse.Namespace, records: list[dict[str, Any]]) -> list[dict]:
    """The columns a table shows; groups as letters, and a note column when a row has one."""
    from .stats._report import letters

    columns = _PAIR_COLUMNS if args.pairs else _ROW_COLUMNS
    with_note = any(r.get("reason") for r in records)
    table = []
    for r in records:
        row = {c: r.get(c) for c in columns}
        if "groups" in row:
            row["groups"] = "".join(letters(g) for g in r["groups"])
        if with_note:
            row["note"] = r.get("reason") or ""
        table.append(row)
    return table


def _leaderboard_text(args: argparse.Namespace, result: Any) -> str:
    from ._output import render

    records = _records(args, result)
    if args.format == "latex":
        return result.to_latex()
    if args.format in ("json", "jsonl"):
        return render(records, args.format)
    if args.matrix:
        return render(records, args.format, decimals=4)
    return render(_table_rows(args, records), args.format, decimals=4)


def cmd_leaderboard(args: argparse.Namespace, read: Any, intervals: dict) -> int:
    """``passatk leaderboard``; ``read`` is the command line's archive reader and
    ``intervals`` its map of --ci names to ``interval=``."""
    import passatk

    from ._output import write_text

    if args.plot is not None:
        ext = os.path.splitext(args.plot)[1].lstrip(".").lower()
        if ext not in ("pdf", "svg", "png"):
            raise ValueError(f"cannot tell the image format of {args.plot!r}: name it .pdf, "
                             ".svg or .png")
    runs = _runs(args, read)
    result = passatk.leaderboard(
        runs, args.k or [1], metric=args.metric, adjust=args.adjust,
        interval=intervals[args.ci], confidence=args.level, unmatched=args.unmatched,
        seed=args.seed, **({"n_resamples": args.resamples} if args.resamples else {}))
    write_text(_leaderboard_text(args, result), args.output)
    if args.plot is not None:
        from . import plot
        from ._output import atomic_path

        ax = plot.plot_forest(result)
        with atomic_path(args.plot) as tmp:
            plot.save(ax.figure, tmp, image_format=ext)
    return EXIT_OK


# ------------------------------------------------------------------------------------ plan


def add_plan_parser(sub: Any) -> None:
    """Add the ``plan`` subcommand."""
    p = _subparser(
        sub,
        "plan",
        "tasks needed, minimum detectable effect, power and samples per task",
        "Plan an evaluation for the paired t test of 'compare': the tasks needed to detect a "
        "difference, the minimum detectable effect and the power at a number of tasks, and "
        "the samples per task for a target standard error. The sd of the per-task "
        "differences comes from --sd, from a pilot pair of runs (--pilot A B), or from a "
        "baseline rate, a correlation and the samples per task (no pilot).",
        "  passatk plan --delta 0.03 --sd 0.2\n"
        "  passatk plan --tasks 164 --baseline 0.6 --rho 0.8 --samples-per-task 10\n"
        "  passatk plan --pilot new.jsonl old.jsonl --delta 0.02 --tasks 500\n"
        "  passatk plan --pilot new.jsonl old.jsonl -k 10 --target-se 0.005\n",
    )
    g = p.add_argument_group("the sd of the per-task differences (one source)")
    g.add_argument("--sd", type=_positive_float, default=None, help="sigma_D itself")
    g.add_argument("--pilot", nargs=2, metavar=("A", "B"), default=None,
                   help="a pilot pair of runs: sigma_D is their paired sd")
    g.add_argument("--baseline", type=_finite_float, default=None,
                   help="baseline pass rate (no pilot), with --rho and --samples-per-task")
    g.add_argument("--rho", type=_finite_float, default=None,
                   help="correlation of the two models' per-task rates (no pilot)")
    g.add_argument("--samples-per-task", type=_positive_int, default=None,
                   help="samples per task (no pilot)")
    g.add_argument("--between-sd", type=_finite_float, default=None,
                   help="between-task sd of the rates (no pilot; default: the conservative "
                   "value)")
    q = p.add_argument_group("what to plan")
    q.add_argument("--delta", type=_finite_float, default=None,
                   help="the difference to detect: gives the tasks needed (and the power at "
                   "--tasks)")
    q.add_argument("--tasks", type=_positive_int, default=None,
                   help="a number of tasks: gives the minimum detectable effect (and the "
                   "power at --delta)")
    q.add_argument("--power", type=_level, default=0.8, help="target power (default: 0.8)")
    q.add_argument("--alpha", type=_level, default=0.05,
                   help="two-sided significance level (default: 0.05)")
    q.add_argument("-k", type=_positive_int, default=1, help="the budget k (default: 1)")
    q.add_argument("--target-se", type=_positive_float, default=None,
                   help="samples per task for this fixed-benchmark SE (uses --pilot A)")
    _add_reader_args(p)
    o = p.add_argument_group("output")
    o.add_argument("--format", choices=("table", "json", "jsonl", "csv", "markdown"),
                   default="table", help="output format (default: %(default)s)")
    o.add_argument("-o", "--output", metavar="FILE",
                   help="write to FILE (atomically) instead of stdout")


def _plan_sd(args: argparse.Namespace, pilots: Any) -> Any:
    from passatk import stats

    given = [x is not None for x in (args.sd, args.pilot, args.baseline)]
    if sum(given) > 1:
        raise ValueError("give the sd one way: --sd, --pilot A B, or --baseline with --rho "
                         "and --samples-per-task")
    if args.sd is not None:
        return stats.PlanResult(quantity="sd", value=args.sd, inputs={"sd": args.sd},
                                note="given")
    if pilots is not None:
        a, b = pilots
        return stats.paired_sd(a.n, a.c, b.n, b.c, args.k, task_ids_a=a.task,
                               task_ids_b=b.task)
    if args.baseline is not None:
        if args.rho is None or args.samples_per_task is None:
            raise ValueError("--baseline needs --rho and --samples-per-task")
        return stats.paired_sd_from_rates(args.baseline, args.rho, args.samples_per_task,
                                          between_sd=args.between_sd)
    return None


def _pilot_runs(args: argparse.Namespace, _read: Any) -> Any:
    if args.pilot is None:
        return None
    runs = []
    for path in args.pilot:
        counts = _read(args, [path])
        if len(counts.groups) != 1:
            raise ValueError(f"pilot {path!r} holds {len(counts.groups)} groups; plan takes "
                             "one run per pilot path")
        runs.append(next(counts.iter_groups()))
    return runs


def _plan_answers(args: argparse.Namespace, sd: Any) -> list[Any]:
    """The sd and what it plans: tasks needed (--delta), the minimum detectable effect
    (--tasks), and with both the power."""
    from passatk import stats

    if sd is None:
        return []
    if args.delta is None and args.tasks is None:
        if args.target_se is not None:  # samples per task only; the sd is not asked for
            return []
        raise ValueError("say what to plan: --delta (tasks needed), --tasks (minimum "
                         "detectable effect) or both (power)")
    answers, kw = [sd], {"alpha": args.alpha}
    if args.delta is not None:
        answers.append(stats.tasks_needed(args.delta, sd.value, power=args.power, **kw))
    if args.tasks is not None:
        answers.append(stats.min_detectable_effect(args.tasks, sd.value, power=args.power,
                                                   **kw))
        if args.delta is not None:
            answers.append(stats.achieved_power(args.tasks, args.delta, sd.value, **kw))
    return answers


def cmd_plan(args: argparse.Namespace, read: Any) -> int:
    """``passatk plan``; ``read`` is the command line's archive reader."""
    from passatk import stats

    from ._output import render, write_text

    pilots = _pilot_runs(args, read)
    answers = _plan_answers(args, _plan_sd(args, pilots))
    if args.target_se is not None:
        if pilots is None:
            raise ValueError("--target-se needs a pilot run: --pilot A B (A is used)")
        a = pilots[0]
        answers.append(stats.samples_needed(a.n, a.c, args.k, args.target_se))
    if not answers:
        raise ValueError("give the sd (--sd, --pilot A B, or --baseline, --rho and "
                         "--samples-per-task) or --target-se with --pilot")
    records = [{"quantity": r.quantity, "value": r.value, "note": r.note,
                **{f"in_{k}": v for k, v in r.inputs.items()}} for r in answers]
    if args.format in ("json", "jsonl"):
        text = render(records, args.format)
    else:
        text = render([{"quantity": r["quantity"], "value": r["value"], "note": r["note"]}
                       for r in records], args.format, decimals=6)
    write_text(text, args.output)
    return EXIT_OK
