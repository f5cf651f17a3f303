"""The hierarchical Beta-binomial posterior rows (issue 11, D1)."""

import math

import naive_stats as naive
import numpy as np
import pytest

import passatk
from passatk.stats import _posterior


@pytest.mark.parametrize("n,c,k", [([10] * 5, [0] * 5, 1), ([10] * 5, [0] * 5, 10),
                                   ([5, 8, 10, 3], [2, 8, 1, 0], 3),
                                   ([20] * 30, [i % 21 for i in range(30)], 5)])
def test_population_mean_matches_a_plain_dense_grid(n, c, k):
    row = passatk.score(n, c, k=k, metric="posterior-population")[0]
    want = naive.hier_posterior_grid(n, c, k)
    assert row.value == pytest.approx(want, abs=2e-3)
    assert row.ci_low <= row.value <= row.ci_high
    assert row.se is None and row.posterior_sd > 0 and row.interval == "credible"
    assert "population pass@k" in row.estimand and "hierarchical Beta-binomial" in row.estimand


def test_partial_pooling_removes_the_prior_driven_answers():
    # the audit's example: 5 tasks at 0/10 gave pass@10 = 0.476 under independent U(0,1)
    r = passatk.score([10] * 5, [0] * 5, k=10, metric=["posterior", "posterior-population"])
    assert r[0].value < 0.1 and r[0].ci_low == 0.0
    assert r[1].value < 0.25


def test_large_benchmark_has_no_material_bias():
    rng = np.random.default_rng(0)
    p = rng.beta(2, 5, 1000)
    c = rng.binomial(10, p)
    row = passatk.score(np.full(1000, 10), c, k=1, metric="posterior")[0]
    # the independent-prior version gave 0.317 [0.310, 0.325] with truth 0.276
    assert row.ci_low <= p.mean() <= row.ci_high
    assert abs(row.value - p.mean()) < 0.01


def test_rows_with_k_above_n_are_refused():
    with pytest.raises(ValueError, match=r"cannot report posterior at k=50.*exceeds n"):
        passatk.score([5] * 3, [0] * 3, k=50, metric="posterior")
    row = passatk.score([5] * 3, [0] * 3, k=50, metric="posterior", missing="report")[0]
    assert row.value is None and "exceeds n" in row.reason and row.interval == "credible"


def test_equal_tailed_interval_of_the_task_set_value():
    # for one task with known hyperparameter posterior the mixture quantiles must put
    # alpha/2 of the mixture's mass below the lower end and above the upper end
    n, c, k = np.array([10, 10, 10]), np.array([3, 7, 10]), 2
    w, mean, var, _ = _posterior.fit(n, c, k)
    m, sd, lo, hi = _posterior.summary(n, c, k, 0.9, False)
    sdg = np.sqrt(var)
    def cdf(x):
        return float(np.sum(w * 0.5 * np.vectorize(math.erfc)(-(x - mean) / (sdg * 2**0.5))))
    assert cdf(lo) == pytest.approx(0.05, abs=1e-6) and cdf(hi) == pytest.approx(0.95, abs=1e-6)
    assert m == pytest.approx(float(np.sum(w * mean)), rel=1e-12)
    assert sd == pytest.approx(math.sqrt(float(np.sum(w * (var + (mean - m) ** 2)))), rel=1e-12)


def test_posterior_is_deterministic_and_groupwise():
    n = [10] * 8
    c = [1, 2, 3, 4, 5, 6, 7, 8]
    a = passatk.score(n, c, k=3, metric="posterior")[0]
    b = passatk.score(n + n, c + c, k=3, metric="posterior", groups=[0] * 8 + [1] * 8)
    assert a.value == b[0].value == b[1].value


def test_one_sample_per_task_says_the_spread_is_not_identified():
    r = passatk.score([1] * 30, [1] * 20 + [0] * 10, metric=["posterior", "posterior-population"])
    assert "not identified" in r[0].reason and r[1].reason is None
