"""Cold start (issue 20): the first call in a fresh process, with an empty numba cache.

Run:
    python -m pytest bench/test_bench_coldstart.py -s -p no:randomly

The package is copied to a temporary folder without any ``__pycache__`` (a fresh install).
Each case of issue 20 then runs ``RUNS`` times (``PASSATK_BENCH_RUNS``, default 3) in a fresh
interpreter, each time with a new empty ``NUMBA_CACHE_DIR``:

1. nothing cached anywhere: every kernel the call needs is compiled;
2. after ``python -m passatk warm`` ran once in that install (the kernels kept in the
   package's ``__pycache__``), still with an empty ``NUMBA_CACHE_DIR``: they are loaded.

It prints the medians of CPU seconds (user + system of the child,
``resource.getrusage(RUSAGE_CHILDREN)``) and of wall seconds; CPU time is the figure to quote
on a shared machine. Then the whole ``passatk score`` on the bundled example with a warm
cache (wall, and CPU). Figures only: nothing here asserts a time.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import passatk

RUNS = int(os.environ.get("PASSATK_BENCH_RUNS", "3"))

_ADV = ("import numpy as np; from passatk import rl\n"
        "x = (np.random.default_rng(0).random((512, 16)) < 0.4).astype(np.float32)\n"
        "rl.advantages(x, k=4)")
_GM = ("import numpy as np; from passatk import rl\n"
       "x = (np.random.default_rng(0).random((500, 64)) < 0.4).astype(np.float32)\n"
       "rl.group_metrics(x, metrics=['pass@k', 'pass^k', 'best@k', 'worst@k', 'mean@n',\n"
       "                             'std@n', 'g-pass@k', 'mg-pass@k'])")
_API = ("import numpy as np, passatk\n"
        "r = np.random.default_rng(0); size = 10**6\n"
        "n = r.choice([20, 200, 1000], size); c = r.binomial(n, r.beta(0.5, 0.5, size))\n"
        "k = np.minimum(r.choice([1, 10, 100], size), n)\n"
        "passatk.pass_at_k(n, c, k)\n"
        "m = np.exp(r.uniform(0, np.log(1e9), size)).astype(np.int64) + 1\n"
        "passatk.pass_at_k(m, np.minimum(c, m), np.minimum(k, m))")


def _cases(example: str) -> dict[str, list[str]]:
    py = sys.executable
    return {
        "passatk score EXAMPLE -k 1,5,10 (whole CLI)": [py, "-m", "passatk", "score", example,
                                                         "-k", "1,5,10", "-q"],
        "rl.advantages 512 x 16 float32, pkpo-loo1": [py, "-c", _ADV],
        "rl.group_metrics 500 x 64, all but maj@k": [py, "-c", _GM],
        "passatk.pass_at_k, 1M triples (two mixes)": [py, "-c", _API],
    }


def _run(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, wall


def _median(runs: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("install")
    shutil.copytree(os.path.dirname(passatk.__file__), root / "passatk",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _env(site: Path, cache: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env["PYTHONPATH"] = str(site)
    if cache is not None:
        env["NUMBA_CACHE_DIR"] = cache
    return env


def _fresh(argv: list[str], site: Path) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as cache:
        return _run(argv, _env(site, cache))


def test_cold_start(site, capsys):
    example = str(site / "passatk" / "data" / "examples" / "humaneval_results.jsonl")
    cases = _cases(example)
    cold = {name: _median([_fresh(argv, site) for _ in range(RUNS)])
            for name, argv in cases.items()}
    with capsys.disabled():  # shown at once: the rest takes minutes
        print(f"\nnothing cached (median of {RUNS}): " + "; ".join(
            f"{name}: {c:.2f} s CPU, {w:.2f} s wall" for name, (c, w) in cold.items()))
    warm_cpu, warm_wall = _run([sys.executable, "-m", "passatk", "warm", "-q"],
                               _env(site, None))
    built = {name: _median([_fresh(argv, site) for _ in range(RUNS)])
             for name, argv in cases.items()}
    with tempfile.TemporaryDirectory() as cache:
        argv = cases["passatk score EXAMPLE -k 1,5,10 (whole CLI)"]
        _run(argv, _env(site, cache))
        warm_cli = _median([_run(argv, _env(site, cache)) for _ in range(max(RUNS, 5))])
    with capsys.disabled():
        print(f"\ncold start, median of {RUNS} fresh processes, each with an empty "
              f"NUMBA_CACHE_DIR; load average {os.getloadavg()[0]:.1f}")
        print(f"  {'first call':46s} {'nothing cached':>22s} {'after passatk warm':>22s}")
        print(f"  {'':46s} {'cpu s':>10s} {'wall s':>11s} {'cpu s':>10s} {'wall s':>11s}")
        for name in cases:
            (c0, w0), (c1, w1) = cold[name], built[name]
            print(f"  {name:46s} {c0:10.2f} {w0:11.2f} {c1:10.2f} {w1:11.2f}")
        print(f"  passatk warm, once, in the fresh install: {warm_cpu:.1f} s CPU, "
              f"{warm_wall:.1f} s wall")
        print(f"  passatk score EXAMPLE, warm cache: {warm_cli[1]:.3f} s wall, "
              f"{warm_cli[0]:.3f} s CPU (median of {max(RUNS, 5)})")
