"""Per-task quantities: the estimate, its unbiased variance, per-task intervals and the
exact variance of the estimator for a known success rate."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from .._api import fail_at_k, pass_at_k, pass_at_k_plugin, pass_hat_k
from .._types import TaskMethod, TaskMetric
from .._validation import choice, confidence_level, count_arrays, positive_int
from . import _gpass as GP
from . import _intervals as IV
from . import _kernels as SK
from ._common import _GPASS, _label_array, _py
from ._dist import _lncomb, norm_ppf
from ._results import TaskResult, TaskRow


def _theta(metric, n, c, k, tau=None):
    if metric in _GPASS:
        return GP.estimate(n, c, k, GP.kernel(metric, k, tau))
    kk = np.int64(k)  # broadcast by the kernels: no array of k per task (10M tasks: 80 MB)
    if metric == "pass@k":
        return pass_at_k(n, c, kk)
    if metric == "pass^k":
        return pass_hat_k(n, c, kk)
    return pass_at_k_plugin(n, c, kk)


#: Tasks per block of :func:`_vhat_sum`: its temporaries stay a few MB whatever the size.
_BLOCK = 1 << 18


def _vhat_sum(metric, n, c, k, tau=None):
    """The sum of :func:`_vhat` over the tasks, a block at a time: the temporaries (five arrays
    per task for k = 1) and the values are those of one block, not of 10M tasks."""
    return sum(float(np.sum(_vhat(metric, n[lo:lo + _BLOCK], c[lo:lo + _BLOCK], k, tau)))
               for lo in range(0, n.size, _BLOCK))


def _vhat(metric, n, c, k, tau=None):
    """Unbiased per-task variance of the estimate (needs n >= 2k for every task).

    Vhat = P0(n,c,k) * (P0(n,c,k) - P0(n-k,c,k)) = P0(n,c,k)**2 - P0(n,c,2k), with c -> n-c
    for pass^k. For k = 1 it is phat (1 - phat) / (n - 1), computed directly. G-Pass@k and
    mG-Pass@k use the general U-statistic form in ``_gpass``.
    """
    if metric in _GPASS:
        return GP.vhat(n, c, k, GP.kernel(metric, k, tau))
    cc = c if metric == "pass@k" else n - c
    if k == 1:
        nf = n.astype(np.float64)
        return cc * (n - cc) / (nf * nf * (nf - 1.0))
    p0 = fail_at_k(n, cc, np.full(n.shape, k, dtype=np.int64))
    p2 = fail_at_k(n, cc, np.full(n.shape, 2 * k, dtype=np.int64))
    sq = p0 * p0
    v = np.maximum(sq - p2, 0.0)
    # where the difference cancels (n >> c, k) redo it without cancellation
    bad = np.flatnonzero(v < 1e-3 * sq)
    if bad.size:
        v[bad] = sq[bad] * SK.one_minus_ratio(n[bad], cc[bad], k)
    return v


def task_variance(n: ArrayLike, c: ArrayLike, k: int, *,
                  metric: TaskMetric = "pass@k") -> np.ndarray:
    """Unbiased estimate of the variance of each task's pass@k (or pass^k) estimate.

    Vhat = P0(n,c,k) * [P0(n,c,k) - P0(n-k,c,k)] with P0 = C(n-c,k)/C(n,k). It is unbiased
    for the exact (Hoeffding) variance and never negative. It exists only for n >= 2k;
    positions with n < 2k get NaN.

    Parameters
    ----------
    n, c : array_like of int
        Samples and correct samples per task.
    k : int
        The budget.
    metric : {"pass@k", "pass^k"}

    Returns
    -------
    numpy.ndarray of float64

    Examples
    --------
    >>> from passatk.stats import task_variance
    >>> task_variance([5, 10], [2, 2], 1).round(5)   # phat (1 - phat) / (n - 1)
    array([0.06   , 0.01778])
    >>> task_variance([5], [2], 3)
    array([nan])
    """
    n, c = count_arrays(n, c)
    k = positive_int(k, "k")
    choice(metric, "metric", ("pass@k", "pass^k"))
    out = np.full(n.shape, np.nan)
    ok = n >= 2 * k
    if ok.any():
        out[ok] = _vhat(metric, n[ok], c[ok], k)
    return out


def task_intervals(n: ArrayLike, c: ArrayLike, k: int = 1, *, metric: TaskMetric = "pass@k",
                   method: TaskMethod = "wilson", confidence: float = 0.95,
                   task_ids: ArrayLike | None = None) -> TaskResult:
    """Per-task estimates with a Wilson or Clopper-Pearson interval for each task.

    The interval for the task's success rate p (Wilson score, or the exact
    Clopper-Pearson interval) is mapped through the increasing g(p) = 1 - (1 - p)^k for
    pass@k, or g(p) = p^k for pass^k, so it covers g(p) exactly as often as the interval
    for p covers p. ``value`` is the unbiased estimate (``None`` with a reason when n < k).

    Parameters
    ----------
    n, c : array_like of int
    k : int
    metric : {"pass@k", "pass^k"}
    method : {"wilson", "clopper-pearson"}
    confidence : float
    task_ids : array_like, optional
        Labels for the rows (default: positions).

    Returns
    -------
    TaskResult

    Examples
    --------
    >>> from passatk.stats import task_intervals
    >>> r = task_intervals([10, 1], [2, 1], k=1, method="clopper-pearson")
    >>> [(row.task, row.value, round(row.ci_low, 4), round(row.ci_high, 4)) for row in r]
    [(0, 0.2, 0.0252, 0.5561), (1, 1.0, 0.025, 1.0)]
    """
    n, c = count_arrays(n, c)
    k = positive_int(k, "k")
    choice(metric, "metric", ("pass@k", "pass^k"))
    choice(method, "method", ("wilson", "clopper-pearson"))
    confidence = confidence_level(confidence)
    ids = np.arange(n.size) if task_ids is None else _label_array(task_ids, "task_ids", n.size)
    z = norm_ppf(0.5 + confidence / 2)

    def g(p):  # increasing in p: pass@k = 1 - (1-p)^k, pass^k = p^k
        if metric == "pass^k":
            return p**k
        return 1.0 if p >= 1.0 else -math.expm1(k * math.log1p(-p))

    rows = []
    for i in range(n.size):
        ni, ci = int(n[i]), int(c[i])
        plo, phi = (IV.wilson(ci / ni, ni, z) if method == "wilson"
                    else IV.clopper_pearson(ci, ni, confidence))
        lo, hi = g(plo), g(phi)
        value = reason = None
        if ni >= k:
            value = float(_theta(metric, n[i:i + 1], c[i:i + 1], k)[0])
        else:
            reason = f"k={k} exceeds n={ni}: no unbiased estimate"
        rows.append(TaskRow(task=_py(ids[i]), n=ni, c=ci, k=k, metric=metric, value=value,
                            ci_low=lo, ci_high=hi, p_low=plo, p_high=phi,
                            ci_method=IV.LABELS[method] + f" for p, mapped to {metric}",
                            confidence=confidence, reason=reason))
    return TaskResult(rows=tuple(rows), method=method, confidence=confidence)


def _exact_task_var(p, n, k, metric="pass@k"):
    """Exact variance of the estimator for success rate p (Hoeffding's U-statistic form).

    Var = sum_{j=1..k} [C(k,j) C(n-k,k-j) / C(n,k)] (q^(2k-j) - q^(2k)), q = 1 - p
    (q <-> p for pass^k). Vectorized over p and n.
    """
    p = np.asarray(p, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    q = 1.0 - p if metric == "pass@k" else p
    p, n, q = np.broadcast_arrays(p, n, q)
    out = np.zeros(p.shape)
    lq = np.log(np.where(q > 0, q, 1.0))
    ln_cnk = _lncomb(n, k)
    for j in range(1, k + 1):
        ok = n - k >= k - j  # C(n-k, k-j) = 0 otherwise
        lw = (math.lgamma(k + 1) - math.lgamma(j + 1) - math.lgamma(k - j + 1)
              + _lncomb(np.where(ok, n - k, k - j), k - j) - ln_cnk)
        w = np.where(ok, np.exp(lw), 0.0)
        # q^(2k-j) - q^(2k) = q^(2k-j) (1 - q^j)
        term = np.where(q > 0, np.exp((2 * k - j) * lq) * -np.expm1(j * lq), 0.0)
        out += w * term
    return out


#: log-concavity of the overlap law: its log pmf has second difference below -5/k
_CURVE = 5.0


def _exact_var_at_n(q, n, k):
    """The exact variance of the estimator at one common n, for fail rates q (1-d).

    Var = sum_j w_j q^(2k-j) (1 - q^j), where w_j = C(k,j) C(n-k,k-j) / C(n,k) is the law of
    the overlap of two random k-subsets of n samples. w is log-concave with curvature below
    -5/k, so for each q the terms more than L = sqrt(2k (50 + 2 ln k) / 5) from the largest
    one add less than e^-50 of it: the sum is taken over that window only, which costs
    O(k) for the weights and O(sqrt(k)) per distinct q instead of O(k).
    """
    jlo = max(1, 2 * k - n)
    j = np.arange(jlo, k + 1, dtype=np.float64)
    # log w at jlo without the cancellation of lgamma differences at large n: w_jlo =
    # prod_(t<=jlo) (k-jlo+t)^2 / ((n-k+t) t) * prod_(i<k-jlo) (1 - k/(n-i))
    t = np.arange(1, jlo + 1, dtype=np.float64)
    lw0 = float(np.sum(np.log((k - jlo + t) ** 2 / ((n - k + t) * t))))
    lw0 += float(np.sum(np.log1p(-k / (n - np.arange(k - jlo, dtype=np.float64)))))
    # then the exact ratio w_(j+1)/w_j = (k-j)^2/((j+1)(n-2k+j+1))
    jj = j[:-1]
    ratio = 2.0 * np.log(k - jj) - np.log(jj + 1.0) - np.log(n - 2.0 * k + jj + 1.0)
    lw = np.concatenate([[lw0], lw0 + np.cumsum(ratio)])
    q = np.asarray(q, dtype=np.float64)
    live = (q > 0.0) & (q < 1.0)  # q = 0 or 1 gives a variance of exactly 0
    out = np.zeros(q.shape)
    if not live.any() or j.size == 0:
        return out
    lq = np.log(q[live])
    half = math.ceil(math.sqrt(2.0 * k * (50.0 + 2.0 * math.log(k + 1.0)) / _CURVE)) + 2
    width = min(j.size, 2 * half + 1)
    # the largest term of lw_j - j ln q: the first j whose ratio falls to ln q (ratio decreases)
    mode = np.searchsorted(-ratio, -lq, side="left")
    start = np.clip(mode - half, 0, j.size - width)
    res = np.empty(lq.size)
    step = max(1, 4_000_000 // width)  # bound the memory of one block of windows
    for s in range(0, lq.size, step):
        idx = start[s:s + step, None] + np.arange(width)[None, :]
        jw, lqs = j[idx], lq[s:s + step, None]
        terms = np.exp(lw[idx] + (2.0 * k - jw) * lqs) * -np.expm1(jw * lqs)
        res[s:s + step] = terms.sum(axis=1)
    out[live] = res
    return out
