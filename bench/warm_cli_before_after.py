"""The warm command line before and after a change: ``passatk score`` on the bundled example,
whole process, in fresh processes that alternate between the two trees (docs/benchmarks.md,
"Issue 20, third round").

Usage: ``python bench/warm_cli_before_after.py BEFORE_REV [RUNS]``. The ``src/`` of BEFORE_REV
and of the working tree are copied into a temporary folder twice: once byte-compiled (what an
installed wheel has) and once without ``__pycache__`` (what a checkout under
``PYTHONDONTWRITEBYTECODE=1`` compiles at every start). Prints wall and CPU medians, and the
load average around the runs. Numba is not imported on this input, so no kernel cache counts.
"""

from __future__ import annotations

import compileall
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "src" / "passatk" / "data" / "examples" / "humaneval_results.jsonl"
COMMAND = ["-c", "import sys; from passatk.cli import run; sys.argv[0] = 'passatk'; run()",
           "score", str(EXAMPLE), "-k", "1,5,10"]


def _trees(before: str, tmp: Path) -> dict[str, Path]:
    trees = {}
    for tag in ("before", "after"):
        for kind in ("pyc", "src"):
            dest = tmp / f"{tag}-{kind}"
            if tag == "before":
                dest.mkdir()
                archive = subprocess.run(["git", "-C", str(ROOT), "archive", before, "src"],
                                         capture_output=True, check=True).stdout
                subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
            else:
                shutil.copytree(ROOT / "src", dest / "src",
                                ignore=shutil.ignore_patterns("__pycache__"))
            if kind == "pyc":
                compileall.compile_dir(dest / "src", quiet=1)
            trees[f"{tag}, {kind}"] = dest / "src"
    return trees


def _one(cmd: list[str], src: Path | None) -> tuple[float, float]:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONPATH", None)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, check=True)
    t1, r1 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    return t1 - t0, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def main(before: str, runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cases = {"python -c pass": ([sys.executable, "-c", "pass"], None)}
        for name, src in _trees(before, Path(tmp)).items():
            cases[name] = ([sys.executable, *COMMAND], src)
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
        print("load average before:", os.getloadavg())
        for _ in range(runs):
            for name, (cmd, src) in cases.items():
                times[name].append(_one(cmd, src))
        print("load average after:", os.getloadavg())
    for name, pairs in times.items():
        wall, cpu = zip(*pairs, strict=True)
        print(f"{name:16s} wall median {statistics.median(wall):.3f} s  "
              f"CPU median {statistics.median(cpu):.3f} s  ({runs} runs)")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 15)
