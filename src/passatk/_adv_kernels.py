"""Numba kernels for ``passatk.rl``: group factorization, the CSR layout, and advantages.

Kernels see typed arrays only; validation and messages live in ``rl._groups`` and
``rl._advantages``. Everything is compiled through ``_jit.jit`` (cache, nogil, no fastmath).
"""

import numpy as np

from ._jit import jit

_MIX = np.uint64(0x9E3779B97F4A7C15)
_SHIFT = np.uint64(29)


@jit(inline="always")
def _hash_row(rows, i):
    h = np.uint64(0xCBF29CE484222325)
    for j in range(rows.shape[1]):
        h = (h ^ np.uint64(rows[i, j])) * _MIX
        h = h ^ (h >> _SHIFT)
    return h


@jit(inline="always")
def _rows_equal(rows, a, b):
    for j in range(rows.shape[1]):
        if rows[a, j] != rows[b, j]:
            return False
    return True


@jit
def factorize_rows(rows):
    """Codes in first-appearance order for the rows of a 2-D unsigned-int array.

    Returns ``(codes, first)``: ``codes[i]`` is the group of row i and ``first[g]`` the
    index of the first row of group g. Open addressing with linear probing; equal rows
    (byte for byte) are one group.
    """
    size = rows.shape[0]
    cap = 16
    while cap < 2 * size:
        cap *= 2
    mask = np.uint64(cap - 1)
    table = np.full(cap, -1, np.int64)
    codes = np.empty(size, np.int64)
    first = np.empty(size, np.int64)
    count = 0
    for i in range(size):
        slot = np.int64(_hash_row(rows, i) & mask)
        while True:
            code = table[slot]
            if code < 0:
                table[slot] = count
                first[count] = i
                codes[i] = count
                count += 1
                break
            if _rows_equal(rows, first[code], i):
                codes[i] = code
                break
            slot = (slot + 1) & (cap - 1)
    return codes, first[:count].copy()


@jit
def csr(codes, count, holes):
    """Stable counting sort of rollouts by group code; rollouts with ``holes[i]`` are left out.

    Returns ``(order, offsets, first)``: the rollouts of group g are
    ``order[offsets[g]:offsets[g+1]]`` in input order; ``first[g]`` is the position of the
    group's first rollout, holes included.
    """
    offsets = np.zeros(count + 1, np.int64)
    first = np.full(count, -1, np.int64)
    for i in range(codes.size):
        code = codes[i]
        if first[code] < 0:
            first[code] = i
        if not holes[i]:
            offsets[code + 1] += 1
    for g in range(count):
        offsets[g + 1] += offsets[g]
    fill = offsets[:-1].copy()
    order = np.empty(offsets[count], np.int64)
    for i in range(codes.size):
        if not holes[i]:
            code = codes[i]
            order[fill[code]] = i
            fill[code] += 1
    return order, offsets, first


# ---------------------------------------------------------------------------------------------
# Advantages. Scores of a group sorted ascending are z[0] <= ... <= z[n-1]; with 1-based i,
# w[i-1] = C(i-1, k-1) / C(n, k) (i is the max of a random k-subset) and
# v[j-1] = C(j-2, k-2) / C(n, k) (a subset holding a given lower rollout has its max at j).
# Both are filled downwards from their largest entry by the ratio recurrence, so nothing
# overflows and the smallest weights underflow to 0 gracefully (n in the thousands).

EST_PKPO = 0
EST_PKPO_LOO = 1
EST_PKPO_LOO1 = 2
EST_MAXK = 3
EST_GRPO_PASSK = 4

NORM_NONE = 0
NORM_GROUP = 1
NORM_BATCH = 2


@jit
def weights_max(n, k, w):
    """w[i-1] = C(i-1, k-1) / C(n, k), i = 1..n: P(sorted position i is the max of k)."""
    w[n - 1] = k / n
    for i in range(n, 1, -1):
        w[i - 2] = w[i - 1] * (i - k) / (i - 1) if i > k else 0.0


@jit
def weights_pair(n, k, v):
    """v[j-1] = C(j-2, k-2) / C(n, k), j = 2..n; v[0] = 0 (all 0 for k = 1)."""
    v[:n] = 0.0
    if k < 2:
        return
    v[n - 1] = k * (k - 1) / (n * (n - 1.0))
    for j in range(n, 2, -1):
        v[j - 2] = v[j - 1] * (j - k) / (j - 2) if j > k else 0.0


@jit
def _pkpo_s(z, n, k, w, v, res):
    """PKPO s_i = sum over k-subsets S holding i of max(S) / C(n, k).

    The weights of s_i sum to k/n, so s_i = (k/n) z[n-1] - (w_i d_i + sum_{j>i} v_j d_j) with
    the gaps to the top d = z[n-1] - z >= 0: maxima sit near the top, and the sum is of
    non-negative terms.
    """
    tail = 0.0
    top = z[n - 1]
    base = k / n * top
    for i in range(n - 1, -1, -1):
        d = top - z[i]
        res[i] = base - (w[i] * d + tail)
        tail += v[i] * d


@jit
def _pkpo_loo1(z, n, v, res):
    """s_loo-1: sum_{j<i} C(j-1, k-2) (z_i - z_j) / C(n, k), a sum of non-negative terms."""
    res[0] = 0.0
    cum = 0.0
    for p in range(1, n):
        cum += v[p]
        res[p] = res[p - 1] + (z[p] - z[p - 1]) * cum


@jit
def _pkpo_loo(z, n, k, w, v, w1, res):
    """s_loo = s_i - k / (n - 1) * best@k of the group without i (w1: the weights for n - 1).

    With the gaps d = z[n-1] - z: s_i = (k/n) z[n-1] - (w_i d_i + sum_{j>i} v_j d_j) and
    best@k without i = z[n-1] - (sum_{j<i} w1[j] d_j + sum_{j>i} w1[j-1] d_j); the z[n-1]
    terms combine exactly into -k z[n-1] / (n (n-1)).
    """
    scale = k / (n - 1.0)
    top = z[n - 1]
    base = top * (-k / (n * (n - 1.0)))
    tail = 0.0
    tail1 = 0.0
    for i in range(n - 1, -1, -1):
        d = top - z[i]
        res[i] = scale * tail1 - (w[i] * d + tail)
        tail += v[i] * d
        if i >= 1:
            tail1 += w1[i - 1] * d
    head = 0.0
    for i in range(n):
        res[i] = base + (res[i] + scale * head)
        if i < n - 1:
            head += w1[i] * (top - z[i])


@jit
def _maxk(z, n, k, w, v, res):
    """((n/k) s_i - best@k) / sigma, sigma^2 = sum_i w_i (z_i - best@k)^2 (Chen et al. 2025).

    Affine invariant, so computed on the gaps to the top, d = (z[n-1] - z) / (z[n-1] - z[k-1]),
    in [0, 1] wherever a weight is non-zero (the max of a k-subset is never below z[k-1];
    w and v vanish below k-1, where d is set to 0): best@k = 1 - D with D = sum_i w_i d_i,
    and (n/k) s_i = 1 - (n/k) E_i with E_i = w_i d_i + sum_{j>i} v_j d_j. D and E_i are sums of
    non-negative terms, so a tiny sigma (pass@k near 1) keeps its relative accuracy. When
    z[k-1] == z[n-1] every k-subset has the same max: sigma = 0 and the advantage is exactly 0.
    """
    if z[k - 1] == z[n - 1]:
        res[:n] = 0.0
        return
    span = z[n - 1] - z[k - 1]
    for i in range(n):
        res[i] = (z[n - 1] - z[i]) / span if i >= k - 1 else 0.0
    gap = 0.0
    for i in range(n):
        gap += w[i] * res[i]
    var = 0.0
    for i in range(n):
        var += w[i] * (res[i] - gap) ** 2
    # var underflows only when the top scores tie over a block so long that every weight below
    # it is < 1e-308; then |advantage| < 1e-150 and 0 is its correct rounding.
    sigma = np.sqrt(var)
    tail = 0.0
    scale = n / k
    for i in range(n - 1, -1, -1):
        d = res[i]
        res[i] = (gap - scale * (w[i] * d + tail)) / sigma if var > 0.0 else 0.0
        tail += v[i] * d


@jit
def _std(z, n):
    """Sample standard deviation (n - 1), two passes over the sorted group."""
    if n < 2:
        return 0.0
    mean = 0.0
    for i in range(n):
        mean += z[i]
    mean /= n
    ss = 0.0
    for i in range(n):
        ss += (z[i] - mean) ** 2
    return np.sqrt(ss / (n - 1))


@jit
def _sorted_group(z, n, k, est, w, v, w1, eps, res):
    """Advantages at the sorted positions of one group; tied scores get one value."""
    if est == EST_PKPO:
        _pkpo_s(z, n, k, w, v, res)
    elif est == EST_PKPO_LOO:
        _pkpo_loo(z, n, k, w, v, w1, res)
    elif est == EST_MAXK:
        _maxk(z, n, k, w, v, res)
    else:
        _pkpo_loo1(z, n, v, res)
        if est == EST_GRPO_PASSK:
            scale = 1.0 / (_std(z, n) + eps)
            for i in range(n):
                res[i] *= scale
    for i in range(1, n):
        if z[i] == z[i - 1]:
            res[i] = res[i - 1]


@jit
def ratio(a, b, m):
    """C(a, m) / C(b, m) for 0 <= a <= b, as a product of m factors <= 1 (0 when m > a)."""
    if m > a:
        return 0.0
    out = 1.0
    for j in range(m):
        out *= (a - j) / (b - j)
    return out


@jit
def _binary(n, c, k, est, eps):
    """Closed forms (a_correct, a_incorrect) for a group of 0/1 scores with c correct."""
    if est == EST_PKPO:
        return k / n, k / n * (1.0 - ratio(n - 1 - c, n - 1, k - 1))
    if est == EST_PKPO_LOO:
        m = n - 1.0
        a1 = k / n - k / m * (1.0 - ratio(n - c, n - 1, k))
        a0 = k / n * (1.0 - ratio(n - 1 - c, n - 1, k - 1))
        a0 -= k / m * (1.0 - ratio(n - 1 - c, n - 1, k))
        return a1, a0
    if est == EST_MAXK:
        q = ratio(n - c, n, k)  # 1 - pass@k
        if c == 0 or q == 0.0:
            return 0.0, 0.0
        a1 = np.sqrt(q / (1.0 - q))
        return a1, -c / (n - c) * a1
    a1 = k / n * ratio(n - c, n - 1, k - 1)
    if est == EST_GRPO_PASSK:
        a1 = a1 / (np.sqrt(c * (n - c) / (n * (n - 1.0))) + eps) if 0 < c < n else 0.0
    return a1, 0.0


@jit
def _binary_count(raw, n):
    """Number of 1.0 scores when every score is 0.0 or 1.0, else -1."""
    c = 0
    for i in range(n):
        if raw[i] == 1.0:
            c += 1
        elif raw[i] != 0.0:
            return -1
    return c


@jit
def _group_scale(z, n, norm, batch_scale, eps):
    """The factor of the normalization: 1, 1 / (std + eps) of the group, or of the batch."""
    if norm == NORM_BATCH:
        return batch_scale
    if norm == NORM_NONE:
        return 1.0
    lo = z[0]
    hi = z[0]
    for i in range(n):
        lo = min(lo, z[i])
        hi = max(hi, z[i])
    if lo == hi:
        return 0.0
    return 1.0 / (_std(np.sort(z[:n]), n) + eps)


@jit
def _sort_group(raw, n, perm, z):
    """perm: a stable argsort of raw[:n]; z = raw[perm] (insertion sort for small groups)."""
    if n > 32:
        # element by element: a slice assignment of an array compiles numba's shape-mismatch
        # message (its string formatting), about a fifth of this module's cold compile
        order = np.argsort(raw[:n], kind="mergesort")
        for i in range(n):
            perm[i] = order[i]
    else:
        for i in range(n):
            x = raw[i]
            j = i
            while j > 0 and raw[perm[j - 1]] > x:
                perm[j] = perm[j - 1]
                j -= 1
            perm[j] = i
    for i in range(n):
        z[i] = raw[perm[i]]


@jit
def advantages_groups(values, order, offsets, k, est, closed, norm, batch_scale, eps, out):
    """Per-rollout advantages into ``out`` (flat, holes untouched) for every CSR group."""
    width = 1
    for g in range(offsets.size - 1):
        width = max(width, offsets[g + 1] - offsets[g])
    raw = np.empty(width)
    res = np.empty(width)
    w = np.empty(width)
    v = np.empty(width)
    w1 = np.empty(width)
    z = np.empty(width)
    perm = np.empty(width, np.int64)
    prev = -1
    for g in range(offsets.size - 1):
        lo = offsets[g]
        n = offsets[g + 1] - lo
        for t in range(n):
            raw[t] = values[order[lo + t]]
        if n == 0:
            continue
        scale = _group_scale(raw, n, norm, batch_scale, eps)
        c = _binary_count(raw, n) if closed else -1
        if c >= 0:
            a1, a0 = _binary(n, c, k, est, eps)
            for t in range(n):
                a = a1 if raw[t] == 1.0 else a0
                out[order[lo + t]] = a * scale if scale != 0.0 else 0.0
            continue
        if n != prev:
            weights_max(n, k, w)
            weights_pair(n, k, v)
            if est == EST_PKPO_LOO:
                weights_max(n - 1, k, w1)
            prev = n
        _sort_group(raw, n, perm, z)
        _sorted_group(z, n, k, est, w, v, w1, eps, res)
        for t in range(n):
            out[order[lo + perm[t]]] = res[t] * scale if scale != 0.0 else 0.0
