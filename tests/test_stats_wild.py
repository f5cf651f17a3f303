"""The wild cluster bootstrap, the few-cluster warnings and withheld interval labels."""

import itertools
import math

import numpy as np
import pytest

import passatk
from passatk.stats import _wild as W


def _cr1_t(y, cl, mu0):
    """CR1 t statistic of H0: mean = mu0, written out plainly."""
    g = np.unique(cl)
    e = y - y.mean()
    s = sum(e[cl == x].sum() ** 2 for x in g)
    se = math.sqrt(len(g) / (len(g) - 1) * s) / y.size
    return (y.mean() - mu0) / se if se > 0 else 0.0


@pytest.mark.parametrize("groups", [3, 4, 12])
def test_wild_p_value_is_the_enumerated_bootstrap(groups):
    rng = np.random.default_rng(groups)
    sizes = rng.integers(2, 9, groups)
    cl = np.repeat(np.arange(groups), sizes)
    y = rng.normal(0.1, 0.3, cl.size) + rng.normal(0, 0.2, groups)[cl]
    pts = W._WEBB if groups < W.WEBB_BELOW else W._RADEMACHER
    wb = W.WildBootstrap(y, cl, pts.size**groups, rng)
    assert wb.v.shape[0] == pts.size**groups  # every pattern, once
    for mu0 in (0.0, 0.05, float(y.mean()) + 0.1):
        t = abs(_cr1_t(y, cl, mu0))
        hits = 0
        for v in itertools.product(pts, repeat=groups):
            ys = mu0 + np.asarray(v)[cl] * (y - mu0)
            hits += abs(_cr1_t(ys, cl, mu0)) >= t * (1 - 1e-12)
        assert wb.p_value(mu0) == pytest.approx(hits / pts.size**groups, abs=1e-15)


def test_wild_interval_ends_are_where_the_test_flips():
    rng = np.random.default_rng(1)
    cl = np.repeat(np.arange(8), [30, 20, 15, 10, 8, 6, 5, 4])
    y = rng.normal(0.05, 0.3, cl.size)
    wb = W.WildBootstrap(y, cl, 5000, rng)
    lo, hi, why = wb.interval(0.95, -1.0, 1.0)
    assert why is None and lo < y.mean() < hi
    assert wb.p_value(lo + 1e-9) > 0.05 >= wb.p_value(lo - 1e-6)
    assert wb.p_value(hi - 1e-9) > 0.05 >= wb.p_value(hi + 1e-6)


def test_compare_and_score_with_few_clusters_warn_and_carry_the_wild_interval():
    rng = np.random.default_rng(2)
    cl = np.repeat(np.arange(6), 20)
    n = np.full(cl.size, 8)
    ca, cb = rng.binomial(8, 0.6, cl.size), rng.binomial(8, 0.5, cl.size)
    row = passatk.compare(n, ca, n, cb, clusters=cl, seed=0, n_resamples=999)[0]
    assert row.wild_weights == "Webb six-point" and row.wild_resamples == 999
    assert row.wild_low < row.diff < row.wild_high and 0 < row.wild_p_value <= 1
    assert "only 6 clusters" in row.reason and row.boot_low is None
    s = passatk.score(n, ca, clusters=cl, interval="cluster", seed=0)[0]
    assert "only 6 clusters" in s.reason and s.wild_low < s.value < s.wild_high
    big = np.arange(cl.size) % 25
    s = passatk.score(n, ca, clusters=big, interval="cluster", seed=0)[0]
    assert s.reason is None and s.wild_weights == "Rademacher"
    r = passatk.compare(n, ca, n, cb, clusters=big, seed=0, n_resamples=999)[0]
    assert r.reason is None and r.boot_low is not None


@pytest.mark.parametrize("interval", ["wilson", "clopper-pearson"])
def test_a_withheld_interval_has_no_method(interval):
    row = passatk.score([10, 10, 10], [2, 5, 9], interval=interval)[0]
    assert row.ci_low is None and row.ci_method is None
    assert "binary outcome" in row.reason
    ok = passatk.score([1] * 5, [1, 0, 1, 1, 0], interval=interval)[0]
    assert ok.ci_method is not None and ok.ci_low is not None
