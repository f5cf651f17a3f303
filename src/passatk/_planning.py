"""Power of the paired (one-sample) t test, by the noncentral t distribution.

With N tasks, the test statistic of ``compare`` is T = mean(D) / (sd(D) / sqrt(N)) on
N - 1 df. Under a true mean difference delta it is noncentral t with df = N - 1 and
noncentrality lambda = delta sqrt(N) / sigma_D. Writing T = (Z + lambda) / S with
S = sqrt(V / df), V ~ chi^2_df, the two-sided power at critical value c is

    power = E_S[ Phi(lambda - c S) + Phi(-lambda - c S) ],

an integral over the density of S, computed by Gauss-Legendre quadrature on the range
that holds its mass (this is what statsmodels' ``TTestPower`` computes with scipy's nct).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from . import stats as _S

_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(120)
_erfc = np.frompyfunc(math.erfc, 1, 1)


def _phi(x):
    return 0.5 * np.asarray(_erfc(-np.asarray(x) / math.sqrt(2.0)), dtype=np.float64)


def _s_range(df):
    sd = 1.0 / math.sqrt(2.0 * df)
    lo = max(0.0, 1.0 - 14.0 * sd)
    hi = 1.0 + 14.0 * sd if df >= 8 else 1.0 + 14.0 * sd + 6.0
    return lo, hi


def power(effect, n_tasks, alpha):
    """Two-sided power of the one-sample t test: effect = delta / sigma_D, N = n_tasks."""
    df = n_tasks - 1
    lam = effect * math.sqrt(n_tasks)
    crit = _S.t_ppf(1.0 - alpha / 2.0, df)
    lo, hi = _s_range(df)
    # Phi(lambda - c s) steps from 1 to 0 over a width 1/c around s0 = lambda / c: cut the
    # range there so that each piece is smooth at the scale of its nodes
    s0, width = abs(lam) / crit, 1.0 / crit
    cuts = {lo, hi, *(min(max(s0 + j * width, lo), hi) for j in (-8, -2, 2, 8))}
    edges = sorted(cuts)
    s = np.concatenate([0.5 * (b - a) * _NODES + 0.5 * (b + a)
                        for a, b in itertools.pairwise(edges)])
    w = np.concatenate([0.5 * (b - a) * _WEIGHTS
                        for a, b in itertools.pairwise(edges)])
    # density of S = sqrt(chi2_df / df), in logs
    logc = (0.5 * df * math.log(df) - (0.5 * df - 1.0) * math.log(2.0)
            - math.lgamma(0.5 * df))
    with np.errstate(divide="ignore"):
        dens = np.exp(logc + (df - 1.0) * np.log(s) - 0.5 * df * s * s)
    tails = _phi(lam - crit * s) + _phi(-lam - crit * s)
    return float(min(np.sum(w * dens * tails), 1.0))


def tasks_for_power(effect, alpha, target):
    """The smallest N >= 2 whose two-sided t test has power >= target."""
    z = _S.norm_ppf(1 - alpha / 2) + _S.norm_ppf(target)
    n = max(math.ceil((z / effect) ** 2), 2)
    while power(effect, n, alpha) < target:
        n += 1
    while n > 2 and power(effect, n - 1, alpha) >= target:
        n -= 1
    return n


def effect_for_power(n_tasks, alpha, target):
    """The effect delta / sigma_D that the t test on N tasks detects with power ``target``."""
    lo, hi = 0.0, 1.0
    while power(hi, n_tasks, alpha) < target:
        lo, hi = hi, 2.0 * hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if power(mid, n_tasks, alpha) < target:
            lo = mid
        else:
            hi = mid
    return hi
