"""Property tests for passatk.rl.group_metrics (hypothesis) and batch-level consistency."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import naive_rl as nv
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from passatk import rl
from passatk.rl import _metrics

TOL = 2e-15

score_values = st.sampled_from([-1.0, 0.0, 0.0, 0.5, 1.0, 1.0, 0.125, 2.0])
group = st.lists(st.tuples(score_values, st.sampled_from(["a", "b", "c", None])),
                 min_size=1, max_size=7)


@settings(max_examples=60, deadline=None)
@given(st.lists(group, min_size=1, max_size=4))
def test_matches_enumeration(groups):
    scores = [s for g in groups for s, _ in g]
    answers = [a for g in groups for _, a in g]
    labels = [i for i, g in enumerate(groups) for _ in g]
    ks = list(range(1, 8))
    res = rl.group_metrics(scores, labels, k=ks, metrics="all", threshold=0.5,
                           answers=answers, tau=[0.5, 1.0])
    for i, g in enumerate(groups):
        s = [v for v, _ in g]
        a = [v for _, v in g]
        ok = [v >= 0.5 for v in s]
        for k in range(1, len(s) + 1):
            v = {name: res.values[name][i] for name in res.names}
            assert abs(Fraction(v[f"best@{k}"]) - nv.best_at_k(s, k)) <= TOL * 2
            assert abs(Fraction(v[f"worst@{k}"]) - nv.worst_at_k(s, k)) <= TOL * 2
            assert abs(Fraction(v[f"maj@{k}"]) - nv.maj_at_k(s, a, k)) <= TOL * 2
            assert abs(Fraction(v[f"pass@{k}"]) - nv.pass_at_k(ok, k)) <= TOL
            assert abs(Fraction(v[f"g-pass@{k}_0.5"]) - nv.g_pass_at_k(ok, k, Fraction(1, 2))) \
                <= TOL


@settings(max_examples=80, deadline=None)
@given(st.lists(st.floats(-5, 5, allow_nan=False), min_size=1, max_size=40))
def test_order_statistic_properties(scores):
    n = len(scores)
    res = rl.group_metrics(scores, metrics=["best@k", "worst@k", "mean@n"], k=range(1, n + 1))
    boot = rl.group_metrics(scores, metrics=["best@k", "worst@k"], k=range(1, n + 1),
                            estimator="verl")
    best = [res.values[f"best@{k}"][0] for k in range(1, n + 1)]
    worst = [res.values[f"worst@{k}"][0] for k in range(1, n + 1)]
    slack = 1e-13 * (1 + max(abs(v) for v in scores))
    assert best[0] == pytest.approx(res.values["mean@n"][0], abs=slack)
    assert worst[0] == pytest.approx(res.values["mean@n"][0], abs=slack)
    assert best[-1] == max(scores) or abs(best[-1] - max(scores)) <= slack
    assert abs(worst[-1] - min(scores)) <= slack
    assert all(b2 >= b1 - slack for b1, b2 in itertools.pairwise(best))
    assert all(w2 <= w1 + slack for w1, w2 in itertools.pairwise(worst))
    for k in range(1, n + 1):
        # Drawing with replacement repeats rollouts, so its best@k is never higher.
        assert boot.values[f"best@{k}"][0] <= best[k - 1] + slack
        assert boot.values[f"worst@{k}"][0] >= worst[k - 1] - slack
        assert boot.values[f"best@{k}/std"][0] >= 0.0


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 60), st.data())
def test_pass_family_ordering(n, data):
    c = data.draw(st.integers(0, n))
    x = np.zeros(n)
    x[:c] = 1.0
    res = rl.group_metrics(x, metrics="all", answers=[1] * n, tau=[0.0, 0.5, 1.0],
                           k=range(1, n + 1))
    for k in range(1, n + 1):
        v = {name: res.values[name][0] for name in res.names}
        assert v[f"g-pass@{k}_0.0"] == v[f"pass@{k}"]
        assert v[f"g-pass@{k}_1.0"] == v[f"pass^{k}"]
        assert v[f"pass^{k}"] <= v[f"g-pass@{k}_0.5"] <= v[f"pass@{k}"]
        assert 0.0 <= v[f"mg-pass@{k}"] <= 1.0
        assert v[f"best@{k}"] == pytest.approx(v[f"pass@{k}"], abs=1e-14)
        # one answer for everything: the majority is always it, worth the mean score.
        assert v[f"maj@{k}"] == pytest.approx(c / n, rel=1e-14, abs=1e-300)


def test_batch_equals_one_group_at_a_time_and_the_exact_tail():
    # Many groups of one size share weights and G-Pass values inside the kernel; each must
    # still be exactly what a call with that group alone gives.
    rng = np.random.default_rng(2)
    x = rng.random((200, 8)) < rng.random((200, 1))
    x = x.astype(float)
    x[rng.random((200, 8)) < 0.1] = np.nan
    ans = rng.integers(0, 3, size=(200, 8))
    kw = dict(metrics="all", k=[1, 2, 3, 5, 8], tau=[0.25, 0.75], answers=ans)
    res = rl.group_metrics(x, **kw)
    for g in range(0, 200, 7):
        one = rl.group_metrics(x[g:g + 1], **{**kw, "answers": ans[g:g + 1]})
        for name in res.names:
            np.testing.assert_array_equal(one.values[name], res.values[name][g:g + 1])
    for g in range(200):
        n = int((~np.isnan(x[g])).sum())
        c = int(np.nansum(x[g]))
        for k in [k for k in (1, 2, 3, 5, 8) if k <= n]:
            need = math.ceil(Fraction(3, 4) * k)
            exact = sum(Fraction(math.comb(c, j) * math.comb(n - c, k - j), math.comb(n, k))
                        for j in range(need, min(c, k) + 1))
            assert abs(Fraction(res.values[f"g-pass@{k}_0.75"][g]) - exact) <= TOL


@pytest.mark.parametrize("estimator", ["unbiased", "verl"])
def test_parallel_kernels_equal_serial_bit_for_bit(monkeypatch, estimator):
    rng = np.random.default_rng(9)
    x = rng.random(3000)
    labels = rng.integers(0, 150, size=3000)
    answers = rng.integers(0, 4, size=3000)
    kw = dict(metrics="all", threshold=0.5, answers=answers, estimator=estimator,
              k=[1, 2, 4, 9])
    monkeypatch.setattr(_metrics, "_PARALLEL", 1 << 62)
    monkeypatch.setattr(_metrics, "_PARALLEL_MAJ", 1 << 62)
    serial = rl.group_metrics(x, labels, **kw)
    monkeypatch.setattr(_metrics, "_PARALLEL", 0)
    monkeypatch.setattr(_metrics, "_PARALLEL_MAJ", 0)
    par = rl.group_metrics(x, labels, **kw)
    np.testing.assert_array_equal(par.matrix, serial.matrix)
    assert par.summary() == pytest.approx(serial.summary(), rel=0, abs=0, nan_ok=True)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(score_values, st.sampled_from(["a", "b", "c", None])),
                min_size=1, max_size=5))
def test_verl_estimator_matches_enumeration_of_draws(group):
    s = [v for v, _ in group]
    a = [v for _, v in group]
    ks = [k for k in (1, 2, 3) if k <= len(s)]
    res = rl.group_metrics(s, k=ks, metrics=["best@k", "worst@k", "maj@k"], answers=a,
                           estimator="verl")
    for k in ks:
        for name, (mu, var) in (("best", nv.verl_best_at_k(s, k)),
                                ("worst", nv.verl_worst_at_k(s, k)),
                                ("maj", nv.verl_maj_at_k(s, a, k))):
            assert abs(Fraction(res.values[f"{name}@{k}"][0]) - mu) <= 4 * TOL
            assert abs(res.values[f"{name}@{k}/std"][0] ** 2 - float(var)) <= 16 * TOL
