"""Numba kernels for :func:`passatk.rl.group_metrics`.

Kernels see typed arrays only: float64 scores, int64 offsets, counts, codes and k. A group
g owns ``x[order[offsets[g]:offsets[g + 1]]]``; after :func:`gather_sorted` its scored
rollouts, sorted ascending, are ``sv[offsets[g]:offsets[g] + n[g]]``. Everything after the
sort reads sorted values or class tables in a canonical order, so no result depends on
the order of the rollouts. Formulas and citations: docs/rl.md.
"""

import math

import numpy as np

from . import _kernels as K
from ._jit import jit, prange

MAJ_MAX_N = 1000  # exact subset counts C(n_b, s) stay far inside float64 up to here
MAJ_MAX_K_VERL = 700  # (k p)^s / s! scaled by k stays below exp(700)


@jit(parallel=True)
def gather_sorted(x, order, offsets, sv, n):
    """Sort each group's non-NaN scores into ``sv``; ``n[g]`` is how many there are."""
    for g in prange(offsets.size - 1):
        lo = offsets[g]
        m = 0
        for i in range(lo, offsets[g + 1]):
            v = x[order[i]]
            if not math.isnan(v):
                sv[lo + m] = v
                m += 1
        sv[lo:lo + m] = np.sort(sv[lo:lo + m])
        n[g] = m


@jit(parallel=True)
def count_correct(sv, offsets, n, threshold, c):
    """c[g] = how many scores are >= threshold (sorted input: one scan from the top)."""
    for g in prange(n.size):
        lo = offsets[g]
        m = 0
        for i in range(lo + n[g] - 1, lo - 1, -1):
            if sv[i] < threshold:
                break
            m += 1
        c[g] = m


@jit(parallel=True)
def mean_std(sv, offsets, n, out):
    """out[g] = (mean, population std) of the group's scores; NaN for an empty group."""
    for g in prange(n.size):
        lo = offsets[g]
        m = n[g]
        if m == 0:
            out[g, 0] = np.nan
            out[g, 1] = np.nan
            continue
        s = 0.0
        for i in range(lo, lo + m):
            s += sv[i]
        mu = s / m
        q = 0.0
        for i in range(lo, lo + m):
            q += (sv[i] - mu) ** 2
        out[g, 0] = mu
        out[g, 1] = math.sqrt(q / m)


@jit(parallel=True)
def pass_table(n, c, ks, mode, th, tl, out):
    """out[g, j] = pass@ks[j] (MODE_PASS) or pass^ks[j] (MODE_HAT); NaN where k > n."""
    for g in prange(n.size):
        for j in range(ks.size):
            k = ks[j]
            if k <= n[g]:
                out[g, j] = K.value(n[g], c[g], k, mode, th, tl)
            else:
                out[g, j] = np.nan


@jit(inline="always")
def _unbiased_sum(sv, lo, m, k, desc):
    """sum_i C(i-1, k-1)/C(m, k) g_(i) (best@k), or worst@k on the reversed order.

    The weights come from w_m = k/m and w_{i-1} = w_i (i-k)/(i-1): no binomial is formed,
    so nothing overflows, and a weight that underflows is below every one that counts.
    """
    w = k / m
    acc = 0.0
    for i in range(m, k - 1, -1):
        v = sv[lo + m - i] if desc else sv[lo + i - 1]
        acc += w * v
        if i > k:
            w = w * (i - k) / (i - 1)
    return acc


@jit(inline="always")
def _boot_weight(i, m, k):
    """(i/m)^k - ((i-1)/m)^k, the chance that the largest of k draws with replacement is
    the i-th smallest, as ((i-1)/m)^k expm1(k log1p(1/(i-1))) to keep its relative accuracy."""
    if i == 1:
        return (1.0 / m) ** k
    return ((i - 1.0) / m) ** k * math.expm1(k * math.log1p(1.0 / (i - 1.0)))


@jit(inline="always")
def _boot_moments(sv, lo, m, k, desc):
    """Mean and std of max (or min, desc) of k draws with replacement, exactly."""
    mu = 0.0
    for i in range(1, m + 1):
        v = sv[lo + m - i] if desc else sv[lo + i - 1]
        mu += _boot_weight(i, m, k) * v
    var = 0.0
    for i in range(1, m + 1):
        v = sv[lo + m - i] if desc else sv[lo + i - 1]
        var += _boot_weight(i, m, k) * (v - mu) ** 2
    return mu, math.sqrt(var)


@jit(parallel=True)
def order_stats(sv, offsets, n, ks, boot, best, worst, best_sd, worst_sd):
    """best@k and worst@k per group and k; with ``boot``, verl's bootstrap mean and std."""
    for g in prange(n.size):
        lo = offsets[g]
        m = n[g]
        for j in range(ks.size):
            k = ks[j]
            if k > m:
                best[g, j] = worst[g, j] = best_sd[g, j] = worst_sd[g, j] = np.nan
            elif boot:
                best[g, j], best_sd[g, j] = _boot_moments(sv, lo, m, k, False)
                worst[g, j], worst_sd[g, j] = _boot_moments(sv, lo, m, k, True)
            else:
                best[g, j] = _unbiased_sum(sv, lo, m, k, False)
                worst[g, j] = _unbiased_sum(sv, lo, m, k, True)
                best_sd[g, j] = worst_sd[g, j] = np.nan


@jit(inline="always")
def _ln_choose(a, b, th, tl):
    """ln C(a, b) in double-double from the ln(i!) table, or lgamma past it."""
    if a <= K.TABLE_MAX:
        h, l = K._dd_add(th[a], tl[a], -th[b], -tl[b])
        return K._dd_add(h, l, -th[a - b], -tl[a - b])
    return math.lgamma(a + 1.0) - math.lgamma(b + 1.0) - math.lgamma(a - b + 1.0), 0.0


@jit
def _hyper_pmf(n, c, k, j, th, tl):
    """C(c, j) C(n-c, k-j) / C(n, k), from double-double logarithms."""
    h1, l1 = _ln_choose(c, j, th, tl)
    h2, l2 = _ln_choose(n - c, k - j, th, tl)
    h3, l3 = _ln_choose(n, k, th, tl)
    h, l = K._dd_add(h1, l1, h2, l2)
    h, l = K._dd_add(h, l, -h3, -l3)
    e = math.exp(h)
    return e + e * l


@jit(inline="always")
def _tail_end(n, c, k, j0, lo, hi, th, tl):
    """P(X >= j0) for X ~ Hyp(n, c, k) when it needs no sum (the support ends, and the
    pass@k and pass^k ends computed as passatk computes them), else -1."""
    if j0 <= lo:
        return 1.0
    if j0 > hi:
        return 0.0
    if j0 == 1:
        return K.value(n, c, k, K.MODE_PASS, th, tl)
    if j0 == k:
        return K.value(n, c, k, K.MODE_HAT, th, tl)
    return -1.0


@jit(inline="always")
def _gpass_one(n, c, k, j0, th, tl, row, summed):
    """row[t] = G-Pass@k_tau for each tau (j0[t] successes needed); returns mG-Pass@k.

    One pmf per support point serves every tau and mG-Pass@k."""
    lo = max(0, k - (n - c))
    hi = min(c, k)
    half = (k + 1) // 2
    start = max(lo, half + 1)
    for t in range(j0.size):
        row[t] = _tail_end(n, c, k, j0[t], lo, hi, th, tl)
        summed[t] = row[t] < 0.0
        if summed[t]:
            row[t] = 0.0
            start = min(start, j0[t])
    acc = 0.0
    for x in range(hi, start - 1, -1):
        p = _hyper_pmf(n, c, k, x, th, tl)
        if x > half:
            acc += p * (x - half)
        for t in range(j0.size):
            if summed[t] and x >= j0[t]:
                row[t] += p
    return 2.0 * acc / k


@jit(parallel=True)
def gpass_table(n, c, ks, j0, th, tl, gp, mg):
    """G-Pass@k_tau (gp[g, t, j], needing j0[t, j] successes; Liu et al. 2024) and
    mG-Pass@k (mg[g, j]); NaN where k > n.

    G-Pass@k_tau = P(X >= ceil(tau k)) for X ~ Hyp(n, c, k), and mG-Pass@k
    = (2/k) sum_{i=ceil(k/2)+1}^{k} P(X >= i) = (2/k) sum_x P(X = x) max(0, x - ceil(k/2)).
    """
    nt = j0.shape[0]
    for g in prange(n.size):
        row = np.empty(nt)
        summed = np.empty(nt, np.bool_)
        for j in range(ks.size):
            k = ks[j]
            if k > n[g]:
                gp[g, :, j] = np.nan
                mg[g, j] = np.nan
            else:
                mg[g, j] = _gpass_one(n[g], c[g], k, j0[:, j], th, tl, row, summed)
                gp[g, :, j] = row


@jit(inline="always")
def _binom(a, b, th, tl):
    h, l = _ln_choose(a, b, th, tl)
    e = math.exp(h)
    return e + e * l


@jit
def class_table(x, codes, order, offsets, cls_n, cls_v, cls_w, m_out, n0_out, g):
    """The answer classes of group g in a canonical order.

    Scored rollouts are sorted by (answer code, score); each class gets its size, mean
    score and mean squared score (summed in sorted order), then the classes are sorted by
    (size, mean, mean square), so nothing depends on the rollouts' order. Code -1 (no
    answer) only counts: n0_out[g].
    """
    lo = offsets[g]
    idx = np.empty(offsets[g + 1] - lo, np.int64)
    m = 0
    for i in range(lo, offsets[g + 1]):
        if not math.isnan(x[order[i]]):
            idx[m] = order[i]
            m += 1
    idx = idx[:m]
    idx = idx[np.argsort(x[idx], kind="mergesort")]
    idx = idx[np.argsort(codes[idx], kind="mergesort")]
    nc = 0
    n0 = 0
    i = 0
    while i < m:
        code = codes[idx[i]]
        s = 0.0
        q = 0.0
        e = i
        while e < m and codes[idx[e]] == code:
            s += x[idx[e]]
            q += x[idx[e]] ** 2
            e += 1
        if code < 0:
            n0 += e - i
        else:
            cls_n[lo + nc] = e - i
            cls_v[lo + nc] = s / (e - i)
            cls_w[lo + nc] = q / (e - i)
            nc += 1
        i = e
    _sort_classes(cls_n, cls_v, cls_w, lo, nc)
    m_out[g] = nc
    n0_out[g] = n0


@jit(inline="always")
def _before(cls_n, cls_v, cls_w, a, b):
    if cls_n[a] != cls_n[b]:
        return cls_n[a] < cls_n[b]
    if cls_v[a] != cls_v[b]:
        return cls_v[a] < cls_v[b]
    return cls_w[a] < cls_w[b]


@jit
def _sort_classes(cls_n, cls_v, cls_w, lo, nc):
    for i in range(lo + 1, lo + nc):
        j = i
        while j > lo and _before(cls_n, cls_v, cls_w, j, j - 1):
            cls_n[j], cls_n[j - 1] = cls_n[j - 1], cls_n[j]
            cls_v[j], cls_v[j - 1] = cls_v[j - 1], cls_v[j]
            cls_w[j], cls_w[j - 1] = cls_w[j - 1], cls_w[j]
            j -= 1


@jit(parallel=True)
def class_tables(x, codes, order, offsets, cls_n, cls_v, cls_w, m_out, n0_out):
    """:func:`class_table` for every group."""
    for g in prange(offsets.size - 1):
        class_table(x, codes, order, offsets, cls_n, cls_v, cls_w, m_out, n0_out, g)


@jit
def _times_class(P, Q1, Q2, cb, ct, v, w, t, kmax, top, second):
    """Multiply the state by one class: it draws s < t (factor cb[s]) or exactly t (joins
    the tied winners, factor ct; Q gains its value v, or v^2-mean w, per path)."""
    J = P.shape[1] - 1
    NP = np.zeros_like(P)
    N1 = np.zeros_like(Q1)
    N2 = np.zeros_like(Q2)
    for d in range(top + 1):
        for j in range(J + 1):
            p = P[d, j]
            if p == 0.0:
                continue
            room = kmax - d - (t if j == 0 else 0)
            for s in range(min(t - 1, room) + 1):
                if cb[s] != 0.0:
                    NP[d + s, j] += cb[s] * p
                    N1[d + s, j] += cb[s] * Q1[d, j]
                    if second:
                        N2[d + s, j] += cb[s] * Q2[d, j]
            if ct != 0.0 and j < J and d + t <= kmax:
                NP[d + t, j + 1] += ct * p
                N1[d + t, j + 1] += ct * (Q1[d, j] + v * p)
                if second:
                    N2[d + t, j + 1] += ct * (Q2[d, j] + w * p)
    return NP, N1, N2


@jit
def _maj_dp(coef, vb, wb, c0, kmax, second, num1, num2):
    """num1[d] = sum over draws of d rollouts, weighted by the coefficients, of the mean
    value of the tied most frequent answers (num2: of the mean square).

    For each top count t, every class draws s < t or exactly t, and the classes drawn t
    times (j of them, tracked) share the win equally: 1/j each. No answer (c0) never wins.
    """
    m = coef.shape[0]
    for t in range(1, kmax + 1):
        reach = 0
        for b in range(m):
            if coef[b, t] != 0.0:
                reach += 1
        J = min(reach, kmax // t)
        if J == 0:
            break
        P = np.zeros((kmax + 1, J + 1))
        Q1 = np.zeros((kmax + 1, J + 1))
        Q2 = np.zeros((kmax + 1, J + 1)) if second else np.zeros((1, 1))
        P[0, 0] = 1.0
        top = 0
        for b in range(m):
            P, Q1, Q2 = _times_class(P, Q1, Q2, coef[b], coef[b, t], vb[b], wb[b], t, kmax,
                                     top, second)
            top = min(top + t, kmax)
        for d in range(top + 1):
            for j in range(1, J + 1):
                q1 = Q1[d, j] / j
                q2 = Q2[d, j] / j if second else 0.0
                for s in range(kmax - d + 1):
                    num1[d + s] += c0[s] * q1
                    if second:
                        num2[d + s] += c0[s] * q2


@jit
def _kmax(ks, m):
    top = 0
    for j in range(ks.size):
        if ks[j] <= m:
            top = max(top, ks[j])
    return top


@jit
def _maj_unbiased_one(cls_n, cls_v, lo, nc, n0, m, ks, th, tl, out, g):
    """maj@k over all k-subsets: the DP with coefficients C(n_b, s), divided by C(m, k)."""
    kmax = _kmax(ks, m)
    num = np.zeros(kmax + 1)
    if kmax > 0:
        coef = np.zeros((nc, kmax + 1))
        for b in range(nc):
            for s in range(min(cls_n[lo + b], kmax) + 1):
                coef[b, s] = _binom(cls_n[lo + b], s, th, tl)
        c0 = np.zeros(kmax + 1)
        for s in range(min(n0, kmax) + 1):
            c0[s] = _binom(n0, s, th, tl)
        _maj_dp(coef, cls_v[lo:lo + nc], cls_v[lo:lo + nc], c0, kmax, False, num, num)
    for j in range(ks.size):
        k = ks[j]
        out[g, j] = num[k] / _binom(m, k, th, tl) if k <= m else np.nan


@jit(parallel=True)
def maj_unbiased(cls_n, cls_v, offsets, nclass, n0, n, ks, th, tl, out):
    """out[g, j] = maj@ks[j], exact over all k-subsets with ties split equally."""
    for g in prange(n.size):
        _maj_unbiased_one(cls_n, cls_v, offsets[g], nclass[g], n0[g], n[g], ks, th, tl, out, g)


@jit
def _poisson_coef(size, m, lam, kmax, row):
    """row[s] = (lam p)^s / s! with p = size/m: multinomial draws, scaled by lam^s."""
    a = lam * size / m
    row[0] = 1.0
    for s in range(1, kmax + 1):
        row[s] = row[s - 1] * a / s


@jit
def _maj_verl_one(cls_n, cls_v, cls_w, lo, nc, n0, m, ks, mean, sd, g):
    """verl's maj@k bootstrap (k draws with replacement), exact mean and std.

    P(counts) = k! prod_b p_b^{s_b} / s_b!; the DP runs on (lam p_b)^s / s! with lam = the
    largest k, and each k is scaled back by k! / lam^k.
    """
    kmax = _kmax(ks, m)
    lam = float(max(kmax, 1))
    num1 = np.zeros(kmax + 1)
    num2 = np.zeros(kmax + 1)
    if kmax > 0:
        coef = np.zeros((nc, kmax + 1))
        for b in range(nc):
            _poisson_coef(cls_n[lo + b], m, lam, kmax, coef[b])
        c0 = np.zeros(kmax + 1)
        if n0 > 0:
            _poisson_coef(n0, m, lam, kmax, c0)
        else:
            c0[0] = 1.0
        _maj_dp(coef, cls_v[lo:lo + nc], cls_w[lo:lo + nc], c0, kmax, True, num1, num2)
    for j in range(ks.size):
        k = ks[j]
        if k > m:
            mean[g, j] = sd[g, j] = np.nan
            continue
        f = 1.0
        for i in range(1, k + 1):
            f *= i / lam
        mu = num1[k] * f
        mean[g, j] = mu
        sd[g, j] = math.sqrt(max(num2[k] * f - mu * mu, 0.0))


@jit(parallel=True)
def maj_verl(cls_n, cls_v, cls_w, offsets, nclass, n0, n, ks, mean, sd):
    """Exact mean and std of verl's with-replacement maj@k bootstrap, per group and k."""
    for g in prange(n.size):
        _maj_verl_one(cls_n, cls_v, cls_w, offsets[g], nclass[g], n0[g], n[g], ks, mean, sd, g)


@jit(parallel=True)
def column_stats(vals, exclude, mean, se, used):
    """Mean over groups and its standard error, per row of ``vals`` (metrics x groups).

    A row with a missing (NaN) group has a NaN mean unless ``exclude``; the finite values
    are sorted before summing, so the result does not depend on the order of the groups.
    """
    for r in prange(vals.shape[0]):
        row = vals[r]
        fin = np.sort(row[~np.isnan(row)])
        used[r] = fin.size
        if fin.size == 0 or (fin.size < row.size and not exclude):
            mean[r] = se[r] = np.nan
            continue
        mu = fin.sum() / fin.size
        mean[r] = mu
        if fin.size < 2:
            se[r] = np.nan
            continue
        q = 0.0
        for v in fin:
            q += (v - mu) ** 2
        se[r] = math.sqrt(q / (fin.size - 1) / fin.size)
