"""The ``passatk`` command line's arguments: their types, the parser and its help.

Kept apart from the commands (:mod:`passatk.cli`) so that building the parser imports
nothing but argparse: ``passatk --help`` stays fast.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
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


def _jobs(text: str) -> int:
    from ._limits import check_worker_count

    try:
        return check_worker_count(_positive_int(text), "N")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


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
    from .archives.io.remote import parse_storage_option

    try:
        return parse_storage_option(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _regex(text: str) -> re.Pattern[str]:
    """``--cluster-by``: a compiled regex; ``re.error`` (neither TypeError nor ValueError, so
    argparse would let it through as a traceback) becomes a usage error."""
    import warnings

    try:
        with warnings.catch_warnings():  # "possible nested set" and the like: valid today
            warnings.simplefilter("ignore", FutureWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            return re.compile(text)
    except (re.error, RecursionError, OverflowError) as exc:
        raise argparse.ArgumentTypeError(f"invalid regex {text!r}: {exc}") from None


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
#: plot's --ci: score's (auto first, so that a paper's table and figure agree), less cluster
PLOT_CIS = SCORE_CIS[:-1]


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
        "default separate archives are kept apart by a 'path' group. An archive that holds "
        "what others hold together (a merged file beside its shards, a copy), or a JSON Lines "
        "record repeated byte for byte in two archives, is an error",
    )
    g.add_argument(
        "--allow-duplicates",
        action="store_true",
        help="--merge, and pool archives that repeat others or repeat their records too: "
        "the repeats are real samples",
    )
    g.add_argument(
        "--skip-bad",
        action="store_true",
        help="skip bad records instead of failing; their number and places are reported on stderr",
    )
    g.add_argument(
        "--strict-json",
        action="store_true",
        help="refuse any key given twice in a JSON object, naming file:line or the JSON path "
        "(each JSON file is read once more by Python's json to check). By default a key given "
        "twice keeps its last value, as Python's json reads it. Not check --strict",
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
        type=_jobs,
        default=None,
        metavar="N",
        help="read in N local processes: files in parallel, large JSON Lines and CSV files in "
        "byte ranges; same output for any N (default: the number of CPUs from 64 MiB of "
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
        type=_regex,
        default=None,
        metavar="REGEX",
        help="cluster of a task: the first match of REGEX in its task id (e.g. '^[^/]+/' for "
        "the prefix); gives the clustered CR1 SE (score: with --ci cluster; compare: always)",
    )


def _add_k_metric_ci(
    p: argparse.ArgumentParser, *, k_default: str, cis: Sequence[str] = CIS,
    missing: bool = True,
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
            "clopper-pearson (binary per-task values)"
            + (", cluster (CR1, with --cluster-by)" if "cluster" in cis else "")
            + " (default: %(default)s); Python: interval= (bootstrap is 'percentile')"
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
        "--seed", action=_SeedAction, default=0, metavar="S",
        help="random seed of the bootstrap and permutations (default: 0, so that a run "
        "repeats; 'random' draws one); the JSON output records it",
    )
    if not missing:
        return
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
        default=None,
        help="output format (default: from the extension of -o, .json .jsonl .csv .md .txt, "
        "else table); json is one envelope {schema, passatk, command, inputs, seed, ..., rows} "
        "(docs/cli.md), jsonl one record per line",
    )
    g.add_argument(
        "-o", "--output", metavar="FILE", help="write to FILE (atomically) instead of stdout"
    )
    g.add_argument(
        "--csv-safe", action=argparse.BooleanOptionalAction, default=None,
        help="CSV: prefix ' to text cells a spreadsheet would run as a formula (starting with "
        "= + - @, tab or CR; OWASP); default: on for -o *.csv, off on stdout",
    )
    if percent:
        g.add_argument(
            "--percent", action="store_true",
            help="report values in percent instead of fractions; the fields are named "
            "value_pct, se_pct, ... in every format",
        )


class _SeedAction(argparse.Action):
    """``--seed S`` or ``--seed random`` (a drawn seed, noted on stderr and in the output)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        from ._cli_output import seed_arg

        try:
            setattr(namespace, self.dest, seed_arg(values))
        except argparse.ArgumentTypeError as exc:
            raise argparse.ArgumentError(self, str(exc)) from None
        namespace.seed_drawn = values == "random"


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
    _add_run_args(p, "files, directories or globs")
    _add_cluster_arg(p)
    _add_output_args(p)


def _add_run_args(p: argparse.ArgumentParser, paths_help: str, *,
                  cis: Sequence[str] = SCORE_CIS, missing: bool = True) -> None:
    """The archives to read and the estimates to make of them (score, leaderboard)."""
    p.add_argument("paths", nargs="+", metavar="PATH", help=paths_help)
    _add_reader_args(p)
    _add_k_metric_ci(p, k_default="1", cis=cis, missing=missing)


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
    _add_k_metric_ci(p, k_default="1 to the smallest n", cis=PLOT_CIS)
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
    p.add_argument("--force", action="store_true", help="replace FILE if it exists")
    p.add_argument("-q", "--quiet", action="store_true", help="no note on stderr")


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


def _add_warm_parser(sub: Any) -> None:
    """Add the ``warm`` subcommand (issue 20)."""
    p = _subparser(
        sub,
        "warm",
        "compile or load every kernel once, and say where the cache is",
        "Compile (or load from numba's cache) every kernel passatk runs, and report the time "
        "and the cache folder. Run it once per install (a Dockerfile's RUN step, a cluster "
        "image): later processes load the kernels instead of compiling them. Without "
        "NUMBA_CACHE_DIR the kernels go to the package's __pycache__ when it is writable; "
        "that copy is read even from a read-only install with NUMBA_CACHE_DIR set elsewhere.",
        "  passatk warm\n  python -m passatk warm --only pass_at_k --only stats\n",
    )
    p.add_argument("--only", action="append", choices=("pass_at_k", "stats", "rl"),
                   default=None, metavar="GROUP",
                   help="only these kernels: pass_at_k, stats or rl (repeatable; default all)")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing")


def build_parser(extra: Sequence[Any] = ()) -> argparse.ArgumentParser:
    """The argument parser of the ``passatk`` command; ``extra`` adds more subcommands
    (functions of the subparsers object, defined in their own modules)."""
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
    _add_warm_parser(sub)
    for add in extra:
        add(sub)
    return parser
