"""Numba kernels for pass@k, pass^k and P0 = C(n-c, k) / C(n, k).

Kernels see int64 arrays and float64 tables only; validation messages are built by ``_api``.
The method and its error analysis are in docs/estimator.md (after shared/design/numerics.md):

* c = 0 or c + k > n: exact 0 and 1.
* min(c, k) == 1: one correctly rounded division.
* n <= 2**17: ln P0 in double-double from a table of ln(i!).
* otherwise min(c, k) <= 32: the product of min(c, k) factors in double-double.
* otherwise: Stirling's series for the four ln m! with the large terms cancelled on paper,
  every logarithm in double-double.

Every function here is compiled without fastmath: the error-free transformations below rely
on exact IEEE rounding.
"""

import math

import numpy as np

from . import _lnfact
from ._jit import fma, jit, prange
from ._validation import MAX_N, TABLE_MAX

PRODUCT_MAX = 32

MODE_PASS = 0  # pass@k = 1 - P0(n, c, k)
MODE_HAT = 1  # pass^k = P0(n, n - c, k)
MODE_FAIL = 2  # P0(n, c, k)

_LN2_HI = 0.6931471805599453
_LN2_LO = 2.3190468138462996e-17
_HALF_LN2PI_HI = 0.9189385332046728
_HALF_LN2PI_LO = -3.8782941580672414e-17

# delta(m) = ln m! - [(m + 1/2) ln m - m + ln(2 pi) / 2] for m = 0..30 (entry 0 unused),
# rounded from 60-digit decimal; tests/test_api.py recomputes them.
_DELTA_HI = np.array([
    0.0,
    0.08106146679532726, 0.0413406959554093, 0.02767792568499834,
    0.020790672103765093, 0.016644691189821193, 0.013876128823070748,
    0.01189670994589177, 0.010411265261972096, 0.009255462182712733,
    0.00833056343336287, 0.007573675487951841, 0.00694284010720953,
    0.006408994188004207, 0.0059513701127588475, 0.005554733551962801,
    0.0052076559196096404, 0.004901395948434738, 0.004629153749334028,
    0.004385560249232324, 0.004166319691996922, 0.00396795421864086,
    0.0037876180684444346, 0.0036229602246830948, 0.003472021382978767,
    0.003333155636728093, 0.003204970228055038, 0.0030862786826087773,
    0.002976063983550409, 0.0028734493623524663, 0.0027776749297526936,
])


@jit(inline="always")
def _two_sum(a, b):
    s = a + b
    t = s - a
    return s, (a - (s - t)) + (b - t)


@jit(inline="always")
def _fast_two_sum(a, b):
    s = a + b
    return s, b - (s - a)


@jit(inline="always")
def _two_prod(a, b):
    p = a * b
    return p, fma(a, b, -p)


@jit(inline="always")
def _dd_add(ah, al, bh, bl):
    s, e = _two_sum(ah, bh)
    t, f = _two_sum(al, bl)
    e += t
    s, e = _fast_two_sum(s, e)
    e += f
    return _fast_two_sum(s, e)


@jit(inline="always")
def _dd_add_pos(ah, al, bh, bl):
    # for operands of one sign: no cancellation, so the cheap form keeps full accuracy
    s, e = _two_sum(ah, bh)
    return _fast_two_sum(s, e + (al + bl))


@jit(inline="always")
def _dd_mul(ah, al, bh, bl):
    p, e = _two_prod(ah, bh)
    e += ah * bl + al * bh
    return _fast_two_sum(p, e)


@jit(inline="always")
def _dd_mul_d(ah, al, b):
    p, e = _two_prod(ah, b)
    e += al * b
    return _fast_two_sum(p, e)


@jit(inline="always")
def _dd_div(ah, al, bh, bl):
    # relative error about 2**-104: one correction step after the leading quotient
    q1 = ah / bh
    ph, pl = _two_prod(q1, bh)
    r = ((ah - ph) - pl + al) - q1 * bl
    return _fast_two_sum(q1, r / bh)


_LN1P_STEPS = _lnfact.LN1P_STEPS
_LN1P_HI, _LN1P_LO = (np.ascontiguousarray(a) for a in np.load(_lnfact.LN1P_PATH))


@jit
def _log1p_dd(zh, zl):
    """ln(1 + z) in double-double (relative error below 2**-95) for -1/2 <= z <= 1/2.

    1 + z = (1 + t)(1 + w) with t = i/512 from a table, and ln(1 + w) = 2 atanh(v) with
    v = w / (2 + w) = (z - t) / (2 + t + z), |v| < 2**-10. Past v itself the series terms
    are below 2**-22 relative, so they need only double precision.
    """
    i = math.floor(zh * _LN1P_STEPS + 0.5)
    t = i / _LN1P_STEPS
    rh, rl = _dd_add(zh, zl, -t, 0.0)
    dh, dl = _dd_add(2.0 + t, 0.0, zh, zl)
    vh, vl = _dd_div(rh, rl, dh, dl)
    v2 = vh * vh
    tail = vh * v2 * (1.0 / 3.0 + v2 * (1.0 / 5.0 + v2 * (1.0 / 7.0 + v2 * (1.0 / 9.0))))
    sh, sl = _dd_add(vh, vl, tail, 0.0)
    j = i + _LN1P_STEPS // 2
    return _dd_add(_LN1P_HI[j], _LN1P_LO[j], 2.0 * sh, 2.0 * sl)


@jit
def _log_dd(xh, xl):
    """ln(x) in double-double for a positive double-double x."""
    f, e = math.frexp(xh)
    if f < 0.7071067811865476:
        e -= 1
    fh = math.ldexp(xh, -e)
    fl = math.ldexp(xl, -e)
    # fh lies in [0.70, 1.42), so fh - 1 is exact.
    lh, ll = _log1p_dd(fh - 1.0, fl)
    eh, el = _dd_mul_d(_LN2_HI, _LN2_LO, float(e))
    return _dd_add(eh, el, lh, ll)


@jit
def _log1m_ratio(ph, pl, qh, ql):
    """ln(1 - p/q) in double-double for double-double 0 < p < q."""
    uh, ul = _dd_div(ph, pl, qh, ql)
    if uh <= 0.5:
        return _log1p_dd(-uh, -ul)
    rh, rl = _dd_add(qh, ql, -ph, -pl)
    xh, xl = _dd_div(rh, rl, qh, ql)
    return _log_dd(xh, xl)


@jit
def _delta(m):
    """Stirling's error delta(m) = ln m! - (m + 1/2) ln m + m - ln(2 pi)/2, for m >= 1."""
    if m <= 30.0:
        return _DELTA_HI[int(m)]
    r = 1.0 / m
    r2 = r * r
    return r * (1.0 / 12.0 - r2 * (1.0 / 360.0 - r2 * (1.0 / 1260.0 - r2 * (
        1.0 / 1680.0 - r2 * (1.0 / 1188.0)))))


@jit
def _log_p0_stirling(n, c, k):
    """ln P0 in double-double for n > 2**17 and min(c, k) > 32 (and c + k <= n)."""
    a = n - c - k
    b = n - k
    d = n - c
    # k ln(1 - c/n) + c ln(1 - k/n)
    h1, l1 = _log1m_ratio(c, 0.0, n, 0.0)
    h1, l1 = _dd_mul_d(h1, l1, k)
    h2, l2 = _log1m_ratio(k, 0.0, n, 0.0)
    h2, l2 = _dd_mul_d(h2, l2, c)
    sh, sl = _dd_add(h1, l1, h2, l2)
    ckh, ckl = _two_prod(c, k)
    if a == 0.0:
        # L = c ln(c/n) + k ln(k/n) + ln(2 pi c k / n) / 2 + delta(c) + delta(k) - delta(n)
        xh, xl = _dd_div(ckh, ckl, n, 0.0)
        lh, ll = _log_dd(xh, xl)
        lh, ll = _dd_add(lh * 0.5, ll * 0.5, _HALF_LN2PI_HI, _HALF_LN2PI_LO)
        sh, sl = _dd_add(sh, sl, lh, ll)
        dd = (_delta(c) + _delta(k)) - _delta(n)
        return _dd_add(sh, sl, dd, 0.0)
    # -(a + 1/2) ln(1 - x), with 1 - x = a n / (b d)
    bdh, bdl = _two_prod(b, d)
    lh, ll = _log1m_ratio(ckh, ckl, bdh, bdl)
    if a < 2.0**52:
        lh, ll = _dd_mul_d(lh, ll, -(a + 0.5))
    else:
        lh, ll = _dd_mul(lh, ll, -a, -0.5)
    sh, sl = _dd_add(sh, sl, lh, ll)
    dd = (_delta(b) - _delta(n)) + (_delta(d) - _delta(a))
    return _dd_add(sh, sl, dd, 0.0)


@jit
def _from_log(h, l, mode):
    if mode == MODE_PASS:
        em = math.expm1(h)
        return -em - l * (1.0 + em)
    e = math.exp(h)
    return e + e * l


@jit
def _product(n, c, k, mode):
    """P0 or 1 - P0 from the min(c, k) factors (n - j - s) / (n - j), s = max(c, k).

    With den = prod (n - j), num = prod (n - j - s) and D = den - num, the recurrence
    D' = (n - j) D + s num has only positive terms, so 1 - P0 = D / den keeps its relative
    accuracy however small it is. Powers of two rescale all three against overflow.
    """
    s = max(c, k)
    m = int(min(c, k))
    dh, dl = 1.0, 0.0
    uh, ul = 1.0, 0.0
    gh, gl = 0.0, 0.0
    for j in range(m):
        f = n - j
        th, tl = _dd_mul_d(uh, ul, s)
        gh, gl = _dd_mul_d(gh, gl, f)
        gh, gl = _dd_add_pos(gh, gl, th, tl)
        dh, dl = _dd_mul_d(dh, dl, f)
        uh, ul = _dd_mul_d(uh, ul, f - s)
        if j % 8 == 7:
            e = -math.frexp(dh)[1]
            dh, dl = math.ldexp(dh, e), math.ldexp(dl, e)
            uh, ul = math.ldexp(uh, e), math.ldexp(ul, e)
            gh, gl = math.ldexp(gh, e), math.ldexp(gl, e)
    if mode == MODE_PASS:
        rh, rl = _dd_div(gh, gl, dh, dl)
    else:
        rh, rl = _dd_div(uh, ul, dh, dl)
    return rh + rl


@jit(inline="always")
def p0_or_pass(n, c, k, mode, th, tl):
    """pass@k (mode MODE_PASS) or P0 (otherwise) for one valid triple, as float64."""
    if c == 0:
        return 0.0 if mode == MODE_PASS else 1.0
    if c + k > n:
        return 1.0 if mode == MODE_PASS else 0.0
    fn = float(n)
    fc = float(c)
    fk = float(k)
    # P0 <= (1 - c/n)**k <= exp(-ck/n): past these bounds the rounded result is exact.
    if mode == MODE_PASS:
        if fc * fk > 38.0 * fn:
            return 1.0
    elif fc * fk > 746.0 * fn:
        return 0.0
    if c == 1 or k == 1:
        s = max(fc, fk)
        return s / fn if mode == MODE_PASS else (fn - s) / fn
    if n <= TABLE_MAX:
        h1, l1 = _dd_add(th[n - c], tl[n - c], -th[n], -tl[n])
        h2, l2 = _dd_add(th[n - k], tl[n - k], -th[n - c - k], -tl[n - c - k])
        h, l = _dd_add(h1, l1, h2, l2)
        return _from_log(h, l, mode)
    if min(c, k) <= PRODUCT_MAX:
        return _product(fn, fc, fk, mode)
    h, l = _log_p0_stirling(fn, fc, fk)
    return _from_log(h, l, mode)


@jit(inline="always")
def value(n, c, k, mode, th, tl):
    """The requested quantity (MODE_PASS, MODE_HAT or MODE_FAIL) for one valid triple."""
    if mode == MODE_HAT:
        return p0_or_pass(n, n - c, k, MODE_FAIL, th, tl)
    return p0_or_pass(n, c, k, mode, th, tl)


@jit(inline="always")
def _valid(n, c, k):
    return 0 <= c and c <= n and 1 <= k and k <= n and n < MAX_N


@jit
def _fill(n, c, k, mode, th, tl, out, lo, hi):
    sn = 1 if n.size > 1 else 0
    sc = 1 if c.size > 1 else 0
    sk = 1 if k.size > 1 else 0
    bad = 0
    for i in range(lo, hi):
        ni = n[i * sn]
        ci = c[i * sc]
        ki = k[i * sk]
        if _valid(ni, ci, ki):
            out[i] = value(ni, ci, ki, mode, th, tl)
        else:
            out[i] = np.nan
            bad += 1
    return bad


@jit
def bulk_serial(n, c, k, mode, th, tl, out):
    """out[i] = value(n[i], c[i], k[i]); length-1 inputs broadcast. Returns the invalid count.

    Invalid positions get NaN; the caller decides whether that is an error.
    """
    return _fill(n, c, k, mode, th, tl, out, 0, out.size)


@jit(parallel=True)
def bulk(n, c, k, mode, th, tl, out):
    """:func:`bulk_serial` over blocks of 4096 triples on numba's threads."""
    size = out.size
    nblocks = (size + 4095) // 4096
    bad = 0
    for blk in prange(nblocks):
        lo = blk * 4096
        bad += _fill(n, c, k, mode, th, tl, out, lo, min(lo + 4096, size))
    return bad


@jit
def _one(ni, ci, ki, mode, th, tl, out, i):
    """The value of one triple outside the table, or NaN; returns 1 if it was invalid."""
    if _valid(ni, ci, ki):
        out[i] = value(ni, ci, ki, mode, th, tl)
        return 0
    out[i] = np.nan
    return 1


@jit
def sample_pairs(n, k, size, nsample, maxpairs):
    """Distinct (n, k) among ``nsample`` evenly spaced triples, when tabulating them pays.

    Returns (pn, pk); both are empty when the sample has too many distinct pairs, too many
    pairs outside the table range, or when the tables would cost more than half a pass.
    """
    sn = 1 if n.size > 1 else 0
    sk = 1 if k.size > 1 else 0
    slots = 4 * maxpairs
    keys = np.full(slots, -1, np.int64)
    pn = np.empty(maxpairs, np.int64)
    pk = np.empty(maxpairs, np.int64)
    count = 0
    usable = 0
    cost = 0
    step = max(size // nsample, 1)
    for i in range(0, size, step):
        ni = n[i * sn]
        ki = k[i * sk]
        if not (1 <= ki and ki <= ni and ni <= TABLE_MAX):
            continue
        usable += 1
        key = (ni << 18) | ki
        h = (key * 0x9E3779B1) & (slots - 1)
        while keys[h] != -1 and keys[h] != key:
            h = (h + 1) & (slots - 1)
        if keys[h] == -1:
            if count == maxpairs:
                return pn[:0], pk[:0]
            keys[h] = key
            pn[count] = ni
            pk[count] = ki
            count += 1
            cost += ni + 1
    if 2 * usable < (size + step - 1) // step or 2 * cost > size:
        return pn[:0], pk[:0]
    return pn[:count], pk[:count]


@jit
def _tabulate(pn, pk):
    """Index arrays for the pairs (pn[p], pk[p]): pair p's vector starts at offs[row[n]*K + k]."""
    nmax = pn.max()
    kstride = pk.max() + 1
    row = np.full(nmax + 1, -1, np.int64)
    nrow = 0
    for p in range(pn.size):
        if row[pn[p]] < 0:
            row[pn[p]] = nrow
            nrow += 1
    offs = np.full(nrow * kstride, -1, np.int64)
    total = 0
    for p in range(pn.size):
        offs[row[pn[p]] * kstride + pk[p]] = total
        total += pn[p] + 1
    owner = np.empty(total, np.int64)
    total = 0
    for p in range(pn.size):
        owner[total:total + pn[p] + 1] = p
        total += pn[p] + 1
    return row, offs, owner, kstride


@jit(parallel=True)
def bulk_reuse(n, c, k, mode, th, tl, out, pn, pk):
    """:func:`bulk` for archives with few distinct (n, k): tabulate, then look up.

    Each listed pair (pn[p], pk[p]) (valid, n <= TABLE_MAX) gets the vector of values over
    c = 0..n, computed by :func:`value`; a triple with a listed pair reads its value, any
    other triple is computed directly. The results are identical to :func:`bulk`.
    """
    size = out.size
    sn = 1 if n.size > 1 else 0
    sc = 1 if c.size > 1 else 0
    sk = 1 if k.size > 1 else 0
    row, offs, owner, kstride = _tabulate(pn, pk)
    vals = np.empty(owner.size)
    nchunks = (owner.size + 63) // 64
    for it in prange(nchunks):
        # Threads take contiguous ranges of `it`; a permutation of the chunks spreads cheap
        # (k = 1) and dear pairs evenly over them. 65521 is a prime above any chunk count.
        ch = (it * 65521) % nchunks
        for j in range(ch * 64, min(ch * 64 + 64, owner.size)):
            p = owner[j]
            start = offs[row[pn[p]] * kstride + pk[p]]
            vals[j] = value(pn[p], j - start, pk[p], mode, th, tl)
    nmax = row.size - 1
    kmax = kstride - 1
    bad = 0
    if sn == 1 and sc == 1 and sk == 1:
        # Branch-free, so that LLVM turns the three lookups into vector gathers; the rare
        # misses (pairs outside the table, invalid triples) are counted, then redone below.
        misses = 0
        for i in prange(size):
            ni = n[i]
            ci = c[i]
            ki = k[i]
            okn = (ni >= 0) & (ni <= nmax)
            okk = (ki >= 0) & (ki <= kmax)
            r = row[ni if okn else 0]
            o = offs[(r if r >= 0 else 0) * kstride + (ki if okk else 0)]
            ok = okn & okk & (r >= 0) & (o >= 0) & (ci >= 0) & (ci <= ni)
            out[i] = vals[o + ci if ok else 0]
            misses += 0 if ok else 1
        if misses == 0:
            return 0
    nblocks = (size + 4095) // 4096
    for blk in prange(nblocks):
        lo = blk * 4096
        hi = min(lo + 4096, size)
        for i in range(lo, hi):
            ni = n[i * sn]
            ci = c[i * sc]
            ki = k[i * sk]
            o = -1
            if 0 <= ni <= nmax and 0 <= ki <= kmax:
                r = row[ni]
                if r >= 0:
                    o = offs[r * kstride + ki]
            if o >= 0 and 0 <= ci <= ni:
                out[i] = vals[o + ci]
            else:
                bad += _one(ni, ci, ki, mode, th, tl, out, i)
    return bad
