"""``passatk score`` in fresh processes: worker processes, and end to end against the stdlib loop.

Run:
    python -m pytest bench/test_bench_workers.py -s

* ``test_jobs_2_against_jobs_1``: a directory of 8 human-eval archives
  (``PASSATK_BENCH_WORKERS_MB`` each, default 100), ``--jobs 2`` against ``--jobs 1``; the
  outputs must be identical. Target (issue 12): 1.7x on 2 idle cores.
* ``test_reading_in_process``: the same directory read by ``read_counts(paths, workers=2)``
  against ``workers=1`` in one fresh process (workers forked as the command line forks them):
  the reading alone, without the command's start and numba's.
* ``test_the_default_by_size``: ``--jobs 1``, ``--jobs 2`` and the default on single files of
  30, 70 and 140 MB and on 8 archives of 12 MB: where the default starts to use every CPU
  (``_processes.MIN_FORKED_PARALLEL_BYTES``) should be where two processes start to pay.
* ``test_many_small_archives``: 100 archives of 4.5 MB, ``--jobs 2`` against ``--jobs 1``
  (small files are handed to the workers in batches: ``_processes.plan_batches``).
* ``test_end_to_end_against_the_stdlib_loop``: one human-eval JSONL of
  ``PASSATK_BENCH_E2E_MB`` (default 600) with realistic completions: ``passatk score FILE -k
  1,10`` (default ``--jobs``, and ``--jobs 1``) against a fresh ``python`` running the stdlib
  ``json.loads`` loop. Target: 3x, with the peak RSS of every process at most 300 MB.

Every command imports passatk from compiled bytecode, as after ``pip install``, which
compiles it: this machine sets ``PYTHONDONTWRITEBYTECODE=1``, and with an editable install
nothing else writes it, so each process compiled every module again (0.46-0.52 s of CPU for
a small file, against 0.28-0.29 s). ``PASSATK_BENCH_NO_BYTECODE=1`` measures without it.

Wall times of fresh processes, interleaved, best of ``RUNS``; the peak RSS is the largest of
the process and its descendants (the workers), from ``os.wait4`` in a small launcher. The
load average is printed: on a shared machine the ratios move with it.
"""

from __future__ import annotations

import compileall
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from test_bench_archives import _write

RUNS = 3
FILES = 8
RSS_LIMIT_MB = 300

STDLIB_LOOP = """
import collections, json, sys
n, c = collections.Counter(), collections.Counter()
with open(sys.argv[1]) as f:
    for line in f:
        d = json.loads(line)
        n[d["task_id"]] += 1
        c[d["task_id"]] += d["passed"]
print(len(n), sum(n.values()), sum(c.values()))
"""

pytestmark = pytest.mark.skipif(not hasattr(os, "wait4"), reason="needs os.wait4")


@pytest.fixture(autouse=True, scope="module")
def _bytecode():
    """passatk's modules compiled once, as ``pip install`` leaves them (see the top)."""
    if os.environ.get("PASSATK_BENCH_NO_BYTECODE") != "1":
        import passatk

        assert compileall.compile_dir(Path(passatk.__file__).parent, quiet=1)


#: forks and execs the command, and writes its wall time, peak RSS and exit code to a file:
#: ``ru_maxrss`` from ``os.wait4`` counts the RSS of the process that called ``exec``, so the
#: command is started from this small process, not from the bench's
_LAUNCHER = """
import os, sys, time
t = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - t
with open(sys.argv[1], "w") as f:
    f.write(f"{wall} {usage.ru_maxrss} {os.waitstatus_to_exitcode(status)}")
"""


def _timed(argv: list[str]) -> tuple[float, str, float]:
    """(wall seconds, stdout, peak RSS in MB of the process and its workers).

    A small launcher forks and execs the command and takes ``os.wait4``'s ``ru_maxrss``: the
    largest peak RSS of the command and of every descendant it waited for (its workers), with
    nothing running beside it (polling ``/proc`` every 20 ms took CPU from the command: on
    two cores about 0.1 s from ``--jobs 2``). The wall time is the launcher's, around the
    command only."""
    with tempfile.TemporaryDirectory() as tmp:
        result = Path(tmp) / "result"
        proc = subprocess.run([sys.executable, "-c", _LAUNCHER, str(result), *argv],
                              capture_output=True, text=True)
        wall, rss_kb, code = result.read_text().split()
    assert int(code) == 0 and proc.returncode == 0, proc.stderr
    return float(wall), proc.stdout, int(rss_kb) / 1024


def _score(path: Path, *jobs: str) -> list[str]:
    return [sys.executable, "-m", "passatk", "score", str(path), "-k", "1,10", "--quiet", *jobs]


def _load() -> str:
    return f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs"


def _big_file(path: Path, mb: float) -> None:
    """About ``mb`` MB of human-eval lines: 164 tasks, ~1.15 KB per line."""
    _write(path, 164, max(10, int(mb * 1e6 / 1150 / 164)), seed=0)


def _copies(folder: Path, mb: float, count: int) -> None:
    """``count`` run folders of one human-eval archive of ``mb`` MB each (copies: reading
    costs the same as for distinct runs)."""
    names = [f"run{i:0{len(str(count - 1))}d}" for i in range(count)]
    first = folder / names[0] / "s_results.jsonl"
    _big_file(first, mb)
    for name in names[1:]:
        (folder / name).mkdir(parents=True)
        shutil.copyfile(first, folder / name / "s_results.jsonl")


def _archives(folder: Path) -> None:
    """FILES human-eval archives of ``PASSATK_BENCH_WORKERS_MB`` each, one per run folder."""
    _copies(folder, float(os.environ.get("PASSATK_BENCH_WORKERS_MB", "100")), FILES)


def _best_jobs(path: Path) -> tuple[float, float]:
    """Best wall times of ``--jobs 1`` and ``--jobs 2`` on ``path``, interleaved; the outputs
    must be identical."""
    one, two = [], []
    for _ in range(RUNS):
        t1, out1, _ = _timed(_score(path, "--jobs", "1"))
        t2, out2, _ = _timed(_score(path, "--jobs", "2"))
        assert out1 == out2
        one.append(t1)
        two.append(t2)
    return min(one), min(two)


IN_PROCESS = """
import os, sys, time
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
from passatk.archives import read_counts
from passatk.archives.engine.processes import launching

def main():
    best, outs = {}, set()
    read_counts(sys.argv[1], workers=1)  # the page cache and the imports, for both
    for _ in range(int(sys.argv[2])):
        for workers in (1, 2):
            with launching():
                t = time.perf_counter()
                counts = read_counts(sys.argv[1], workers=workers)
                wall = time.perf_counter() - t
            best[workers] = min(best.get(workers, wall), wall)
            outs.add(repr(counts.to_rows()))
    print(best[1], best[2], len(outs))

if __name__ == "__main__":
    main()
"""


def test_reading_in_process(tmp_path, capsys):
    _archives(tmp_path)
    proc = subprocess.run([sys.executable, "-c", IN_PROCESS, str(tmp_path), str(RUNS)],
                          capture_output=True, text=True, check=True)
    one, two, distinct = proc.stdout.split()
    assert distinct == "1", "workers=1 and workers=2 read different counts"
    with capsys.disabled():
        print(f"\n{FILES} archives in one process: read_counts workers=1 best {float(one):.3f} s, "
              f"workers=2 best {float(two):.3f} s: {float(one) / float(two):.2f}x ({_load()})")


def test_the_default_by_size(tmp_path, capsys):
    inputs = []
    for mb in (30, 70, 140):
        path = tmp_path / f"f{mb}_results.jsonl"
        _big_file(path, mb)
        inputs.append(path)
    folder = tmp_path / "eight"
    _copies(folder, 12, FILES)
    inputs.append(folder)
    best: dict = {}
    for _ in range(RUNS):
        for path in inputs:
            outs = set()
            for name, jobs in (("1", ["--jobs", "1"]), ("2", ["--jobs", "2"]), ("default", [])):
                wall, out, _ = _timed(_score(path, *jobs))
                outs.add(out)
                best[path, name] = min(best.get((path, name), wall), wall)
            assert len(outs) == 1
    with capsys.disabled():
        print(f"\nthe default by input size ({_load()}), best of {RUNS}:")
        for path in inputs:
            size = sum(f.stat().st_size for f in ([path] if path.is_file() else
                                                  path.rglob("*.jsonl"))) / 1e6
            print(f"  {path.name} ({size:.0f} MB): --jobs 1 {best[path, '1']:.3f} s, --jobs 2 "
                  f"{best[path, '2']:.3f} s, default {best[path, 'default']:.3f} s")


def test_many_small_archives(tmp_path, capsys):
    _copies(tmp_path, 4.5, 100)
    one, two = _best_jobs(tmp_path)
    with capsys.disabled():
        print(f"\n100 archives of 4.5 MB: --jobs 1 best {one:.2f} s, --jobs 2 best "
              f"{two:.2f} s: {one / two:.2f}x ({_load()})")


def test_jobs_2_against_jobs_1(tmp_path, capsys):
    _archives(tmp_path)
    one, two = _best_jobs(tmp_path)
    total = sum(f.stat().st_size for f in tmp_path.rglob("*.jsonl")) / 1e6
    with capsys.disabled():
        print(f"\n{FILES} archives, {total:.0f} MB: --jobs 1 best {one:.2f} s, --jobs 2 best "
              f"{two:.2f} s: {one / two:.2f}x ({_load()})")


def test_end_to_end_against_the_stdlib_loop(tmp_path, capsys):
    mb = float(os.environ.get("PASSATK_BENCH_E2E_MB", "600"))
    path = tmp_path / "big_results.jsonl"
    _big_file(path, mb)
    loop = [sys.executable, "-c", STDLIB_LOOP, str(path)]
    runs: dict[str, list[tuple[float, float]]] = {"stdlib": [], "default": [], "jobs1": []}
    outs = set()
    for _ in range(RUNS):
        for name, argv in (("stdlib", loop), ("default", _score(path)),
                           ("jobs1", _score(path, "--jobs", "1"))):
            wall, out, peak = _timed(argv)
            runs[name].append((wall, peak))
            if name != "stdlib":
                outs.add(out)
    assert len(outs) == 1  # the same output with and without workers
    best = {name: min(w for w, _ in r) for name, r in runs.items()}
    peak = {name: max(p for _, p in r) for name, r in runs.items()}
    with capsys.disabled():
        print(f"\nhuman-eval {path.stat().st_size / 1e6:.0f} MB end to end ({_load()}): stdlib "
              f"loop {best['stdlib']:.2f} s; passatk score {best['default']:.2f} s "
              f"({best['stdlib'] / best['default']:.2f}x, peak RSS {peak['default']:.0f} MB), "
              f"--jobs 1 {best['jobs1']:.2f} s ({best['stdlib'] / best['jobs1']:.2f}x, peak RSS "
              f"{peak['jobs1']:.0f} MB)")
    assert peak["default"] <= RSS_LIMIT_MB and peak["jobs1"] <= RSS_LIMIT_MB
