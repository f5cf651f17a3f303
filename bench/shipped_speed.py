"""Kernel speed of the shipped cache's x86-64-v3 code against code built for this CPU (issue 20).

Runs the kernel benches (``bench/test_bench_kernel.py`` without its start-up rows, and the rl
advantage and metric benches) alternately in two configurations, ``REPEATS`` times each:

- ``host``: ``PASSATK_SHIPPED_CACHE=0``, kernels compiled for this CPU (their own
  ``NUMBA_CACHE_DIR``, compiled once by a first untimed pass);
- ``v3``: the shipped cache, every passatk kernel loaded from the shipped zips
  (``data/kernel_cache_v4.zip`` where the processor has AVX-512, else ``kernel_cache.zip``).

Every run first frees one 16 MiB block, so that large arrays are allocated alike in both
(``bench/shipped_speed_cpu.py --primed`` says why).

The in-run baselines (the floor kernel of the bench, the Python loops) are not passatk
kernels, so they are built for this CPU in both. Each run is saved as pytest-benchmark JSON
and compared with ``bench/compare.py``'s ratios: ``host`` against ``host`` (the noise of the
machine) and ``v3`` against ``host`` (the cost of the shipped code), then, per row, the median
over repeats of the v3 / host ratio change. Figures only.

Usage::

    python bench/shipped_speed.py [REPEATS] [OUTDIR]      # default 3, a temporary folder
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from compare import ratios, report

BENCHES = ["bench/test_bench_kernel.py", "bench/test_bench_rl_advantages.py",
           "bench/test_bench_rl_metrics.py"]
ROOT = Path(__file__).resolve().parent.parent
# glibc's dynamic mmap threshold rises to 16 MiB in every run, so that both configurations
# allocate alike (docs/benchmarks.md, "Issue 20, third round")
_PRIMED = ("import sys, numpy, pytest; numpy.empty(16 << 20, numpy.uint8); "
           "sys.exit(pytest.main(sys.argv[1:]))")


def _env(config: str, cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env["NUMBA_CACHE_DIR"] = str(cache / config)
    env["PASSATK_SHIPPED_CACHE"] = "0" if config == "host" else "1"
    return env


def _bench(config: str, name: str, out: Path, extra: list[str]) -> Path:
    cmd = [sys.executable, "-c", _PRIMED, *BENCHES, "-q", "-p", "no:randomly",
           "-k", "not cold_start", "--benchmark-enable", f"--benchmark-save={name}",
           f"--benchmark-storage=file://{out / 'runs'}", *extra]
    # exit 1 is a row over its absolute target (a loaded machine): the timings are still saved
    done = subprocess.run(cmd, env=_env(config, out / "cache"), cwd=ROOT,
                          stdout=subprocess.DEVNULL)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{config}: pytest exited {done.returncode}")
    return max((out / "runs").glob(f"*/*_{name}.json"), key=lambda p: p.stat().st_mtime)


def main(repeats: int, out: Path) -> None:
    for config in ("host", "v3"):  # compile or load everything once, untimed
        _bench(config, f"prime_{config}", out, ["--benchmark-disable"])
    runs: dict[str, list[Path]] = {"host": [], "v3": []}
    load = []
    for r in range(repeats):
        order = ("host", "v3") if r % 2 == 0 else ("v3", "host")
        for config in order:
            load.append(os.getloadavg()[0])
            runs[config].append(_bench(config, f"{config}{r}", out, []))
    print(f"load average during the runs: {min(load):.1f}-{max(load):.1f}")
    for a, b in zip(runs["host"], runs["host"][1:], strict=False):
        print("\n".join(report(a, b, 0.10)[0]))  # the noise: the same code twice
    changes: dict[str, list[float]] = {}
    noise: dict[str, list[float]] = {}
    for host, v3 in zip(runs["host"], runs["v3"], strict=True):
        h, v = ratios(json.loads(host.read_text())), ratios(json.loads(v3.read_text()))
        for row in h:
            if row in v:
                changes.setdefault(row, []).append(v[row] / h[row] - 1.0)
    for a, b in zip(runs["host"], runs["host"][1:], strict=False):
        h0, h1 = ratios(json.loads(a.read_text())), ratios(json.loads(b.read_text()))
        for row in h0:
            if row in h1:
                noise.setdefault(row, []).append(abs(h1[row] / h0[row] - 1.0))
    print(f"\nv3 against host, per row: median over {repeats} alternating pairs of the ratio "
          "change (and |host against host|, the noise)")
    for row, values in changes.items():
        n = statistics.median(noise[row]) if noise.get(row) else float("nan")
        print(f"  {row:<72} {statistics.median(values):+8.1%}   noise {n:6.1%}")


if __name__ == "__main__":
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    if len(sys.argv) > 2:
        main(reps, Path(sys.argv[2]))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            main(reps, Path(tmp))
