"""The ``passatk`` command line.

The command only parses arguments, calls the library and formats what it returns: every number comes
from the Python API (:func:`passatk.score`, :func:`passatk.compare`, :mod:`passatk.archives`).
Library modules are imported inside the commands, so that ``passatk --help`` stays fast.

Every bad input (a usage error, an unreadable archive, an invalid k) is reported as one line
``passatk: error: ...`` on stderr with exit status 1, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

PROG = "passatk"


class UsageError(ValueError):
    """A bad command line; reported as one ``passatk: error: ...`` line with exit code 1."""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line and exit code 1, never SystemExit(2)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


class _Formatter(argparse.RawDescriptionHelpFormatter):
    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=30)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("passatk")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0.0.0+unknown"


# -------------------------------------------------------------------------------------------------
# argument types


def parse_ks(text: str) -> list[int]:
    """Parse ``-k``: a comma-separated list of k and inclusive ranges ``a-b``.

    >>> parse_ks("1,10,100")
    [1, 10, 100]
    >>> parse_ks("1-4,10")
    [1, 2, 3, 4, 10]
    >>> parse_ks("5-2")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: invalid k range '5-2': the start must not exceed the end
    """
    ks: set[int] = set()
    parts = [p.strip() for p in text.split(",")]
    if not text.strip() or any(not p for p in parts):
        raise argparse.ArgumentTypeError(
            f"invalid k list {text!r}: "
            "use k values separated by commas (1,10,100) or a range (1-128)"
        )
    for part in parts:
        lo_text, sep, hi_text = part.partition("-")
        if sep and lo_text:
            lo, hi = _positive_k(lo_text, part), _positive_k(hi_text, part)
            if lo > hi:
                raise argparse.ArgumentTypeError(
                    f"invalid k range {part!r}: the start must not exceed the end"
                )
            ks.update(range(lo, hi + 1))
        else:
            ks.add(_positive_k(part, part))
    return sorted(ks)


def _positive_k(text: str, part: str) -> int:
    try:
        k = int(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"invalid k {part!r}: "
            "k must be a positive integer, a list (1,10,100) or a range (1-128)"
        ) from None
    if k < 1:
        raise argparse.ArgumentTypeError(f"invalid k {part!r}: k must be at least 1")
    return k


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value


def _nonnegative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must not be negative")
    return value


def _finite_float(text: str) -> float:
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def _positive_float(text: str) -> float:
    value = _finite_float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be positive")
    return value


def _level(text: str) -> float:
    value = _finite_float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must lie strictly between 0 and 1 (e.g. 0.95)")
    return value


# -------------------------------------------------------------------------------------------------
# the parser

OUTPUT_FORMATS = ("table", "json", "csv", "markdown")
METRICS = ("pass@k", "pass^k")
CIS = ("t", "bootstrap", "bca")


def _add_reader_args(p: argparse.ArgumentParser, *, by: bool = True) -> None:
    g = p.add_argument_group("reading archives")
    g.add_argument(
        "--input-format",
        "--format-in",
        dest="input_format",
        metavar="NAME",
        help="archive format, overriding detection from name and content (see 'passatk formats')",
    )
    if by:
        g.add_argument(
            "--by",
            action="append",
            default=[],
            metavar="FIELD",
            help="group by this field (repeatable: --by model --by temperature)",
        )
    g.add_argument("--task", metavar="FIELD", help="column that holds the task id")
    g.add_argument("--passed", metavar="FIELD", help="column that holds the pass flag")
    g.add_argument("--reward", metavar="FIELD", help="column that holds a reward (see --threshold)")
    g.add_argument(
        "--threshold", type=_finite_float, metavar="X", help="a sample passes when reward >= X"
    )
    g.add_argument("--n", dest="n_field", metavar="FIELD", help="column of n (count tables)")
    g.add_argument("--c", dest="c_field", metavar="FIELD", help="column of c (count tables)")
    g.add_argument(
        "--skip-bad",
        action="store_true",
        help="skip bad records instead of failing; their number and places are reported on stderr",
    )
    g.add_argument("--since", metavar="DATE", help="LiveCodeBench: contest date on or after DATE")
    g.add_argument("--until", metavar="DATE", help="LiveCodeBench: contest date on or before DATE")
    g.add_argument(
        "--difficulty",
        action="append",
        default=[],
        metavar="LEVEL",
        help="LiveCodeBench: keep only this difficulty (easy, medium, hard; repeatable)",
    )
    g.add_argument("-q", "--quiet", action="store_true", help="no progress bar, no notes on stderr")


def _add_k_metric_ci(p: argparse.ArgumentParser, *, k_default: str | None) -> None:
    g = p.add_argument_group("estimates")
    g.add_argument(
        "-k",
        type=parse_ks,
        default=None,
        metavar="KS",
        help=f"k values: a list 1,10,100 or a range 1-128 (default: {k_default})",
    )
    g.add_argument("--metric", choices=METRICS, default="pass@k", help="default: %(default)s")
    g.add_argument(
        "--ci",
        choices=CIS,
        default="t",
        help="confidence interval: t (super-population SE), bootstrap (percentile over tasks) "
        "or bca (default: %(default)s)",
    )
    g.add_argument(
        "--level", type=_level, default=0.95, metavar="L", help="confidence level (default: 0.95)"
    )
    g.add_argument(
        "--resamples",
        type=_positive_int,
        default=None,
        metavar="B",
        help="bootstrap resamples (default: the library's)",
    )
    g.add_argument(
        "--seed", type=_nonnegative_int, default=None, help="random seed of the bootstrap"
    )


def _add_output_args(p: argparse.ArgumentParser, *, percent: bool = True) -> None:
    g = p.add_argument_group("output")
    g.add_argument(
        "--format",
        choices=OUTPUT_FORMATS,
        default="table",
        help="output format (default: %(default)s); json is a list of records",
    )
    g.add_argument(
        "-o", "--output", metavar="FILE", help="write to FILE (atomically) instead of stdout"
    )
    if percent:
        g.add_argument(
            "--percent", action="store_true", help="report values in percent instead of fractions"
        )


def _subparser(sub: Any, name: str, help: str, description: str, examples: str) -> Any:
    return sub.add_parser(
        name,
        help=help,
        description=description,
        epilog="examples:\n" + examples,
        formatter_class=_Formatter,
        allow_abbrev=False,
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``passatk`` command."""
    parser = _Parser(
        prog=PROG,
        description="Exact pass@k (and pass^k) with honest uncertainty, from the result archives "
        "that code-generation harnesses leave behind.",
        epilog="examples:\n"
        "  passatk score results/*_results.jsonl -k 1,10,100\n"
        "  passatk compare run_a/ run_b/ -k 1 --format markdown\n"
        "  passatk formats\n\n"
        "Run 'passatk COMMAND --help' for the options of each command.",
        formatter_class=_Formatter,
        allow_abbrev=False,
    )
    parser.add_argument("-V", "--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")

    p = _subparser(
        sub,
        "score",
        "pass@k per group and k, with standard errors and intervals",
        "Read result archives and report pass@k (or pass^k) per group and k: the mean over tasks "
        "of the unbiased per-task estimate, its standard error and a confidence interval.",
        "  passatk score samples.jsonl_results.jsonl\n"
        "  passatk score runs/ -k 1,10,100 --by model --format json -o scores.json\n"
        "  passatk score trials.json --metric pass^k -k 1-8 --ci bca --seed 0\n",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="files, directories or globs")
    _add_reader_args(p)
    _add_k_metric_ci(p, k_default="1")
    _add_output_args(p)
    p.set_defaults(func=cmd_score)

    p = _subparser(
        sub,
        "compare",
        "paired comparison of two runs over the same tasks (A minus B)",
        "Compare two runs on the same tasks, paired by task id: the mean difference A minus B, "
        "its paired standard error, a confidence interval and a p-value.",
        "  passatk compare new_results.jsonl old_results.jsonl\n"
        "  passatk compare run_a/ run_b/ -k 1,10 --ci bootstrap --seed 0 --format markdown\n",
    )
    p.add_argument("a", metavar="A", help="first run (file, directory or glob)")
    p.add_argument("b", metavar="B", help="second run (file, directory or glob)")
    _add_reader_args(p)
    _add_k_metric_ci(p, k_default="1")
    _add_output_args(p)
    p.set_defaults(func=cmd_compare)

    p = _subparser(
        sub,
        "check",
        "recompute the numbers an archive stores about itself",
        "Recompute every number an archive stores about itself (EvalPlus pass_at_k, CRUXEval "
        "pass_at_1/pass_at_5, BigCodeBench *_pass_at_k.json, lm-evaluation-harness results) and "
        "print the agreement per number. Exits 1 when a relative difference exceeds the tolerance.",
        "  passatk check eval_results.json\n"
        "  passatk check model_eval_results.json model_pass_at_k.json --format json\n",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="files, directories or globs")
    _add_reader_args(p)
    p.add_argument(
        "--tolerance",
        type=_positive_float,
        default=1e-9,
        metavar="TOL",
        help="largest relative difference that counts as agreement (default: 1e-9)",
    )
    _add_output_args(p, percent=False)
    p.set_defaults(func=cmd_check)

    p = _subparser(
        sub,
        "plot",
        "plot pass@k against k with confidence bands (needs matplotlib)",
        "Plot pass@k against k, one curve per group with its confidence band, next to the biased "
        "plug-in 1-(1-c/n)^k for comparison. Needs matplotlib: pip install 'passatk[plot]'.",
        "  passatk plot samples.jsonl_results.jsonl -o passk.png\n"
        "  passatk plot runs/ --by model -k 1-100 -o passk.svg\n",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="files, directories or globs")
    _add_reader_args(p)
    _add_k_metric_ci(p, k_default="1 to the smallest n")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="image file to write")
    p.add_argument("--title", help="title of the figure")
    p.add_argument("--log-k", action="store_true", help="logarithmic k axis")
    p.set_defaults(func=cmd_plot)

    p = _subparser(
        sub,
        "simulate",
        "write a synthetic archive, for demos and tests",
        "Write a synthetic archive: per task p ~ Beta(a, b), then c ~ Binomial(n, p), in the "
        "archive format of your choice.",
        "  passatk simulate -o demo_results.jsonl --tasks 164 --n 20 --seed 0\n"
        "  passatk simulate -o counts.csv --tasks 500 --n 200 --a 0.5 --b 0.5\n",
    )
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="archive file to write")
    p.add_argument(
        "--format",
        dest="archive_format",
        metavar="NAME",
        default=None,
        help="archive format to write (default: from the file name; see 'passatk formats')",
    )
    p.add_argument(
        "--tasks", type=_positive_int, default=164, help="number of tasks (default: %(default)s)"
    )
    p.add_argument(
        "--n", type=_positive_int, default=10, help="samples per task (default: %(default)s)"
    )
    p.add_argument("--a", type=_positive_float, default=1.0, help="Beta a (default: %(default)s)")
    p.add_argument("--b", type=_positive_float, default=1.0, help="Beta b (default: %(default)s)")
    p.add_argument("--seed", type=_nonnegative_int, default=0, help="random seed (default: 0)")
    p.add_argument("-q", "--quiet", action="store_true", help="no note on stderr")
    p.set_defaults(func=cmd_simulate)

    p = _subparser(
        sub,
        "formats",
        "list the supported archive formats and how each is detected",
        "List the archive formats passatk reads (and writes), and how each is detected.",
        "  passatk formats\n  passatk formats --format json\n",
    )
    _add_output_args(p, percent=False)
    p.set_defaults(func=cmd_formats)
    return parser


# -------------------------------------------------------------------------------------------------
# commands (stubs replaced below as the library lands)


def _not_yet(args: argparse.Namespace) -> int:
    raise ValueError(f"'{args.command}' is not available yet")


cmd_score: Callable[[argparse.Namespace], int] = _not_yet
cmd_compare: Callable[[argparse.Namespace], int] = _not_yet
cmd_check: Callable[[argparse.Namespace], int] = _not_yet
cmd_plot: Callable[[argparse.Namespace], int] = _not_yet
cmd_simulate: Callable[[argparse.Namespace], int] = _not_yet
cmd_formats: Callable[[argparse.Namespace], int] = _not_yet


# -------------------------------------------------------------------------------------------------
# main


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror and not exc.args[2:]:
        where = exc.filename if exc.filename is not None else ""
        text = f"{where}: {exc.strerror}" if where else exc.strerror
    else:
        text = str(exc) or type(exc).__name__
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return "; ".join(lines) if lines else type(exc).__name__


def _error(message: str) -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (0 success, 1 any error)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as exc:
        return _error(_one_line(exc))
    except SystemExit as exc:  # --help and --version
        return exc.code if isinstance(exc.code, int) else 0
    if args.command is None:
        parser.print_help()
        return 0
    try:
        return args.func(args)
    except BrokenPipeError:
        # The reader of stdout went away (e.g. `| head`): stop quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except (ValueError, TypeError, OSError) as exc:
        return _error(_one_line(exc))


if __name__ == "__main__":
    raise SystemExit(main())
