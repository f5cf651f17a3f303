"""G-Pass@k and mG-Pass@k as metrics of ``score`` (issue 11), against exact references."""

import math
from fractions import Fraction

import naive_stats as naive
import numpy as np
import pytest

import passatk
from passatk.stats import _gpass as GP


@pytest.mark.parametrize("tau", [0.1, 0.25, 0.3, 0.5, 0.7, 1.0])
def test_g_pass_matches_k_subset_enumeration(tau):
    for n in range(1, 9):
        for k in range(1, n + 1):
            m = max(math.ceil(Fraction(str(tau)) * k), 1)
            c = np.arange(n + 1)
            rows = passatk.score([n] * (n + 1), c, k=k, metric="g-pass@k", tau=tau,
                                 groups=c, interval="t")
            for row, ci in zip(rows, c, strict=True):
                assert row.value == pytest.approx(float(naive.g_pass_brute(n, int(ci), k, m)),
                                                  abs=1e-13)
                assert row.tau == tau


def test_threshold_reads_tau_as_written():
    assert GP.threshold(0.1, 10) == 1 and GP.threshold(0.3, 10) == 3
    assert GP.threshold(0.7, 10) == 7 and GP.threshold(0.5, 3) == 2
    assert GP.threshold(5 / 7, 7) == 5 and GP.threshold(0.71, 7) == 5


def test_g_pass_at_low_tau_is_pass_at_k_and_at_one_is_pass_hat_k():
    n, c = np.array([10, 12, 7, 20]), np.array([3, 0, 7, 11])
    g_lo = passatk.score(n, c, k=4, metric="g-pass@k", tau=0.01)[0].value
    g_hi = passatk.score(n, c, k=4, metric="g-pass@k", tau=1.0)[0].value
    assert g_lo == pytest.approx(passatk.score(n, c, k=4)[0].value, rel=1e-13)
    assert g_hi == pytest.approx(passatk.score(n, c, k=4, metric="pass^k")[0].value, rel=1e-12)


@pytest.mark.parametrize("k", [1, 2, 3, 4, 7])
def test_mg_pass_is_the_average_of_g_pass_over_i_over_k(k):
    n, c = np.array([10, 12, 7, 20]), np.array([3, 0, 7, 11])
    got = passatk.score(n, c, k=k, metric="mg-pass@k")[0].value
    lo = math.ceil(k / 2) + 1
    want = sum(passatk.score(n, c, k=k, metric="g-pass@k", tau=i / k)[0].value
               for i in range(lo, k + 1)) * 2 / k
    assert got == pytest.approx(want, abs=1e-13)


@pytest.mark.parametrize("metric,tau", [("g-pass@k", 0.5), ("g-pass@k", 0.75),
                                        ("mg-pass@k", 0.5)])
@pytest.mark.parametrize("n,k", [(4, 2), (6, 3), (7, 2), (8, 4)])
def test_vhat_is_unbiased_for_the_exact_variance(metric, tau, n, k):
    f = [Fraction(int(x)) if metric == "g-pass@k" else Fraction(2, k) * max(0, j - math.ceil(k / 2))
         for j, x in enumerate(GP.kernel(metric, k, tau))]
    for p in (Fraction(1, 7), Fraction(1, 2), Fraction(5, 6)):
        mean, var, ev = naive.u_stat_moments(n, k, p, f)
        assert ev == var  # exact, in Fractions
        # and the float kernel agrees with the Fraction one at every c
        c = np.arange(n + 1)
        v = GP.vhat(np.full(n + 1, n), c, k, GP.kernel(metric, k, tau))
        e = GP.estimate(np.full(n + 1, n), c, k, GP.kernel(metric, k, tau))
        ev_float = sum(float(naive.binom_pmf(n, int(ci), p)) * vi for ci, vi in zip(c, v,
                                                                                 strict=True))
        assert ev_float == pytest.approx(float(var), abs=1e-13)
        assert float(mean) == pytest.approx(
            sum(float(naive.binom_pmf(n, int(ci), p)) * ei for ci, ei in zip(c, e, strict=True)),
            abs=1e-13)


def test_g_pass_rows_carry_the_same_standard_errors():
    rng = np.random.default_rng(4)
    n = rng.integers(8, 30, 40)
    c = rng.binomial(n, rng.beta(1, 1, 40))
    row = passatk.score(n, c, k=4, metric="g-pass@k", tau=0.5, clusters=np.arange(40) % 5)[0]
    theta = GP.estimate(n, c, 4, GP.kernel("g-pass@k", 4, 0.5))
    assert row.se_super == pytest.approx(theta.std(ddof=1) / math.sqrt(40), rel=1e-12)
    v = GP.vhat(n, c, 4, GP.kernel("g-pass@k", 4, 0.5))
    assert row.se_fixed == pytest.approx(math.sqrt(v.sum()) / 40, rel=1e-12)
    assert row.se_cluster is not None and row.ci_low <= row.value <= row.ci_high


@pytest.mark.parametrize("tau", [0.0, -0.5, 1.5])
def test_tau_is_validated(tau):
    with pytest.raises(ValueError, match="tau must satisfy 0 < tau <= 1"):
        passatk.score([5], [2], metric="g-pass@k", tau=tau)
    with pytest.raises(TypeError, match="tau must be a float"):
        passatk.score([5], [2], metric="g-pass@k", tau="0.5")
