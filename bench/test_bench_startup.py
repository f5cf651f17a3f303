"""Start-up cost of the command line, in fresh processes, against ``python -c pass``.

Run:
    python -m pytest bench/test_bench_startup.py -s

Each command runs ``RUNS`` times in a fresh interpreter; the medians of wall time and of CPU
time (user + system, from ``resource.getrusage(RUSAGE_CHILDREN)``) are printed. Wall time
depends on the machine's load (CPU time much less), so both are shown. The quick commands
must stay at or under 0.25 s (issue 12); ``passatk score`` on the bundled example is broken
down by phase in one process (imports, numba, reading, the first kernel call, which loads
numba's cache).
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import time

RUNS = 11
LIMIT_S = 0.25


def _example() -> str:
    from passatk.archives import example_path

    return str(example_path("humaneval"))


def _time(argv: list[str]) -> tuple[float, float]:
    walls, cpus = [], []
    for _ in range(RUNS):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        walls.append(time.perf_counter() - t)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def test_quick_commands_start_fast(capsys):
    py = [sys.executable]
    cases = {
        "python -c pass (baseline)": [*py, "-c", "pass"],
        "passatk --help": [*py, "-m", "passatk", "--help"],
        "passatk formats": [*py, "-m", "passatk", "formats"],
        "passatk score /nonexistent (error)": [*py, "-m", "passatk", "score", "/nonexistent"],
        "passatk score EXAMPLE -k 1,10": [*py, "-m", "passatk", "score", _example(),
                                          "-k", "1,10"],
    }
    results = {name: _time(argv) for name, argv in cases.items()}
    with capsys.disabled():
        print(f"\nload average {os.getloadavg()[0]:.1f}; median of {RUNS} fresh processes")
        for name, (wall, cpu) in results.items():
            print(f"  {name:38s} wall {wall * 1e3:6.0f} ms   cpu {cpu * 1e3:6.0f} ms")
    for name in ("passatk --help", "passatk formats", "passatk score /nonexistent (error)"):
        assert results[name][0] <= LIMIT_S, name


_PHASES = """
import io, contextlib, time, sys
t0 = time.perf_counter()
from passatk.cli import main
from passatk._console import _without_scipy_blas
_blas = _without_scipy_blas()
_blas.__enter__()  # as the console entry point does
t1 = time.perf_counter()
import numpy
t2 = time.perf_counter()
import numba
t3 = time.perf_counter()
import passatk.stats, passatk._kernels
t4 = time.perf_counter()
from passatk.archives import read_counts
counts = read_counts(sys.argv[1])
t5 = time.perf_counter()
import passatk
passatk.score(counts.n, counts.c, [1, 10])
t6 = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()):
    main(["score", sys.argv[1], "-k", "1,10"])
t7 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5, t7 - t6)
"""


def test_where_score_spends_its_start(capsys):
    runs = []
    for _ in range(5):
        out = subprocess.run([sys.executable, "-c", _PHASES, _example()], capture_output=True,
                             text=True, check=True).stdout
        runs.append([float(x) for x in out.split()])
    names = ["import passatk.cli", "import numpy", "import numba",
             "import passatk.stats + kernel modules", "read the example",
             "first passatk.score (numba cache load)", "a whole second CLI score in process"]
    with capsys.disabled():
        print(f"\npassatk score EXAMPLE -k 1,10, by phase (median of 5 fresh processes), "
              f"load average {os.getloadavg()[0]:.1f}")
        for i, name in enumerate(names):
            print(f"  {name:42s} {statistics.median(r[i] for r in runs) * 1e3:7.0f} ms")
