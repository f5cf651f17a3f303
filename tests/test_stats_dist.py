"""The module's own normal and Student t functions against scipy (a test-only dependency)."""

import math

import numpy as np
import pytest
from scipy import stats as ss

from passatk.stats._dist import _betainc, norm_cdf, norm_ppf, t_cdf, t_ppf

PROBS = [1e-300, 1e-100, 1e-20, 1e-10, 1e-6, 0.001, 0.01, 0.025, 0.05, 0.1, 0.3, 0.4999,
         0.5, 0.5001, 0.7, 0.9, 0.95, 0.975, 0.99, 0.999, 1 - 1e-6, 1 - 1e-10, 1 - 2**-52]
DFS = [1, 2, 3, 4.5, 7, 10, 29, 163, 999, 1e4, 1e6]


@pytest.mark.parametrize("p", PROBS)
def test_norm_ppf_vs_scipy(p):
    want = ss.norm.ppf(p)
    assert norm_ppf(p) == pytest.approx(want, rel=4e-15, abs=0)
    assert norm_cdf(norm_ppf(p)) == pytest.approx(p, rel=1e-13)


def test_norm_edges_and_errors():
    assert norm_ppf(0.0) == -math.inf and norm_ppf(1.0) == math.inf and norm_ppf(0.5) == 0.0
    for bad in (-0.1, 1.1, math.nan):
        with pytest.raises(ValueError, match="p must satisfy"):
            norm_ppf(bad)
    xs = np.linspace(-37, 8, 200)
    np.testing.assert_allclose([norm_cdf(x) for x in xs], ss.norm.cdf(xs), rtol=1e-12)


@pytest.mark.parametrize("df", DFS)
def test_t_cdf_vs_scipy(df):
    ts = [-1e6, -300.0, -40.0, -5.0, -2.0, -0.3, -1e-8, 0.0, 1e-8, 0.7, 1.96, 3.0, 12.0, 1e4]
    for t in ts:
        if df == 1 and abs(t) < 1e-6:  # scipy loses accuracy here; see the Cauchy test
            continue
        want = ss.t.cdf(t, df)
        got = t_cdf(t, df)
        rel = 1e-12 if df < 1e4 else 1e-10  # the continued fraction converges slowly there
        assert got == pytest.approx(want, rel=rel, abs=1e-300), (t, df)


@pytest.mark.parametrize("df", DFS)
def test_t_ppf_vs_scipy(df):
    for p in [1e-12, 1e-6, 0.001, 0.025, 0.05, 0.2, 0.5, 0.8, 0.95, 0.975, 0.999, 1 - 1e-6]:
        want = ss.t.ppf(p, df)
        assert t_ppf(p, df) == pytest.approx(want, rel=1e-11, abs=1e-300), (p, df)


def test_t_edges_and_errors():
    assert t_ppf(0.0, 5) == -math.inf and t_ppf(1.0, 5) == math.inf
    assert t_ppf(0.975, math.inf) == norm_ppf(0.975)
    with pytest.raises(ValueError, match="df must be > 0"):
        t_ppf(0.5, 0)
    with pytest.raises(ValueError, match="df must be > 0"):
        t_cdf(0.5, -1)
    assert math.isnan(t_cdf(math.nan, 3))


@pytest.mark.parametrize(("a", "b"), [(0.5, 0.5), (2.0, 3.0), (50.0, 0.5), (0.5, 5e5), (30, 40)])
def test_betainc_vs_scipy(a, b):
    from scipy.special import betainc

    for x in [1e-9, 0.01, 0.3, 0.5, 0.77, 0.999]:
        assert _betainc(a, b, x, 1 - x) == pytest.approx(betainc(a, b, x), rel=1e-11, abs=1e-300)


def test_t_cdf_cauchy_closed_form():
    for t in [-1e-8, -1e-3, 0.5, 1.0, 30.0]:
        assert t_cdf(t, 1) == pytest.approx(0.5 + math.atan(t) / math.pi, rel=1e-14)


def test_t_huge_df_is_close_to_scipy():
    # the continued fraction loses a few digits at df ~ 1e9; still far below any CI's needs
    for t in (-5.0, -1.0, 2.0):
        assert t_cdf(t, 1e9) == pytest.approx(ss.t.cdf(t, 1e9), rel=1e-7)
    assert t_ppf(0.975, 1e9) == pytest.approx(ss.t.ppf(0.975, 1e9), rel=1e-8)


def test_norm_ppf_subnormal_probabilities():
    # erfc has only a few significant bits down there; any x with Phi(x) ~ p will do
    for p in (1e-310, 5e-324):
        assert norm_ppf(p) == pytest.approx(ss.norm.ppf(p), rel=1e-4)


@pytest.mark.parametrize("df", [1e5, 3e6, 1e9, 1e11, 1e13])
@pytest.mark.parametrize("p", [0.975, 0.025, 0.9999999, 1e-9])
def test_t_ppf_at_large_df_matches_scipy(df, p):
    # the tail integral lost digits past df ~ 1e7 (1e-4 relative at 1e13)
    assert t_ppf(p, df) == pytest.approx(ss.t.ppf(p, df), rel=1e-13)
