"""Benchmark scores with honest uncertainty: aggregation, standard errors, bootstrap,
paired comparison, planning, simulation and Bayesian summaries.

The formulas and their sources are in ``docs/statistics.md``. Two estimands are offered
and every result row names the one it belongs to:

- **super-population**: the tasks are a sample from a population of possible tasks; the
  standard error is sd(thetahat_i, ddof=1) / sqrt(N) (Miller 2024), with a t interval.
- **fixed-benchmark**: the tasks are fixed and only the model's sampling is random; the
  standard error is sqrt(sum_i Vhat_i) / N with the unbiased per-task variance Vhat.

Runtime dependencies are NumPy and numba only: the normal and Student t distribution
functions used here are implemented in this module.

>>> import passatk
>>> r = passatk.score([5], [2], k=[1, 2])
>>> [(row.k, row.value) for row in r]
[(1, 0.4), (2, 0.7)]
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence

import numpy as np

from . import _intervals as IV
from . import _planning as PL
from . import _posterior as POST
from . import _stats_gpass as GP
from . import _stats_kernels as SK
from ._api import checked_array, fail_at_k, k_ladder, pass_at_k, pass_at_k_plugin, pass_hat_k
from ._results import (
    CompareResult,
    CompareRow,
    PlanResult,
    ScoreResult,
    ScoreRow,
    Simulation,
    TaskResult,
    TaskRow,
)
from .errors import HintedError, Option

__all__ = [
    "compare",
    "mcnemar",
    "min_detectable_effect",
    "norm_cdf",
    "norm_ppf",
    "paired_sd",
    "samples_needed",
    "score",
    "signflip_test",
    "simulate",
    "t_cdf",
    "t_ppf",
    "task_intervals",
    "task_variance",
    "tasks_needed",
    "wilcoxon_signed_rank",
]

METRICS = ("pass@k", "pass^k", "plugin", "g-pass@k", "mg-pass@k", "posterior",
           "posterior-population", "bayes@n")
INTERVALS = ("auto", "t", "fixed", "cluster", "percentile", "bca", "wilson", "clopper-pearson")
_BAYES = ("posterior", "posterior-population", "bayes@n")
_GPASS = ("g-pass@k", "mg-pass@k")
_MAX_N = 2**53
_LIST = 10  # how many offending ids an error message lists
_EXACT_WILCOXON_MAX = 1000  # the exact null costs O(n^3) time and O(n^2) memory
_P_FLOOR = 2.2250738585072014e-308  # p-values are never reported as 0 from a finite sample

ESTIMANDS = {
    "auto": "super-population",
    "t": "super-population",
    "percentile": "super-population",
    "bca": "super-population",
    "fixed": "fixed-benchmark",
    "cluster": "super-population (clustered)",
    "wilson": "super-population",
    "clopper-pearson": "super-population",
}
CI_METHODS = {
    "auto": "hull of t and quasi-binomial Wilson (t quantile), within [0, 1]",
    "t": "t",
    "fixed": "normal",
    "cluster": "t (clusters - 1 df), CR1",
    "wilson": "Wilson score (binary outcomes)",
    "clopper-pearson": "Clopper-Pearson exact (binary outcomes)",
    "percentile": "bootstrap percentile",
    "bca": "bootstrap BCa",
}


# --------------------------------------------------------------------------------------
# Distribution functions (no scipy at runtime)
# --------------------------------------------------------------------------------------

_SQRT2 = math.sqrt(2.0)
_SQRT2PI = math.sqrt(2.0 * math.pi)


def norm_cdf(x: float) -> float:
    """The standard normal distribution function Phi(x), accurate in both tails.

    Examples
    --------
    >>> from passatk.stats import norm_cdf
    >>> round(norm_cdf(1.959963984540054), 12)
    0.975
    """
    return 0.5 * math.erfc(-x / _SQRT2)


def norm_ppf(p: float) -> float:
    """The standard normal quantile Phi^-1(p).

    A starting value from the rational approximation of Abramowitz & Stegun 26.2.23
    (error below 4.5e-4) is refined by Halley steps on ``math.erfc`` to full precision.

    Examples
    --------
    >>> from passatk.stats import norm_ppf
    >>> round(norm_ppf(0.975), 12)
    1.95996398454
    """
    p = float(p)
    if math.isnan(p) or p < 0.0 or p > 1.0:
        raise ValueError(f"p must satisfy 0 <= p <= 1, got p={p!r}")
    if p == 0.0:
        return -math.inf
    if p == 1.0:
        return math.inf
    if p == 0.5:
        return 0.0
    if 0.3 < p < 0.7:  # centre: solve erf(x / sqrt 2) = 2 (p - 1/2), with p - 1/2 exact
        r = p - 0.5
        x = r * _SQRT2PI
        for _ in range(6):
            e = 0.5 * math.erf(x / _SQRT2) - r
            u = e * _SQRT2PI * math.exp(0.5 * x * x)
            step = u / (1.0 + 0.5 * x * u)
            x -= step
            if abs(step) <= 1e-17 * abs(x):
                break
        return x
    q = p if p < 0.5 else 1.0 - p  # exact for p >= 0.5
    t = math.sqrt(-2.0 * math.log(q))
    x = -(t - (2.515517 + t * (0.802853 + t * 0.010328))
          / (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308))))
    for _ in range(4):  # Halley on Phi(x) = q, x < 0
        e = 0.5 * math.erfc(-x / _SQRT2) - q
        if e == 0.0:
            break
        # u = e / pdf(x), formed in logs: pdf(x) underflows for the smallest q
        u = math.copysign(math.exp(math.log(abs(e)) + 0.5 * x * x + math.log(_SQRT2PI)), e)
        step = u / (1.0 + 0.5 * x * u)
        x -= step
        if abs(step) <= 1e-16 * abs(x):
            break
    return x if p < 0.5 else -x


def _stirling_err(x: float) -> float:
    """lgamma(x) - [(x - 1/2) ln x - x + ln(2 pi) / 2], for x >= 10."""
    r = 1.0 / (x * x)
    return (1.0 / 12 - r * (1.0 / 360 - r * (1.0 / 1260 - r * (1.0 / 1680 - r / 1188)))) / x


def _lbeta(a: float, b: float) -> float:
    """ln B(a, b) without the cancellation of large lgamma values when a or b is large."""
    if a < b:
        a, b = b, a
    if a < 10.0:
        return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    # lgamma(a + b) - lgamma(a) = (a - 1/2) log1p(b/a) + b ln(a + b) - b + err(a + b) - err(a)
    ratio = ((a - 0.5) * math.log1p(b / a) + b * math.log(a + b) - b
             + _stirling_err(a + b) - _stirling_err(a))
    return math.lgamma(b) - ratio


def _betainc(a: float, b: float, x: float, y: float) -> float:
    """Regularized incomplete beta I_x(a, b), with y = 1 - x passed exactly by the caller.

    Continued fraction (Lentz's method) on whichever of I_x(a, b) and 1 - I_y(b, a)
    converges fast.
    """
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    if x > (a + 1.0) / (a + b + 2.0):
        return 1.0 - _betainc(b, a, y, x)
    lx = math.log(x) if x < 0.5 else math.log1p(-y)
    ly = math.log(y) if y < 0.5 else math.log1p(-x)
    lfront = a * lx + b * ly
    lfront -= _lbeta(a, b)
    tiny = 1e-300
    c = 1.0
    d = 1.0 - (a + b) * x / (a + 1.0)
    d = tiny if abs(d) < tiny else d
    d = 1.0 / d
    h = d
    for m in range(1, 100_000):
        m2 = 2 * m
        num = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2))
        d = 1.0 + num * d
        d = tiny if abs(d) < tiny else d
        c = 1.0 + num / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        h *= d * c
        num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0))
        d = 1.0 + num * d
        d = tiny if abs(d) < tiny else d
        c = 1.0 + num / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-16:
            break
    return math.exp(lfront) * h / a


def _t_tail(t: float, df: float) -> float:
    """P(T <= -|t|) for Student's t with df degrees of freedom."""
    if math.isinf(df):
        return norm_cdf(-abs(t))
    t2 = t * t
    return 0.5 * _betainc(0.5 * df, 0.5, df / (df + t2), t2 / (df + t2))


def t_cdf(t: float, df: float) -> float:
    """Student's t distribution function with ``df`` > 0 degrees of freedom.

    Examples
    --------
    >>> from passatk.stats import t_cdf
    >>> round(t_cdf(2.0, 10), 10)
    0.9633059826
    """
    if not df > 0:
        raise ValueError(f"df must be > 0, got df={df!r}")
    if math.isnan(t):
        return math.nan
    tail = _t_tail(t, df)
    return tail if t < 0 else 1.0 - tail


def _t_pdf(t: float, df: float) -> float:
    lc = math.lgamma(0.5 * (df + 1.0)) - math.lgamma(0.5 * df) - 0.5 * math.log(df * math.pi)
    return math.exp(lc - 0.5 * (df + 1.0) * math.log1p(t * t / df))


def t_ppf(p: float, df: float) -> float:
    """Student's t quantile: safeguarded Newton steps on :func:`t_cdf`.

    Examples
    --------
    >>> from passatk.stats import t_ppf
    >>> round(t_ppf(0.975, 163), 6)
    1.974625
    """
    p = float(p)
    if math.isnan(p) or p < 0.0 or p > 1.0:
        raise ValueError(f"p must satisfy 0 <= p <= 1, got p={p!r}")
    if not df > 0:
        raise ValueError(f"df must be > 0, got df={df!r}")
    if p == 0.0:
        return -math.inf
    if p == 1.0:
        return math.inf
    if p == 0.5:
        return 0.0
    if math.isinf(df):
        return norm_ppf(p)
    q = p if p < 0.5 else 1.0 - p
    if df == 1.0:
        x = -1.0 / math.tan(math.pi * q)
    elif df == 2.0:
        x = -math.sqrt(2.0) * (1.0 - 2.0 * q) / math.sqrt(4.0 * q * (1.0 - q))
    else:
        z = norm_ppf(q)
        x = z + (z**3 + z) / (4.0 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96.0 * df * df)
        # bracket the root of tail(x) = q on x < 0, then Newton with bisection fallback
        lo, hi = min(x, -1e-300), 0.0
        while _t_tail(lo, df) > q:
            hi, lo = lo, 2.0 * lo - 1.0
        if not lo <= x <= hi:
            x = 0.5 * (lo + hi)
        for _ in range(300):
            f = _t_tail(x, df) - q
            if f > 0:
                hi = x
            else:
                lo = x
            pdf = _t_pdf(x, df)
            nx = x - f / pdf if pdf > 0 else 0.5 * (lo + hi)
            if not lo < nx < hi:
                nx = 0.5 * (lo + hi)
            if abs(nx - x) <= 4e-16 * abs(x) or lo == hi:
                x = nx
                break
            x = nx
    return x if p < 0.5 else -x


# --------------------------------------------------------------------------------------
# Input validation helpers
# --------------------------------------------------------------------------------------


def _int_array(x, name):
    """A 1-d int64 array from ``x`` (int or array-like of ints), or TypeError."""
    if isinstance(x, bool | np.bool_):
        raise TypeError(f"{name} must be integers, got bool {x!r}")
    if isinstance(x, float | np.floating | str | bytes | complex):
        raise TypeError(f"{name} must be integers, got {type(x).__name__} {x!r}")
    arr = checked_array(x, name, _not_integers)  # nested bools, masked or missing entries
    if arr.dtype.kind == "O":
        for i, v in enumerate(arr.reshape(-1)):
            if isinstance(v, bool | np.bool_) or not isinstance(v, int | np.integer):
                raise TypeError(
                    f"{name} must be integers, got {type(v).__name__} {v!r} at position {i}")
        arr = np.array([int(v) for v in arr.reshape(-1)], dtype=object).reshape(arr.shape)
        big = [i for i, v in enumerate(arr.reshape(-1)) if not -(2**62) <= v <= 2**62]
        if big:
            raise ValueError(f"{name} must be < 2**53, got {arr.reshape(-1)[big[0]]} "
                             f"at position {big[0]}")
        arr = arr.astype(np.int64)
    elif arr.dtype.kind not in "iu" and arr.size:
        what = f"an array of dtype {arr.dtype}" if arr.ndim else f"{arr.dtype} {x!r}"
        raise TypeError(f"{name} must be integers, got {what}; convert with .astype(np.int64) "
                        f"after checking the values are whole numbers")
    if arr.ndim > 1:
        raise ValueError(f"{name} must be 1-dimensional (one entry per task), got shape "
                         f"{arr.shape}")
    if arr.dtype.kind == "u" and arr.size and int(arr.max()) >= 2**63:
        i = int(np.argmax(arr))
        raise ValueError(f"{name} must be < 2**53, got {int(arr[i])} at position {i}")
    return np.atleast_1d(arr).astype(np.int64, copy=False)


def _not_integers(name, what):
    return TypeError(f"{name} must be integers, got {what}")


def _check_counts(n, c, nname="n", cname="c"):
    if n.shape != c.shape:
        raise ValueError(f"{nname} and {cname} must have the same length, got {n.size} and "
                         f"{c.size}")
    if n.size == 0:
        raise ValueError(f"{nname} must hold at least one task, got an empty array")
    for text, mask in (
        (f"{nname} must satisfy 1 <= {nname} < 2**53", (n < 1) | (n >= _MAX_N)),
        (f"{cname} must satisfy 0 <= {cname} <= {nname}", (c < 0) | (c > n)),
    ):
        if mask.any():
            i = int(np.argmax(mask))
            raise ValueError(f"{text}; got {nname}={int(n[i])}, {cname}={int(c[i])} at position "
                             f"{i} ({int(mask.sum())} invalid)")


def _label_array(x, name, size):
    if isinstance(x, str | bytes) or np.ndim(x) == 0:
        raise TypeError(f"{name} must be an array-like with one entry per task, got "
                        f"{type(x).__name__} {x!r}")
    arr = np.asarray(x)
    if arr.ndim != 1 or arr.shape[0] != size:
        raise ValueError(f"{name} must have one entry per task ({size}), got shape {arr.shape}")
    return arr


#: k="all" scores every k = 1..min(n); above this many it is refused (k="ladder" is bounded).
MAX_ALL_K = 10_000


def _k_spec(k):
    """Return "all", "ladder" or a tuple of ints >= 1."""
    if isinstance(k, str):
        if k not in ("all", "ladder"):
            raise ValueError(f"k must be an int, a sequence of ints, 'all' or 'ladder', got {k!r}")
        return k
    ks = [k] if np.ndim(k) == 0 else list(np.asarray(k).reshape(-1)) if not isinstance(
        k, Sequence) else list(k)
    if not ks:
        raise ValueError("k must hold at least one value, got an empty sequence")
    out = []
    for i, v in enumerate(ks):
        if isinstance(v, bool | np.bool_) or not isinstance(v, int | np.integer):
            raise TypeError(f"k must be an int, a sequence of ints, or 'all', got "
                            f"{type(v).__name__} {v!r} at position {i}")
        if v < 1:
            raise ValueError(f"k must satisfy k >= 1, got k={int(v)} at position {i}")
        out.append(int(v))
    return tuple(dict.fromkeys(out))


def _k_values(ks, k_max, where=""):
    """The k of one group: ``ks`` itself, the ladder up to k_max, or 1..k_max (bounded)."""
    if ks == "ladder":
        return k_ladder(k_max)
    if ks == "all":
        if k_max > MAX_ALL_K:
            raise ValueError(f"k='all'{where} asks for every k = 1..{k_max} (the smallest n); at "
                             f"most {MAX_ALL_K} are allowed: pass k='ladder' (1, 2, 5, 10, ... "
                             f"{k_max}) or the k you need")
        return range(1, k_max + 1)
    return ks


def _choice(value, name, allowed):
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, one of {allowed}, got {type(value).__name__}")
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
    return value


def _confidence(confidence):
    if isinstance(confidence, bool) or not isinstance(confidence, int | float | np.floating):
        raise TypeError(f"confidence must be a float, got {type(confidence).__name__}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must satisfy 0 < confidence < 1, got {confidence!r}")
    return float(confidence)


def _posint(value, name, minimum=1):
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must satisfy {name} >= {minimum}, got {name}={value}")
    return int(value)


def _rng(seed):
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or (isinstance(seed, int | np.integer) and not isinstance(seed, bool)):
        return np.random.default_rng(seed)
    raise TypeError(f"seed must be None, an int or a numpy.random.Generator, got "
                    f"{type(seed).__name__}")


def _seed64(rng):
    return np.uint64(rng.integers(0, 2**63, dtype=np.int64))


def _prior(prior):
    if not isinstance(prior, tuple | list) or len(prior) != 2:
        raise TypeError(f"prior must be a pair (alpha0, beta0), got {prior!r}")
    a0, b0 = prior
    for name, v in (("prior alpha0", a0), ("prior beta0", b0)):
        if isinstance(v, bool) or not isinstance(v, int | float | np.integer | np.floating):
            raise TypeError(f"{name} must be a number, got {type(v).__name__}")
        if not (v > 0 and math.isfinite(v)):
            raise ValueError(f"{name} must be a finite number > 0, got {v!r}")
    return float(a0), float(b0)


def _tau(tau):
    if isinstance(tau, bool) or not isinstance(tau, int | float | np.integer | np.floating):
        raise TypeError(f"tau must be a float, got {type(tau).__name__} {tau!r}")
    if not 0.0 < tau <= 1.0:
        raise ValueError(f"tau must satisfy 0 < tau <= 1, got tau={tau!r}")
    return float(tau)


def _py(v):
    """A Python scalar (for group labels and ids in messages)."""
    return v.item() if hasattr(v, "item") else v


def _show(ids, limit=_LIST):
    ids = [_py(i) for i in ids]
    more = f" and {len(ids) - limit} more" if len(ids) > limit else ""
    return f"{ids[:limit]}{more}"


def _f(x):
    """A Python float, or None for NaN/None."""
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


# --------------------------------------------------------------------------------------
# Per-task quantities
# --------------------------------------------------------------------------------------


def _theta(metric, n, c, k, tau=None):
    if metric in _GPASS:
        return GP.estimate(n, c, k, GP.kernel(metric, k, tau))
    kk = np.full(n.shape, k, dtype=np.int64)
    if metric == "pass@k":
        return pass_at_k(n, c, kk)
    if metric == "pass^k":
        return pass_hat_k(n, c, kk)
    return pass_at_k_plugin(n, c, kk)


def _vhat(metric, n, c, k, tau=None):
    """Unbiased per-task variance of the estimate (needs n >= 2k for every task).

    Vhat = P0(n,c,k) * (P0(n,c,k) - P0(n-k,c,k)) = P0(n,c,k)**2 - P0(n,c,2k), with c -> n-c
    for pass^k. For k = 1 it is phat (1 - phat) / (n - 1), computed directly. G-Pass@k and
    mG-Pass@k use the general U-statistic form in ``_stats_gpass``.
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


def task_variance(n, c, k, *, metric="pass@k"):
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
    n = _int_array(n, "n")
    c = _int_array(c, "c")
    _check_counts(n, c)
    k = _posint(k, "k")
    _choice(metric, "metric", ("pass@k", "pass^k"))
    out = np.full(n.shape, np.nan)
    ok = n >= 2 * k
    if ok.any():
        out[ok] = _vhat(metric, n[ok], c[ok], k)
    return out


def task_intervals(n, c, k=1, *, metric="pass@k", method="wilson", confidence=0.95,
                   task_ids=None):
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
    n = _int_array(n, "n")
    c = _int_array(c, "c")
    _check_counts(n, c)
    k = _posint(k, "k")
    _choice(metric, "metric", ("pass@k", "pass^k"))
    _choice(method, "method", ("wilson", "clopper-pearson"))
    confidence = _confidence(confidence)
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


def _lncomb(a, b):
    a = np.asarray(a, dtype=np.float64)
    return _lgamma(a + 1.0) - math.lgamma(b + 1.0) - _lgamma(a - b + 1.0)


_lgamma_u = np.frompyfunc(math.lgamma, 1, 1)


def _lgamma(x):
    return np.asarray(_lgamma_u(np.asarray(x, dtype=np.float64)), dtype=np.float64)


# --------------------------------------------------------------------------------------
# Bootstrap helpers
# --------------------------------------------------------------------------------------


def _quantile(sorted_reps, prob):
    return float(np.quantile(sorted_reps, prob))


def _boot_intervals(theta, reps, confidence):
    """Percentile and BCa intervals for the mean of ``theta`` from bootstrap means ``reps``.

    Returns ((pct_low, pct_high), (bca_low, bca_high) or None, reason or None).
    """
    alpha = 1.0 - confidence
    reps = np.sort(reps)
    b = reps.size
    pct = (_quantile(reps, alpha / 2), _quantile(reps, 1 - alpha / 2))
    mean = float(np.mean(theta))
    d = theta - mean
    s2 = float(np.sum(d * d))
    if s2 == 0.0:
        return pct, (mean, mean), None
    scale = max(float(np.max(np.abs(theta))), 1e-300)
    tol = 1e-10 * scale
    less = int(np.searchsorted(reps, mean - tol, side="left"))
    eq = int(np.searchsorted(reps, mean + tol, side="right")) - less
    prop = (less + 0.5 * eq) / b
    if not 0.0 < prop < 1.0:
        return pct, None, "BCa is undefined: every bootstrap mean lies on one side of the estimate"
    z0 = norm_ppf(prop)
    acc = float(np.sum(d**3)) / (6.0 * s2**1.5)
    ends = []
    for z in (norm_ppf(alpha / 2), norm_ppf(1 - alpha / 2)):
        w = z0 + z
        den = 1.0 - acc * w
        if den <= 0:
            return pct, None, "BCa is undefined: the acceleration is too large for this level"
        ends.append(_quantile(reps, norm_cdf(z0 + w / den)))
    return pct, (ends[0], ends[1]), None


# --------------------------------------------------------------------------------------
# Grouping
# --------------------------------------------------------------------------------------


def _groups(cols, size):
    """Yield (group dict, row indices) in sorted label order."""
    if not cols:
        yield {}, None
        return
    invs, uniq = [], []
    for name, arr in cols:
        try:
            u, inv = np.unique(arr, return_inverse=True)
        except TypeError as e:
            raise TypeError(f"group labels {name!r} must be sortable values of one type: {e}"
                            ) from None
        invs.append(inv.reshape(-1))
        uniq.append(u)
    # Rows of label indices, not one mixed-radix code: a code wraps past 2**63 combinations.
    keys, ginv = np.unique(np.stack(invs, axis=1), axis=0, return_inverse=True)
    ginv = ginv.reshape(-1)
    order = np.argsort(ginv, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(ginv, minlength=len(keys)))])
    for g, key in enumerate(keys):
        labels = {name: _py(u[j]) for (name, _), u, j in zip(cols, uniq, key, strict=True)}
        yield labels, order[bounds[g]:bounds[g + 1]]


def _dedupe(ids, n, c, extra, duplicates, where):
    """Check or merge duplicate task ids. Returns ids, n, c, extra, merged ids."""
    try:
        u, first, inv, counts = np.unique(ids, return_index=True, return_inverse=True,
                                          return_counts=True)
    except TypeError as e:
        raise TypeError(f"task ids{where} must be comparable values of one type: {e}"
                        ) from None
    if len(u) == len(ids):
        return ids, n, c, extra, []
    dup = u[counts > 1]
    if duplicates == "raise":
        raise ValueError(
            f"duplicate task ids{where}: {_show(dup)} appear more than once; pass "
            f"duplicates='merge' to sum their counts")
    inv = inv.reshape(-1)
    n2 = np.zeros(len(u), dtype=np.int64)
    c2 = np.zeros(len(u), dtype=np.int64)
    np.add.at(n2, inv, n)
    np.add.at(c2, inv, c)
    keep = np.sort(first)
    pos = np.argsort(first)  # unique index -> order of first appearance
    ext2 = None
    if extra is not None:
        ext2 = extra[first]
        for j in np.flatnonzero(counts > 1):
            vals = extra[inv == j]
            if np.any(vals != vals[0]):
                raise ValueError(f"task id {_py(u[j])!r}{where} is merged but its rows carry "
                                 f"different cluster labels: {_show(vals)}")
        ext2 = ext2[pos]
    return ids[keep], n2[pos], c2[pos], ext2, [_py(x) for x in dup]


# --------------------------------------------------------------------------------------
# score
# --------------------------------------------------------------------------------------


def _score_iv(n, c, k, metric, task_ids, groups, clusters, interval, confidence,
              n_resamples, seed, prior, missing, duplicates):
    n = _int_array(n, "n")
    c = _int_array(c, "c")
    _check_counts(n, c)
    size = n.size
    ks = _k_spec(k)
    metrics = (metric,) if isinstance(metric, str) else tuple(metric) if isinstance(
        metric, Sequence) else None
    if not metrics:
        raise TypeError(f"metric must be a str or a non-empty sequence of str, got {metric!r}")
    for m in metrics:
        _choice(m, "metric", METRICS)
    if "bayes@n" in metrics and ks not in ("all", "ladder", (1,)):
        raise ValueError(f"metric 'bayes@n' is the posterior mean of the pass rate and needs "
                         f"k=1, got k={k!r}")
    ids = None if task_ids is None else _label_array(task_ids, "task_ids", size)
    cols = []
    if groups is not None:
        if isinstance(groups, Mapping):
            items = list(groups.items())
        elif hasattr(groups, "columns") and hasattr(groups, "__getitem__"):  # a DataFrame
            items = [(col, np.asarray(groups[col])) for col in groups.columns]
        else:
            items = [("group", groups)]
        for name, col in items:
            if not isinstance(name, str):
                raise TypeError(f"group names must be str, got {type(name).__name__} {name!r}")
            cols.append((name, _label_array(col, f"groups[{name!r}]", size)))
    cl = None if clusters is None else _label_array(clusters, "clusters", size)
    _choice(interval, "interval", INTERVALS)
    if interval == "cluster" and cl is None:
        raise ValueError("interval='cluster' needs cluster labels: pass clusters=...")
    confidence = _confidence(confidence)
    n_resamples = _posint(n_resamples, "n_resamples", 2)
    rng = _rng(seed)
    prior = _prior(prior)
    _choice(missing, "missing", ("raise", "report"))
    _choice(duplicates, "duplicates", ("raise", "merge"))
    return (n, c, ks, metrics, ids, cols, cl, interval, confidence, n_resamples, rng, prior,
            missing, duplicates)


def score(n, c, k=1, *, metric="pass@k", task_ids=None, groups=None, clusters=None,
          interval="auto", confidence=0.95, n_resamples=10_000, seed=None, prior=(1, 1),
          missing="raise", duplicates="raise", tau=0.5):
    """Benchmark score per group and per k, with its standard errors and an interval.

    The score is the mean over tasks of the per-task estimate. For every (group, metric, k)
    the row reports the super-population SE (sd/sqrt(N), ``se_super``), the fixed-benchmark
    SE from the unbiased per-task variance (``se_fixed``; needs n >= 2k), the clustered SE
    when ``clusters`` is given, and the interval chosen by ``interval``.

    Parameters
    ----------
    n, c : array_like of int
        Samples and correct samples per task (1-d, same length; ragged n is fine).
    k : int, sequence of int, "ladder" or "all"
        The budgets. ``"ladder"`` gives 1, 2, 5, 10, 20, 50, ... and min(n) of each group;
        ``"all"`` the full curve k = 1..min(n) (at most :data:`MAX_ALL_K` values).
    metric : str or sequence of str
        ``"pass@k"`` (unbiased, Chen et al. 2021), ``"pass^k"`` (all k pass),
        ``"plugin"`` (1 - (1 - c/n)^k, biased low, for comparison only), ``"g-pass@k"``
        (at least ceil(``tau`` k) of k pass) and ``"mg-pass@k"`` (Liu et al. 2024),
        ``"posterior"`` and ``"posterior-population"`` (hierarchical Beta-binomial
        posterior of pass@k on these tasks, and of the population pass@k), ``"bayes@n"``
        (Hariri et al. 2025, k = 1 only). The Bayesian metrics are a different estimand:
        their rows put the posterior sd in ``posterior_sd`` and leave ``se`` empty.
    task_ids : array_like, optional
        One id per row. Duplicate ids within a group are an error unless
        ``duplicates="merge"``, which sums their counts.
    groups : array_like or mapping of str to array_like, optional
        Label columns (e.g. ``{"model": ..., "temperature": ...}``); one row per distinct
        combination, in sorted order.
    clusters : array_like, optional
        Cluster labels for the clustered SE (Miller 2024).
    interval : {"auto", "t", "fixed", "cluster", "percentile", "bca", "wilson", \
"clopper-pearson"}
        Which SE and interval fill ``se``, ``ci_low`` and ``ci_high``. ``"auto"`` (the
        default, chosen by the coverage simulation in docs/statistics.md): the Wilson
        score interval when every per-task value is 0 or 1, otherwise the hull of the t
        interval and the quasi-binomial Wilson interval, within [0, 1]. ``"t"``
        (super-population, t on N-1 df), ``"fixed"`` (fixed-benchmark, normal),
        ``"cluster"`` (clustered CR1, t on clusters-1 df); these three are clipped to
        [0, 1] and ``ci_method`` says so when that happened. ``"percentile"``/``"bca"``
        (bootstrap over tasks; ``se`` stays the super-population SE, and both the
        percentile and the BCa fields are filled). ``"wilson"``/``"clopper-pearson"``
        need binary per-task outcomes (e.g. n = 1). When every per-task value is equal,
        the super-population intervals fall back to the Wilson interval with the [0, 1]
        variance bound, and ``reason`` says so.
    confidence : float
        Interval level, default 0.95.
    n_resamples : int
        Bootstrap resamples (for ``interval="percentile"`` or ``"bca"``).
    seed : None, int or numpy.random.Generator
        The source of the bootstrap's randomness; the global state is never used.
    prior : (float, float)
        Beta(alpha0, beta0) prior of the Bayesian metrics; default uniform.
    missing : {"raise", "report"}
        What to do when some task of a group has n < k: raise a ValueError naming the
        tasks, or report the row with ``value=None`` and the reason.
    duplicates : {"raise", "merge"}
    tau : float
        The threshold of ``"g-pass@k"``, 0 < tau <= 1 (default 0.5).

    Returns
    -------
    ScoreResult
        ``.rows`` of :class:`~passatk._results.ScoreRow`; ``.records()`` for JSON.

    Examples
    --------
    >>> import passatk
    >>> r = passatk.score([5, 5, 5], [2, 0, 5], k=[1, 2])
    >>> [(row.k, round(row.value, 4), round(row.se, 4)) for row in r]
    [(1, 0.4667, 0.2906), (2, 0.5667, 0.2963)]
    >>> r[0].estimand, r[0].interval, r[1].se_fixed_reason is None
    ('super-population', 'auto', True)
    >>> w = passatk.score([1] * 20, [1] * 19 + [0])[0]   # binary outcomes: Wilson
    >>> w.ci_method, round(w.ci_low, 3), round(w.ci_high, 3)
    ('Wilson score (binary outcomes)', 0.764, 0.991)
    >>> rec = r.records()[0]
    >>> {key: rec[key] for key in ("group", "metric", "k", "tasks", "samples")}
    {'group': {}, 'metric': 'pass@k', 'k': 1, 'tasks': 3, 'samples': 15}
    """
    (n, c, ks, metrics, ids, cols, cl, interval, confidence, n_resamples, rng, prior,
     missing, duplicates) = _score_iv(n, c, k, metric, task_ids, groups, clusters, interval,
                                      confidence, n_resamples, seed, prior, missing, duplicates)
    tau = _tau(tau)
    rows = []
    merged = []
    boot = interval in ("percentile", "bca")
    for labels, idx in _groups(cols, n.size):
        gn = n if idx is None else n[idx]
        gc = c if idx is None else c[idx]
        gcl = cl if (cl is None or idx is None) else cl[idx]
        pos = np.arange(n.size) if idx is None else idx
        where = f" in group {labels}" if labels else ""
        if ids is not None:
            gids = ids if idx is None else ids[idx]
            gids, gn, gc, gcl, dup = _dedupe(gids, gn, gc, gcl, duplicates, where)
            merged.extend((labels, d) for d in dup)
            name_of = gids
            id_word = "task ids"
        else:
            name_of = pos
            id_word = "task positions"
        gks = _k_values(ks, int(gn.min()), where)
        for m in metrics:
            rows.extend(_score_group(m, gn, gc, gks, labels, gcl, name_of, id_word, where,
                                     interval, confidence, boot, n_resamples, rng, prior,
                                     missing, tau))
    bayes_only = all(m in _BAYES for m in metrics)
    return ScoreResult(rows=tuple(rows), interval="credible" if bayes_only else interval,
                       confidence=confidence,
                       merged_duplicates=tuple(merged),
                       n_resamples=n_resamples if boot else None)


def _score_group(metric, n, c, ks, labels, cl, name_of, id_word, where, interval, confidence,
                 boot, n_resamples, rng, prior, missing, tau=None):
    size = n.size
    base = {"group": labels, "metric": metric, "tasks": size, "samples": int(n.sum()),
            "confidence": confidence}
    if metric == "bayes@n":
        return [_bayes_row(metric, n, c, 1, prior, base, confidence)]  # validated k=1/"all"
    estimand = ESTIMANDS[interval]
    if metric == "plugin":
        estimand = "plug-in 1-(1-c/n)^k (biased low), " + estimand
    out = {}
    thetas = {}
    for k in ks:
        common = dict(base, k=k, estimand=estimand, ci_method=CI_METHODS[interval],
                      biased=metric == "plugin", interval=interval,
                      tau=tau if metric == "g-pass@k" else None)
        short = _short_row(metric, n, k, name_of, id_word, where, missing, common)
        if short is not None:
            out[k] = short
        elif metric in _BAYES:
            out[k] = _bayes_row(metric, n, c, k, prior, base, confidence)
        else:
            theta = _theta(metric, n, c, k, tau)
            out[k] = _score_row(metric, n, c, k, tau, theta, cl, interval, confidence, common)
            if boot and size >= 2:
                thetas[k] = theta
    if thetas:
        _boot_rows(out, thetas, interval, confidence, n_resamples, rng)
    return [out[k] for k in ks]


def _short_row(metric, n, k, name_of, id_word, where, missing, common):
    """The row for a k above some task's n (or the error), else None."""
    if k <= int(n.min()):
        return None
    short = np.flatnonzero(n < k)
    reason = (f"k={k} exceeds n for {short.size} of {n.size} tasks{where}: {id_word} "
              f"{_show(name_of[short])} have n={_show(n[short])}")
    if missing == "raise":
        raise HintedError(f"cannot report {metric} at k={k}: {reason}; pass ",
                          Option("missing", "report"), " to report this k as missing")
    if metric in _BAYES:
        common = dict(common, estimand=_bayes_estimand(metric, None),
                      ci_method="credible (equal-tailed)", interval="credible")
    return ScoreRow(value=None, se=None, ci_low=None, ci_high=None, reason=reason, **common)


def _fixed_se(metric, n, c, k, tau, s2):
    """(se_fixed, sd_between, reason)."""
    size = n.size
    if metric == "plugin":
        return None, None, ("the plug-in estimator is biased; no unbiased fixed-benchmark "
                            "variance is offered for it")
    if int(n.min()) < 2 * k:
        short = int(np.count_nonzero(n < 2 * k))
        return None, None, (f"no unbiased estimate of the fixed-benchmark variance exists: "
                            f"{short} of {size} tasks have n < 2k = {2 * k}")
    v = _vhat(metric, n, c, k, tau)
    se_fixed = math.sqrt(max(float(np.sum(v)), 0.0)) / size
    sd_between = None if s2 is None else math.sqrt(max(s2 - float(np.mean(v)), 0.0))
    return se_fixed, sd_between, None


def _cluster_se(d, cl):
    """CR1 cluster-robust SE of the mean of d: sqrt(G/(G-1) sum_g S_g^2) / N, and G.

    S_g is the sum of the centred d_i in cluster g. The G/(G-1) factor is the CR1
    small-sample correction that statsmodels and Stata use by default.
    """
    _, cinv = np.unique(cl, return_inverse=True)
    cinv = cinv.reshape(-1)
    g = int(cinv.max()) + 1
    if g < 2 or d.size < 2:
        return None, g
    sums = np.bincount(cinv, weights=d - float(np.mean(d)), minlength=g)
    return math.sqrt(g / (g - 1) * float(np.sum(sums * sums))) / d.size, g


def _all_equal(x):
    """Whether the values are equal up to rounding (0.6 - 0.2 and 1.0 - 0.6 are both 0.4)."""
    return float(np.ptp(x)) <= 1e-12 * max(1.0, float(np.max(np.abs(x))))


def _score_row(metric, n, c, k, tau, theta, cl, interval, confidence, common):
    size = n.size
    value = float(np.mean(theta))
    s2 = None if size < 2 else 0.0 if _all_equal(theta) else float(np.var(theta, ddof=1))
    se_super = None if s2 is None else math.sqrt(s2 / size)
    se_fixed, sd_between, fixed_reason = _fixed_se(metric, n, c, k, tau, s2)
    se_cl, n_cl = (None, None) if cl is None else _cluster_se(theta, cl)
    ses = {"fixed": se_fixed, "cluster": se_cl}
    se = ses.get(interval, se_super)
    lo, hi, method, used, reason = _row_interval(theta, value, s2, se, n_cl, interval,
                                                 confidence, fixed_reason)
    common = dict(common, ci_method=method or common["ci_method"], interval=used)
    return ScoreRow(value=value, se=se, ci_low=lo, ci_high=hi, reason=reason,
                    se_super=se_super, se_fixed=se_fixed, se_fixed_reason=fixed_reason,
                    se_cluster=se_cl, clusters=n_cl, sd_between=sd_between, **common)


def _row_interval(theta, value, s2, se, n_cl, interval, confidence, fixed_reason):
    """(lo, hi, ci_method or None, interval used, reason) of one score row."""
    size = theta.size
    if interval in ("wilson", "clopper-pearson"):
        lo, hi, why = IV.binary_interval(theta, size, confidence, interval)
        return lo, hi, None, interval, why
    if interval == "auto" and IV.binary(theta):
        lo, hi, method, used = IV.auto(theta, value, s2, size, confidence)
        return lo, hi, method, used, None
    if se is None:
        why = {"fixed": fixed_reason, "cluster": "a clustered standard error needs at least "
               "2 tasks and 2 clusters"}.get(interval, "a standard error needs at least 2 tasks")
        return None, None, None, interval, why
    if s2 == 0.0 and interval != "fixed":
        lo, hi, why = IV.fallback(value, size, confidence)
        return lo, hi, IV.LABELS["fallback"], "wilson", why
    if interval == "auto":
        lo, hi, method, used = IV.auto(theta, value, s2, size, confidence)
        return lo, hi, method, used, None
    if interval in ("percentile", "bca"):
        return None, None, None, interval, None  # filled in by _boot_rows
    if interval == "fixed" and se == 0.0:
        return None, None, None, interval, (
            "se_fixed is 0 (every task has c = 0 or c = n), so the normal interval would "
            "have zero width; use interval='auto' or 'wilson'")
    df = {"t": size - 1, "cluster": (n_cl or 0) - 1}.get(interval)
    q = norm_ppf(0.5 + confidence / 2) if df is None else t_ppf(0.5 + confidence / 2, df)
    lo, hi, cut = IV.clip(value - q * se, value + q * se)
    method = CI_METHODS[interval] + (", clipped to [0, 1]" if cut else "")
    return lo, hi, method, interval, None


def _boot_rows(out, thetas, interval, confidence, n_resamples, rng):
    """Fill the percentile and BCa fields (and the chosen interval) of the rows in ``out``."""
    kk = list(thetas)
    mat = np.ascontiguousarray(np.column_stack([thetas[k] for k in kk]))
    reps = SK.boot_means(mat, _seed64(rng), n_resamples)
    for j, k in enumerate(kk):
        row = out[k]
        if row.interval == "wilson":  # degenerate: the fallback interval is already set
            continue
        pct, bca, why = _boot_intervals(thetas[k], reps[:, j], confidence)
        upd = {"percentile_low": pct[0], "percentile_high": pct[1]}
        if bca is not None:
            upd.update(bca_low=bca[0], bca_high=bca[1])
        if interval == "percentile":
            upd.update(ci_low=pct[0], ci_high=pct[1])
        elif bca is not None:
            upd.update(ci_low=bca[0], ci_high=bca[1])
        else:
            upd["reason"] = "; ".join(x for x in (row.reason, why) if x)
        out[k] = _replace(row, **upd)


def _replace(row, **kw):
    return dataclasses.replace(row, **kw)


def _bayes_estimand(metric, prior):
    if metric == "bayes@n":
        a0, b0 = prior
        return (f"Bayes@N posterior mean of the pass rate on these tasks (Hariri et al. "
                f"2025), independent Beta({a0:g},{b0:g}) prior per task (no pooling)")
    what = ("population pass@k (a new task), 1 - B(a, b+k)/B(a, b)"
            if metric == "posterior-population" else "pass@k on these tasks")
    return f"Bayesian posterior of {what}; {POST.describe()}"


def _bayes_row(metric, n, c, k, prior, base, confidence):
    """A Bayesian row: posterior mean, posterior sd (not an SE) and a credible interval."""
    size = n.size
    if metric == "bayes@n":
        a0, b0 = prior
        ab = a0 + b0
        pt = (c + a0) / (n + ab)
        var = pt * (1.0 - pt) / (n + ab + 1.0)
        value = float(np.mean(pt))
        sd = math.sqrt(float(np.sum(var))) / size
        h = norm_ppf(0.5 + confidence / 2) * sd
        lo, hi = max(value - h, 0.0), min(value + h, 1.0)
        method = "credible (normal approximation, clipped to [0, 1])"
    else:
        value, sd, lo, hi = POST.summary(n, c, k, confidence,
                                         metric == "posterior-population")
        method = "credible (equal-tailed)"
    reason = None
    if metric == "posterior" and int(n.max()) == 1:
        reason = ("with one sample per task the spread of the p_i is not identified: this "
                  "interval leans on the hyperprior (see docs/statistics.md)")
    return ScoreRow(k=k, value=value, se=None, posterior_sd=sd, ci_low=lo, ci_high=hi,
                    reason=reason, estimand=_bayes_estimand(metric, prior),
                    ci_method=method, interval="credible", **base)


# --------------------------------------------------------------------------------------
# Paired tests
# --------------------------------------------------------------------------------------


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
    >>> from passatk.stats import wilcoxon_signed_rank
    >>> w, p, how = wilcoxon_signed_rank([0.5, -0.25, 1.0, 2.0, 1.5])
    >>> w, round(p, 4), how
    (14.0, 0.125, 'exact')
    >>> wilcoxon_signed_rank([1.0] * 5)     # ties: exact, 2 / 2**5
    (15.0, 0.0625, 'exact')
    """
    d = np.asarray(d, dtype=np.float64).reshape(-1)
    _choice(method, "method", ("auto", "exact", "approx"))
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
    >>> from passatk.stats import mcnemar
    >>> round(mcnemar(2, 9), 4)
    0.0654
    """
    b = _posint(b, "b", 0)
    c = _posint(c, "c", 0)
    if b + c == 0:
        return 1.0
    return min(1.0, 2.0 * _binom_cdf(min(b, c), b + c))


def signflip_test(d, *, n_resamples=10_000, seed=None, exact_max=20):
    """Two-sided sign-flip permutation p-value for the mean of ``d``.

    All 2**N sign patterns are enumerated when N <= ``exact_max`` (p = share of patterns
    with |sum| >= the observed |sum|); otherwise p = (1 + #{|sum_b| >= |sum|}) / (B + 1)
    over B random patterns.

    Returns
    -------
    (p-value, exact)

    Examples
    --------
    >>> from passatk.stats import signflip_test
    >>> signflip_test([1.0, 2.0, 3.0])
    (0.25, True)
    """
    d = np.ascontiguousarray(np.asarray(d, dtype=np.float64).reshape(-1))
    tol = 1e-10 * max(float(np.sum(np.abs(d))), 1e-300)
    if d.size <= exact_max:
        count, total = SK.signflip_exact(d, tol)
        return count / total, True
    rng = _rng(seed)
    count = SK.signflip_random(d, tol, _seed64(rng), _posint(n_resamples, "n_resamples"))
    return (1 + count) / (n_resamples + 1), False


def _holm(p):
    p = np.asarray(p, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    if ok.size == 0:
        return out
    m = ok.size
    order = ok[np.argsort(p[ok], kind="stable")]
    adj = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out[order] = adj
    return out


def _bh(p):
    """Benjamini-Hochberg adjusted p-values (NaN entries are left out and stay NaN)."""
    p = np.asarray(p, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    if ok.size == 0:
        return out
    m = ok.size
    order = ok[np.argsort(p[ok], kind="stable")]
    scaled = p[order] * m / np.arange(1, m + 1)
    out[order] = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    return out


# --------------------------------------------------------------------------------------
# compare
# --------------------------------------------------------------------------------------


def _compare_iv(n_a, c_a, n_b, c_b, k, task_ids_a, task_ids_b, metric, unmatched, duplicates,
                missing, confidence, n_resamples, seed, group, clusters=None):
    n_a, c_a = _int_array(n_a, "n_a"), _int_array(c_a, "c_a")
    n_b, c_b = _int_array(n_b, "n_b"), _int_array(c_b, "c_b")
    _check_counts(n_a, c_a, "n_a", "c_a")
    _check_counts(n_b, c_b, "n_b", "c_b")
    if (task_ids_a is None) != (task_ids_b is None):
        raise TypeError("task_ids_a and task_ids_b must be given together (or both omitted, "
                        "to match tasks by position)")
    if task_ids_a is None:
        if n_a.size != n_b.size:
            raise ValueError(f"without task ids, tasks are matched by position and the runs "
                             f"must have the same length, got {n_a.size} and {n_b.size}")
        ids_a = ids_b = None
    else:
        ids_a = _label_array(task_ids_a, "task_ids_a", n_a.size)
        ids_b = _label_array(task_ids_b, "task_ids_b", n_b.size)
    cl = None if clusters is None else _label_array(clusters, "clusters", n_a.size)
    ks = _k_spec(k)
    _choice(metric, "metric", ("pass@k", "pass^k", "plugin"))
    _choice(unmatched, "unmatched", ("raise", "exclude"))
    _choice(duplicates, "duplicates", ("raise", "merge"))
    _choice(missing, "missing", ("raise", "report"))
    confidence = _confidence(confidence)
    n_resamples = _posint(n_resamples, "n_resamples", 2)
    rng = _rng(seed)
    if group is None:
        group = {}
    if not isinstance(group, Mapping):
        raise TypeError(f"group must be a mapping of labels, got {type(group).__name__}")
    return (n_a, c_a, n_b, c_b, ks, ids_a, ids_b, cl, metric, unmatched, duplicates, missing,
            confidence, n_resamples, rng, dict(group))


def _match_runs(n_a, c_a, n_b, c_b, ids_a, ids_b, cl, unmatched, duplicates):
    """Pair the tasks of run A and run B (by id, else by position).

    Returns (n_a, c_a, n_b, c_b, cl, names, id_word, only_a, only_b), in run A's order;
    ``cl`` (cluster labels given per row of run A) follows run A's tasks.
    """
    if ids_a is None:
        return n_a, c_a, n_b, c_b, cl, np.arange(n_a.size), "task positions", [], []
    ids_a, n_a, c_a, cl, _ = _dedupe(ids_a, n_a, c_a, cl, duplicates, " in run A")
    ids_b, n_b, c_b, _, _ = _dedupe(ids_b, n_b, c_b, None, duplicates, " in run B")
    try:
        common, ia, ib = np.intersect1d(ids_a, ids_b, assume_unique=True, return_indices=True)
    except TypeError as e:
        raise TypeError(f"task ids must be comparable values of one type: {e}") from None
    only_a: list = []
    only_b: list = []
    if common.size < ids_a.size or common.size < ids_b.size:
        only_a = [_py(x) for x in np.setdiff1d(ids_a, common, assume_unique=True)]
        only_b = [_py(x) for x in np.setdiff1d(ids_b, common, assume_unique=True)]
        if unmatched == "raise":
            raise HintedError(
                f"tasks must be present in both runs: {len(only_a)} only in run A "
                f"{_show(only_a)}, {len(only_b)} only in run B {_show(only_b)}; pass ",
                Option("unmatched", "exclude"), " to leave them out and report them")
    if common.size == 0:
        raise ValueError("the two runs share no task ids")
    keep = np.sort(ia)  # run A's order
    ib = ib[np.argsort(ia)]
    cl = None if cl is None else cl[keep]
    return (n_a[keep], c_a[keep], n_b[ib], c_b[ib], cl, ids_a[keep], "task ids", only_a,
            only_b)


def compare(n_a, c_a, n_b, c_b, k=1, *, task_ids_a=None, task_ids_b=None, metric="pass@k",
            unmatched="raise", duplicates="raise", missing="raise", confidence=0.95,
            n_resamples=10_000, seed=None, group=None, clusters=None):
    """Paired comparison of run A and run B on the same tasks, at one or several k.

    Tasks are matched by id (or by position when no ids are given). Per k, with
    D_i = thetahat_A,i - thetahat_B,i: the mean difference, its paired SE sd(D)/sqrt(N), the
    t interval and p-value (N-1 df), the paired studentized bootstrap interval, the
    sign-flip permutation p-value (exact for N <= 20), the Wilcoxon signed-rank test (a
    test of symmetry about 0, not of the mean), McNemar's exact test when every task has
    one sample in both runs, Holm and Benjamini-Hochberg adjustments of the t p-values over
    the k compared, and a studentized max-T bootstrap band that holds over all k
    simultaneously. With ``clusters``, the SE is the cluster-robust CR1 SE on
    clusters - 1 df and the bootstrap resamples whole clusters.

    When every difference is equal (sd = 0) there is no t test: ``p_value`` is the exact
    sign-flip p-value (never 0), the interval falls back to the Wilson interval with the
    [-1, 1] variance bound, and ``reason`` says so. Intervals are clipped to [-1, 1].

    Parameters
    ----------
    n_a, c_a, n_b, c_b : array_like of int
        Samples and correct samples per task in run A and run B.
    k : int, sequence of int, "ladder" or "all"
        Budgets; ``"ladder"`` means 1, 2, 5, 10, ... and min(n) over both runs, ``"all"``
        1..min(n) (at most :data:`MAX_ALL_K` values).
    task_ids_a, task_ids_b : array_like, optional
        Task ids of each run (both or neither).
    metric : {"pass@k", "pass^k", "plugin"}
    unmatched : {"raise", "exclude"}
        Tasks present in one run only: an error listing them, or excluded and reported in
        ``only_in_a`` / ``only_in_b``.
    duplicates : {"raise", "merge"}
    missing : {"raise", "report"}
        A k above some task's n: error, or a row with ``diff=None`` and the reason.
    confidence : float
    n_resamples : int
        Bootstrap resamples, and random sign patterns when N > 20.
    seed : None, int or numpy.random.Generator
    group : mapping, optional
        Labels copied into every row's ``group`` (e.g. ``{"a": "model-x", "b": "model-y"}``).
    clusters : array_like, optional
        One cluster label per row of run A (e.g. the passage or repository of each task).

    Returns
    -------
    CompareResult

    Examples
    --------
    >>> import passatk
    >>> r = passatk.compare([10, 10, 10, 10], [9, 7, 5, 8], [10, 10, 10, 10], [6, 7, 2, 4],
    ...                     k=1, seed=0)
    >>> row = r[0]
    >>> round(row.diff, 3), round(row.se, 3), row.tasks, row.perm_p_value, row.perm_exact
    (0.25, 0.087, 4, 0.25, True)
    >>> one = passatk.compare([1] * 5, [1] * 5, [1] * 5, [0] * 5, seed=0)[0]
    >>> one.p_value, round(one.mcnemar_p_value, 12)   # A always wins: exact p, never 0
    (0.0625, 0.0625)
    """
    (n_a, c_a, n_b, c_b, ks, ids_a, ids_b, cl, metric, unmatched, duplicates, missing,
     confidence, n_resamples, rng, group) = _compare_iv(
        n_a, c_a, n_b, c_b, k, task_ids_a, task_ids_b, metric, unmatched, duplicates, missing,
        confidence, n_resamples, seed, group, clusters)
    n_a, c_a, n_b, c_b, cl, names, id_word, only_a, only_b = _match_runs(
        n_a, c_a, n_b, c_b, ids_a, ids_b, cl, unmatched, duplicates)
    size = n_a.size
    nmin = int(min(n_a.min(), n_b.min()))
    kvals = _k_values(ks, nmin)
    cinv = None if cl is None else np.unique(cl, return_inverse=True)[1].reshape(-1)
    base = {"group": group, "metric": metric, "tasks": size, "confidence": confidence,
            "samples_a": int(n_a.sum()), "samples_b": int(n_b.sum()),
            "estimand": "super-population paired difference (A - B)"
            + (", clustered" if cl is not None else "")}
    rows: dict = {}
    diffs: dict = {}
    for kv in kvals:
        if kv > nmin:
            short = np.flatnonzero((n_a < kv) | (n_b < kv))
            reason = (f"k={kv} exceeds n for {short.size} of {size} tasks: {id_word} "
                      f"{_show(names[short])}")
            if missing == "raise":
                raise HintedError(f"cannot compare {metric} at k={kv}: {reason}; pass ",
                                  Option("missing", "report"), " to report this k as missing")
            rows[kv] = CompareRow(k=kv, diff=None, se=None, ci_low=None, ci_high=None,
                                  p_value=None, reason=reason, **base)
            continue
        ta, tb = _theta(metric, n_a, c_a, kv), _theta(metric, n_b, c_b, kv)
        rows[kv] = _compare_row(ta, tb, kv, metric, n_a, c_a, n_b, c_b, cinv, confidence,
                                n_resamples, rng, base)
        if rows[kv].se is not None:
            diffs[kv] = ta - tb
    crit = _compare_boot(rows, diffs, cinv, confidence, n_resamples, rng) if diffs else None
    order = list(kvals)
    raw = [np.nan if rows[kv].p_value is None else rows[kv].p_value for kv in order]
    out = []
    for kv, ph, pb in zip(order, _holm(raw), _bh(raw), strict=True):
        out.append(_replace(rows[kv], p_value_holm=_f(ph), p_value_bh=_f(pb)))
    return CompareResult(rows=tuple(out), confidence=confidence, only_in_a=tuple(only_a),
                         only_in_b=tuple(only_b), band_critical_value=crit,
                         n_resamples=n_resamples)


WILCOXON_HYPOTHESIS = ("symmetry of the differences about 0 (pseudo-median 0), not mean 0; "
                       "under a skewed null with mean 0 it rejects far too often")


def _diff_fallback(diff, size, confidence):
    """Wilson with the variance bound on (D + 1)/2 in [0, 1], mapped back to [-1, 1]."""
    lo, hi = IV.wilson((diff + 1.0) / 2.0, size, norm_ppf(0.5 + confidence / 2))
    return 2.0 * lo - 1.0, 2.0 * hi - 1.0


def _paired_t(d, cinv, confidence, perm_p):
    """The t part of a compare row: a dict of fields and a reason (or None)."""
    size = d.size
    diff = float(np.mean(d))
    if cinv is None:
        se, df = math.sqrt(float(np.var(d, ddof=1)) / size), size - 1
    else:
        se, g = _cluster_se(d, cinv)
        if se is None:
            return {}, "a clustered standard error needs at least 2 clusters"
        df = g - 1
    if _all_equal(d):
        se = 0.0
    fields = {"se": se, "df": df, "clusters": None if cinv is None else df + 1}
    if se == 0.0:
        lo, hi = _diff_fallback(diff, size, confidence)
        p = 1.0 if diff == 0 else perm_p
        fields.update(p_value=p, ci_low=lo, ci_high=hi,
                      ci_method="Wilson score with the [-1, 1] variance bound (degenerate data)")
        return fields, (f"all {size} differences equal {diff:.6g}, so their sd is 0 and there "
                        f"is no t test: p_value is the sign-flip p-value and the interval the "
                        f"Wilson interval with the [-1, 1] variance bound")
    tstat = diff / se
    h = t_ppf(0.5 + confidence / 2, df) * se
    lo, hi, cut = IV.clip(diff - h, diff + h, -1.0, 1.0)
    fields.update(t_stat=tstat, p_value=max(min(2.0 * _t_tail(tstat, df), 1.0), _P_FLOOR),
                  ci_low=lo, ci_high=hi,
                  ci_method="paired t" + (", CR1 clusters" if cinv is not None else "")
                  + (", clipped to [-1, 1]" if cut else ""))
    return fields, None


def _compare_row(ta, tb, kv, metric, n_a, c_a, n_b, c_b, cinv, confidence, n_resamples,
                 rng, base):
    d = ta - tb
    size = d.size
    fields = {"value_a": float(np.mean(ta)), "value_b": float(np.mean(tb))}
    pp, exact = signflip_test(d, n_resamples=n_resamples, seed=rng)
    reason = "a standard error needs at least 2 tasks"
    if size >= 2:
        t_fields, reason = _paired_t(d, cinv, confidence, pp)
        fields.update(t_fields)
    # values equal in exact arithmetic can differ in the last bits (0.3 - 0.1 vs 0.2):
    # round before ranking so that such ties and zeros are seen as ties and zeros
    w, wp, wm = wilcoxon_signed_rank(np.round(d, 12))
    fields.update(perm_p_value=pp, perm_exact=exact, wilcoxon_stat=w, wilcoxon_p_value=wp,
                  wilcoxon_method=wm, wilcoxon_hypothesis=WILCOXON_HYPOTHESIS)
    if bool(np.all(n_a == 1) and np.all(n_b == 1)) and kv == 1 and metric != "plugin":
        mb = int(np.sum((c_a == 1) & (c_b == 0)))  # with n = 1, pass@1 = pass^1 = c
        mc = int(np.sum((c_a == 0) & (c_b == 1)))
        fields.update(mcnemar_b=mb, mcnemar_c=mc, mcnemar_p_value=mcnemar(mb, mc))
    for key in ("se", "ci_low", "ci_high", "p_value"):
        fields.setdefault(key, None)
    return CompareRow(k=kv, diff=float(np.mean(d)), reason=reason, **base, **fields)


def _boot_t(mat, cinv, confidence, n_resamples, rng):
    """Studentized bootstrap over tasks (or clusters) of the column means of ``mat``.

    Returns (means, ses, t) per resample: the resampled mean of each column, its CR1 SE
    within the resample (sd/sqrt(N) for single-task clusters), and (mean* - mean) / se*.
    """
    if cinv is None:
        cinv = np.arange(mat.shape[0])
    g = int(cinv.max()) + 1
    sums = np.column_stack([np.bincount(cinv, weights=mat[:, j], minlength=g)
                            for j in range(mat.shape[1])])
    size = np.bincount(cinv, minlength=g).astype(np.float64)[:, None]
    cols = np.hstack([sums, sums * sums, sums * size, size, size * size])
    reps = SK.boot_means(np.ascontiguousarray(cols), _seed64(rng), n_resamples) * g
    kk = mat.shape[1]
    s, s2, sn = reps[:, :kk], reps[:, kk:2 * kk], reps[:, 2 * kk:3 * kk]
    tot, tot2 = reps[:, 3 * kk:3 * kk + 1], reps[:, 3 * kk + 1:]
    mean = s / tot
    ss = np.maximum(s2 - 2.0 * mean * sn + mean * mean * tot2, 0.0)
    se = np.sqrt(g / (g - 1) * ss) / tot
    est = mat.mean(axis=0)
    dev = mean - est
    tol = 1e-10 * max(float(np.max(np.abs(mat))), 1e-300)
    with np.errstate(divide="ignore", invalid="ignore"):
        tt = np.where(se > 0, dev / se, np.where(np.abs(dev) <= tol, 0.0, np.sign(dev) * 1e300))
    return mean, se, tt


def _compare_boot(rows, diffs, cinv, confidence, n_resamples, rng):
    """Fill the studentized bootstrap interval and the max-T band; return the critical value."""
    kk = list(diffs)
    mat = np.ascontiguousarray(np.column_stack([diffs[kv] for kv in kk]))
    _, _, tt = _boot_t(mat, cinv, confidence, n_resamples, rng)
    ses = np.array([rows[kv].se for kv in kk])
    live = ses > 0
    crit = None
    if live.any():
        crit = float(np.quantile(np.max(np.abs(tt[:, live]), axis=1), confidence))
    for j, kv in enumerate(kk):
        row = rows[kv]
        if not live[j]:  # degenerate: the fallback interval stands in for both
            rows[kv] = _replace(row, boot_low=row.ci_low, boot_high=row.ci_high,
                                band_low=row.ci_low, band_high=row.ci_high)
            continue
        # symmetric bootstrap-t: the |T*| quantile (two-sided error O(1/N^2), and at N = 20
        # closer to its level than the equal-tailed bootstrap-t or the percentile interval)
        q = float(np.quantile(np.abs(tt[:, j]), confidence))
        blo, bhi, _ = IV.clip(row.diff - q * row.se, row.diff + q * row.se, -1.0, 1.0)
        half = crit * row.se
        lo, hi, _ = IV.clip(row.diff - half, row.diff + half, -1.0, 1.0)
        rows[kv] = _replace(row, boot_low=blo, boot_high=bhi, band_low=lo, band_high=hi)
    return crit


# --------------------------------------------------------------------------------------
# Planning and simulation
# --------------------------------------------------------------------------------------


def _plan_iv_common(alpha, power):
    for name, v in (("alpha", alpha), ("power", power)):
        if isinstance(v, bool) or not isinstance(v, int | float | np.floating):
            raise TypeError(f"{name} must be a float, got {type(v).__name__}")
        if not 0.0 < v < 1.0:
            raise ValueError(f"{name} must satisfy 0 < {name} < 1, got {name}={v!r}")
    return float(alpha), float(power)


def _positive(v, name):
    if isinstance(v, bool) or not isinstance(v, int | float | np.integer | np.floating):
        raise TypeError(f"{name} must be a number, got {type(v).__name__}")
    if not (v > 0 and math.isfinite(v)):
        raise ValueError(f"{name} must be a finite number > 0, got {name}={v!r}")
    return float(v)


def _power_iv(x, name, sd, alpha, power):
    """Validate (delta or n_tasks, sd, alpha, power) of the power-analysis functions."""
    if name == "n_tasks":
        x = _posint(x, name, 2)  # a t test needs 2 tasks
    else:
        if isinstance(x, int | float | np.integer | np.floating) and not isinstance(x, bool):
            x = abs(x)  # the sign of the difference does not matter to a two-sided test
        x = _positive(x, name)
    sd = _positive(sd, "sd")
    alpha, power = _plan_iv_common(alpha, power)
    return x, sd, alpha, power


def tasks_needed(delta, sd, *, alpha=0.05, power=0.8):
    """Tasks needed to detect a mean difference ``delta`` with the paired t test of ``compare``.

    The smallest N whose two-sided t test on N - 1 df has the requested power, from the
    noncentral t distribution (noncentrality delta sqrt(N) / sd); it equals
    ``ceil(TTestPower().solve_power(...))`` of statsmodels. ``sd`` is sigma_D, the standard
    deviation of the per-task differences (see :func:`paired_sd`). The normal-theory
    closed form (z_{1-alpha/2} + z_{power})^2 sd^2 / delta^2 (Miller 2024), which comes out
    a few tasks short at small N, is reported in ``inputs["z_approximation"]``.

    Examples
    --------
    >>> import passatk
    >>> passatk.tasks_needed(0.03, 0.2).value
    351
    >>> passatk.tasks_needed(0.3, 0.3).value       # the z formula says 8
    10
    """
    delta, sd, alpha, power = _power_iv(delta, "delta", sd, alpha, power)
    z = norm_ppf(1 - alpha / 2) + norm_ppf(power)
    approx = (z * sd / delta) ** 2
    return PlanResult(quantity="tasks", value=PL.tasks_for_power(delta / sd, alpha, power),
                      inputs={"delta": delta, "sd": sd, "alpha": alpha, "power": power,
                              "z_approximation": approx},
                      note="smallest N with power >= target for the two-sided paired t test "
                           "(noncentral t, N - 1 df)")


def min_detectable_effect(n_tasks, sd, *, alpha=0.05, power=0.8):
    """Minimum difference that the paired t test on ``n_tasks`` tasks detects with ``power``.

    Solved on the noncentral t distribution (N - 1 df); the normal-theory value
    (z_{1-alpha/2} + z_{power}) sd / sqrt(N) is in ``inputs["z_approximation"]``.
    Needs at least 2 tasks.

    Examples
    --------
    >>> import passatk
    >>> round(passatk.min_detectable_effect(164, 0.3).value, 4)
    0.066
    """
    n_tasks, sd, alpha, power = _power_iv(n_tasks, "n_tasks", sd, alpha, power)
    z = norm_ppf(1 - alpha / 2) + norm_ppf(power)
    return PlanResult(quantity="min_detectable_effect",
                      value=sd * PL.effect_for_power(n_tasks, alpha, power),
                      inputs={"n_tasks": n_tasks, "sd": sd, "alpha": alpha, "power": power,
                              "z_approximation": z * sd / math.sqrt(n_tasks)},
                      note="two-sided paired t test (noncentral t, N - 1 df)")


def paired_sd(n_a, c_a, n_b, c_b, k=1, *, task_ids_a=None, task_ids_b=None,
              metric="pass@k"):
    """The sd of the per-task differences D_i from a pilot pair of runs (``sd`` for planning).

    sigma_D = sd(thetahat_A,i - thetahat_B,i, ddof=1) over matched tasks (matched like
    :func:`compare`, which must not find unmatched tasks). Pass it as ``sd`` to
    :func:`tasks_needed` and :func:`min_detectable_effect`.

    Examples
    --------
    >>> from passatk.stats import paired_sd
    >>> r = paired_sd([10] * 4, [9, 7, 5, 8], [10] * 4, [6, 7, 2, 4])
    >>> round(r.value, 4), r.inputs["tasks"]
    (0.1732, 4)
    """
    (n_a, c_a, n_b, c_b, _ks, ids_a, ids_b, _cl, metric, *_rest) = _compare_iv(
        n_a, c_a, n_b, c_b, k, task_ids_a, task_ids_b, metric, "raise", "raise", "raise",
        0.95, 2, None, None)
    k = _posint(k, "k")
    n_a, c_a, n_b, c_b, *_rest = _match_runs(n_a, c_a, n_b, c_b, ids_a, ids_b, None,
                                             "raise", "raise")
    if n_a.size < 2:
        raise ValueError(f"paired_sd needs at least 2 matched tasks, got {n_a.size}")
    short = np.flatnonzero((n_a < k) | (n_b < k))
    if short.size:
        raise ValueError(f"k={k} exceeds n for {short.size} of {n_a.size} matched tasks "
                         f"(positions {_show(short)})")
    d = _theta(metric, n_a, c_a, k) - _theta(metric, n_b, c_b, k)
    return PlanResult(quantity="sd", value=float(np.std(d, ddof=1)),
                      inputs={"tasks": int(n_a.size), "k": k, "metric": metric,
                              "mean_difference": float(np.mean(d))},
                      note="sample sd (ddof=1) of the paired per-task differences")


def _samples_iv(n, c, k, target_se, metric):
    n = _int_array(n, "n")
    c = _int_array(c, "c")
    _check_counts(n, c)
    k = _posint(k, "k")
    eps = _positive(target_se, "target_se")
    _choice(metric, "metric", ("pass@k", "pass^k"))
    return n, c, k, eps, metric


def samples_needed(n, c, k, target_se, *, metric="pass@k"):
    """Samples per task needed for a fixed-benchmark SE of at most ``target_se``.

    The success rates p_i = c_i / n_i of pilot counts are plugged into the exact variance
    of the estimator (Hoeffding's U-statistic form, see docs/statistics.md), and the
    smallest common n with (1/N^2) sum_i Var_i(n) <= target_se^2 is found by bisection.
    A pilot task with c_i = 0 or c_i = n_i would say its variance is 0; it gets the
    Jeffreys posterior mean p_i = (c_i + 1/2) / (n_i + 1) instead, and
    ``inputs["boundary_tasks"]`` counts such tasks.
    The large-n approximation n >= sum_i k^2 q_i^(2k-2) p_i q_i / (N^2 eps^2) is reported in
    ``inputs["approximation"]``.

    Examples
    --------
    >>> import passatk
    >>> r = passatk.samples_needed([20] * 100, [2] * 100, 10, 0.01)
    >>> r.value
    140
    >>> passatk.samples_needed([10] * 100, [0] * 50 + [10] * 50, 1, 0.001).value > 1
    True
    """
    n, c, k, eps, metric = _samples_iv(n, c, k, target_se, metric)
    edge = (c == 0) | (c == n)
    # c = 0 or c = n would plug in p = 0 or 1, a variance of 0 (D7 of the audit): those
    # tasks get the Jeffreys posterior mean (c + 1/2) / (n + 1) instead
    p = np.where(edge, (c + 0.5) / (n + 1.0), c / np.maximum(n, 1))
    size = n.size

    def se_at(m):
        return math.sqrt(float(np.sum(_exact_task_var(p, m, k, metric)))) / size

    lo, hi = k, k
    while se_at(hi) > eps:
        lo, hi = hi, hi * 2
        if hi > 2**52:
            raise ValueError(f"target_se={eps!r} cannot be reached with n < 2**52")
    if se_at(lo) <= eps:
        hi = lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if se_at(mid) <= eps:
            hi = mid
        else:
            lo = mid
    q = 1.0 - p if metric == "pass@k" else p
    approx = float(np.sum(k * k * q ** (2 * k - 2) * p * q)) / (size**2 * eps**2)
    return PlanResult(quantity="samples_per_task", value=int(hi),
                      inputs={"tasks": size, "k": k, "target_se": eps, "metric": metric,
                              "approximation": approx, "se_at_value": se_at(hi),
                              "boundary_tasks": int(np.count_nonzero(edge))},
                      note="exact estimator variance at p_i = c_i / n_i from the pilot, "
                           "(c_i + 1/2) / (n_i + 1) where c_i is 0 or n_i")


def _simulate_iv(n_tasks, n, a, b, seed, n_benchmarks):
    n_tasks = _posint(n_tasks, "n_tasks")
    nn = _int_array(n, "n")
    if nn.size not in (1, n_tasks):
        raise ValueError(f"n must be one int or one per task ({n_tasks}), got {nn.size}")
    if (nn < 1).any() or (nn >= _MAX_N).any():
        i = int(np.argmax((nn < 1) | (nn >= _MAX_N)))
        raise ValueError(f"n must satisfy 1 <= n < 2**53, got n={int(nn[i])} at position {i}")
    a = _positive(a, "a")
    b = _positive(b, "b")
    rng = _rng(seed)
    shape = (n_tasks,) if n_benchmarks is None else (
        _posint(n_benchmarks, "n_benchmarks"), n_tasks)
    return n_tasks, nn, a, b, rng, shape


def simulate(n_tasks, n, a, b, *, seed=None, n_benchmarks=None):
    """Simulate benchmark counts: p_i ~ Beta(a, b), then c_i ~ Binomial(n_i, p_i).

    Parameters
    ----------
    n_tasks : int
    n : int or array_like of int
        Samples per task (one value, or one per task).
    a, b : float
        Beta parameters of the task success rates.
    seed : None, int or numpy.random.Generator
    n_benchmarks : int, optional
        Draw this many independent benchmarks at once (leading axis).

    Returns
    -------
    Simulation
        ``.n``, ``.c``, ``.p`` arrays, with ``true_pass_at_k(k)`` (mean over the drawn tasks)
        and ``population_pass_at_k(k)`` (the expectation under Beta(a, b)).

    Examples
    --------
    >>> import passatk
    >>> sim = passatk.simulate(1000, 10, 2.0, 2.0, seed=0)
    >>> sim.c.shape, bool((sim.c <= 10).all())
    ((1000,), True)
    >>> round(sim.population_pass_at_k(1), 6)
    0.5
    """
    n_tasks, nn, a, b, rng, shape = _simulate_iv(n_tasks, n, a, b, seed, n_benchmarks)
    p = rng.beta(a, b, size=shape)
    nfull = np.broadcast_to(nn if nn.size == n_tasks else nn[0], shape).astype(np.int64)
    c = rng.binomial(nfull, p).astype(np.int64)
    return Simulation(n=np.ascontiguousarray(nfull), c=c, p=p, a=a, b=b)
