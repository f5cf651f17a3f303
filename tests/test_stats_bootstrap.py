"""Bootstrap kernel, percentile and BCa intervals against direct slow implementations."""

import naive_stats as naive
import numpy as np
import pytest

import passatk
from passatk.stats import _dist
from passatk.stats import _kernels as SK
from passatk.stats._score import _boot_intervals


def test_boot_means_are_means_of_the_drawn_indices():
    rng = np.random.default_rng(5)
    theta = rng.random((37, 3))
    seed = np.uint64(987654321)
    reps = SK.boot_means(theta, seed, 300)
    idx = SK.boot_indices(37, seed, 300)
    assert idx.min() >= 0 and idx.max() < 37
    for b in range(300):
        np.testing.assert_allclose(reps[b], theta[idx[b]].mean(axis=0), rtol=1e-13)


def test_boot_indices_are_uniform():
    idx = SK.boot_indices(10, np.uint64(1), 20_000).reshape(-1)
    counts = np.bincount(idx, minlength=10)
    expected = idx.size / 10
    chi2 = float(np.sum((counts - expected) ** 2 / expected))
    assert chi2 < 30.0  # 9 df: P(chi2 > 30) < 5e-4


def test_boot_means_independent_of_thread_count():
    from passatk._jit import get_num_threads, set_num_threads

    theta = np.random.default_rng(2).random((50, 1))
    before = get_num_threads()
    try:
        a = SK.boot_means(theta, np.uint64(7), 1000)
        set_num_threads(1)
        b = SK.boot_means(theta, np.uint64(7), 1000)
    finally:
        set_num_threads(before)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bca_matches_direct_implementation(seed):
    rng = np.random.default_rng(seed)
    n = np.full(60, 8)
    c = rng.binomial(8, rng.beta(0.6, 1.5, 60))  # skewed, lattice-valued
    theta = passatk.pass_at_k(n, c, np.full(60, 2))
    reps = SK.boot_means(theta[:, None].copy(), np.uint64(seed + 10), 2000)[:, 0]
    pct, bca, why = _boot_intervals(theta, reps, 0.9)
    assert why is None
    assert pct[0] == pytest.approx(naive.quantile_linear(reps, 0.05), rel=1e-14)
    assert pct[1] == pytest.approx(naive.quantile_linear(reps, 0.95), rel=1e-14)
    tol = 1e-10 * float(np.max(np.abs(theta)))
    want = naive.bca_interval(list(theta), list(reps), 0.9, tol)
    assert bca == pytest.approx(want, rel=1e-9)


def test_bca_tie_term_matters_on_lattice_data():
    # binary outcomes: many bootstrap means equal the estimate exactly
    theta = np.array([0.0, 1.0] * 5)
    reps = SK.boot_means(theta[:, None].copy(), np.uint64(3), 4000)[:, 0]
    ties = np.sum(np.abs(reps - 0.5) < 1e-12)
    assert ties > 400  # about C(10,5)/2^10 = 25% of them
    _, bca, _ = _boot_intervals(theta, reps, 0.95)
    want = naive.bca_interval(list(theta), list(reps), 0.95, 1e-10)
    assert bca == pytest.approx(want, rel=1e-12)
    # symmetric data: with the tie term z0 is exactly 0 only if ties are split evenly
    below = np.sum(reps < 0.5 - 1e-12)
    prop = (below + 0.5 * ties) / reps.size
    assert abs(prop - 0.5) < 0.03


def test_bca_degenerate_cases():
    theta = np.full(10, 0.3)
    pct, bca, why = _boot_intervals(theta, np.full(100, 0.3), 0.95)
    assert pct == (0.3, 0.3)
    assert bca == (0.3, 0.3) and why is None
    theta = np.array([0.0] * 9 + [1.0])
    _, bca, why = _boot_intervals(theta, np.full(50, 0.0), 0.95)
    assert bca is None and "undefined" in why


def test_score_bootstrap_rows_and_seeding():
    rng = np.random.default_rng(4)
    n = np.full(200, 10)
    c = rng.binomial(10, rng.beta(2, 3, 200))
    r1 = passatk.score(n, c, k=[1, 4], interval="bca", seed=123, n_resamples=2000)
    r2 = passatk.score(n, c, k=[1, 4], interval="bca", seed=np.random.default_rng(123),
                       n_resamples=2000)
    r3 = passatk.score(n, c, k=[1, 4], interval="bca", seed=124, n_resamples=2000)
    assert r1.records() == r2.records()
    assert r1.records() != r3.records()
    for row in r1:
        assert (row.ci_method, row.ci_text) == ("bca", "bootstrap BCa")
        assert row.estimand == "super-population"
        assert (row.ci_low, row.ci_high) == (row.bca_low, row.bca_high)
        assert row.percentile_low < row.value < row.percentile_high
        # the bootstrap interval is close to the t interval for 200 tasks
        h = row.se * _dist.t_ppf(0.975, 199)
        assert row.ci_low == pytest.approx(row.value - h, abs=0.25 * h)
        assert row.ci_high == pytest.approx(row.value + h, abs=0.25 * h)
    p = passatk.score(n, c, k=1, interval="percentile", seed=123, n_resamples=2000)[0]
    assert (p.ci_method, p.ci_text) == ("percentile", "bootstrap percentile")
    assert (p.ci_low, p.ci_high) == (
        r1[0].percentile_low, r1[0].percentile_high)
    assert r1.n_resamples == 2000


def test_no_global_random_state_is_touched():
    # read (never seed) NumPy's legacy global generator before and after
    legacy = np.random.mtrand._rand._bit_generator
    before = legacy.state
    passatk.score(np.full(30, 5), np.arange(30) % 6, interval="bca", seed=1, n_resamples=500)
    passatk.compare(np.full(30, 5), np.arange(30) % 6, np.full(30, 5), np.arange(30)[::-1] % 6,
                    seed=2, n_resamples=500)
    passatk.simulate(10, 5, 1.0, 1.0, seed=3)
    after = legacy.state
    assert before["state"]["pos"] == after["state"]["pos"]
    np.testing.assert_array_equal(before["state"]["key"], after["state"]["key"])


def test_bootstrap_speed_budget():
    # B = 10,000 resamples of 1,000 tasks must take well under 0.5 s on one core
    import time

    from passatk._jit import get_num_threads, set_num_threads

    theta = np.random.default_rng(0).random((1000, 1))
    SK.boot_means(theta, np.uint64(1), 10)
    before = get_num_threads()
    set_num_threads(1)
    try:
        t0 = time.perf_counter()
        SK.boot_means(theta, np.uint64(1), 10_000)
        dt = time.perf_counter() - t0
    finally:
        set_num_threads(before)
    assert dt < 0.5
