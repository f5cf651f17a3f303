"""G-Pass@k and mG-Pass@k per task, for the statistics layer (``score``).

(Liu et al. 2024, arXiv 2412.13147.) With J the number of correct samples among k drawn
without replacement from a task's n samples (c correct), J is hypergeometric and

- G-Pass@k_tau = P(J >= ceil(tau k)) = sum_{j >= ceil(tau k)} C(c,j) C(n-c,k-j) / C(n,k);
- mG-Pass@k = (2/k) sum_{i = ceil(k/2)+1}^{k} G-Pass@k_{i/k} = E[f(J)] with
  f(j) = (2/k) max(0, j - ceil(k/2)).

Both are U-statistics of degree k (the mean of a kernel over all k-subsets), so they are
unbiased for their population value. The unbiased estimate of the variance of such an
estimate (n >= 2k) is Vhat = thetahat^2 - U2, where U2 averages f(J1) f(J2) over pairs of
disjoint k-subsets: P(J1 = j1, J2 = j2) = C(c,j1) C(n-c,k-j1) C(c-j1,j2) C(n-c-k+j1,k-j2)
/ (C(n,k) C(n-k,k)). The terms are formed in logs (lgamma); the relative error is about
1e-12 for n up to 1e4.

This module is the statistics layer's own kernel; ``passatk.rl`` has a separate one.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ._dist import _lgamma


def threshold(tau, k):
    """ceil(tau k), at least 1; a product within rounding of an integer is that integer.

    0.1 * 10 and (5/7) * 7 are 1 and 5 although their floats lie just above.
    """
    x = Fraction(float(tau)) * k
    r = round(x)
    if abs(x - r) <= Fraction(1, 10**9) * max(k, 1):
        return max(int(r), 1)
    return max(math.ceil(x), 1)


def kernel(metric, k, tau):
    """f(j) for j = 0..k: the value of one k-subset with j correct samples."""
    j = np.arange(k + 1, dtype=np.float64)
    if metric == "g-pass@k":
        return (j >= threshold(tau, k)).astype(np.float64)
    return 2.0 / k * np.maximum(0.0, j - math.ceil(k / 2))


def _lnc(a, b):
    """ln C(a, b) elementwise, -inf where b < 0 or b > a."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    ok = (b >= 0) & (b <= a)
    aa, bb = np.where(ok, a, 0.0), np.where(ok, b, 0.0)
    out = _lgamma(aa + 1.0) - _lgamma(bb + 1.0) - _lgamma(aa - bb + 1.0)
    return np.where(ok, out, -np.inf)


def estimate(n, c, k, f):
    """Per task: E[f(J)] for J ~ Hypergeometric(n, c, k)."""
    out = np.zeros(n.shape)
    base = _lnc(n, k)
    for j in np.flatnonzero(f):
        out += f[j] * np.exp(_lnc(c, j) + _lnc(n - c, k - j) - base)
    return np.minimum(out, f.max())


def vhat(n, c, k, f):
    """Per task: the unbiased variance estimate thetahat^2 - U2 (needs n >= 2k)."""
    theta = estimate(n, c, k, f)
    base = _lnc(n, k) + _lnc(n - k, k)
    u2 = np.zeros(n.shape)
    live = np.flatnonzero(f)
    for j1 in live:
        first = _lnc(c, j1) + _lnc(n - c, k - j1) - base
        for j2 in live:
            u2 += f[j1] * f[j2] * np.exp(first + _lnc(c - j1, j2) + _lnc(n - c - k + j1, k - j2))
    return theta * theta - u2
