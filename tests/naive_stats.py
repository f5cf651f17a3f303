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


# ---------------------------------------------------------------- issue 11 references
def wilcoxon_exact_ties(d):
    """Two-sided exact permutation p of W+ with mid-ranks, by enumerating all sign patterns."""
    d = [x for x in d if x != 0]
    absd = sorted(abs(x) for x in d)
    rank = {}
    for v in set(absd):
        pos = [i + 1 for i, a in enumerate(absd) if a == v]
        rank[v] = Fraction(sum(pos), len(pos))
    ranks = [rank[abs(x)] for x in d]
    centre = sum(ranks) / 2
    obs = abs(sum(r for r, x in zip(ranks, d, strict=True) if x > 0) - centre)
    hits = total = 0
    for signs in itertools.product((0, 1), repeat=len(d)):
        w = sum(r for r, s in zip(ranks, signs, strict=True) if s)
        total += 1
        hits += abs(w - centre) >= obs
    return hits / total


def g_pass_brute(n, c, k, m):
    """Share of k-subsets of n samples (c correct) with at least m correct, exact."""
    samples = [1] * c + [0] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    return Fraction(sum(sum(samples[i] for i in s) >= m for s in subsets), len(subsets))


def u_stat_moments(n, k, p, f):
    """(E[est], Var[est], E[Vhat]) of the U-statistic with kernel f(j), c ~ Binomial(n, p).

    est(c) = sum_j P(J = j) f(j) with J hypergeometric; Vhat(c) = est^2 - U2, where U2
    averages f(J1) f(J2) over ordered pairs of disjoint k-subsets. All in Fractions.
    """
    def est(c):
        return sum(Fraction(math.comb(c, j) * math.comb(n - c, k - j), math.comb(n, k)) * f[j]
                   for j in range(k + 1))

    def u2(c):
        tot = Fraction(0)
        den = math.comb(n, k) * math.comb(n - k, k)
        for j1 in range(k + 1):
            for j2 in range(k + 1):
                ways = (math.comb(c, j1) * math.comb(n - c, k - j1)
                        * math.comb(max(c - j1, 0), j2) * math.comb(max(n - c - k + j1, 0), k - j2)
                        if c >= j1 and n - c >= k - j1 else 0)
                tot += Fraction(ways, den) * f[j1] * f[j2]
        return tot

    mean = sum(binom_pmf(n, c, p) * est(c) for c in range(n + 1))
    var = sum(binom_pmf(n, c, p) * (est(c) - mean) ** 2 for c in range(n + 1))
    ev = sum(binom_pmf(n, c, p) * (est(c) ** 2 - u2(c)) for c in range(n + 1))
    return mean, var, ev


def hier_posterior_grid(n, c, k, side=400):
    """Posterior mean of population pass@k on a plain dense grid (scipy, no re-centring).

    Same model as passatk's: mu ~ U(0, 1), ln kappa ~ N(ln 2, 2^2); a fixed box
    mu in (0, 1) by its midpoints, ln kappa in [-8, 12].
    """
    import numpy as np
    from scipy.special import betaln

    mu = (np.arange(side) + 0.5) / side
    v = np.linspace(-8, 12, side)
    mm, vv = np.meshgrid(mu, v, indexing="ij")
    a, b = mm * np.exp(vv), (1 - mm) * np.exp(vv)
    ll = np.zeros_like(a)
    for ni, ci in zip(n, c, strict=True):
        ll += betaln(a + ci, b + ni - ci) - betaln(a, b)
    lp = ll - 0.5 * ((vv - math.log(2.0)) / 2.0) ** 2
    w = np.exp(lp - lp.max())
    w /= w.sum()
    pop = 1 - np.exp(betaln(a, b + k) - betaln(a, b))
    return float(np.sum(w * pop))
