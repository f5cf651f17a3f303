"""Speed of the statistics layer (issue 3), on one thread.

Run: python -m pytest bench/test_bench_stats.py --benchmark-enable -p no:randomly

* score: 1,000,000 tasks (n = 200, c ~ Binomial(n, Beta(0.5, 0.5))) at k in {1, 10, 100}
  with the super-population and fixed-benchmark SEs and t intervals. Target: < 1 s.
* bootstrap: B = 10,000 resamples of 1,000 tasks. Target: < 0.5 s.
* compare: 1,000 paired tasks at k in {1, 10}, with the bootstrap, max-T band, sign-flip,
  Wilcoxon and Holm.

With ``--benchmark-disable`` (the default) each function runs once, and the hard targets are
still asserted from a best-of-3 wall-clock time.
"""


import numpy as np
import pytest
from _timing import best_of

import passatk
from passatk._jit import get_num_threads, set_num_threads
from passatk.stats import _kernels as SK


@pytest.fixture
def one_thread():
    before = get_num_threads()
    set_num_threads(1)
    yield
    set_num_threads(before)


def _best_of(fn, reps=3):
    return best_of(fn, reps)


@pytest.fixture(scope="module")
def million():
    rng = np.random.default_rng(0)
    size = 1_000_000
    n = np.full(size, 200, dtype=np.int64)
    c = rng.binomial(n, rng.beta(0.5, 0.5, size)).astype(np.int64)
    return n, c


def test_score_million_tasks_three_k(benchmark, one_thread, million):
    n, c = million

    def run():
        return passatk.score(n, c, k=[1, 10, 100])

    r = run()  # warm up (compilation, tables)
    assert all(row.se_super is not None and row.se_fixed is not None for row in r)
    benchmark(run)
    assert _best_of(run) < 1.0


def test_bootstrap_10k_resamples_1k_tasks(benchmark, one_thread):
    theta = np.random.default_rng(1).random((1000, 1))
    SK.boot_means(theta, 1, 10)

    def run():
        return SK.boot_means(theta, 2, 10_000)

    benchmark(run)
    assert _best_of(run) < 0.5


def test_score_bca_1k_tasks(benchmark, one_thread):
    rng = np.random.default_rng(2)
    n = np.full(1000, 20)
    c = rng.binomial(20, rng.beta(1, 2, 1000))

    def run():
        return passatk.score(n, c, k=[1, 5], interval="bca", seed=3)

    run()
    benchmark(run)
    assert _best_of(run) < 1.0


def test_compare_1k_tasks(benchmark, one_thread):
    rng = np.random.default_rng(4)
    p = rng.beta(1, 2, 1000)
    n = np.full(1000, 20)
    ca = rng.binomial(20, p)
    cb = rng.binomial(20, np.clip(p + 0.03, 0, 1))

    def run():
        return passatk.compare(n, ca, n, cb, k=[1, 10], seed=5)

    run()
    benchmark(run)
    assert _best_of(run) < 1.0


def test_score_million_tasks_ragged_n(benchmark, one_thread):
    # n uniform on 150..299 (no single repeated n): the kernel's direct path
    rng = np.random.default_rng(6)
    n = rng.integers(150, 300, 1_000_000)
    c = rng.binomial(n, rng.beta(0.5, 0.5, n.size))

    def run():
        return passatk.score(n, c, k=[1, 10, 100])

    run()
    benchmark(run)
    assert _best_of(run) < 1.0


def test_score_posterior_1k_tasks(benchmark, one_thread):
    # the hierarchical Beta-binomial: 4 passes over a 49 x 49 grid, both estimands
    rng = np.random.default_rng(7)
    n = np.full(1000, 20)
    c = rng.binomial(20, rng.beta(1, 2, 1000))

    def run():
        return passatk.score(n, c, k=[1, 10], metric=["posterior", "posterior-population"])

    run()
    benchmark(run)
    assert _best_of(run) < 1.0


def test_score_g_pass_1k_tasks(benchmark, one_thread):
    # G-Pass@k and mG-Pass@k at k = 8 with the fixed-benchmark SE (a k^2 double sum)
    rng = np.random.default_rng(8)
    n = np.full(1000, 32)
    c = rng.binomial(32, rng.beta(1, 2, 1000))

    def run():
        return passatk.score(n, c, k=8, metric=["g-pass@k", "mg-pass@k"])

    run()
    benchmark(run)
    assert _best_of(run) < 1.0


def test_compare_1k_tasks_clustered(benchmark, one_thread):
    rng = np.random.default_rng(9)
    p = rng.beta(1, 2, 1000)
    n = np.full(1000, 20)
    ca = rng.binomial(20, p)
    cb = rng.binomial(20, np.clip(p + 0.03, 0, 1))
    cl = np.arange(1000) // 10

    def run():
        return passatk.compare(n, ca, n, cb, k=[1, 10], seed=5, clusters=cl)

    run()
    benchmark(run)
    assert _best_of(run) < 1.0


def test_floor_numpy_million(benchmark, million):
    """In-run baseline for bench/compare.py: two numpy passes over the million tasks."""
    n, c = million
    benchmark.extra_info.update(baseline=True)
    benchmark(lambda: (c / n).sum() + (c * c).sum())
