"""passatk.compare and the paired tests, against scipy and brute-force enumeration."""

import json
import math

import naive_stats as naive
import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats as ss
from statsmodels.stats.proportion import proportion_confint

import passatk
from passatk.stats import _dist
from passatk.stats import _kernels as SK
from passatk.stats._common import _seed64
from passatk.stats._compare import _boot_t
from passatk.stats._paired import _bh, _holm, mcnemar, signflip_test, wilcoxon_signed_rank

COMPARE_KEYS = {"group", "metric", "k", "diff", "se", "ci_low", "ci_high", "p_value", "tasks"}


def _runs(seed, size=40, n=10):
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 2, size)
    ca = rng.binomial(n, np.clip(p + 0.08, 0, 1))
    cb = rng.binomial(n, p)
    return np.full(size, n), ca, np.full(size, n), cb


def test_paired_t_matches_scipy_ttest_rel():
    na, ca, nb, cb = _runs(0)
    r = passatk.compare(na, ca, nb, cb, k=[1, 3], seed=1, n_resamples=2000)
    for row in r:
        ta = passatk.pass_at_k(na, ca, np.full(40, row.k))
        tb = passatk.pass_at_k(nb, cb, np.full(40, row.k))
        res = ss.ttest_rel(ta, tb)
        assert row.diff == pytest.approx(np.mean(ta - tb), rel=1e-13)
        assert row.t_stat == pytest.approx(res.statistic, rel=1e-11)
        assert row.p_value == pytest.approx(res.pvalue, rel=1e-9)
        ci = res.confidence_interval(0.95)
        assert (row.ci_low, row.ci_high) == pytest.approx((ci.low, ci.high), rel=1e-10)
        assert row.df == 39 and row.tasks == 40
        assert row.value_a - row.value_b == pytest.approx(row.diff, abs=1e-15)
        assert row.mcnemar_p_value is None
        assert row.boot_low < row.diff < row.boot_high
        assert row.band_low <= row.ci_low + 0.02 and row.band_high >= row.ci_high - 0.02


def test_records_have_cli_keys_and_are_json():
    na, ca, nb, cb = _runs(1)
    r = passatk.compare(na, ca, nb, cb, k=[1, 2], seed=0, n_resamples=500,
                        group={"a": "x", "b": "y"})
    for rec in r.records():
        assert COMPARE_KEYS <= set(rec)
        assert rec["group"] == {"a": "x", "b": "y"}
    json.dumps(r.to_dict(), allow_nan=False)


def test_matching_by_id_and_unmatched_tasks():
    ids_a = ["t1", "t2", "t3", "t4", "t5"]
    ids_b = ["t5", "t4", "t3", "t2", "t9"]
    na = [4] * 5
    ca = [1, 2, 3, 4, 0]
    nb = [4] * 5
    cb = [0, 4, 3, 1, 2]
    with pytest.raises(ValueError, match=r"1 only in run A \['t1'\], 1 only in run B \['t9'\]"):
        passatk.compare(na, ca, nb, cb, task_ids_a=ids_a, task_ids_b=ids_b)
    r = passatk.compare(na, ca, nb, cb, task_ids_a=ids_a, task_ids_b=ids_b,
                        unmatched="exclude", seed=0)
    assert r.only_in_a == ("t1",) and r.only_in_b == ("t9",)
    # matched: t2 (2 vs 1), t3 (3 vs 3), t4 (4 vs 4), t5 (0 vs 0)
    assert r[0].tasks == 4
    assert r[0].diff == pytest.approx((0.25 + 0 + 0 + 0) / 4)
    with pytest.raises(TypeError, match="together"):
        passatk.compare(na, ca, nb, cb, task_ids_a=ids_a)
    with pytest.raises(ValueError, match="same length"):
        passatk.compare(na, ca, nb[:4], cb[:4])
    with pytest.raises(ValueError, match="duplicate task ids in run B"):
        passatk.compare(na, ca, nb, cb, task_ids_a=ids_a, task_ids_b=["t1"] * 5)


def test_missing_k_in_compare():
    with pytest.raises(ValueError, match="k=3 exceeds n"):
        passatk.compare([2, 4], [1, 1], [4, 4], [1, 1], k=3)
    r = passatk.compare([2, 4], [1, 1], [4, 4], [1, 1], k=[1, 3], missing="report", seed=0)
    assert r[1].diff is None and "k=3 exceeds n" in r[1].reason
    assert [row.k for row in passatk.compare([2, 4], [1, 1], [4, 4], [1, 1], k="all",
                                             seed=0)] == [1, 2]


@pytest.mark.parametrize("seed", range(6))
def test_exact_signflip_matches_enumeration(seed):
    rng = np.random.default_rng(seed)
    d = rng.integers(-3, 4, size=rng.integers(1, 12)) / 7.0
    p, exact = signflip_test(d)
    assert exact
    assert p == pytest.approx(float(naive.signflip_exact(list(d))), rel=1e-15)


def test_random_signflip_agrees_with_exact():
    rng = np.random.default_rng(8)
    d = rng.normal(0.2, 1.0, 18)
    p_exact, _ = signflip_test(d)
    p_rand, exact = signflip_test(d, exact_max=10, n_resamples=40_000, seed=3)
    assert not exact
    assert p_rand == pytest.approx(p_exact, abs=4 * math.sqrt(p_exact * (1 - p_exact) / 40_000))
    # p-values from random flips are never 0
    p_far, _ = signflip_test(np.full(40, 1.0), n_resamples=999, seed=1)
    assert p_far == pytest.approx(1 / 1000)


@pytest.mark.parametrize("seed", range(5))
def test_wilcoxon_exact_vs_scipy_and_enumeration(seed):
    rng = np.random.default_rng(seed)
    size = int(rng.integers(3, 14))
    d = rng.normal(0.3, 1, size)  # continuous: no ties, no zeros
    w, p, how = wilcoxon_signed_rank(d)
    assert how == "exact"
    res = ss.wilcoxon(d, method="exact")
    assert p == pytest.approx(res.pvalue, rel=1e-12)
    nw, np_ = naive.wilcoxon_exact(list(d))
    assert w == nw and p == pytest.approx(np_, rel=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_wilcoxon_normal_approximation_vs_scipy(seed):
    rng = np.random.default_rng(seed)
    d = rng.integers(-4, 6, size=80) / 4.0  # ties and zeros
    w, p, how = wilcoxon_signed_rank(d)
    assert how == "normal approximation"
    res = ss.wilcoxon(d, method="asymptotic", zero_method="wilcox", correction=False)
    assert p == pytest.approx(res.pvalue, rel=1e-10)
    assert wilcoxon_signed_rank(d, method="approx")[1] == p
    wp = ss.wilcoxon(d, method="asymptotic", alternative="greater")
    assert w == pytest.approx(wp.statistic)


def test_wilcoxon_all_zero():
    assert wilcoxon_signed_rank([0.0, 0.0]) == (0.0, 1.0, "no non-zero differences")


@pytest.mark.parametrize(("b", "c"), [(0, 0), (0, 5), (3, 9), (10, 10), (40, 61), (1000, 1100)])
def test_mcnemar_vs_binomtest(b, c):
    want = 1.0 if b + c == 0 else ss.binomtest(b, b + c, 0.5).pvalue
    assert mcnemar(b, c) == pytest.approx(want, rel=1e-10)


def test_compare_binary_runs_report_mcnemar():
    rng = np.random.default_rng(2)
    ca = rng.integers(0, 2, 60)
    cb = rng.integers(0, 2, 60)
    ones = np.ones(60, dtype=np.int64)
    row = passatk.compare(ones, ca, ones, cb, seed=0, n_resamples=500)[0]
    b = int(np.sum((ca == 1) & (cb == 0)))
    c = int(np.sum((ca == 0) & (cb == 1)))
    assert (row.mcnemar_b, row.mcnemar_c) == (b, c)
    assert row.mcnemar_p_value == pytest.approx(ss.binomtest(b, b + c).pvalue, rel=1e-10)


def test_holm_vs_naive():
    ps = [0.01, 0.04, 0.03, 0.5, 0.001]
    np.testing.assert_allclose(_holm(ps), naive.holm(ps), rtol=1e-15)
    out = _holm([0.2, np.nan, 0.01])
    assert np.isnan(out[1]) and out[2] == pytest.approx(0.02) and out[0] == pytest.approx(0.2)


def test_max_t_band_is_simultaneous_and_wider():
    na, ca, nb, cb = _runs(3, size=120, n=16)
    ks = [1, 2, 4, 8, 16]
    r = passatk.compare(na, ca, nb, cb, k=ks, seed=5, n_resamples=4000)
    crit = r.band_critical_value
    z = _dist.norm_ppf(0.975)
    assert crit > z  # a band over 5 correlated k needs a larger critical value
    assert crit < _dist.norm_ppf(1 - 0.025 / len(ks)) + 0.1  # Bonferroni-ish bound
    for row in r:
        assert row.band_high - row.diff == pytest.approx(crit * row.se, rel=1e-12)
        assert row.diff - row.band_low == pytest.approx(crit * row.se, rel=1e-12)


def test_max_t_band_coverage_under_simulation():
    # Under simulated paired runs with a known true difference at every k, the band covers
    # all k at once about 95% of the time (checked on 200 replicates: >= 88%).
    rng = np.random.default_rng(11)
    ks = [1, 3, 8]
    size, n = 150, 8
    hits = 0
    reps = 200
    for _ in range(reps):
        p = rng.beta(2, 3, size)
        pa = np.clip(p + 0.05, 0, 1)
        ca = rng.binomial(n, pa)
        cb = rng.binomial(n, p)
        r = passatk.compare(np.full(size, n), ca, np.full(size, n), cb, k=ks, seed=rng,
                            n_resamples=1000)
        truth = [np.mean((1 - p) ** k - (1 - pa) ** k) for k in ks]
        hits += all(row.band_low <= t <= row.band_high for row, t in zip(r, truth, strict=True))
    assert hits / reps >= 0.88


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"metric": "posterior"}, ValueError, "metric must be one of"),
        ({"unmatched": "drop"}, ValueError, "unmatched must be one of"),
        ({"confidence": 0}, ValueError, "confidence"),
        ({"n_resamples": 1}, ValueError, "n_resamples must satisfy"),
        ({"group": ["x"]}, TypeError, "group must be a mapping"),
        ({"k": [1, 0]}, ValueError, "index 1"),
    ],
)
def test_compare_validation(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        passatk.compare([4, 4], [1, 2], [4, 4], [2, 2], **kwargs)


def test_wilcoxon_in_compare_sees_float_noise_ties():
    # pass@1 with n = 10: (3 - 1)/10 and (2 - 0)/10 are the same difference, though
    # 0.3 - 0.1 != 0.2 in floating point; they must tie in the ranking
    ca = np.array([3, 2, 5, 7, 9, 4, 6, 8])
    cb = np.array([1, 0, 5, 2, 3, 1, 6, 2])
    n = np.full(8, 10)
    row = passatk.compare(n, ca, n, cb, seed=0)[0]
    d = (ca - cb) / 10  # exact differences as integers over 10
    # issue 11: with ties and few differences the p-value is the exact permutation one
    assert row.wilcoxon_method == "exact"
    assert row.wilcoxon_p_value == pytest.approx(naive.wilcoxon_exact_ties(list(np.round(d * 10))),
                                                 rel=1e-12)
    res = ss.wilcoxon(np.round(d * 10).astype(float), method="asymptotic", correction=False)
    _w, p_approx, how = wilcoxon_signed_rank(np.round(d, 12), method="approx")
    assert how == "normal approximation"
    assert p_approx == pytest.approx(res.pvalue, rel=1e-12)


def test_benjamini_hochberg_vs_scipy():
    rng = np.random.default_rng(0)
    for size in (1, 2, 5, 17):
        ps = rng.random(size) ** 3
        np.testing.assert_allclose(_bh(ps), ss.false_discovery_control(ps), rtol=1e-14)
    out = _bh([0.04, np.nan, 0.01])
    assert np.isnan(out[1]) and out[0] == pytest.approx(0.04) and out[2] == pytest.approx(0.02)


def test_compare_rows_carry_adjusted_p_values():
    na, ca, nb, cb = _runs(4)
    r = passatk.compare(na, ca, nb, cb, k=[1, 2, 5], seed=0, n_resamples=500)
    raw = [row.p_value for row in r]
    np.testing.assert_allclose([row.p_value_holm for row in r], naive.holm(raw), rtol=1e-14)
    np.testing.assert_allclose([row.p_value_bh for row in r], ss.false_discovery_control(raw),
                               rtol=1e-14)


# ------------------------------------------------------------------ issue 11
def test_identical_differences_give_the_exact_p_and_a_real_interval():
    row = passatk.compare([1] * 5, [1] * 5, [1] * 5, [0] * 5, seed=0)[0]
    assert row.p_value == 0.0625 and row.perm_p_value == 0.0625
    assert row.p_value_holm == 0.0625 and row.mcnemar_p_value == pytest.approx(0.0625)
    assert 0 < row.ci_low < 1 == row.ci_high and "sd is 0" in row.reason
    lo, _ = proportion_confint(5, 5, alpha=0.05, method="wilson")  # on (D + 1) / 2
    assert row.ci_low == pytest.approx(2 * lo - 1, abs=1e-12)
    same = passatk.compare([3] * 6, [1] * 6, [3] * 6, [1] * 6, seed=0)[0]
    assert same.p_value == 1.0 and same.ci_low < 0 < same.ci_high


def test_p_value_is_never_zero():
    n = np.full(400, 100)
    row = passatk.compare(n, np.full(400, 99) - np.arange(400) % 2, n, np.arange(400) % 2,
                          seed=0, n_resamples=100)[0]
    assert row.p_value > 0 and row.perm_p_value > 0 and row.wilcoxon_p_value > 0


def test_wilcoxon_exact_with_ties_at_small_n():
    assert wilcoxon_signed_rank([1.0] * 5) == (15.0, 0.0625, "exact")
    rng = np.random.default_rng(8)
    for _ in range(20):
        d = rng.integers(-2, 3, int(rng.integers(2, 11))).astype(float)
        if not d.any():
            continue
        _w, p, how = wilcoxon_signed_rank(d)
        assert how == "exact" and p == pytest.approx(naive.wilcoxon_exact_ties(list(d)),
                                                     rel=1e-12)
    row = passatk.compare([1] * 6, [1, 1, 0, 1, 1, 1], [1] * 6, [0] * 6, seed=0)[0]
    assert "symmetry" in row.wilcoxon_hypothesis and "not mean 0" in row.wilcoxon_hypothesis


@pytest.mark.parametrize("groups", [4, 10])
def test_clustered_compare_is_cr1_on_the_differences(groups):
    rng = np.random.default_rng(groups)
    g = np.repeat(np.arange(groups), 6)
    size = g.size
    u = rng.normal(0, 1, groups)[g]
    pa = 1 / (1 + np.exp(-(u + 0.2 + rng.normal(0, 1, size))))
    pb = 1 / (1 + np.exp(-(u + rng.normal(0, 1, size))))
    n = np.full(size, 10)
    ca, cb = rng.binomial(10, pa), rng.binomial(10, pb)
    ids = np.array([f"t{i:03d}" for i in range(size)])
    perm = rng.permutation(size)
    row = passatk.compare(n, ca, n[perm], cb[perm], task_ids_a=ids, task_ids_b=ids[perm],
                          clusters=[f"c{x}" for x in g], seed=0, n_resamples=500)[0]
    d = (ca - cb) / 10
    fit = sm.OLS(d, np.ones((size, 1))).fit(cov_type="cluster", cov_kwds={"groups": g})
    assert row.se == pytest.approx(fit.bse[0], rel=1e-12)
    assert row.df == groups - 1 and row.clusters == groups and "clustered" in row.estimand
    h = ss.t.ppf(0.975, groups - 1) * row.se
    assert row.ci_high - row.diff == pytest.approx(h, rel=1e-12)
    assert row.p_value == pytest.approx(2 * ss.t.sf(abs(row.diff / row.se), groups - 1),
                                        rel=1e-10)
    assert row.wild_low < row.diff < row.wild_high
    assert "only" in row.reason and "clusters" in row.reason  # below 20 clusters
    if groups < 10:  # issue 22: the cluster pairs bootstrap is not offered below 10 clusters
        assert row.boot_low is None and row.band_low is None
        assert "not offered below 10 clusters" in row.reason
    else:
        assert row.boot_low < row.diff < row.boot_high


def test_studentized_bootstrap_matches_a_direct_computation():
    rng = np.random.default_rng(2)
    size, b = 15, 300
    d = rng.normal(0.1, 0.3, size)
    mat = np.column_stack([d, d**2 - 0.05])
    seed = 12345
    gen = np.random.default_rng(seed)
    s64 = _seed64(np.random.default_rng(seed))
    idx = SK.boot_indices(size, s64, b)
    _, se, tt = _boot_t(mat, None, 0.95, b, gen)
    for j in range(2):
        x = mat[idx, j]
        m = x.mean(axis=1)
        s = x.std(axis=1, ddof=1) / math.sqrt(size)
        assert se[:, j] == pytest.approx(s, rel=1e-9)
        assert tt[:, j] == pytest.approx((m - mat[:, j].mean()) / s, rel=1e-8, abs=1e-10)


def test_band_and_bootstrap_interval_are_studentized_and_bounded():
    rng = np.random.default_rng(1)
    n = np.full(60, 10)
    ca, cb = rng.binomial(10, 0.7, 60), rng.binomial(10, 0.5, 60)
    res = passatk.compare(n, ca, n, cb, k=[1, 3], seed=4, n_resamples=2000)
    for row in res:
        half = res.band_critical_value * row.se
        assert row.band_low == pytest.approx(max(row.diff - half, -1), rel=1e-12)
        assert -1 <= row.boot_low < row.diff < row.boot_high <= 1


def test_differences_equal_up_to_rounding_are_degenerate():
    # 0.6 - 0.2 and 1.0 - 0.6 are both 0.4; their float sd is 4e-17, not a t test
    row = passatk.compare([5, 5], [3, 5], [5, 5], [1, 3], seed=0, n_resamples=50)[0]
    assert row.se == 0.0 and row.t_stat is None and row.p_value == row.perm_p_value == 0.5
    assert row.ci_high - row.ci_low > 0.5 and "sd is 0" in row.reason


def test_exact_wilcoxon_is_capped():
    with pytest.raises(ValueError, match=r"method=.exact..*at most 1000"):
        wilcoxon_signed_rank(np.arange(1, 1002, dtype=float), method="exact")
