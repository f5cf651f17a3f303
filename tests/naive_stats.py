"""Plainly correct, slow implementations that the fast statistics are compared against.

Everything here is written for clarity: Python loops, ``fractions.Fraction`` where exactness
matters, and no shared code with ``passatk.stats`` beyond the exact pass@k definition in
``passatk.reference``.
"""

from __future__ import annotations

import itertools
import math
import statistics
from fractions import Fraction

from passatk import reference


# ---------------------------------------------------------------- per task, exact
def p0(n, c, k):
    """C(n-c, k) / C(n, k) straight from the binomial coefficients."""
    return Fraction(math.comb(n - c, k), math.comb(n, k))


def estimate(metric, n, c, k):
    if metric == "pass@k":
        return reference.pass_at_k_exact(n, c, k)
    if metric == "pass^k":
        return reference.pass_hat_k_exact(n, c, k)
    raise ValueError(metric)


def vhat_exact(metric, n, c, k):
    """Unbiased variance estimator P0(n,c,k) * (P0(n,c,k) - P0(n-k,c,k)) in Fractions."""
    cc = c if metric == "pass@k" else n - c
    a = p0(n, cc, k)
    b = p0(n - k, cc, k) if cc <= n - k else Fraction(0)
    return a * (a - b)


def binom_pmf(n, c, p):
    return math.comb(n, c) * p**c * (1 - p) ** (n - c)


def estimator_moments(metric, n, k, p):
    """(E[est], Var[est], E[Vhat]) by summing over c ~ Binomial(n, p), all exact."""
    mean = sum(binom_pmf(n, c, p) * estimate(metric, n, c, k) for c in range(n + 1))
    var = sum(binom_pmf(n, c, p) * (estimate(metric, n, c, k) - mean) ** 2
              for c in range(n + 1))
    ev = (sum(binom_pmf(n, c, p) * vhat_exact(metric, n, c, k) for c in range(n + 1))
          if n >= 2 * k else None)
    return mean, var, ev


def hoeffding_var(n, k, p, metric="pass@k"):
    """Var = sum_j C(k,j) C(n-k,k-j)/C(n,k) (q^(2k-j) - q^(2k)), exact."""
    q = 1 - p if metric == "pass@k" else p
    return sum(Fraction(math.comb(k, j) * math.comb(n - k, k - j), math.comb(n, k))
               * (q ** (2 * k - j) - q ** (2 * k)) for j in range(1, k + 1))


def beta_moment(a, b, m):
    """E[(1-p)^m] for p ~ Beta(a, b), a and b integers: prod_{j<m} (b+j)/(a+b+j)."""
    out = Fraction(1)
    for j in range(m):
        out *= Fraction(b + j, a + b + j)
    return out


# ---------------------------------------------------------------- aggregation
def mean(xs):
    return math.fsum(xs) / len(xs)


def se_super(xs):
    return statistics.stdev(xs) / math.sqrt(len(xs))


def se_cluster(xs, clusters):
    """CR1 clustered SE with an explicit double loop over all pairs in a cluster.

    CR1^2 = G/(G-1) (1/N^2) sum over pairs (i, j), i == j included, in one cluster of d_i d_j.
    """
    nn = len(xs)
    m = mean(xs)
    d = [x - m for x in xs]
    g = len(set(clusters))
    total = 0.0
    for i in range(nn):
        for j in range(nn):
            if clusters[i] == clusters[j]:
                total += d[i] * d[j]
    return math.sqrt(g / (g - 1) * total / nn**2)


# ---------------------------------------------------------------- bootstrap
def quantile_linear(values, prob):
    """The 'linear' sample quantile: interpolate at position prob*(B-1) of the sorted values."""
    v = sorted(values)
    h = prob * (len(v) - 1)
    lo = math.floor(h)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (h - lo) * (v[hi] - v[lo])


def phi(x):
    return 0.5 * math.erfc(-x / math.sqrt(2))


def phi_inv(p):
    """Inverse normal by bisection on phi (slow, plainly correct)."""
    lo, hi = -40.0, 40.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if phi(mid) < p:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def bca_interval(theta, reps, confidence, tol):
    """Efron's BCa for the mean, with the jackknife acceleration computed by leaving out
    each task in turn, and z0 with the tie term."""
    nn = len(theta)
    est = mean(theta)
    below = sum(1 for r in reps if r < est - tol)
    ties = sum(1 for r in reps if abs(r - est) <= tol)
    z0 = phi_inv((below + 0.5 * ties) / len(reps))
    total = math.fsum(theta)
    loo = [(total - t) / (nn - 1) for t in theta]
    loo_mean = mean(loo)
    num = math.fsum((loo_mean - x) ** 3 for x in loo)
    den = 6 * math.fsum((loo_mean - x) ** 2 for x in loo) ** 1.5
    acc = num / den
    alpha = 1 - confidence
    out = []
    for z in (phi_inv(alpha / 2), phi_inv(1 - alpha / 2)):
        out.append(quantile_linear(reps, phi(z0 + (z0 + z) / (1 - acc * (z0 + z)))))
    return tuple(out)


# ---------------------------------------------------------------- paired tests
def signflip_exact(d):
    obs = abs(math.fsum(d))
    tol = 1e-9 * max(math.fsum(abs(x) for x in d), 1e-300)
    hits = 0
    total = 0
    for signs in itertools.product((1, -1), repeat=len(d)):
        total += 1
        if abs(math.fsum(s * x for s, x in zip(signs, d, strict=True))) >= obs - tol:
            hits += 1
    return Fraction(hits, total)


def wilcoxon_exact(d):
    """Two-sided exact signed-rank p-value by enumerating every sign pattern of the ranks."""
    d = [x for x in d if x != 0]
    order = sorted(range(len(d)), key=lambda i: abs(d[i]))
    rank = [0] * len(d)
    for r, i in enumerate(order, start=1):
        rank[i] = r
    w = sum(rank[i] for i in range(len(d)) if d[i] > 0)
    le = ge = 0
    total = 0
    for signs in itertools.product((0, 1), repeat=len(d)):
        s = sum(r for r, b in zip(range(1, len(d) + 1), signs, strict=True) if b)
        total += 1
        le += s <= w
        ge += s >= w
    return w, min(1.0, 2 * min(le, ge) / total)


def holm(ps):
    m = len(ps)
    order = sorted(range(m), key=lambda i: ps[i])
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * ps[i]))
        out[i] = running
    return out
