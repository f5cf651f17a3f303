"""Intervals for a mean of values in [0, 1] (the benchmark score), and per-task intervals.

- Wilson score interval for binary outcomes, and its quasi-binomial form for values in
  [0, 1]: (v - theta)^2 = q^2 phi theta (1 - theta) / N, with the dispersion
  phi = s^2 / (v (1 - v)) estimated from the tasks (phi = 1 for binary outcomes, and
  phi <= 1 for any population of values in [0, 1], so phi = 1 is the conservative bound).
- Clopper-Pearson for binary outcomes (the Beta quantiles, by bisection on I_x(a, b)).
- The default ``"auto"`` interval, chosen by the coverage simulation in docs/statistics.md:
  Wilson for binary per-task values; otherwise the hull of the t interval and the
  quasi-binomial Wilson interval (t quantile), within [0, 1].
"""

from __future__ import annotations

import math

import numpy as np

from ._dist import _betainc, norm_ppf, t_ppf

LABELS = {
    "wilson": "Wilson score (binary outcomes)",
    "clopper-pearson": "Clopper-Pearson exact (binary outcomes)",
    "auto": "hull of t and quasi-binomial Wilson (t quantile), within [0, 1]",
    "fallback": "Wilson score with the [0, 1] variance bound (degenerate data)",
}


def wilson(v, size, q, phi=1.0):
    """Wilson score interval for a mean v of ``size`` outcomes, quantile q, dispersion phi."""
    ne = size / phi
    q2 = q * q
    centre = (v + q2 / (2 * ne)) / (1 + q2 / ne)
    half = q / (1 + q2 / ne) * math.sqrt(max(v * (1 - v), 0.0) / ne + q2 / (4 * ne * ne))
    # at v = 0 or 1 the bound on that side is exactly v; rounding would leave it an ulp inside
    low = 0.0 if v <= 0.0 else max(centre - half, 0.0)
    high = 1.0 if v >= 1.0 else min(centre + half, 1.0)
    return low, high


def beta_ppf(p, a, b):
    """The p-quantile of Beta(a, b), by bisection on the regularized incomplete beta."""
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if _betainc(a, b, mid, 1.0 - mid) < p:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def clopper_pearson(x, size, confidence):
    """Clopper-Pearson interval for x successes in ``size`` binary trials."""
    alpha = 1.0 - confidence
    lo = 0.0 if x == 0 else beta_ppf(alpha / 2, x, size - x + 1)
    hi = 1.0 if x == size else beta_ppf(1 - alpha / 2, x + 1, size - x)
    return lo, hi


def clip(lo, hi, low=0.0, high=1.0):
    """(lo, hi) within [low, high], and whether anything was cut off."""
    return max(lo, low), min(hi, high), lo < low or hi > high


def fallback(value, size, confidence, what=None):
    """The interval for all-equal per-task values (sd = 0), and the reason that says so."""
    lo, hi = wilson(value, size, norm_ppf(0.5 + confidence / 2))
    what = what or f"all {size} per-task estimates equal {value:.6g}, so their sd is 0"
    reason = (f"{what} and a t or bootstrap interval would have zero width; fell back to the "
              f"Wilson score "
              f"interval with the largest variance values in [0, 1] allow, v(1-v) (exactly "
              f"Wilson for binary outcomes)")
    return lo, hi, reason


def binary(theta):
    return bool(np.all((theta == 0.0) | (theta == 1.0)))


def auto(theta, value, s2, size, confidence):
    """The default interval: (lo, hi, ci_method, interval name)."""
    if binary(theta):
        lo, hi = wilson(value, size, norm_ppf(0.5 + confidence / 2))
        return lo, hi, LABELS["wilson"], "wilson"
    q = t_ppf(0.5 + confidence / 2, size - 1)
    h = q * math.sqrt(s2 / size)
    phi = s2 / (value * (1.0 - value))
    wlo, whi = wilson(value, size, q, phi)
    lo, hi, _ = clip(min(value - h, wlo), max(value + h, whi))
    return lo, hi, LABELS["auto"], "auto"


def binary_interval(theta, size, confidence, interval):
    """Wilson or Clopper-Pearson on binary per-task values: (lo, hi, reason)."""
    if not binary(theta):
        return None, None, (f"the {interval} interval needs a binary outcome per task (e.g. "
                            f"n=1 and k=1); these per-task estimates are not all 0 or 1")
    x = int(np.sum(theta))
    if interval == "wilson":
        lo, hi = wilson(x / size, size, norm_ppf(0.5 + confidence / 2))
    else:
        lo, hi = clopper_pearson(x, size, confidence)
    return lo, hi, None
