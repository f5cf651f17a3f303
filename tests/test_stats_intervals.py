"""Score intervals at the edges (issue 11): degenerate data, bounds, binary benchmarks,
the default interval, per-task intervals and the CR1 clustered SE."""

import math

import numpy as np
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as ss
from statsmodels.stats.proportion import proportion_confint

import passatk
from passatk.stats import task_intervals


# ------------------------------------------------------------------ degenerate data (D2)
@pytest.mark.parametrize("interval", ["t", "percentile", "bca", "cluster", "auto"])
@pytest.mark.parametrize("value_c", [0, 1])
def test_all_equal_binary_values_never_give_a_zero_width_interval(interval, value_c):
    n = np.ones(20, dtype=np.int64)
    c = np.full(20, value_c)
    row = passatk.score(n, c, interval=interval, clusters=np.arange(20) % 4, seed=0,
                        n_resamples=200)[0]
    lo, hi = proportion_confint(20 * value_c, 20, alpha=0.05, method="wilson")
    assert row.ci_low == pytest.approx(lo, abs=1e-12) and row.ci_high == pytest.approx(hi,
                                                                                     abs=1e-12)
    assert row.ci_high - row.ci_low > 0.1
    assert row.interval == "wilson"
    if interval != "auto":  # auto picks Wilson for binary values by design, not as a fallback
        assert "sd is 0" in row.reason and "Wilson" in row.reason


def test_all_equal_non_binary_values_fall_back_to_the_variance_bound():
    row = passatk.score([10] * 8, [5] * 8, interval="t")[0]
    lo, hi = proportion_confint(4, 8, alpha=0.05, method="wilson")  # v(1-v) bound, v = 1/2
    assert (row.ci_low, row.ci_high) == pytest.approx((lo, hi), abs=1e-12)
    assert row.se == 0.0 and "fell back" in row.reason


def test_fixed_interval_with_zero_fixed_se_is_withheld_with_a_reason():
    row = passatk.score([10] * 6, [0, 10, 0, 10, 10, 0], interval="fixed")[0]
    assert row.se == 0.0 and row.ci_low is None and "zero width" in row.reason


# ------------------------------------------------------------------ bounds (D11)
def test_t_interval_is_clipped_and_says_so():
    row = passatk.score([1] * 20, [1] * 19 + [0], interval="t")[0]
    q = ss.t.ppf(0.975, 19) * row.se
    assert row.ci_high == 1.0 and row.ci_low == pytest.approx(0.95 - q, rel=1e-12)
    assert (row.ci_method, row.ci_text) == ("t", "t, clipped to [0, 1]")
    inside = passatk.score([10] * 20, np.arange(20) % 11, interval="t")[0]
    assert inside.ci_method == inside.ci_text == "t"


# ------------------------------------------------------------------ binary benchmarks
@pytest.mark.parametrize("x,size", [(0, 1), (1, 1), (0, 20), (7, 20), (20, 20), (163, 164),
                                    (3, 1000)])
@pytest.mark.parametrize("conf", [0.9, 0.95, 0.99])
def test_clopper_pearson_vs_statsmodels(x, size, conf):
    c = np.r_[np.ones(x, dtype=np.int64), np.zeros(size - x, dtype=np.int64)]
    row = passatk.score(np.ones(size, dtype=np.int64), c, interval="clopper-pearson",
                        confidence=conf)[0]
    lo, hi = proportion_confint(x, size, alpha=1 - conf, method="beta")
    assert row.ci_low == pytest.approx(lo, abs=1e-12) and row.ci_high == pytest.approx(hi,
                                                                                     abs=1e-12)
    assert row.ci_method == "clopper-pearson" and row.ci_text.startswith("Clopper-Pearson")


def test_clopper_pearson_needs_binary_values():
    row = passatk.score([5, 5], [2, 3], interval="clopper-pearson")[0]
    assert row.ci_low is None and "binary" in row.reason


# ------------------------------------------------------------------ the default interval
def _quasi_wilson(v, s2, size, q):
    phi = s2 / (v * (1 - v))
    ne = size / phi
    centre = (v + q * q / (2 * ne)) / (1 + q * q / ne)
    half = q / (1 + q * q / ne) * math.sqrt(v * (1 - v) / ne + q * q / (4 * ne * ne))
    return centre - half, centre + half


@pytest.mark.parametrize("seed", range(4))
def test_auto_is_the_hull_of_t_and_quasi_wilson(seed):
    rng = np.random.default_rng(seed)
    size = int(rng.integers(3, 60))
    n = rng.integers(2, 30, size)
    c = rng.binomial(n, rng.beta(0.7, 0.7, size))
    row = passatk.score(n, c, k=2)[0]
    theta = 1 - (n - c) * (n - c - 1) / (n * (n - 1.0))
    v, s2 = theta.mean(), theta.var(ddof=1)
    if np.all((theta == 0) | (theta == 1)) or s2 == 0:
        pytest.skip("binary or degenerate draw")
    q = ss.t.ppf(0.975, size - 1)
    wlo, whi = _quasi_wilson(v, s2, size, q)
    h = q * math.sqrt(s2 / size)
    assert row.ci_low == pytest.approx(max(min(v - h, wlo), 0.0), abs=1e-12)
    assert row.ci_high == pytest.approx(min(max(v + h, whi), 1.0), abs=1e-12)
    assert row.interval == "auto" and row.ci_low <= row.value <= row.ci_high


def test_auto_uses_wilson_for_binary_values():
    row = passatk.score([1] * 30, [1] * 28 + [0, 0])[0]
    lo, hi = proportion_confint(28, 30, alpha=0.05, method="wilson")
    assert (row.ci_low, row.ci_high) == pytest.approx((lo, hi), abs=1e-12)
    assert row.interval == "wilson" and row.reason is None


# ------------------------------------------------------------------ per-task intervals
@pytest.mark.parametrize("method,sm_method", [("wilson", "wilson"),
                                              ("clopper-pearson", "beta")])
@pytest.mark.parametrize("metric", ["pass@k", "pass^k"])
def test_task_intervals_map_the_interval_for_p(method, sm_method, metric):
    n = np.array([1, 5, 10, 20, 200])
    c = np.array([1, 0, 4, 20, 17])
    k = 3
    r = task_intervals(n, c, k, metric=metric, method=method, confidence=0.9,
                       task_ids=list("abcde"))
    g = (lambda p: 1 - (1 - p) ** k) if metric == "pass@k" else (lambda p: p**k)
    for row, ni, ci in zip(r, n, c, strict=True):
        lo, hi = proportion_confint(ci, ni, alpha=0.1, method=sm_method)
        assert (row.p_low, row.p_high) == pytest.approx((lo, hi), abs=1e-12)
        assert (row.ci_low, row.ci_high) == pytest.approx((g(lo), g(hi)), abs=1e-12)
        assert (row.value is None) == (ni < k)
    assert [row.task for row in r] == list("abcde")
    assert r.records()[0]["reason"].startswith("k=3 exceeds n=1")
    assert r.records()[1]["reason"] is None


def test_task_intervals_cover_exactly_like_the_interval_for_p():
    # exact coverage of g(p) over c ~ Binomial(n, p) equals that of p: g is increasing
    n, k, p = 12, 4, 0.3
    truth = 1 - (1 - p) ** k
    r = task_intervals([n] * (n + 1), list(range(n + 1)), k, method="clopper-pearson")
    cov = sum(ss.binom.pmf(x.c, n, p) for x in r if x.ci_low <= truth <= x.ci_high)
    cov_p = sum(ss.binom.pmf(x.c, n, p) for x in r if x.p_low <= p <= x.p_high)
    assert cov == pytest.approx(cov_p, abs=1e-12) and cov >= 0.95


# ------------------------------------------------------------------ CR1 (D9)
@pytest.mark.parametrize("groups", [3, 5, 10, 40])
def test_clustered_se_is_cr1_like_statsmodels(groups):
    rng = np.random.default_rng(groups)
    g = np.repeat(np.arange(groups), 7)
    p = 1 / (1 + np.exp(-(rng.normal(0, 1, groups)[g] + rng.normal(0, 1, g.size))))
    c = rng.binomial(10, p)
    row = passatk.score(np.full(g.size, 10), c, clusters=g, interval="cluster")[0]
    fit = sm.OLS(c / 10, np.ones((g.size, 1))).fit(cov_type="cluster", cov_kwds={"groups": g})
    assert row.se_cluster == pytest.approx(fit.bse[0], rel=1e-12)
    assert row.clusters == groups and row.ci_method == "cluster-t"
    assert row.ci_text.startswith("t (clusters - 1 df), CR1")
    half = ss.t.ppf(0.975, groups - 1) * row.se
    assert row.ci_high - row.value == pytest.approx(half, rel=1e-12) or row.ci_high == 1.0


def test_singleton_clusters_give_the_super_population_se():
    rng = np.random.default_rng(3)
    n = rng.integers(1, 20, 50)
    c = rng.binomial(n, 0.4)
    row = passatk.score(n, c, clusters=np.arange(50), interval="cluster")[0]
    assert row.se_cluster == pytest.approx(row.se_super, rel=1e-12)


# ------------------------------------------------------------------ labels (D13)
def test_row_and_result_interval_labels():
    r = passatk.score([10, 10, 10], [0, 5, 10], k=1, metric=["pass@k", "posterior"],
                      interval="bca", seed=0, n_resamples=200)
    assert r.interval == "bca" and r[0].interval == "bca"
    assert r[1].interval == "credible" and r[1].se is None and r[1].posterior_sd > 0
    only = passatk.score([10, 10, 10], [0, 5, 10], metric="posterior")
    assert only.interval == "credible"


# ------------------------------------------------------------------ properties
@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 12), st.integers(0, 12)), min_size=1, max_size=25),
       st.sampled_from(["auto", "t", "cluster", "wilson", "clopper-pearson"]),
       st.integers(1, 3))
def test_score_intervals_are_bounded_and_hold_the_estimate(pairs, interval, k):
    n = np.array([a for a, _ in pairs])
    c = np.array([min(b, a) for a, b in pairs])
    n = np.maximum(n, k)
    r = passatk.score(n, c, k=k, interval=interval, clusters=np.arange(n.size) % 3)[0]
    if r.ci_low is None:
        assert r.reason  # never a missing interval without a reason
        return
    assert 0.0 <= r.ci_low <= r.value <= r.ci_high <= 1.0
    if r.tasks >= 2 or interval in ("wilson", "clopper-pearson", "auto"):
        assert r.ci_high > r.ci_low  # never zero width


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=2, max_size=22))
def test_compare_p_values_and_intervals_are_valid(pairs):
    ca = np.array([a for a, _ in pairs])
    cb = np.array([b for _, b in pairs])
    n = np.full(ca.size, 5)
    row = passatk.compare(n, ca, n, cb, k=[1, 2], seed=0, n_resamples=200)[0]
    for p in (row.p_value, row.perm_p_value, row.wilcoxon_p_value, row.p_value_holm):
        assert 0.0 < p <= 1.0
    for lo, hi in ((row.ci_low, row.ci_high), (row.boot_low, row.boot_high),
                   (row.band_low, row.band_high)):
        assert -1.0 <= lo <= row.diff <= hi <= 1.0 and hi > lo


@pytest.mark.parametrize("tasks", [7, 10, 20, 164])
def test_wilson_at_all_correct_and_all_wrong_reaches_the_bound_exactly(tasks):
    # ten all-correct tasks gave ci_high = 0.9999999999999999 < value = 1.0
    full = passatk.score([1] * tasks, [1] * tasks, k=1, interval="wilson")[0]
    none = passatk.score([1] * tasks, [0] * tasks, k=1, interval="wilson")[0]
    assert (full.value, full.ci_high) == (1.0, 1.0)
    assert (none.value, none.ci_low) == (0.0, 0.0)


def test_cluster_interval_with_equal_cluster_means_falls_back_with_its_reason():
    # found by hypothesis: per-task values differ, but the three cluster means are all 0.5
    n, c = np.array([1, 12, 12, 1]), np.array([0, 6, 6, 1])
    r = passatk.score(n, c, k=1, interval="cluster", clusters=np.arange(4) % 3)[0]
    assert r.se == 0.0 and r.ci_low < r.value < r.ci_high
    assert r.reason.startswith("all 3 cluster means equal 0.5, so the clustered se is 0")
