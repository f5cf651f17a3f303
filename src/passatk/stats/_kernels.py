"""Numba kernels for the resampling statistics in :mod:`passatk.stats`.

Random numbers come from SplitMix64 streams that are local to each kernel call: the caller
passes a 64-bit seed (drawn from its ``numpy.random.Generator``), so no global random state
is read or written, in NumPy or in numba. Resamples are produced in fixed-size chunks, each
with its own stream derived from (seed, chunk index), so the output does not depend on the
number of threads.
"""

import math

import numpy as np

from .._api import EXACT_MAX_N, EXACT_MAX_SIZE
from .._jit import jit, prange, threads_usable

CHUNK = 64  # resamples per random stream

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_TWO_M53 = 1.0 / 9007199254740992.0


@jit
def _mix(z):
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@jit
def _stream(seed, chunk):
    """Initial state of the stream for one chunk of resamples."""
    return _mix(np.uint64(seed) ^ _mix(np.uint64(chunk) * _GOLDEN + _GOLDEN))


@jit
def _next(state):
    """One SplitMix64 step: (new state, 64 random bits)."""
    state = state + _GOLDEN
    return state, _mix(state)


@jit
def _index(bits, n):
    """A uniform index in [0, n) from 64 random bits (top 53 bits; bias below n / 2**53)."""
    j = np.int64(np.float64(bits >> _S11) * _TWO_M53 * n)
    return min(j, n - 1)


@jit
def _boot_chunk(theta, seed, ch, n_resamples, out):
    """Fill rows [ch*CHUNK, ...) of ``out`` with bootstrap means from chunk ch's stream."""
    n, kk = theta.shape
    state = _stream(seed, ch)
    acc = np.empty(kk)
    lo = ch * CHUNK
    hi = min(lo + CHUNK, n_resamples)
    for b in range(lo, hi):
        if kk == 1:
            s = 0.0
            for _ in range(n):
                state, bits = _next(state)
                s += theta[_index(bits, n), 0]
            out[b, 0] = s / n
        else:
            acc[:] = 0.0
            for _ in range(n):
                state, bits = _next(state)
                j = _index(bits, n)
                for m in range(kk):
                    acc[m] += theta[j, m]
            for m in range(kk):
                out[b, m] = acc[m] / n


@jit(parallel=True)
def _boot_means_parallel(theta, seed, n_resamples):
    out = np.empty((n_resamples, theta.shape[1]))
    n_chunks = (n_resamples + CHUNK - 1) // CHUNK
    for ch in prange(n_chunks):
        _boot_chunk(theta, seed, ch, n_resamples, out)
    return out


@jit
def _boot_means_serial(theta, seed, n_resamples):
    out = np.empty((n_resamples, theta.shape[1]))
    n_chunks = (n_resamples + CHUNK - 1) // CHUNK
    for ch in range(n_chunks):
        _boot_chunk(theta, seed, ch, n_resamples, out)
    return out


PARALLEL_WORK = 20_000_000  # index draws (x columns) below which one thread is used


def boot_means(theta, seed, n_resamples, parallel=None):
    """Means of ``n_resamples`` bootstrap resamples of the rows of ``theta`` (N x K).

    Every resample draws N row indices uniformly with replacement and averages each of the
    K columns over the same rows, so the columns share their resampling weights (paired).
    Returns a float64 array of shape (n_resamples, K). The result is the same with one
    thread or many; small problems run on one thread (``parallel=None`` decides by size).
    """
    theta = np.ascontiguousarray(theta, dtype=np.float64)
    seed = np.uint64(seed)
    if parallel is None:
        parallel = theta.size * n_resamples >= PARALLEL_WORK
    if parallel and threads_usable():  # not in a forked child of an OpenMP parent
        return _boot_means_parallel(theta, seed, n_resamples)
    return _boot_means_serial(theta, seed, n_resamples)


@jit
def boot_indices(n, seed, n_resamples):
    """The row indices that :func:`boot_means` draws, as an (n_resamples, n) array (for tests)."""
    out = np.empty((n_resamples, n), dtype=np.int64)
    n_chunks = (n_resamples + CHUNK - 1) // CHUNK
    for ch in range(n_chunks):
        state = _stream(seed, ch)
        lo = ch * CHUNK
        hi = min(lo + CHUNK, n_resamples)
        for b in range(lo, hi):
            for i in range(n):
                state, bits = _next(state)
                out[b, i] = _index(bits, n)
    return out


@jit
def signflip_exact(d, tol):
    """Exact sign-flip count: #{sign patterns s : |sum s_i d_i| >= |sum d_i| - tol}.

    Enumerates all 2**N patterns in Gray-code order, one flip per step. N <= 30.
    """
    n = d.shape[0]
    t = 0.0
    for i in range(n):
        t += d[i]
    target = abs(t) - tol
    s = t
    count = 1 if abs(s) >= target else 0
    total = np.int64(1) << n
    signs = np.ones(n)
    for g in range(1, total):
        # the bit that changes between Gray codes g-1 and g is the lowest set bit of g
        bit = 0
        x = g
        while (x & 1) == 0:
            x >>= 1
            bit += 1
        s -= 2.0 * signs[bit] * d[bit]
        signs[bit] = -signs[bit]
        if abs(s) >= target:
            count += 1
    return count, total


@jit
def signflip_random(d, tol, seed, n_resamples):
    """Random sign-flip count over ``n_resamples`` patterns (one random bit per task)."""
    n = d.shape[0]
    t = 0.0
    for i in range(n):
        t += d[i]
    target = abs(t) - tol
    n_chunks = (n_resamples + CHUNK - 1) // CHUNK
    counts = np.zeros(n_chunks, dtype=np.int64)
    for ch in range(n_chunks):
        state = _stream(seed, ch)
        lo = ch * CHUNK
        hi = min(lo + CHUNK, n_resamples)
        c = 0
        for _ in range(lo, hi):
            s = 0.0
            bits = np.uint64(0)
            for i in range(n):
                if i % 64 == 0:
                    state, bits = _next(state)
                if bits & np.uint64(1):
                    s += d[i]
                else:
                    s -= d[i]
                bits = bits >> np.uint64(1)
            if abs(s) >= target:
                c += 1
        counts[ch] = c
    return counts.sum()


def one_minus_ratio(n, c, k):
    """1 - P0(n-k, c, k) / P0(n, c, k) per task (int64 arrays n, c; int k; n >= 2k).

    Small calls (the sizes of ``_api``'s exact path) use exact binomials and leave numba
    unstarted; others the kernel :func:`_one_minus_ratio`.

    >>> float(one_minus_ratio(np.array([10]), np.array([2]), 3)[0])  # 1 - (4/10) / (7/15)
    0.3877551020408163
    """
    if n.size <= EXACT_MAX_SIZE and (n.size == 0 or int(n.max()) <= EXACT_MAX_N):
        k = int(k)
        return np.array([_one_minus_ratio_exact(a, b, k) for a, b in
                         zip(n.tolist(), c.tolist(), strict=True)], dtype=np.float64)
    return _one_minus_ratio(n, c, k)


def _one_minus_ratio_exact(n, c, k):
    if c == 0:
        return 0.0
    if c + k > n - k:
        return 1.0
    num = math.comb(n - k - c, k) * math.comb(n, k)
    den = math.comb(n - k, k) * math.comb(n - c, k)
    return (den - num) / den


@jit
def _one_minus_ratio(n, c, k):
    """1 - P0(n-k, c, k) / P0(n, c, k) per task, without cancellation (needs n >= 2k).

    The ratio is a product whose factors are 1 - (exact integer) / (exact integer):
    over j < c, 1 - k^2 / (n-k-j)^2; or over j < k, 1 - c k / ((n-k-j)(n-c-j)). Their logs are
    summed with log1p and the result is -expm1(sum), so small values keep full relative
    accuracy (the direct difference P0(n,c,k)^2 - P0(n,c,2k) loses digits when n >> c, k).
    """
    m = n.shape[0]
    out = np.empty(m)
    for i in range(m):
        ni = n[i]
        ci = c[i]
        if ci == 0:
            out[i] = 0.0
        elif ci + k > ni - k:
            out[i] = 1.0
        else:
            s = 0.0
            if ci <= k:
                kf = np.float64(k)
                for j in range(ci):
                    d = np.float64(ni - k - j)
                    s += np.log1p(-(kf * kf) / (d * d))
            else:
                ck = np.float64(ci) * np.float64(k)
                for j in range(k):
                    s += np.log1p(-ck / (np.float64(ni - k - j) * np.float64(ni - ci - j)))
            out[i] = -np.expm1(s)
    return out


@jit
def _lbeta_nb(a, b):
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


@jit
def _log_fail_moment(a, b, m):
    """ln E[(1-p)^m] for p ~ Beta(a, b): ln B(a, b + m) - ln B(a, b)."""
    return (math.lgamma(b + m) - math.lgamma(b) + math.lgamma(a + b)
            - math.lgamma(a + b + m))


@jit
def hier_nodes(a, b, n_u, c_u, w_u, k):
    """Per quadrature node (a_g, b_g) of the hierarchical Beta-binomial model.

    The tasks come compressed as distinct (n, c) pairs with multiplicities ``w_u``.
    Returns, per node: the log-likelihood sum_i ln[B(a + c_i, b + n_i - c_i) / B(a, b)]
    (binomial coefficients dropped), the posterior mean over tasks of pass@k given (a, b),
    the variance of that mean given (a, b) (tasks independent given the hyperparameters),
    and the population pass@k 1 - B(a, b + k) / B(a, b).
    """
    g = a.shape[0]
    m = n_u.shape[0]
    total = 0.0
    for j in range(m):
        total += w_u[j]
    loglik = np.empty(g)
    mean = np.empty(g)
    var = np.empty(g)
    pop = np.empty(g)
    for i in range(g):
        ai = a[i]
        bi = b[i]
        lb0 = _lbeta_nb(ai, bi)
        ll = 0.0
        s1 = 0.0
        sv = 0.0
        for j in range(m):
            al = ai + c_u[j]
            be = bi + n_u[j] - c_u[j]
            ll += w_u[j] * (_lbeta_nb(al, be) - lb0)
            e1 = math.exp(_log_fail_moment(al, be, k))
            e2 = math.exp(_log_fail_moment(al, be, 2 * k))
            s1 += w_u[j] * e1
            sv += w_u[j] * max(e2 - e1 * e1, 0.0)
        loglik[i] = ll
        mean[i] = 1.0 - s1 / total
        var[i] = sv / (total * total)
        pop[i] = -math.expm1(_log_fail_moment(ai, bi, k))
    return loglik, mean, var, pop


@jit
def normal_mixture_cdf(x, w, mu, sd):
    """sum_g w_g Phi((x - mu_g) / sd_g); a node with sd_g = 0 is a point mass."""
    s = 0.0
    for i in range(w.shape[0]):
        if sd[i] > 0.0:
            s += w[i] * 0.5 * math.erfc(-(x - mu[i]) / (sd[i] * 1.4142135623730951))
        elif x >= mu[i]:
            s += w[i]
    return s


@jit
def normal_mixture_ppf(p, w, mu, sd, lo, hi):
    """The p-quantile of the normal mixture within [lo, hi], by bisection."""
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if normal_mixture_cdf(mid, w, mu, sd) < p:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)
