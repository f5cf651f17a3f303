"""Normal and Student t distribution functions, log-gamma helpers (private).

Runtime dependencies are NumPy and numba only, so these are implemented here; the tests
compare them with scipy (tests/test_stats_dist.py).
"""

from __future__ import annotations

import functools
import math

import numpy as np

_SQRT2 = math.sqrt(2.0)


_SQRT2PI = math.sqrt(2.0 * math.pi)


def norm_cdf(x: float) -> float:
    """The standard normal distribution function Phi(x), accurate in both tails.

    Examples
    --------
    >>> from passatk.stats._dist import norm_cdf
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
    >>> from passatk.stats._dist import norm_ppf
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
    >>> from passatk.stats._dist import t_cdf
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


# From this df on, four terms of the expansion are exact to double precision (the fifth is
# below 1e-20 relative), while the tail integral loses digits to cancellation.
_CF_DF = 1e5


def _cornish_fisher(p: float, df: float) -> float:
    """t quantile by its expansion in 1/df about the normal one (Abramowitz & Stegun 26.7.5)."""
    z = norm_ppf(p)
    z2 = z * z
    g1 = z * (z2 + 1.0) / 4.0
    g2 = z * ((5.0 * z2 + 16.0) * z2 + 3.0) / 96.0
    g3 = z * (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) / 384.0
    g4 = z * ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) / 92160.0
    return z + (g1 + (g2 + (g3 + g4 / df) / df) / df) / df


def t_ppf(p: float, df: float) -> float:
    """Student's t quantile: safeguarded Newton steps on :func:`t_cdf`.

    Examples
    --------
    >>> from passatk.stats._dist import t_ppf
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
    return _t_ppf(p, float(df))


@functools.lru_cache(maxsize=1024)
def _t_ppf(p: float, df: float) -> float:
    """:func:`t_ppf` for 0 < p < 1, p != 0.5 and a finite df > 0; cached, since a score of
    many groups asks for the same quantile per row (0.3 ms each)."""
    q = p if p < 0.5 else 1.0 - p
    if df == 1.0:
        x = -1.0 / math.tan(math.pi * q)
    elif df == 2.0:
        x = -math.sqrt(2.0) * (1.0 - 2.0 * q) / math.sqrt(4.0 * q * (1.0 - q))
    elif df >= _CF_DF:
        return _cornish_fisher(p, df)
    else:
        x = _t_lower_newton(q, df)
    return x if p < 0.5 else -x


def _t_lower_newton(q: float, df: float) -> float:
    """The q-quantile (q < 0.5) of t on df degrees of freedom, by safeguarded Newton steps."""
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
            return nx
        x = nx
    return x


def _lncomb(a, b):
    a = np.asarray(a, dtype=np.float64)
    return _lgamma(a + 1.0) - math.lgamma(b + 1.0) - _lgamma(a - b + 1.0)


_lgamma_u = np.frompyfunc(math.lgamma, 1, 1)


def _lgamma(x):
    return np.asarray(_lgamma_u(np.asarray(x, dtype=np.float64)), dtype=np.float64)
