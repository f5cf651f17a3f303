"""Exact pass@k and pass^k in pure Python: the definition the kernels are tested against.

Standard library only. Every function takes Python ints and returns either an exact
:class:`fractions.Fraction` or the correctly rounded float of that fraction.

>>> from passatk import reference
>>> reference.pass_at_k_exact(10, 2, 3)
Fraction(8, 15)
>>> [reference.pass_at_k(5, 2, k) for k in range(1, 6)]
[0.4, 0.7, 0.9, 1.0, 1.0]
>>> reference.pass_hat_k(5, 2, 2)
0.1
"""

from __future__ import annotations

import math
from fractions import Fraction

__all__ = [
    "fail_at_k_exact",
    "pass_at_k",
    "pass_at_k_exact",
    "pass_hat_k",
    "pass_hat_k_exact",
    "to_float",
    "ulp_error",
]

MAX_N = 2**53


def _check(n: int, c: int, k: int) -> None:
    for name, v in (("n", n), ("c", c), ("k", k)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"{name} must be an int, got {type(v).__name__} {v!r}")
    if not 0 <= c <= n:
        raise ValueError(f"c must satisfy 0 <= c <= n, got n={n}, c={c}")
    if not 1 <= k <= n:
        raise ValueError(f"k must satisfy 1 <= k <= n, got n={n}, k={k}")
    if n >= MAX_N:
        raise ValueError(f"n must be < 2**53, got n={n}")


def fail_at_k_exact(n: int, c: int, k: int) -> Fraction:
    """P0 = C(n-c, k) / C(n, k): the probability that k draws without replacement all fail."""
    _check(n, c, k)
    if c + k > n:
        return Fraction(0)
    if c == 0:
        return Fraction(1)
    # C(n-c,k)/C(n,k) == C(n-k,c)/C(n,c); the smaller of c and k keeps the products short.
    if c < k:
        c, k = k, c
    num = den = 1
    for j in range(k):
        num *= n - c - j
        den *= n - j
    return Fraction(num, den)


def pass_at_k_exact(n: int, c: int, k: int) -> Fraction:
    """Exact pass@k = 1 - C(n-c, k) / C(n, k) (Chen et al. 2021, eq. 1)."""
    return 1 - fail_at_k_exact(n, c, k)


def pass_hat_k_exact(n: int, c: int, k: int) -> Fraction:
    """Exact pass^k = C(c, k) / C(n, k): the probability that k draws all pass (tau-bench)."""
    _check(n, c, k)
    return fail_at_k_exact(n, n - c, k)


def to_float(x: Fraction) -> float:
    """The correctly rounded (round-half-even) double of a non-negative fraction."""
    # int / int true division in CPython is correctly rounded.
    return x.numerator / x.denominator


def pass_at_k(n: int, c: int, k: int) -> float:
    """Correctly rounded pass@k."""
    return to_float(pass_at_k_exact(n, c, k))


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Correctly rounded pass^k."""
    return to_float(pass_hat_k_exact(n, c, k))


def ulp_error(value: float, exact: Fraction) -> float:
    """Distance of ``value`` from ``exact`` in units in the last place of ``exact``.

    A correctly rounded result scores at most 0.5.
    >>> ulp_error(0.1, Fraction(1, 10))
    0.4
    """
    if math.isnan(value):
        return math.inf
    ref = to_float(exact)
    if ref == 0.0:
        return 0.0 if value == 0.0 else math.inf
    u = math.ulp(ref) if abs(exact) >= abs(Fraction(ref)) else math.ulp(math.nextafter(ref, 0.0))
    return float(abs(Fraction(value) - exact) / Fraction(u))
