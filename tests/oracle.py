"""Plainly correct slow oracles for the kernel tests (stumpy's tests/naive.py, for pass@k).

``exact_fail`` is exact: a Fraction while min(c, k) is small enough for products of
integers, else a 150-digit mpmath value of ln-gamma differences (the error of which is far
below an ulp). ``ulps`` measures a double against it in units in the last place.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath

from passatk import reference

FRACTION_MAX = 3000  # largest min(c, k) handled with exact integer products


def _is_fraction_case(n, c, k):
    return min(c, k) <= FRACTION_MAX or c + k > n


def exact_fail(n, c, k):
    """P0 = C(n-c, k)/C(n, k): exact Fraction or high-precision mpf."""
    if _is_fraction_case(n, c, k):
        return reference.fail_at_k_exact(n, c, k)
    with mpmath.workprec(500):
        lg = mpmath.loggamma
        ln = lg(n - c + 1) + lg(n - k + 1) - lg(n + 1) - lg(n - c - k + 1)
        return mpmath.exp(ln)


def exact(n, c, k, what):
    """Exact pass@k ("pass"), pass^k ("hat") or P0 ("fail")."""
    if what == "hat":
        return exact_fail(n, n - c, k)
    p0 = exact_fail(n, c, k)
    if what == "fail":
        return p0
    if isinstance(p0, Fraction):
        return 1 - p0
    with mpmath.workprec(500):
        return 1 - p0


def ulps(value, ref):
    """|value - ref| in ulps of ref (a correctly rounded double scores <= 0.5).

    Exact values below the smallest normal double count as 0 ulp when ``value`` is within
    one subnormal-scale ulp; the accuracy promise covers normal results only.
    """
    if math.isnan(value):
        return math.inf
    if isinstance(ref, Fraction):
        if ref == 0:
            return 0.0 if value == 0.0 else math.inf
        rf = ref.numerator / ref.denominator
        diff = abs(Fraction(value) - ref)
        refabs = abs(ref)
    else:
        with mpmath.workprec(500):
            if ref == 0:
                return 0.0 if value == 0.0 else math.inf
            rf = float(ref)
            diff = abs(mpmath.mpf(value) - ref)
            refabs = abs(ref)
    if rf == 0.0 or abs(rf) < 2.2250738585072014e-308:
        return 0.0 if abs(value) <= 2 * 5e-324 * 2**52 else math.inf
    # ulp of the exact value's binade (at a power of two, the smaller side).
    e = math.frexp(rf)[1]
    u = math.ldexp(1.0, e - 53)
    if refabs < 2.0 ** (e - 1):
        u /= 2
    return float(diff / u)
