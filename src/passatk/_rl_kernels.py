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
SCRATCH_MAX = 1 << 21  # doubles (16 MB) of shared per-call work buffers, at most


# Rows of the (rows, len(ks), G) output of group_pass; G-Pass@k_tau t is row ROW_GPASS + t;
# mean@n and std@n sit at k index 0 of their rows.
(ROW_PASS, ROW_HAT, ROW_BEST, ROW_WORST, ROW_BEST_SD, ROW_WORST_SD, ROW_MG, ROW_MEAN, ROW_STD,
 ROW_GPASS) = range(10)
# Switches of group_pass, one int each in its ``want`` argument.
WANT_C, WANT_PASS, WANT_HAT, WANT_ORDER, WANT_BOOT, WANT_GPASS, WANT_MEAN = range(7)


@jit(inline="always")
def _gather(x, order, lo, hi, sv):
    """Sort the group's non-NaN scores into sv[lo:]; returns how many there are."""
    m = 0
    for i in range(lo, hi):
        v = x[order[i]]
        if not math.isnan(v):
            sv[lo + m] = v
            m += 1
    ordered = np.sort(sv[lo:lo + m])
    for i in range(m):  # not a slice assignment: see _adv_kernels._sort_group
        sv[lo + i] = ordered[i]
    return m


@jit(inline="always")
def _count(sv, lo, m, threshold):
    """How many of the sorted scores are >= threshold: one scan from the top."""
    c = 0
    for i in range(lo + m - 1, lo - 1, -1):
        if sv[i] < threshold:
            break
        c += 1
    return c


@jit(inline="always")
def _mean_std(sv, lo, m, out, g):
    """mean@n and the population std@n of the group's scores; NaN for an empty group."""
    if m == 0:
        out[ROW_MEAN, 0, g] = out[ROW_STD, 0, g] = np.nan
        return
    s = 0.0
    for i in range(lo, lo + m):
        s += sv[i]
    mu = s / m
    q = 0.0
    for i in range(lo, lo + m):
        q += (sv[i] - mu) ** 2
    out[ROW_MEAN, 0, g] = mu
    out[ROW_STD, 0, g] = math.sqrt(q / m)


@jit(inline="always")
def _pass_row(m, c, ks, mode, th, tl, out, row, g):
    """pass@k (MODE_PASS) or pass^k (MODE_HAT) exactly as passatk.pass_at_k computes it."""
    for j in range(ks.size):
        k = ks[j]
        out[row, j, g] = K.value(m, c, k, mode, th, tl) if k <= m else np.nan


@jit(inline="always")
def _weight_row(m, k, boot, row):
    """row[i - 1] = the weight of the i-th smallest of m scores in best@k.

    Unbiased: C(i-1, k-1)/C(m, k), from w_m = k/m and w_{i-1} = w_i (i-k)/(i-1), so no
    binomial is formed, nothing overflows, and a weight that underflows is below every one
    that counts. verl's bootstrap (boot): (i/m)^k - ((i-1)/m)^k, the chance that the largest
    of k draws with replacement is the i-th smallest. worst@k reads the same weights from
    the other end.
    """
    if boot:
        for i in range(1, m + 1):
            row[i - 1] = _boot_weight(i, m, k)
        return
    w = k / m
    for i in range(m, k - 1, -1):
        row[i - 1] = w
        if i > k:
            w = w * (i - k) / (i - 1)
    row[:k - 1] = 0.0


@jit(inline="always")
def _weights(m, ks, boot, wts, state):
    """wts[j] = the weights of best@ks[j] for groups of m; they depend on (m, k) only, so
    state[0] remembers the m they are for."""
    if state[0] == m:
        return
    state[0] = m
    for j in range(ks.size):
        if ks[j] <= m:
            _weight_row(m, ks[j], boot, wts[j])


@jit(inline="always")
def _boot_weight(i, m, k):
    """(i/m)^k - ((i-1)/m)^k as ((i-1)/m)^k expm1(k log1p(1/(i-1))): no cancellation."""
    if i == 1:
        return (1.0 / m) ** k
    return ((i - 1.0) / m) ** k * math.expm1(k * math.log1p(1.0 / (i - 1.0)))


@jit(inline="always")
def _weighted(sv, lo, m, w, desc):
    """sum_i w[i-1] g_(i) over the sorted scores (desc: g_(m+1-i)), largest weight first."""
    acc = 0.0
    for i in range(m, 0, -1):
        acc += w[i - 1] * (sv[lo + m - i] if desc else sv[lo + i - 1])
    return acc


@jit(inline="always")
def _weighted_sd(sv, lo, m, w, desc, mu):
    """sqrt(sum_i w[i-1] (g_(i) - mu)^2): the centred form keeps the small variances."""
    acc = 0.0
    for i in range(m, 0, -1):
        acc += w[i - 1] * ((sv[lo + m - i] if desc else sv[lo + i - 1]) - mu) ** 2
    return math.sqrt(acc)


@jit(inline="always")
def _order_rows(sv, lo, m, ks, boot, out, g, wts, state):
    """best@k and worst@k for every k; with ``boot``, verl's bootstrap mean and std.

    With one row of ``wts`` (groups too large to keep a row per k) each k recomputes it."""
    shared = wts.shape[0] == ks.size
    if shared:
        _weights(m, ks, boot, wts, state)
    for j in range(ks.size):
        k = ks[j]
        if k > m:
            for row in (ROW_BEST, ROW_WORST, ROW_BEST_SD, ROW_WORST_SD):
                out[row, j, g] = np.nan
            continue
        w = wts[j] if shared else wts[0]
        if not shared:
            _weight_row(m, k, boot, w)
        best = _weighted(sv, lo, m, w, False)
        worst = _weighted(sv, lo, m, w, True)
        out[ROW_BEST, j, g] = best
        out[ROW_WORST, j, g] = worst
        if boot:
            out[ROW_BEST_SD, j, g] = _weighted_sd(sv, lo, m, w, False, best)
            out[ROW_WORST_SD, j, g] = _weighted_sd(sv, lo, m, w, True, worst)
        else:
            out[ROW_BEST_SD, j, g] = out[ROW_WORST_SD, j, g] = np.nan


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


@jit(inline="always")
def _gpass_rows(m, c, ks, j0, th, tl, out, g, memo, filled, state):
    """G-Pass@k_tau (Liu et al. 2024) for every tau and k, and mG-Pass@k; NaN where k > m.

    G-Pass@k_tau = P(X >= ceil(tau k)) for X ~ Hyp(m, c, k), and mG-Pass@k
    = (2/k) sum_{i=ceil(k/2)+1}^{k} P(X >= i) = (2/k) sum_x P(X = x) max(0, x - ceil(k/2)).
    They depend on (m, c) only: memo[c] keeps them while the groups have m rollouts.
    """
    nt = j0.shape[0]
    kept = filled.size > 1  # else the memo is one slot, too large to keep per c
    slot = c if kept else 0
    if state[1] != m:
        state[1] = m
        filled[:] = False
    if not (kept and filled[slot]):
        filled[slot] = kept
        summed = np.empty(nt, np.bool_)
        for j in range(ks.size):
            k = ks[j]
            if k > m:
                memo[slot, :, j] = np.nan
            else:
                memo[slot, nt, j] = _gpass_one(m, c, k, j0[:, j], th, tl, memo[slot, :, j],
                                               summed)
    for j in range(ks.size):
        for t in range(nt):
            out[ROW_GPASS + t, j, g] = memo[slot, t, j]
        out[ROW_MG, j, g] = memo[slot, nt, j]


@jit
def _largest(offsets):
    nmax = 0
    for g in range(offsets.size - 1):
        nmax = max(nmax, offsets[g + 1] - offsets[g])
    return nmax


@jit
def _scratch(nmax, ks, j0, want):
    """Buffers that let groups of one size share work: best/worst weights per k, G-Pass
    values per c. Past SCRATCH_MAX doubles they shrink to one row, recomputed per group:
    memory stays within a small multiple of the input's."""
    rows = ks.size if ks.size * (nmax + 1) <= SCRATCH_MAX else 1
    wts = np.empty((rows, nmax + 1) if want[WANT_ORDER] else (1, 1))
    slots = nmax + 1 if (nmax + 1) * (j0.shape[0] + 1) * ks.size <= SCRATCH_MAX else 1
    if not want[WANT_GPASS]:
        slots = 1
    memo = np.empty((slots, j0.shape[0] + 1, ks.size))
    return wts, memo, np.zeros(slots, np.bool_), np.full(2, -1, np.int64)


@jit
def _one_group(x, order, offsets, ks, threshold, want, j0, th, tl, sv, n, c, out, g, scratch):
    """Every requested metric of group g except maj@k."""
    lo = offsets[g]
    m = _gather(x, order, lo, offsets[g + 1], sv)
    n[g] = m
    if want[WANT_C]:
        c[g] = _count(sv, lo, m, threshold)
    if want[WANT_PASS]:
        _pass_row(m, c[g], ks, K.MODE_PASS, th, tl, out, ROW_PASS, g)
    if want[WANT_HAT]:
        _pass_row(m, c[g], ks, K.MODE_HAT, th, tl, out, ROW_HAT, g)
    wts, memo, filled, state = scratch
    if want[WANT_ORDER]:
        _order_rows(sv, lo, m, ks, want[WANT_BOOT] != 0, out, g, wts, state)
    if want[WANT_GPASS]:
        _gpass_rows(m, c[g], ks, j0, th, tl, out, g, memo, filled, state)
    if want[WANT_MEAN]:
        _mean_std(sv, lo, m, out, g)


@jit
def group_pass(x, order, offsets, ks, threshold, want, j0, th, tl, sv, n, c, out):
    """All per-group metrics but maj@k, group after group.

    Group g's scored rollouts end up sorted in ``sv[offsets[g]:offsets[g] + n[g]]``; ``c``
    counts those >= threshold; ``out[row, j, g]`` holds the ROW_* metrics for ks[j].
    """
    scratch = _scratch(_largest(offsets), ks, j0, want)
    for g in range(offsets.size - 1):
        _one_group(x, order, offsets, ks, threshold, want, j0, th, tl, sv, n, c, out, g, scratch)


@jit(parallel=True)
def group_pass_parallel(x, order, offsets, ks, threshold, want, j0, th, tl, sv, n, c, out):
    """:func:`group_pass` with blocks of groups spread over numba's threads."""
    G = offsets.size - 1
    nblocks = min(G, 256)
    nmax = _largest(offsets)
    for b in prange(nblocks):
        scratch = _scratch(nmax, ks, j0, want)
        for g in range(b * G // nblocks, (b + 1) * G // nblocks):
            _one_group(x, order, offsets, ks, threshold, want, j0, th, tl, sv, n, c, out, g,
                       scratch)


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


@jit
def _times_class(S, N, cb, deg, v, w, t, kmax, top, jcur, jmax, second):
    """N = S times one class, which draws s < t rollouts (factor cb[s]) or exactly t and
    joins the tied winners (factor cb[t]; Q1 and Q2 gain its mean value v, mean square w).

    S[0] counts draws (P), S[1] and S[2] sum the winners' values over them; axis 1 is how
    many classes are tied at t so far, axis 2 the rollouts drawn so far.
    """
    layers = 3 if second else 2
    hi = min(top + t, kmax)
    for a in range(layers):
        for j in range(min(jcur + 1, jmax) + 1):
            N[a, j, :hi + 1] = 0.0
    ct = cb[t] if t <= deg else 0.0
    for j in range(jcur + 1):
        for d in range(top + 1):
            p = S[0, j, d]
            if p == 0.0:
                continue
            smax = min(t - 1, deg, kmax - d - (t if j == 0 else 0))
            for s in range(smax + 1):
                N[0, j, d + s] += cb[s] * p
                N[1, j, d + s] += cb[s] * S[1, j, d]
            if second:
                for s in range(smax + 1):
                    N[2, j, d + s] += cb[s] * S[2, j, d]
            if ct != 0.0 and j < jmax and d + t <= kmax:
                N[0, j + 1, d + t] += ct * p
                N[1, j + 1, d + t] += ct * (S[1, j, d] + v * p)
                if second:
                    N[2, j + 1, d + t] += ct * (S[2, j, d] + w * p)
    return hi


@jit
def _maj_dp(coef, deg, vb, wb, c0, kmax, second, t2, tail, num1, num2):
    """num1[d] = sum over draws of d rollouts, weighted by the coefficients, of the mean
    value of the tied most frequent answers (num2: of the mean square).

    For each top count t, every class draws s < t or exactly t, and the j classes drawn t
    times share the win: 1/j each. The classes that gave no answer (c0) never win, so
    their factor multiplies the sum over t once, at the end. Classes come smallest first;
    past t2 only the last can draw t, the others draw freely, and ``tail`` is their product:
    one term per t instead of a dynamic program.
    """
    m = coef.shape[0]
    jdim = min(m, kmax)  # at most kmax // t classes tie at t
    S = np.zeros((3, jdim + 1, kmax + 1))
    N = np.zeros((3, jdim + 1, kmax + 1))
    r1 = np.zeros(kmax + 1)
    r2 = np.zeros(kmax + 1)
    for t in range(t2 + 1, deg[m - 1] + 1 if m else 0):
        for d in range(t, kmax + 1):
            r1[d] += vb[m - 1] * coef[m - 1, t] * tail[d - t]
            r2[d] += wb[m - 1] * coef[m - 1, t] * tail[d - t]
    for t in range(1, min(t2, kmax) + 1):
        reach = 0
        for b in range(m):
            reach += deg[b] >= t
        jmax = min(reach, kmax // t)
        if jmax == 0:
            break
        S[:, 0, 0] = 0.0
        S[0, 0, 0] = 1.0
        top = 0
        jcur = 0
        for b in range(m):
            top = _times_class(S, N, coef[b], deg[b], vb[b], wb[b], t, kmax, top, jcur, jmax,
                               second)
            jcur = min(jcur + (deg[b] >= t), jmax)
            S, N = N, S
        for j in range(1, jcur + 1):
            for d in range(top + 1):
                r1[d] += S[1, j, d] / j
                if second:
                    r2[d] += S[2, j, d] / j
    for d in range(kmax + 1):
        for s in range(kmax - d + 1):
            num1[d + s] += c0[s] * r1[d]
            if second:
                num2[d + s] += c0[s] * r2[d]


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
    scale = 1.0
    if kmax > 0:
        coef = np.zeros((nc, kmax + 1))
        deg = np.minimum(cls_n[lo:lo + nc], kmax)
        for b in range(nc):
            for s in range(deg[b] + 1):
                coef[b, s] = _binom(cls_n[lo + b], s, th, tl)
        c0 = np.zeros(kmax + 1)
        for s in range(min(n0, kmax) + 1):
            c0[s] = _binom(n0, s, th, tl)
        t2 = deg[nc - 2] if nc > 1 else 0
        rest = m - n0 - (cls_n[lo + nc - 1] if nc else 0)
        tail = np.zeros(kmax + 1)
        for s in range(min(rest, kmax) + 1):
            tail[s] = _binom(rest, s, th, tl)
        scale = _pow2_scale(cls_v[lo:lo + nc])
        vals = cls_v[lo:lo + nc] / scale
        _maj_dp(coef, deg, vals, vals, c0, kmax, False, t2, tail, num, num)
    for j in range(ks.size):
        k = ks[j]
        out[j, g] = num[k] / _binom(m, k, th, tl) * scale if k <= m else np.nan


@jit
def _pow2_scale(v):
    """A power of two at or above max |v| (1 for all zeros): dividing by it is exact and
    keeps the dynamic program's sums, up to C(n, k) times the values, inside float64."""
    top = 0.0
    for x in v:
        top = max(top, abs(x))
    return math.ldexp(1.0, math.frexp(top)[1]) if top > 0.0 else 1.0


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
    scale = 1.0
    if kmax > 0:
        coef = np.zeros((nc, kmax + 1))
        for b in range(nc):
            _poisson_coef(cls_n[lo + b], m, lam, kmax, coef[b])
        c0 = np.zeros(kmax + 1)
        if n0 > 0:
            _poisson_coef(n0, m, lam, kmax, c0)
        else:
            c0[0] = 1.0
        deg = np.full(nc, kmax, np.int64)
        scale = _pow2_scale(cls_v[lo:lo + nc])
        _maj_dp(coef, deg, cls_v[lo:lo + nc] / scale, cls_w[lo:lo + nc] / scale / scale, c0,
                kmax, True, kmax, c0, num1, num2)
    for j in range(ks.size):
        k = ks[j]
        if k > m:
            mean[j, g] = sd[j, g] = np.nan
            continue
        f = 1.0
        for i in range(1, k + 1):
            f *= i / lam
        mu = num1[k] * f
        mean[j, g] = mu * scale
        sd[j, g] = math.sqrt(max(num2[k] * f - mu * mu, 0.0)) * scale


@jit
def _maj_group(x, codes, order, offsets, n, ks, boot, th, tl, cls, mean, sd, g):
    """maj@k of group g: exact over k-subsets, or verl's bootstrap mean and std (boot)."""
    cls_n, cls_v, cls_w, nclass, n0 = cls
    class_table(x, codes, order, offsets, cls_n, cls_v, cls_w, nclass, n0, g)
    lo = offsets[g]
    if boot:
        _maj_verl_one(cls_n, cls_v, cls_w, lo, nclass[g], n0[g], n[g], ks, mean, sd, g)
    else:
        _maj_unbiased_one(cls_n, cls_v, lo, nclass[g], n0[g], n[g], ks, th, tl, mean, g)
        for j in range(ks.size):
            sd[j, g] = np.nan


@jit
def maj(x, codes, order, offsets, n, ks, boot, th, tl, cls, mean, sd):
    """mean[j, g] = maj@ks[j] (and sd[j, g] its bootstrap std with ``boot``), group by group.

    ``codes`` are answer codes (-1: no answer); ``cls`` is scratch (sizes, means, mean
    squares, class counts, no-answer counts) for the canonical class tables.
    """
    for g in range(n.size):
        _maj_group(x, codes, order, offsets, n, ks, boot, th, tl, cls, mean, sd, g)


@jit(parallel=True)
def maj_parallel(x, codes, order, offsets, n, ks, boot, th, tl, cls, mean, sd):
    """:func:`maj` with the groups spread over numba's threads."""
    for g in prange(n.size):
        _maj_group(x, codes, order, offsets, n, ks, boot, th, tl, cls, mean, sd, g)


@jit
def column_stats(vals, exclude, mean, se, used):
    """Mean over groups and its standard error, per row of ``vals`` (metrics x groups).

    A row with a missing (NaN) group has a NaN mean unless ``exclude``; the finite values
    are sorted before summing, so the result does not depend on the order of the groups.
    Returns how many rows miss a group.
    """
    short = 0
    buf = np.empty(vals.shape[1])
    for r in range(vals.shape[0]):
        m = 0
        for v in vals[r]:
            if not math.isnan(v):
                buf[m] = v
                m += 1
        used[r] = m
        short += m < vals.shape[1]
        if m == 0 or (m < vals.shape[1] and not exclude):
            mean[r] = se[r] = np.nan
            continue
        fin = buf[:m]
        if m > 1:
            fin.sort()
        mu = fin.sum() / m
        mean[r] = mu
        q = 0.0
        for v in fin:
            q += (v - mu) ** 2
        se[r] = math.sqrt(q / (m - 1) / m) if m > 1 else np.nan
    return short


@jit
def smallest_group(offsets):
    """The fewest rollouts any group with at least one has (0 if none has any)."""
    low = 0
    for g in range(offsets.size - 1):
        m = offsets[g + 1] - offsets[g]
        if m > 0 and (low == 0 or m < low):
            low = m
    return low


@jit
def first_non_binary(x):
    """The first flat index whose score is neither 0, 1 nor NaN, or -1."""
    for i in range(x.size):
        if x[i] != 0.0 and x[i] != 1.0 and not math.isnan(x[i]):
            return i
    return -1
