"""The max-T null of the leaderboard: the joint law of the paired t statistics, drawn exactly
for normal task values, checked against t_{N-1} and against brute-force simulation."""

import numpy as np
import pytest
from scipy import stats as ss

import passatk
from passatk.stats._maxt import max_t_null


def _brute(x, ii, jj, reps, gen):
    """max |t| over the pairs of normal data with the covariance of ``x``, simulated directly."""
    m, size = x.shape
    lam, vec = np.linalg.eigh(np.cov(x))
    root = vec * np.sqrt(np.maximum(lam, 0.0))
    out = np.empty(reps)
    for r in range(reps):
        z = root @ gen.standard_normal((m, size))
        d = z[ii] - z[jj]
        out[r] = np.max(np.abs(d.mean(axis=1) / (d.std(axis=1, ddof=1) / np.sqrt(size))))
    return out


@pytest.mark.parametrize("size", [5, 30])
def test_one_pair_is_t_on_n_minus_1_df(size):
    gen = np.random.default_rng(size)
    x = gen.normal(size=(2, size)) + np.array([[0.0], [0.3]])
    top = max_t_null(x, np.array([0]), np.array([1]), 40_000, gen)
    for q in (0.5, 0.9, 0.95, 0.99):
        want = ss.t.ppf(0.5 + q / 2, size - 1)
        # Monte Carlo sd of a quantile of 40,000 draws: well under 1% here
        assert np.quantile(top, q) == pytest.approx(want, rel=0.03)


@pytest.mark.parametrize("m,size", [(6, 40), (12, 8)])  # Bartlett's triangle; normal rows
def test_many_pairs_match_brute_force(m, size):
    gen = np.random.default_rng(m)
    common = gen.normal(size=size)
    x = 0.8 * common + gen.normal(size=(m, size)) * np.linspace(0.3, 1.5, m)[:, None]
    ii, jj = np.triu_indices(m, 1)
    top = max_t_null(x, ii, jj, 20_000, gen)
    ref = _brute(x, ii, jj, 4000, gen)
    assert ss.ks_2samp(top, ref).pvalue > 1e-3
    for q in (0.5, 0.95):
        assert np.quantile(top, q) == pytest.approx(np.quantile(ref, q), rel=0.04)


def test_scale_and_shift_do_not_matter():
    gen = np.random.default_rng(3)
    x = gen.normal(size=(4, 25))
    ii, jj = np.triu_indices(4, 1)
    a = max_t_null(x, ii, jj, 3000, np.random.default_rng(9))
    b = max_t_null(7.0 * x + 3.0, ii, jj, 3000, np.random.default_rng(9))
    np.testing.assert_allclose(a, b, rtol=1e-9)


def test_pairs_with_equal_rows_are_left_to_the_caller():
    # model 2 is model 0 shifted: their difference has no variance; the other pairs still count
    gen = np.random.default_rng(4)
    x = gen.normal(size=(3, 30))
    x[2] = x[0] + 0.1
    ii, jj = np.array([0, 1]), np.array([1, 2])
    top = max_t_null(x, ii, jj, 5000, gen)
    assert np.isfinite(top).all() and top.min() >= 0


def test_leaderboard_max_t_holds_its_level_under_the_complete_null():
    # 5 equal models with correlated normal task values: the family-wise error is near 5%
    gen = np.random.default_rng(20260106)
    reps, wrong = 300, 0
    ids = [f"t{j}" for j in range(40)]
    for r in range(reps):
        base = gen.normal(0, 1.2, 40)
        runs = {}
        for i in range(5):
            p = 1 / (1 + np.exp(-(base + gen.normal(0, 0.6, 40))))
            runs[f"m{i}"] = (ids, [20] * 40, gen.binomial(20, p))
        lb = passatk.leaderboard(runs, k=1, adjust="max-t", seed=r, n_resamples=1000)
        wrong += any(p.significant for p in lb.pairs)
    # binomial(300, 0.05): sd 1.26 points
    assert 0.015 <= wrong / reps <= 0.085
