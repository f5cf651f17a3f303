"""Compare saved benchmark runs by their ratios to an in-run baseline.

Each bench run is saved as pytest-benchmark JSON::

    python -m pytest bench/test_bench_kernel.py --benchmark-enable \\
        --benchmark-save=kernel --benchmark-storage=file://bench/results

Every row states, in ``extra_info``, its ``group`` and whether it is that group's ``baseline``
(the floor kernel, the stdlib loop). A row's ratio is its median over the baseline's median in
the same run, so a slower machine moves both and the ratio stays. This script prints, for the
newest saved run of each bench, every row's ratio next to the previous run's, and flags a row
whose ratio grew by more than ``--threshold`` (25% by default).

Usage::

    python bench/compare.py                     # newest two runs of each bench under bench/results
    python bench/compare.py OLD.json NEW.json   # two given runs
    python bench/compare.py --keep 5            # also delete all but the newest 5 runs of each

Exit status: 0 no regression, 1 at least one regression, 2 usage error.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path

RESULTS = Path(__file__).parent / "results"
_SAVED = re.compile(r"^(\d+)_(.+)\.json$")


def ratios(run: dict) -> dict[str, float]:
    """Median over the same group's baseline median, for every row of a saved run.

    >>> run = {"benchmarks": [
    ...     {"fullname": "a", "stats": {"median": 2.0}, "extra_info": {"group": "g"}},
    ...     {"fullname": "b", "stats": {"median": 0.5},
    ...      "extra_info": {"group": "g", "baseline": True}},
    ...     {"fullname": "c", "stats": {"median": 1.0}, "extra_info": {"group": "h"}}]}
    >>> ratios(run)
    {'a': 4.0, 'b': 1.0}
    """
    base: dict[str, float] = {}
    for row in run["benchmarks"]:
        info = row.get("extra_info") or {}
        if info.get("baseline"):
            base.setdefault(info.get("group", ""), row["stats"]["median"])
    out = {}
    for row in run["benchmarks"]:
        group = (row.get("extra_info") or {}).get("group", "")
        if group in base:
            out[row["fullname"]] = row["stats"]["median"] / base[group]
    return out


def saved_runs(folder: Path) -> dict[str, list[Path]]:
    """Saved runs under ``folder``, by save name, oldest first."""
    runs: dict[str, list[tuple[int, Path]]] = {}
    for path in folder.glob("*/*.json"):
        match = _SAVED.match(path.name)
        if match:
            runs.setdefault(match.group(2), []).append((int(match.group(1)), path))
    return {name: [p for _, p in sorted(found)] for name, found in sorted(runs.items())}


def report(old: Path, new: Path, threshold: float) -> tuple[list[str], int]:
    """Lines comparing two runs, and how many rows regressed."""
    before = ratios(json.loads(old.read_text()))
    after = ratios(json.loads(new.read_text()))
    lines = [f"{new.name} against {old.name} (ratio = median / in-run baseline median)",
             f"  {'row':<70} {'before':>9} {'after':>9} {'change':>8}"]
    worse = 0
    for name, now in after.items():
        was = before.get(name)
        if was is None:
            lines.append(f"  {name:<70} {'':>9} {now:9.3f}      new")
            continue
        change = now / was - 1.0
        flag = change > threshold
        worse += flag
        mark = "  REGRESSION" if flag else ""
        lines.append(f"  {name:<70} {was:9.3f} {now:9.3f} {change:+8.1%}{mark}")
    return lines, worse


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="*", type=Path, help="two saved runs: OLD NEW")
    parser.add_argument("--dir", type=Path, default=RESULTS, help="where runs are saved")
    parser.add_argument("--threshold", type=float, default=0.25,
                        help="flag a ratio that grew by more than this fraction (0.25)")
    parser.add_argument("--keep", type=int, default=0,
                        help="delete all but the newest KEEP runs of each bench")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return 0 if exc.code == 0 else 2
    if args.runs and len(args.runs) != 2:
        print("compare.py: give two runs (OLD NEW) or none", file=sys.stderr)
        return 2
    pairs = [tuple(args.runs)] if args.runs else [
        (found[-2], found[-1]) for found in saved_runs(args.dir).values() if len(found) >= 2]
    worse = 0
    for old, new in pairs:
        lines, bad = report(old, new, args.threshold)
        worse += bad
        print("\n".join(lines))
    if args.keep > 0:
        for found in saved_runs(args.dir).values():
            for path in found[: -args.keep]:
                path.unlink()
    print(f"{worse} regression(s) over {args.threshold:.0%}" if pairs else "nothing to compare")
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main())
