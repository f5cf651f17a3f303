"""Kernel speed of the shipped code (x86-64-v4, or v3) against code built for this CPU, in CPU time.

The same comparison as ``bench/shipped_speed.py`` (which uses the pytest-benchmark rows and
``bench/compare.py``), measured for a machine shared with others: each row is timed with
``time.thread_time`` (the CPU time of the calling thread; numba runs on one thread here), so
other processes on the machine lengthen it far less than they lengthen wall time. Processes
alternate, ``host`` (``PASSATK_SHIPPED_CACHE=0``, kernels compiled for this CPU into their own
``NUMBA_CACHE_DIR`` by a first untimed process) and ``shipped`` (every kernel loaded from the
shipped zips: x86-64-v4 where it runs, else v3), ``REPEATS`` processes each; a row's figure
in a process is the median of ``CALLS`` calls. Printed per row: the median over processes for
each, shipped / host, and the spread of the host processes (max / min - 1), the noise the
ratio has to beat.

With ``--generic`` a third configuration alternates with them: ``generic``, every kernel
compiled for LLVM's ``generic`` x86-64 CPU (SSE2, no FMA: ``NUMBA_CPU_NAME=generic``).

Each row also reports the minor page faults of a call. Fresh pages are what glibc hands a
large array when its dynamic mmap threshold is still low, and that threshold depends on what
the process freed before (it rises to the size of the largest mmapped block freed, up to 32
MiB), not on the kernel's code. With ``--primed`` every process first frees one 16 MiB block,
so that all configurations allocate alike and the rows measure the code.

Usage::

    python bench/shipped_speed_cpu.py [REPEATS] [CALLS] [--generic] [--primed]   # 5 and 7
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile

_WORKER = r"""
import json, resource, statistics, sys, time
import numpy as np
import passatk
from passatk import rl, _jit

if sys.argv[2] == "primed":  # glibc's dynamic mmap threshold rises to 16 MiB in every process
    np.empty(16 << 20, np.uint8)  # allocated by mmap and freed at once

_jit.set_num_threads(1)
calls = int(sys.argv[1])
r = np.random.default_rng(0)
size = 200_000
na = r.choice([20, 200, 1000], size); ca = r.binomial(na, r.beta(0.5, 0.5, size))
ka = np.minimum(r.choice([1, 10, 100], size), na)
nb = np.exp(r.uniform(0, np.log(1e9), size)).astype(np.int64) + 1
cb = np.minimum(r.binomial(200, r.beta(0.5, 0.5, size)), nb)
kb = np.minimum(r.choice([1, 10, 100], size), nb)
cont = r.random((4096, 64)).astype(np.float32)
binary = (r.random((512, 64)) < 0.4).astype(np.float32)
rows = {
    "pass_at_k, workload A (200k)": lambda: passatk.pass_at_k(na, ca, ka),
    "pass_at_k, workload B (200k)": lambda: passatk.pass_at_k(nb, cb, kb),
    "pass_hat_k, workload B (200k)": lambda: passatk.pass_hat_k(nb, cb, kb),
    "rl.advantages 4096 x 64, pkpo-loo1": lambda: rl.advantages(cont, k=4),
    "rl.advantages 4096 x 64, passk-training":
        lambda: rl.advantages(cont, k=4, estimator="passk-training"),
    "rl.group_metrics 512 x 64, default":
        lambda: rl.group_metrics(binary, metrics=["pass@k", "pass^k", "best@k", "worst@k",
                                                  "g-pass@k", "mg-pass@k"]),
    "passatk.score 5000 tasks, bootstrap 2000":
        lambda: passatk.score(np.full(5000, 200), np.arange(5000) % 201, [1, 10],
                              interval="percentile", n_resamples=2000, seed=0),
}
out = {}
for name, call in rows.items():
    call()
    times = []
    faults = resource.getrusage(resource.RUSAGE_THREAD).ru_minflt
    for _ in range(calls):
        t = time.thread_time()
        call()
        times.append(time.thread_time() - t)
    out[name] = statistics.median(times)
    out["_faults " + name] = (resource.getrusage(resource.RUSAGE_THREAD).ru_minflt - faults) / calls
d = [f for f in _jit.dispatchers() if getattr(f, "signatures", None)]
out["_compiled"] = sum(sum(f.stats.cache_misses.values()) for f in d)
print(json.dumps(out))
"""


def _run(config: str, cache: str, calls: int, primed: bool) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env["NUMBA_CACHE_DIR"] = os.path.join(cache, config)
    env["PASSATK_SHIPPED_CACHE"] = "1" if config == "shipped" else "0"
    env["NUMBA_NUM_THREADS"] = "1"
    if config == "generic":
        env.update(NUMBA_CPU_NAME="generic", NUMBA_CPU_FEATURES="")
    out = subprocess.run([sys.executable, "-c", _WORKER, str(calls),
                          "primed" if primed else "plain"], env=env, check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout.splitlines()[-1])


def main(repeats: int, calls: int, configs: tuple[str, ...], primed: bool) -> None:
    with tempfile.TemporaryDirectory() as cache:
        for config in configs:  # compile (host, generic) or load (v3) once, untimed
            _run(config, cache, 1, primed)
        runs: dict[str, list[dict[str, float]]] = {c: [] for c in configs}
        load = []
        for r in range(repeats):
            for config in (configs if r % 2 == 0 else configs[::-1]):
                load.append(os.getloadavg()[0])
                runs[config].append(_run(config, cache, calls, primed))
    print(f"{repeats} processes each, alternating; median of {calls} calls per process; "
          f"thread CPU time; load average {min(load):.1f}-{max(load):.1f}")
    print("compiled in the timed processes: " + ", ".join(
        f"{c} {[x['_compiled'] for x in runs[c]]}" for c in configs))
    others = configs[1:]
    print(f"  {'row':<44} {'host ms':>9}" + "".join(f" {c + ' ms':>11} {c + '/host':>12}"
                                                   for c in others) + f" {'host spread':>12}")
    for row in runs["host"][0]:
        if row.startswith("_"):
            continue
        h = [x[row] for x in runs["host"]]
        hm = statistics.median(h)
        line = f"  {row:<44} {1e3 * hm:9.2f}"
        for c in others:
            m = statistics.median(x[row] for x in runs[c])
            line += f" {1e3 * m:11.2f} {m / hm:12.3f}"
        faults = " ".join(f"{c} {statistics.median(x['_faults ' + row] for x in runs[c]):.0f}"
                          for c in configs)
        print(line + f" {max(h) / min(h) - 1:12.1%}   page faults a call: {faults}")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    main(int(args[0]) if args else 5, int(args[1]) if len(args) > 1 else 7,
         ("host", "shipped", "generic") if "--generic" in sys.argv else ("host", "shipped"),
         "--primed" in sys.argv)
