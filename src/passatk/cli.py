"""The ``passatk`` command line.

The command only parses arguments, calls the library and formats what it returns: every number comes
from the Python API (:func:`passatk.score`, :func:`passatk.compare`, :mod:`passatk.archives`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn

PROG = "passatk"


class UsageError(ValueError):
    """A bad command line; reported as one ``passatk: error: ...`` line with exit code 1."""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line and exit code 1, never SystemExit(2)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("passatk")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0.0.0+unknown"


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="Exact pass@k (and pass^k) with honest uncertainty, from the result archives "
        "that code-generation harnesses leave behind.",
        epilog="examples:\n"
        "  passatk score results/*_results.jsonl -k 1,10,100\n"
        "  passatk compare run_a/ run_b/ -k 1 --format markdown\n"
        "  passatk formats\n\n"
        "Run 'passatk COMMAND --help' for the options of each command.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-V", "--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    sub.add_parser("score", help="pass@k per group and k, with standard errors and intervals")
    sub.add_parser("compare", help="paired comparison of two runs over the same tasks (A minus B)")
    sub.add_parser("check", help="recompute the numbers an archive stores about itself")
    sub.add_parser("plot", help="plot pass@k against k with confidence bands (needs matplotlib)")
    sub.add_parser("simulate", help="write a synthetic archive, for demos and tests")
    sub.add_parser("formats", help="list the supported archive formats and how each is detected")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (0 success, 1 any error)."""
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    except SystemExit as exc:  # --help and --version
        return int(exc.code or 0)
    if args.command is None:
        parser.print_help()
        return 0
    print(f"{PROG}: error: '{args.command}' is not available yet", file=sys.stderr)
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
