"""Speed of issue 22: the leaderboard, and compare over k = 1..128 against passk-inference.

Run: python -m pytest bench/test_bench_leaderboard.py --benchmark-enable -p no:randomly -s

* leaderboard: 20 models x 1,000 tasks (n = 20) at k = 1, 10, warm; Holm (default) and
  max-T (10,000 draws of the 190 paired t statistics' joint null, stats/_maxt.py).
  Target: < 1 s for both.
* compare over k = 1..128 on 1,060 paired tasks (n = 128, an RLVR-shaped pair with point
  masses at p = 0 and 1), with the bootstrap, the max-T band over k, sign-flip, Wilcoxon
  and Holm, against passk-inference's ``compare(..., bootstrap=4000)`` (its sup-t band over
  k = 1..n, the audit's baseline), alternated in one run. Target: ratio <= 1.

With ``--benchmark-disable`` (the default) each function runs once, and the targets are
still asserted from best-of-3 times (and the median of 5 alternated ratios).
"""

import statistics
import time

import numpy as np
import pytest
from _timing import best_of

import passatk


@pytest.fixture(scope="module")
def twenty():
    rng = np.random.default_rng(0)
    tasks = 1000
    ids = np.array([f"task/{j}" for j in range(tasks)], dtype=object)
    base = rng.beta(0.8, 0.8, tasks)
    return {f"model-{i:02d}": (ids, np.full(tasks, 20),
                               rng.binomial(20, np.clip(base + 0.004 * i, 0, 1)))
            for i in range(20)}


@pytest.fixture(scope="module")
def rlvr_pair():
    rng = np.random.default_rng(20260201)
    size = 1060

    def rates(w0, w1, b):
        u = rng.random(size)
        return np.sort(np.where(u < w0, 0.0, np.where(u < w0 + w1, 1.0,
                                                     rng.beta(1.0, b, size))))
    pb, pr = rates(0.11, 0.17, 0.7), rates(0.13, 0.33, 0.6)
    order = np.argsort(rng.normal(size=size))
    n = np.full(size, 128)
    return n, rng.binomial(128, pr[order]), rng.binomial(128, pb[order])


@pytest.mark.parametrize("adjust", ["holm", "max-t"])
def test_leaderboard_20_models(benchmark, twenty, adjust):
    passatk.leaderboard(twenty, k=[1, 10], adjust=adjust, seed=0)  # warm
    benchmark(passatk.leaderboard, twenty, k=[1, 10], adjust=adjust, seed=0)
    t = best_of(lambda: passatk.leaderboard(twenty, k=[1, 10], adjust=adjust, seed=0))
    print(f"\nleaderboard 20 x 1000 x k=1,10 ({adjust}): best of 3 {t:.3f} s")
    assert t < 1.0


def test_compare_k_1_to_128_against_passk_inference(benchmark, rlvr_pair):
    pki = pytest.importorskip("passk_inference")
    n, ca, cb = rlvr_pair
    ks = list(range(1, 129))
    passatk.compare(n, ca, n, cb, k=ks, seed=0)  # warm
    pki.compare(cb, n, ca, n, bootstrap=4000, seed=0)
    ratios = []
    for _ in range(5):
        t0 = time.perf_counter()
        pki.compare(cb, n, ca, n, bootstrap=4000, seed=0)
        t1 = time.perf_counter()
        passatk.compare(n, ca, n, cb, k=ks, seed=0)
        t2 = time.perf_counter()
        ratios.append((t2 - t1) / (t1 - t0))
    print(f"\ncompare k=1..128, 1060 tasks: passatk / passk-inference = "
          f"{', '.join(f'{r:.2f}' for r in ratios)} (median {statistics.median(ratios):.2f})")
    benchmark(passatk.compare, n, ca, n, cb, k=ks, seed=0)
    assert statistics.median(ratios) <= 1.0
