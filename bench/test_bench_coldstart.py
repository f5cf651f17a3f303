"""Cold start (issue 20): the first call in a fresh process, with an empty numba cache.

Run:
    python -m pytest bench/test_bench_coldstart.py -s -p no:randomly

The package is copied to a temporary folder without any ``__pycache__`` (a fresh install,
with the shipped kernel cache ``data/kernel_cache.zip``). Each case of issue 20 then runs in
a fresh interpreter, each time with a new empty ``NUMBA_CACHE_DIR``:

1. nothing cached anywhere (``PASSATK_SHIPPED_CACHE=0``): every kernel the call needs is
   compiled (``PASSATK_BENCH_COLD_RUNS`` times, default 1: it takes minutes);
2. the fresh install as shipped: the kernels are loaded from the shipped cache
   (``PASSATK_BENCH_RUNS`` times, default 3);
3. after ``PASSATK_SHIPPED_CACHE=0 python -m passatk warm`` ran once in that install (the
   kernels built for this CPU, kept in the package's ``__pycache__``), shipped cache off:
   they are loaded from there (``PASSATK_BENCH_RUNS`` times).

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
COLD_RUNS = int(os.environ.get("PASSATK_BENCH_COLD_RUNS", "1"))

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


def _env(site: Path, cache: str | None, shipped: bool = True) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "PASSATK_"))}
    env["PYTHONPATH"] = str(site)
    env["PASSATK_SHIPPED_CACHE"] = "1" if shipped else "0"
    if cache is not None:
        env["NUMBA_CACHE_DIR"] = cache
    return env


def _fresh(argv: list[str], site: Path, shipped: bool = True) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as cache:
        return _run(argv, _env(site, cache, shipped))


def test_cold_start(site, capsys):
    example = str(site / "passatk" / "data" / "examples" / "humaneval_results.jsonl")
    cases = _cases(example)
    load = [os.getloadavg()[0]]
    cpu0 = _cpu_all()
    cold = {name: _median([_fresh(argv, site, shipped=False) for _ in range(COLD_RUNS)])
            for name, argv in cases.items()}
    with capsys.disabled():  # shown at once: the rest takes minutes
        print(f"\nnothing cached (median of {COLD_RUNS}): " + "; ".join(
            f"{name}: {c:.2f} s CPU, {w:.2f} s wall" for name, (c, w) in cold.items()))
    shipped = {name: _median([_fresh(argv, site) for _ in range(RUNS)])
               for name, argv in cases.items()}
    load.append(os.getloadavg()[0])
    warm_cpu, warm_wall = _run([sys.executable, "-m", "passatk", "warm", "-q"],
                               _env(site, None, shipped=False))
    built = {name: _median([_fresh(argv, site, shipped=False) for _ in range(RUNS)])
             for name, argv in cases.items()}
    with tempfile.TemporaryDirectory() as cache:
        argv = cases["passatk score EXAMPLE -k 1,5,10 (whole CLI)"]
        _run(argv, _env(site, cache))
        warm_cli = _median([_run(argv, _env(site, cache)) for _ in range(max(RUNS, 5))])
    load.append(os.getloadavg()[0])
    share = _machine_share(cpu0)
    with capsys.disabled():
        print(f"\ncold start, fresh processes, each with an empty NUMBA_CACHE_DIR; load "
              f"average {min(load):.1f}-{max(load):.1f}; {share}")
        print(f"  {'first call':46s} {'nothing cached':>22s} {'shipped cache':>22s} "
              f"{'after passatk warm':>22s}")
        print(f"  {'':46s}" + f" {'cpu s':>10s} {'wall s':>11s}" * 3)
        for name in cases:
            row = "".join(f" {c:10.2f} {w:11.2f}"
                          for c, w in (cold[name], shipped[name], built[name]))
            print(f"  {name:46s}{row}")
        print(f"  (medians of {COLD_RUNS}, {RUNS}, {RUNS} processes)")
        print(f"  passatk warm, once, in the fresh install, shipped cache off: "
              f"{warm_cpu:.1f} s CPU, {warm_wall:.1f} s wall")
        print(f"  passatk score EXAMPLE, warm cache: {warm_cli[1]:.3f} s wall, "
              f"{warm_cli[0]:.3f} s CPU (median of {max(RUNS, 5)})")


def _cpu_all() -> tuple[float, float, float]:
    """(CPU seconds of the whole machine from /proc/stat, wall clock, this bench's children)."""
    with open("/proc/stat") as f:
        fields = f.readline().split()[1:]
    ticks = os.sysconf("SC_CLK_TCK")
    busy = sum(int(x) for i, x in enumerate(fields) if i not in (3, 4))  # not idle, iowait
    mine = resource.getrusage(resource.RUSAGE_CHILDREN)
    return busy / ticks, time.time(), mine.ru_utime + mine.ru_stime


def _machine_share(start: tuple[float, float, float]) -> str:
    """How busy the machine was since ``start``: its cores' busy share, and this bench's."""
    busy, now, mine = _cpu_all()
    wall = now - start[1]
    ours = mine - start[2]
    cores = os.cpu_count() or 1
    return (f"machine {100 * (busy - start[0]) / (wall * cores):.0f}% busy on {cores} cores, "
            f"of which this bench {100 * ours / (wall * cores):.0f}%")
