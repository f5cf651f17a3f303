"""passatk.compare and the paired tests, against scipy and brute-force enumeration."""

import json
import math

import naive_stats as naive
import numpy as np
import pytest
from scipy import stats as ss

import passatk
from passatk.stats import _bh, _holm, mcnemar, signflip_test, wilcoxon_signed_rank

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
    z = passatk.stats.norm_ppf(0.975)
    assert crit > z  # a band over 5 correlated k needs a larger critical value
    assert crit < passatk.stats.norm_ppf(1 - 0.025 / len(ks)) + 0.1  # Bonferroni-ish bound
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
        ({"k": [1, 0]}, ValueError, "position 1"),
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
    w, p_approx, how = wilcoxon_signed_rank(np.round(d, 12), method="approx")
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
