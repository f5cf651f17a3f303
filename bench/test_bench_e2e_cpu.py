"""The 600 MB human-eval end to end on the CLI by CPU time (issue 19: at least 3x the stdlib
``json.loads`` loop), with the wall time beside it.

Run:
    PASSATK_BENCH_E2E_MB=600 python -m pytest bench/test_bench_e2e_cpu.py -s

The same file as ``test_bench_workers.py``'s end-to-end row (164 tasks, ~1.15 KB lines of real
code). Each command runs in a fresh process started by a small launcher, whose ``os.wait4``
gives the CPU time (user + system) of the command and of every descendant it waited for; the
rounds interleave the commands, and each figure is the median of ``PASSATK_BENCH_E2E_RUNS``
(default 5) after one warm-up round (page cache, numba's cache). CPU time moves less with the
machine's load than wall time does, but it is not free of it (shared caches): the ratio of two
commands in one run is the figure to quote. ``PASSATK_BENCH_BEFORE``, a ``src`` folder of
another passatk (``git archive``), adds its ``passatk score`` to the same rounds.

``test_where_the_cpu_goes`` splits the command's CPU time: the command on the bundled example
(which imports no numba), then in one fresh process the library floor (a msgspec typed-Struct
decode of the same blocks and a Counter), ``read_counts``, the first ``passatk.score`` and a
second one; and the stdlib loop.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from test_bench_workers import STDLIB_LOOP, _big_file

_LAUNCHER = """
import os, sys, time
t = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - t
with open(sys.argv[1], "w") as f:
    f.write(f"{wall} {usage.ru_utime + usage.ru_stime} {os.waitstatus_to_exitcode(status)}")
"""


def _run(argv: list[str], env: dict) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds, stdout) of ``argv`` in a fresh process."""
    with tempfile.TemporaryDirectory() as tmp:
        result = Path(tmp) / "result"
        proc = subprocess.run([sys.executable, "-c", _LAUNCHER, str(result), *argv],
                              capture_output=True, text=True, env=env)
        wall, cpu, code = result.read_text().split()
    assert int(code) == 0 and proc.returncode == 0, proc.stderr
    return float(wall), float(cpu), proc.stdout


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("e2e") / "big_results.jsonl"
    _big_file(path, float(os.environ.get("PASSATK_BENCH_E2E_MB", "600")))
    return path


def test_end_to_end_cpu_against_the_stdlib_loop(big, capsys):
    path, runs = big, int(os.environ.get("PASSATK_BENCH_E2E_RUNS", "5"))
    env = dict(os.environ)
    score = [sys.executable, "-m", "passatk", "score", str(path), "-k", "1,10", "--quiet"]
    commands = {"stdlib loop": ([sys.executable, "-c", STDLIB_LOOP, str(path)], env),
                "passatk --jobs 1": ([*score, "--jobs", "1"], env),
                "passatk default": (score, env)}
    before = os.environ.get("PASSATK_BENCH_BEFORE")
    if before:
        commands["before --jobs 1"] = ([*score, "--jobs", "1"], {**env, "PYTHONPATH": before})
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    outs = set()
    for i in range(runs + 1):
        for name, (argv, e) in commands.items():
            wall, cpu, out = _run(argv, e)
            if i:  # the first round warms the page cache and numba's cache
                times[name].append((wall, cpu))
            if name != "stdlib loop":
                outs.add(out)
    assert len(outs) == 1  # every passatk command prints the same table
    cpu = {name: statistics.median(c for _, c in t) for name, t in times.items()}
    wall = {name: statistics.median(w for w, _ in t) for name, t in times.items()}
    with capsys.disabled():
        print(f"\nhuman-eval {path.stat().st_size / 1e6:.0f} MB end to end, median of {runs}, "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs:")
        for name in commands:
            print(f"  {name:18s} CPU {cpu[name]:.2f} s ({cpu['stdlib loop'] / cpu[name]:.2f}x), "
                  f"wall {wall[name]:.2f} s ({wall['stdlib loop'] / wall[name]:.2f}x)")


PHASES = """
import collections, resource, sys
import msgspec
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
class View(msgspec.Struct, gc=False):
    task_id: str
    passed: bool
t = [cpu()]
dec, n, c, rest = msgspec.json.Decoder(View), collections.Counter(), collections.Counter(), b""
with open(sys.argv[1], "rb") as f:
    while block := f.read(1 << 19):
        cut = block.rfind(b"\\n") + 1
        views = dec.decode_lines(rest + block[:cut])
        rest = block[cut:]
        tasks = [v.task_id for v in views]
        n.update(tasks)
        c.update(t for t, v in zip(tasks, views) if v.passed)
t.append(cpu())
import passatk
from passatk.archives import read_counts
t.append(cpu())
counts = read_counts(sys.argv[1], workers=1)
t.append(cpu())
passatk.score(counts, k=[1, 10])
t.append(cpu())
passatk.score(counts, k=[1, 10])
t.append(cpu())
assert list(counts.n) == [n[k] for k in counts.task]
print(*(b - a for a, b in zip(t, t[1:])), "numba" in sys.modules)
"""


def test_where_the_cpu_goes(big, capsys):
    from passatk.archives import example_path

    start = [sys.executable, "-m", "passatk", "score", str(example_path("humaneval")), "-k",
             "1,10", "--quiet", "--jobs", "1"]
    rows = []
    for _ in range(int(os.environ.get("PASSATK_BENCH_E2E_RUNS", "5"))):
        rows.append([_run(start, dict(os.environ))[1],
                     _run([sys.executable, "-c", STDLIB_LOOP, str(big)], dict(os.environ))[1],
                     *map(float, _run([sys.executable, "-c", PHASES, str(big)],
                                      dict(os.environ))[2].split()[:5])])
    med = [statistics.median(col) for col in zip(*rows, strict=True)]
    names = ["the command on the bundled example", "stdlib loop", "library floor (msgspec)",
             "import passatk", "read_counts", "first passatk.score", "second passatk.score"]
    with capsys.disabled():
        print(f"\nCPU seconds, median of {len(rows)}, load average {os.getloadavg()[0]:.1f}:")
        for name, value in zip(names, med, strict=True):
            print(f"  {name:36s} {value:.2f}")
        print(f"  read_counts / library floor: {med[4] / med[2]:.2f}x")
