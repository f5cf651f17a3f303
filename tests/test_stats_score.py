"""Aggregation, standard errors and result objects of passatk.score."""

import json
import math
import sys
from fractions import Fraction

import naive_stats as naive
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import passatk
from passatk import reference
from passatk.stats import _dist, task_variance
from passatk.stats._task import _exact_task_var

SCORE_KEYS = {"group", "metric", "k", "value", "se", "ci_low", "ci_high", "tasks", "samples",
              "reason", "estimand", "ci_method"}


# ------------------------------------------------------------------ documented examples
def test_tutorial_example_n5_c2():
    r = passatk.score([5], [2], k="all")
    assert [row.k for row in r] == [1, 2, 3, 4, 5]
    assert [row.value for row in r] == [0.4, 0.7, 0.9, 1.0, 1.0]
    # one task: no super-population SE, and the reason says why
    assert r[0].se is None and "at least 2 tasks" in r[0].reason
    # fixed-benchmark variance: k=1 is phat(1-phat)/(n-1) = 0.06; k=3 has n < 2k
    assert r[0].se_fixed == pytest.approx(math.sqrt(0.06), rel=1e-15)
    assert r[1].se_fixed == pytest.approx(math.sqrt(float(naive.vhat_exact("pass@k", 5, 2, 2))))
    assert r[2].se_fixed is None
    assert "no unbiased estimate" in r[2].se_fixed_reason and "2k = 6" in r[2].se_fixed_reason


@pytest.mark.parametrize(("p", "pp"), [(0.5, 3.9), (0.84, 2.9), (0.9, 2.3)])
def test_humaneval_se_example(p, pp):
    n_tasks = 164
    correct = round(p * n_tasks)
    c = np.zeros(n_tasks, dtype=np.int64)
    c[:correct] = 1
    row = passatk.score(np.ones(n_tasks, dtype=np.int64), c, k=1)[0]
    assert round(100 * row.se, 1) == pp
    assert row.se == pytest.approx(np.std(c, ddof=1) / math.sqrt(n_tasks), rel=1e-13)
    assert row.estimand == "super-population"


# ------------------------------------------------------------------ exactness
@pytest.mark.parametrize("metric", ["pass@k", "pass^k"])
@pytest.mark.parametrize(("n", "k"), [(2, 1), (4, 2), (5, 2), (6, 3), (7, 2), (9, 4), (10, 3)])
@pytest.mark.parametrize("p", [Fraction(1, 3), Fraction(7, 10), Fraction(1, 20)])
def test_vhat_is_unbiased_for_exact_variance(metric, n, k, p):
    mean, var, ev = naive.estimator_moments(metric, n, k, p)
    target = 1 - (1 - p) ** k if metric == "pass@k" else p**k
    assert mean == target  # unbiased estimator
    assert ev == var  # E[Vhat] == Var, exactly
    assert var == naive.hoeffding_var(n, k, p, metric)  # Hoeffding's closed form
    got = _exact_task_var(float(p), n, k, metric)
    assert float(got) == pytest.approx(float(var), rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("metric", ["pass@k", "pass^k"])
def test_task_variance_matches_fractions_on_grid(metric):
    for n in range(2, 19):
        for k in range(1, n // 2 + 1):
            c = np.arange(n + 1)
            got = task_variance(np.full(n + 1, n), c, k, metric=metric)
            want = [float(naive.vhat_exact(metric, n, int(ci), k)) for ci in c]
            assert np.all(got >= 0)
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-17)
    got = task_variance([5, 6], [2, 2], 3)
    assert np.isnan(got[0]) and not np.isnan(got[1])


def test_exact_variance_statistics_md_figures():
    # one task's pass@10 at p = 0.1 has sd 0.48 at n = 10 and 0.083 at n = 200
    assert math.sqrt(_exact_task_var(0.1, 10, 10)) == pytest.approx(0.48, abs=0.005)
    assert math.sqrt(_exact_task_var(0.1, 200, 10)) == pytest.approx(0.083, abs=0.0005)


def test_plugin_is_labelled_biased_and_matches_statistics_md():
    r = passatk.score([10, 10], [2, 2], k=3, metric=["pass@k", "plugin"])
    assert r[0].value == pytest.approx(8 / 15, rel=1e-15) and not r[0].biased
    assert round(r[1].value, 3) == 0.488 and r[1].biased
    assert "biased" in r[1].estimand
    assert r[1].se_fixed is None and "biased" in r[1].se_fixed_reason


def test_score_values_and_ses_match_naive_on_random_ragged_data():
    rng = np.random.default_rng(11)
    n = rng.integers(6, 30, size=40)
    c = rng.binomial(n, rng.beta(1, 2, size=40))
    cl = rng.integers(0, 7, size=40)
    ks = [1, 2, 3]
    for metric in ("pass@k", "pass^k"):
        r = passatk.score(n, c, k=ks, metric=metric, clusters=cl, interval="cluster")
        for row, k in zip(r, ks, strict=True):
            est = [float(naive.estimate(metric, int(a), int(b), k)) for a, b in zip(n, c,
                                                                                  strict=True)]
            v = [float(naive.vhat_exact(metric, int(a), int(b), k)) for a, b in zip(n, c,
                                                                                 strict=True)]
            assert row.value == pytest.approx(naive.mean(est), rel=1e-13)
            assert row.se_super == pytest.approx(naive.se_super(est), rel=1e-11)
            assert row.se_fixed == pytest.approx(math.sqrt(math.fsum(v)) / len(v), rel=1e-11)
            assert row.se_cluster == pytest.approx(naive.se_cluster(est, list(cl)), rel=1e-11)
            assert row.se == row.se_cluster and row.clusters == len(set(cl.tolist()))
            q = _dist.t_ppf(0.975, row.clusters - 1)
            assert row.ci_high - row.value == pytest.approx(q * row.se, rel=1e-12)
            sb2 = max(row.se_super**2 * len(est) - naive.mean(v), 0.0)
            assert row.sd_between == pytest.approx(math.sqrt(sb2), rel=1e-9)


def test_t_and_fixed_intervals():
    n = np.full(30, 10)
    c = np.arange(30) % 11
    t_row = passatk.score(n, c, k=2, interval="t")[0]
    f_row = passatk.score(n, c, k=2, interval="fixed", confidence=0.9)[0]
    assert t_row.ci_method == "t" and t_row.estimand == "super-population"
    assert t_row.ci_high - t_row.value == pytest.approx(
        _dist.t_ppf(0.975, 29) * t_row.se_super, rel=1e-13)
    assert f_row.estimand == "fixed-benchmark" and f_row.se == f_row.se_fixed
    assert f_row.ci_high - f_row.value == pytest.approx(
        _dist.norm_ppf(0.95) * f_row.se_fixed, rel=1e-13)
    # fixed interval unavailable when n < 2k: value kept, se None, reason given
    g = passatk.score(n, c, k=6, interval="fixed")[0]
    assert g.value is not None and g.se is None and g.ci_low is None
    assert "no unbiased estimate" in g.reason


# ------------------------------------------------------------------ groups, ids, missing
def test_groups_match_a_loop_over_labels():
    rng = np.random.default_rng(3)
    size = 300
    model = rng.choice(["m1", "m2", "m3"], size)
    temp = rng.choice([0.2, 0.8], size)
    n = rng.integers(4, 12, size)
    c = rng.binomial(n, 0.4)
    r = passatk.score(n, c, k=[1, 3], groups={"model": model, "temperature": temp})
    expected = []
    for m in sorted(set(model.tolist())):
        for t in sorted(set(temp.tolist())):
            sel = (model == m) & (temp == t)
            if not sel.any():
                continue
            for k in (1, 3):
                est = [float(reference.pass_at_k_exact(int(a), int(b), k))
                       for a, b in zip(n[sel], c[sel], strict=True)]
                expected.append(({"model": m, "temperature": t}, k, naive.mean(est),
                                 int(sel.sum()), int(n[sel].sum())))
    assert len(r) == len(expected)
    for row, (g, k, v, tasks, samples) in zip(r, expected, strict=True):
        assert row.group == g and row.k == k and row.tasks == tasks and row.samples == samples
        assert row.value == pytest.approx(v, rel=1e-13)
    assert isinstance(r[0].group["model"], str) and isinstance(r[0].group["temperature"], float)


def test_single_label_column_is_named_group():
    r = passatk.score([3, 3, 3], [1, 2, 3], groups=["a", "b", "a"])
    assert [row.group for row in r] == [{"group": "a"}, {"group": "b"}]
    assert r[0].value == pytest.approx((1 / 3 + 1) / 2)


def test_k_above_n_raises_naming_tasks_or_reports():
    n = [5, 3, 8, 2]
    c = [1, 1, 1, 1]
    with pytest.raises(ValueError, match=r"k=4 exceeds n for 2 of 4 tasks.*\['t1', 't3'\]"):
        passatk.score(n, c, k=4, task_ids=["t0", "t1", "t2", "t3"])
    with pytest.raises(ValueError, match=r"task positions \[1, 3\]"):
        passatk.score(n, c, k=[1, 4])
    r = passatk.score(n, c, k=[2, 4], missing="report")
    assert r[0].value is not None and r[0].reason is None
    assert r[1].value is None and r[1].se is None and r[1].ci_low is None
    assert "k=4 exceeds n" in r[1].reason
    rec = r.records()[1]
    assert rec["value"] is None and rec["reason"]


def test_k_all_uses_each_groups_min_n():
    r = passatk.score([3, 4, 6, 6], [1, 1, 2, 6], k="all", groups=["x", "x", "y", "y"])
    assert [(row.group["group"], row.k) for row in r] == (
        [("x", 1), ("x", 2), ("x", 3)] + [("y", k) for k in range(1, 7)])
    curve = passatk.pass_at_k_curve([6, 6], [2, 6]).mean(axis=0)
    np.testing.assert_allclose([row.value for row in r[3:]], curve, rtol=1e-15)


def test_duplicate_ids_raise_or_merge():
    ids = ["a", "b", "a", "c"]
    with pytest.raises(ValueError, match=r"duplicate task ids.*\['a'\].*duplicates='merge'"):
        passatk.score([4, 4, 4, 4], [1, 2, 3, 4], task_ids=ids)
    r = passatk.score([4, 4, 4, 4], [1, 2, 3, 4], task_ids=ids, duplicates="merge", k=[1, 5],
                      missing="report")
    # a: n=8, c=4; b: n=4, c=2; c: n=4, c=4 -- k=5 exceeds n for b and c
    assert r[1].value is None and "['b', 'c']" in r[1].reason
    assert r.merged_duplicates == (({}, "a"),)
    assert r[0].tasks == 3 and r[0].samples == 16
    assert r[0].value == pytest.approx((0.5 + 0.5 + 1.0) / 3)
    # duplicates are judged per group: the same id in two groups is fine
    r2 = passatk.score([4, 4], [1, 2], task_ids=["a", "a"], groups=["g1", "g2"])
    assert len(r2) == 2


# ------------------------------------------------------------------ Bayesian
def test_bayes_at_n_formula():
    n = np.array([10, 4, 7])
    c = np.array([3, 4, 0])
    row = passatk.score(n, c, metric="bayes@n")[0]
    pt = (c + 1) / (n + 2)
    assert row.value == pytest.approx(pt.mean(), rel=1e-15)
    # issue 11: a posterior sd is not an SE; it sits in posterior_sd
    assert row.se is None
    assert row.posterior_sd == pytest.approx(math.sqrt(np.sum(pt * (1 - pt) / (n + 3))) / 3,
                                             rel=1e-14)
    assert "Bayes@N" in row.estimand and "no pooling" in row.estimand
    assert [row.k for row in passatk.score(n, c, k="all", metric="bayes@n")] == [1]
    with pytest.raises(ValueError, match=r"bayes@n.*k=1"):
        passatk.score(n, c, k=2, metric="bayes@n")


# ------------------------------------------------------------------ results
def test_records_are_json_ready_with_the_cli_keys():
    r = passatk.score([5, 5, 6], [1, 5, 0], k=[1, 3], groups={"model": ["x", "x", "x"]},
                      missing="report")
    recs = r.records()
    for rec in recs:
        assert SCORE_KEYS <= set(rec)
    json.dumps(r.to_dict(), allow_nan=False)
    assert recs[0]["group"] == {"model": "x"} and recs[0]["tasks"] == 3
    assert recs[0]["samples"] == 16
    d = r.to_dict()
    assert (d["schema"], d["command"]) == (1, "score") and d["rows"] == recs
    with pytest.raises(AttributeError):
        r.rows[0].value = 1.0  # frozen


def test_to_pandas_without_pandas_raises_clear_importerror(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    r = passatk.score([5], [2])
    with pytest.raises(ImportError, match="to_pandas\\(\\) needs pandas"):
        r.to_pandas()


def test_to_pandas_when_available():
    pd = pytest.importorskip("pandas")
    df = passatk.score([5, 5], [1, 2], k=[1, 2], groups={"model": ["a", "b"]}).to_pandas()
    assert isinstance(df, pd.DataFrame) and list(df["model"]) == ["a", "a", "b", "b"]


# ------------------------------------------------------------------ validation
@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"n": [5.0], "c": [2]}, TypeError, "n must be an integer or an array of integers"),
        ({"n": [5], "c": [True]}, TypeError, "c must be an integer or an array of integers"),
        ({"n": [5, 5], "c": [2]}, ValueError, "same length"),
        ({"n": [5, 0], "c": [2, 0]}, ValueError, r"n must satisfy 1 <= n.*index 1"),
        ({"n": [5, 4], "c": [2, 7]}, ValueError, r"c must satisfy c <= n \(more correct "
                                                 r"samples than samples\); got n=4, c=7 at "
                                                 r"index 1"),
        ({"k": 0}, ValueError, r"k must satisfy k >= 1, got k=0"),
        ({"k": 1.5}, TypeError, "k must be an int"),
        ({"k": "some"}, ValueError, "'all'"),
        ({"metric": "pass@x"}, ValueError, "metric must be one of"),
        ({"interval": "cluster"}, ValueError, "needs cluster labels"),
        ({"confidence": 1.5}, ValueError, "confidence must satisfy"),
        ({"missing": "drop"}, ValueError, "missing must be one of"),
        ({"duplicates": 3}, TypeError, "duplicates must be a str"),
        ({"seed": 1.5}, TypeError, "seed must be"),
        ({"prior": (0, 1)}, ValueError, "prior alpha0 must be"),
        ({"task_ids": ["a"]}, ValueError, "task_ids must have one entry per task"),
        ({"groups": {"m": ["a"]}}, ValueError, r"groups\['m'\] must have one entry"),
        ({"n": [[5]], "c": [[2]]}, ValueError, "1-dimensional"),
        ({"n": [], "c": []}, ValueError, "at least one task"),
    ],
)
def test_validation_messages(kwargs, exc, match):
    args = {"n": [5, 5], "c": [2, 3]}
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        passatk.score(args.pop("n"), args.pop("c"), **args)


# ------------------------------------------------------------------ more intervals and inputs
@pytest.mark.parametrize(("x", "size"), [(0, 10), (3, 10), (9, 12), (148, 164), (20, 20)])
def test_wilson_interval_vs_scipy(x, size):
    from scipy import stats as ss

    c = np.zeros(size, dtype=np.int64)
    c[:x] = 1
    row = passatk.score(np.ones(size, dtype=np.int64), c, interval="wilson", confidence=0.9)[0]
    ci = ss.binomtest(x, size).proportion_ci(confidence_level=0.9, method="wilson")
    assert (row.ci_low, row.ci_high) == pytest.approx((ci.low, ci.high), rel=1e-12, abs=1e-15)
    assert row.ci_method == "wilson" and row.ci_text.startswith("Wilson")


def test_wilson_needs_binary_outcomes():
    row = passatk.score([5, 5], [2, 3], interval="wilson")[0]
    assert row.ci_low is None and "binary" in row.reason


class _Frame:
    """The two things score() uses of a DataFrame: .columns and [column]."""

    def __init__(self, cols):
        self._cols = cols
        self.columns = list(cols)

    def __getitem__(self, key):
        return self._cols[key]


def test_groups_from_a_dataframe_like():
    frame = _Frame({"model": ["a", "b", "a"], "run": [1, 1, 2]})
    r = passatk.score([3, 3, 3], [1, 2, 3], groups=frame)
    assert [row.group for row in r] == [{"model": "a", "run": 1}, {"model": "a", "run": 2},
                                       {"model": "b", "run": 1}]


def test_to_pandas_flattens_groups(monkeypatch):
    import types

    captured = {}

    class DataFrame:
        @classmethod
        def from_records(cls, records):
            captured["records"] = records
            return "frame"

    monkeypatch.setitem(sys.modules, "pandas", types.SimpleNamespace(DataFrame=DataFrame))
    r = passatk.score([3, 3], [1, 2], groups={"model": ["a", "b"], "k": [0, 0]})
    assert r.to_pandas() == "frame"
    first = captured["records"][0]
    assert first["model"] == "a" and first["group_k"] == 0 and first["k"] == 1
    assert "group" not in first


def test_mixed_type_ids_are_a_type_error():
    with pytest.raises(TypeError, match="task ids must be comparable"):
        passatk.score([3, 3], [1, 2], task_ids=np.array([1, "a"], dtype=object))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 12), st.integers(0, 12)), min_size=2, max_size=15),
       st.integers(1, 6))
def test_property_score_matches_naive(pairs, k):
    n = np.array([a for a, _ in pairs])
    c = np.array([min(b, a) for a, b in pairs])
    if k > n.min():
        with pytest.raises(ValueError, match="exceeds n"):
            passatk.score(n, c, k=k)
        return
    row = passatk.score(n, c, k=k)[0]
    est = [float(reference.pass_at_k_exact(int(a), int(b), k)) for a, b in zip(n, c,
                                                                              strict=True)]
    assert row.value == pytest.approx(naive.mean(est), rel=1e-13, abs=1e-15)
    assert row.se == pytest.approx(naive.se_super(est), rel=1e-9, abs=1e-15)
    if n.min() >= 2 * k:
        v = [float(naive.vhat_exact("pass@k", int(a), int(b), k)) for a, b in zip(n, c,
                                                                                   strict=True)]
        assert row.se_fixed == pytest.approx(math.sqrt(math.fsum(v)) / len(v), rel=1e-9,
                                             abs=1e-15)
    else:
        assert row.se_fixed is None
    # the order of the tasks does not matter
    perm = np.random.default_rng(0).permutation(n.size)
    again = passatk.score(n[perm], c[perm], k=k)[0]
    assert again.value == pytest.approx(row.value, rel=1e-14, abs=1e-15)


@pytest.mark.parametrize("metric", ["pass@k", "pass^k"])
def test_task_variance_keeps_relative_accuracy_at_large_n(metric):
    # P0^2 - P0(n,c,2k) cancels when n >> c, k; the exact-ratio path must not lose digits
    cases = [(10**6, 1, 2), (10**6, 3, 10), (10**7, 2, 5), (5 * 10**5, 40, 30), (2000, 1, 7),
             (10**6, 10**6 - 2, 4), (300, 10, 3), (10**6, 7, 1)]
    for n, c, k in cases:
        if metric == "pass^k":
            c = n - c  # the same cancellation for pass^k
        got = task_variance([n], [c], k, metric=metric)[0]
        want = float(naive.vhat_exact(metric, n, c, k))
        assert got == pytest.approx(want, rel=1e-12), (n, c, k)
