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
import re
import sys
from collections.abc import Iterator, Sequence
from typing import Any, NoReturn

PROG = "passatk"


#: exit statuses: success, findings (``check``), usage/input/output errors
EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2

EXIT_STATUS_HELP = """exit status:
  0  success
  1  findings: 'passatk check' found a stored number that does not agree
  2  a usage, input or output error (one line on stderr)"""


class UsageError(ValueError):
    """A bad command line; reported as one ``passatk: error: ...`` line with exit status 2."""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line, raised rather than SystemExit(2)."""

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


class _VersionAction(argparse.Action):
    """``--version``, looked up only when asked: reading the installed metadata costs every
    other command about 10 ms (importlib.metadata and the email parser)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS,
                 **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="show program's version number and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        print(f"{parser.prog} {_version()}")
        parser.exit()


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
    ranges = []
    for part in parts:
        lo_text, sep, hi_text = part.partition("-")
        if sep and lo_text:
            lo, hi = _positive_k(lo_text, part), _positive_k(hi_text, part)
            if lo > hi:
                raise argparse.ArgumentTypeError(
                    f"invalid k range {part!r}: the start must not exceed the end"
                )
            ranges.append(range(lo, hi + 1))
        else:
            ranges.append(range(_positive_k(part, part), _positive_k(part, part) + 1))
    total = sum(len(r) for r in ranges)
    if total > MAX_KS:
        raise argparse.ArgumentTypeError(
            f"invalid k list {text!r}: it names {total} values of k, at most {MAX_KS} are "
            "allowed; pick a ladder such as 1,2,5,10,20,50,100"
        )
    for r in ranges:
        ks.update(r)
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


def _int_at_least(text: str, minimum: int, rule: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"{text!r} {rule}")
    return value


def _positive_int(text: str) -> int:
    return _int_at_least(text, 1, "must be at least 1")


#: Bounds of arguments that size allocations: one score row per k, one row of means per resample.
MAX_KS = 250_000
MAX_RESAMPLES = 10_000_000


def _resamples(text: str) -> int:
    value = _int_at_least(text, 1, "must be at least 1")
    if value > MAX_RESAMPLES:
        raise argparse.ArgumentTypeError(f"{text!r} must be at most {MAX_RESAMPLES}: the "
                                         "bootstrap keeps every resample in memory")
    return value


def _nonnegative_int(text: str) -> int:
    return _int_at_least(text, 0, "must not be negative")


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


def _storage_option(text: str) -> tuple[str, Any]:
    from .archives._remote import parse_storage_option

    try:
        return parse_storage_option(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _level(text: str) -> float:
    value = _finite_float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must lie strictly between 0 and 1 (e.g. 0.95)")
    return value


# -------------------------------------------------------------------------------------------------
# the parser

OUTPUT_FORMATS = ("table", "json", "jsonl", "csv", "markdown")
METRICS = ("pass@k", "pass^k", "plugin")
CIS = ("t", "fixed", "bootstrap", "bca")
SCORE_CIS = ("auto", "t", "fixed", "bootstrap", "bca", "wilson", "clopper-pearson", "cluster")


def _add_reader_args(p: argparse.ArgumentParser, *, by: bool = True) -> None:
    g = p.add_argument_group("reading archives")
    g.add_argument(
        "--input-format",
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
    _add_column_args(g)
    g.add_argument(
        "--merge",
        action="store_true",
        help="pool the archives as shards of one run (a task in two shards is summed); by "
        "default separate archives are kept apart by a 'path' group",
    )
    g.add_argument(
        "--skip-bad",
        action="store_true",
        help="skip bad records instead of failing; their number and places are reported on stderr",
    )
    _add_filter_args(g)
    _add_execution_args(g)


def _add_column_args(g: Any) -> None:
    """The options naming the columns of a table archive."""
    g.add_argument("--task", metavar="FIELD", help="column that holds the task id")
    g.add_argument("--passed", metavar="FIELD", help="column that holds the pass flag")
    g.add_argument("--reward", metavar="FIELD", help="column that holds a reward (see --threshold)")
    g.add_argument(
        "--threshold", type=_finite_float, metavar="X", help="a sample passes when reward >= X"
    )
    g.add_argument("--n", dest="n_field", metavar="FIELD", help="column of n (count tables)")
    g.add_argument("--c", dest="c_field", metavar="FIELD", help="column of c (count tables)")


def _add_filter_args(g: Any) -> None:
    """The LiveCodeBench filters."""
    g.add_argument("--since", metavar="DATE", help="LiveCodeBench: contest date on or after DATE")
    g.add_argument("--until", metavar="DATE", help="LiveCodeBench: contest date on or before DATE")
    g.add_argument(
        "--difficulty",
        action="append",
        default=[],
        metavar="LEVEL",
        help="LiveCodeBench: keep only this difficulty (easy, medium, hard; repeatable)",
    )


def _add_execution_args(g: Any) -> None:
    """The options of how archives are read: quiet, progress, jobs, scheduler, storage."""
    g.add_argument("-q", "--quiet", action="store_true", help="no progress bar, no notes on stderr")
    g.add_argument(
        "--progress",
        action="store_true",
        help="show progress on stderr even when it is not a terminal (a line every 5 s)",
    )
    g.add_argument(
        "--jobs",
        type=_positive_int,
        default=None,
        metavar="N",
        help="read in N local processes: files in parallel, large JSON Lines and CSV files in "
        "byte ranges; same output for any N (default: the number of CPUs from 256 MiB of "
        "input, one process below)",
    )
    g.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="read on a Dask cluster: tcp://HOST:PORT of a running scheduler, or local:N for N "
        "local worker processes (needs passatk[dask])",
    )
    g.add_argument(
        "--storage-option",
        dest="storage_options",
        action="append",
        default=[],
        type=_storage_option,
        metavar="KEY=VALUE",
        help="option of the fsspec file system for URL inputs (s3://, gs://, https://, ...); "
        "VALUE is JSON or text; PROTOCOL.KEY=VALUE applies to one protocol (repeatable)",
    )


def _add_cluster_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--cluster-by",
        type=re.compile,
        default=None,
        metavar="REGEX",
        help="cluster of a task: the first match of REGEX in its task id (e.g. '^[^/]+/' for "
        "the prefix); gives the clustered CR1 SE (score: with --ci cluster; compare: always)",
    )


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


def _add_k_metric_ci(
    p: argparse.ArgumentParser, *, k_default: str, cis: Sequence[str] = CIS
) -> None:
    g = p.add_argument_group("estimates")
    g.add_argument(
        "-k",
        type=parse_ks,
        default=None,
        metavar="KS",
        help=f"k values: a list 1,10,100 or a range 1-128 (default: {k_default})",
    )
    g.add_argument(
        "--metric",
        choices=METRICS,
        default=None,
        help="pass@k (at least one of k passes), pass^k (all k pass) or plugin (the biased "
        "1-(1-c/n)^k, for comparison) (default: the archive's, pass^k for tau-bench)",
    )
    g.add_argument(
        "--ci",
        choices=cis,
        default=cis[0],
        help=(
            "interval: auto (Wilson for binary per-task values, else the hull of t and "
            "quasi-binomial Wilson), t (super-population SE, t interval), fixed "
            "(fixed-benchmark SE), bootstrap (percentile over tasks), bca, wilson or "
            "clopper-pearson (binary per-task values), cluster (CR1, with --cluster-by) "
            "(default: %(default)s); Python: interval= (bootstrap is 'percentile')"
            if "wilson" in cis
            else "interval: t, fixed, bootstrap or bca (default: %(default)s); Python: interval= "
            "(bootstrap is 'percentile')"
            if "bca" in cis
            else "interval: t (paired t) or bootstrap (paired bootstrap percentile interval "
            "with the sign-flip permutation p-value) (default: %(default)s)"
        ),
    )
    g.add_argument(
        "--level", type=_level, default=0.95, metavar="L",
        help="confidence level (default: 0.95); Python: confidence=",
    )
    g.add_argument(
        "--resamples",
        type=_resamples,
        default=None,
        metavar="B",
        help="bootstrap resamples (default: 10000); Python: n_resamples=",
    )
    g.add_argument(
        "--seed", type=_nonnegative_int, default=None, help="random seed of the bootstrap"
    )
    g.add_argument(
        "--missing",
        choices=("raise", "report"),
        default="raise",
        help="a k above some task's n: fail (raise), or report the k as missing with the "
        "reason (default: %(default)s)",
    )


def _add_output_args(p: argparse.ArgumentParser, *, percent: bool = True) -> None:
    g = p.add_argument_group("output")
    g.add_argument(
        "--format",
        choices=OUTPUT_FORMATS,
        default="table",
        help="output format (default: %(default)s); json is a list of records, jsonl one "
        "record per line",
    )
    g.add_argument(
        "-o", "--output", metavar="FILE", help="write to FILE (atomically) instead of stdout"
    )
    if percent:
        g.add_argument(
            "--percent", action="store_true", help="report values in percent instead of fractions"
        )


def _subparser(sub: Any, name: str, help: str, description: str, examples: str) -> Any:
    import textwrap

    return sub.add_parser(
        name,
        help=help,
        description=textwrap.fill(description, 88),
        epilog="examples:\n" + examples + "\n" + EXIT_STATUS_HELP,
        formatter_class=_Formatter,
        allow_abbrev=False,
    )


def _add_score_parser(sub: Any) -> None:
    """Add the ``score`` subcommand."""
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
    _add_k_metric_ci(p, k_default="1", cis=SCORE_CIS)
    _add_cluster_arg(p)
    _add_output_args(p)
    p.set_defaults(func=cmd_score)


def _add_compare_parser(sub: Any) -> None:
    """Add the ``compare`` subcommand."""
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
    _add_k_metric_ci(p, k_default="1", cis=("t", "bootstrap"))
    _add_cluster_arg(p)
    p.add_argument(
        "--unmatched",
        choices=("raise", "exclude"),
        default="raise",
        help="tasks present in one run only: fail (raise), or leave them out and report them "
        "(default: %(default)s)",
    )
    _add_output_args(p)
    p.set_defaults(func=cmd_compare)


def _add_check_parser(sub: Any) -> None:
    """Add the ``check`` subcommand."""
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
    p.add_argument(
        "--strict",
        action="store_true",
        help="count a stored 1.0 where k exceeds some task's n (status undefined, the "
        "harness's convention) as a finding",
    )
    _add_output_args(p, percent=False)
    p.set_defaults(func=cmd_check)


def _add_plot_parser(sub: Any) -> None:
    """Add the ``plot`` subcommand."""
    p = _subparser(
        sub,
        "plot",
        "plot pass@k against k with confidence bands (needs matplotlib)",
        "Plot pass@k against k, one curve per group with its confidence band (clipped to [0, 1]), "
        "as one panel for a paper's column (3.5 x 2.6 in, 8 pt text). The image format comes "
        "from the file name: .pdf, .svg, or .png at 300 dpi. Needs matplotlib: "
        "pip install 'passatk[plot]'.",
        "  passatk plot samples.jsonl_results.jsonl -o passk.pdf\n"
        "  passatk plot runs/ --by model -k 1-100 --log-k -o passk.svg\n"
        "  passatk plot samples.jsonl_results.jsonl --plugin --width 7 -o passk.png\n",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="files, directories or globs")
    _add_reader_args(p)
    _add_k_metric_ci(p, k_default="1 to the smallest n")
    p.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="image file to write: .pdf, .svg or .png (300 dpi)")
    p.add_argument("--title", help="title of the figure")
    p.add_argument("--log-k", action="store_true", help="logarithmic k axis (1, 2, 5, 10, ...)")
    p.add_argument("--plugin", action="store_true",
                   help="overlay the biased plug-in 1-(1-c/n)^k, dashed (pass@k only)")
    p.add_argument("--width", type=_positive_float, default=3.5, metavar="IN",
                   help="figure width in inches (default: %(default)s, a paper's column)")
    p.add_argument("--height", type=_positive_float, default=2.6, metavar="IN",
                   help="figure height in inches (default: %(default)s)")
    p.set_defaults(func=cmd_plot)


def _add_simulate_parser(sub: Any) -> None:
    """Add the ``simulate`` subcommand."""
    p = _subparser(
        sub,
        "simulate",
        "write a synthetic archive, for demos and tests",
        "Write a synthetic archive: per task p ~ Beta(a, b), then c ~ Binomial(n, p), in the "
        "archive format of your choice.",
        "  passatk simulate -o demo_results.jsonl --tasks 164 --n 20 --seed 0\n"
        "  passatk simulate -o counts.csv --tasks 500 --n 200 --a 0.5 --b 0.5\n"
        "  passatk simulate -o trials.json --archive-format tau-bench --n 8\n",
    )
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="archive file to write")
    p.add_argument(
        "--archive-format",
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
    p.add_argument(
        "--no-stored",
        action="store_true",
        help="do not write the numbers the harness stores about itself (pass_at_k, ...)",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no note on stderr")
    p.set_defaults(func=cmd_simulate)


def _add_formats_parser(sub: Any) -> None:
    """Add the ``formats`` subcommand."""
    p = _subparser(
        sub,
        "formats",
        "list the supported archive formats and how each is detected",
        "List the archive formats passatk reads (and writes), and how each is detected.",
        "  passatk formats\n  passatk formats --format json\n",
    )
    _add_output_args(p, percent=False)
    p.set_defaults(func=cmd_formats)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``passatk`` command."""
    parser = _Parser(
        prog=PROG,
        description="Exact pass@k (and pass^k) with honest uncertainty, from the result archives\n"
        "that code-generation harnesses leave behind.",
        epilog="examples:\n"
        "  passatk score results/*_results.jsonl -k 1,10,100\n"
        "  passatk compare run_a/ run_b/ -k 1 --format markdown\n"
        "  passatk formats\n\n"
        "Run 'passatk COMMAND --help' for the options of each command.\n\n" + EXIT_STATUS_HELP,
        formatter_class=_Formatter,
        allow_abbrev=False,
    )
    parser.add_argument("-V", "--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")

    _add_score_parser(sub)
    _add_compare_parser(sub)
    _add_check_parser(sub)
    _add_plot_parser(sub)
    _add_simulate_parser(sub)
    _add_formats_parser(sub)
    return parser


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
        code = args.func(args)
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
