"""Paired tests: Wilcoxon signed-rank, McNemar, sign-flip; Holm and Benjamini-Hochberg."""

from __future__ import annotations

import math

import numpy as np

from .._validation import MAX_RESAMPLES, choice, normalize_rng, positive_int
from . import _kernels as SK
from ._common import _P_FLOOR, _seed64
from ._dist import _betainc, norm_cdf

_EXACT_WILCOXON_MAX = 1000  # the exact null costs O(n^3) time and O(n^2) memory


def _rank_abs(x):
    """Average ranks (1-based) of x, and the sizes of the tie groups."""
    order = np.argsort(x, kind="mergesort")
    xs = x[order]
    n = xs.size
    starts = np.concatenate([[0], np.flatnonzero(xs[1:] != xs[:-1]) + 1])
    ends = np.concatenate([starts[1:], [n]])
    avg = (starts + ends + 1) / 2.0  # mean of ranks start+1 .. end
    ranks = np.empty(n)
    ranks[order] = np.repeat(avg, ends - starts)
    return ranks, ends - starts


def _signed_rank_counts(ranks2):
    """Counts of sign patterns per value of 2 W+, for doubled (integer) ranks ``ranks2``.

    The exact permutation null of W+: each non-zero difference is positive or negative with
    probability 1/2. Mid-ranks are multiples of 1/2, so doubled ranks are integers and the
    distribution is built by a subset-sum recursion, with ties as well as without.
    """
    top = int(np.sum(ranks2))
    counts = np.zeros(top + 1, dtype=np.float64)
    counts[0] = 1.0
    for r in ranks2:
        r = int(r)
        counts[r:] = counts[r:] + counts[:-r].copy()
    return counts


def wilcoxon_signed_rank(d, *, method="auto"):
    """Two-sided Wilcoxon signed-rank test on paired differences ``d``.

    It tests whether the differences are symmetric about 0 (pseudo-median 0), not whether
    their mean is 0: under a skewed distribution with mean 0 it rejects far too often.
    Zero differences are dropped (Wilcoxon's convention). ``method="exact"`` uses the
    exact permutation distribution of W+ given the mid-ranks, with or without ties;
    ``"approx"`` the normal approximation with the tie correction and no continuity
    correction; ``"auto"`` is exact for at most 50 non-zero differences.

    Returns
    -------
    (statistic W+, p-value, method used)

    Examples
    --------
    >>> from passatk.stats._paired import wilcoxon_signed_rank
    >>> w, p, how = wilcoxon_signed_rank([0.5, -0.25, 1.0, 2.0, 1.5])
    >>> w, round(p, 4), how
    (14.0, 0.125, 'exact')
    >>> wilcoxon_signed_rank([1.0] * 5)     # ties: exact, 2 / 2**5
    (15.0, 0.0625, 'exact')
    """
    d = np.asarray(d, dtype=np.float64).reshape(-1)
    choice(method, "method", ("auto", "exact", "approx"))
    d = d[d != 0]
    n = d.size
    if n == 0:
        return 0.0, 1.0, "no non-zero differences"
    ranks, ties = _rank_abs(np.abs(d))
    w = float(np.sum(ranks[d > 0]))
    if method == "exact" and n > _EXACT_WILCOXON_MAX:
        raise ValueError(f"method='exact' enumerates the null of W+ and needs at most "
                         f"{_EXACT_WILCOXON_MAX} non-zero differences, got {n}; use "
                         f"method='auto' or 'approx'")
    if method == "exact" or (method == "auto" and n <= 50):
        counts = _signed_rank_counts(np.round(2.0 * ranks))
        total = float(np.sum(counts))
        wi = round(2.0 * w)
        lo = float(np.sum(counts[: wi + 1])) / total
        hi = float(np.sum(counts[wi:])) / total
        return w, min(1.0, 2.0 * min(lo, hi)), "exact"
    mean = n * (n + 1) / 4.0
    var = n * (n + 1) * (2 * n + 1) / 24.0 - float(np.sum(ties**3 - ties)) / 48.0
    if var <= 0:
        return w, 1.0, "normal approximation"
    z = (w - mean) / math.sqrt(var)
    return w, max(min(1.0, 2.0 * norm_cdf(-abs(z))), _P_FLOOR), "normal approximation"


def _binom_cdf(m, n):
    """P(X <= m) for X ~ Binomial(n, 1/2)."""
    if m >= n:
        return 1.0
    if m < 0:
        return 0.0
    return _betainc(n - m, m + 1.0, 0.5, 0.5)


def mcnemar(b, c):
    """Exact (conditional binomial) two-sided McNemar test for discordant counts b and c.

    Examples
    --------
    >>> from passatk.stats._paired import mcnemar
    >>> round(mcnemar(2, 9), 4)
    0.0654
    """
    b = positive_int(b, "b", 0)
    c = positive_int(c, "c", 0)
    if b + c == 0:
        return 1.0
    return min(1.0, 2.0 * _binom_cdf(min(b, c), b + c))


def signflip_test(d, *, n_resamples=10_000, rng=None, seed=None, exact_max=20):
    """Two-sided sign-flip permutation p-value for the mean of ``d``.

    All 2**N sign patterns are enumerated when N <= ``exact_max`` (p = share of patterns
    with |sum| >= the observed |sum|); otherwise p = (1 + #{|sum_b| >= |sum|}) / (B + 1)
    over B random patterns.

    Returns
    -------
    (p-value, exact)

    Examples
    --------
    >>> from passatk.stats._paired import signflip_test
    >>> signflip_test([1.0, 2.0, 3.0])
    (0.25, True)
    """
    d = np.ascontiguousarray(np.asarray(d, dtype=np.float64).reshape(-1))
    tol = 1e-10 * max(float(np.sum(np.abs(d))), 1e-300)
    if d.size <= exact_max:
        count, total = SK.signflip_exact(d, tol)
        return count / total, True
    gen = normalize_rng(rng, seed)
    n_resamples = positive_int(n_resamples, "n_resamples", 1, MAX_RESAMPLES)
    count = SK.signflip_random(d, tol, _seed64(gen), n_resamples)
    return (1 + count) / (n_resamples + 1), False


def _sorted_p(p):
    """(p as float64, an all-NaN output, the indices of the non-NaN p in increasing order)."""
    p = np.asarray(p, dtype=np.float64)
    ok = np.flatnonzero(~np.isnan(p))
    return p, np.full(p.shape, np.nan), ok[np.argsort(p[ok], kind="stable")]


def _holm(p):
    """Holm step-down adjusted p-values (NaN entries are left out and stay NaN)."""
    p, out, order = _sorted_p(p)
    m = order.size
    if m:
        out[order] = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    return out


def _bh(p):
    """Benjamini-Hochberg adjusted p-values (NaN entries are left out and stay NaN)."""
    p, out, order = _sorted_p(p)
    m = order.size
    if m:
        scaled = p[order] * m / np.arange(1, m + 1)
        out[order] = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    return out
