"""The small-input exact path of ``_api`` and where it switches to the kernels.

An array call of at most ``EXACT_MAX_SIZE`` triples, all with n <= ``EXACT_MAX_N``, is
computed from exact binomials (``math.comb``; int / int division rounds correctly) and never
starts numba. Larger calls, and Python-int scalars, run the kernels. The two sides must agree
within the kernels' 2-ulp contract and the exact side must be correctly rounded (<= 0.5 ulp).
"""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
from oracle import exact, ulps

import passatk
from passatk import _api, fail_at_k, reference
from passatk.stats import _kernels as SK

FUNCS = {"pass": passatk.pass_at_k, "hat": passatk.pass_hat_k, "fail": fail_at_k}
SIZE, NMAX = _api.EXACT_MAX_SIZE, _api.EXACT_MAX_N


def kernel_values(func, n, c, k):
    """The kernels' values for equal-length lists: padded past the switch with a copy of
    the first triple, so the call is one element too large for the exact path."""
    pad = SIZE + 1 - len(n) if len(n) <= SIZE else 0
    arrays = [np.array(list(x) + [x[0]] * pad, dtype=np.int64) for x in (n, c, k)]
    return func(*arrays)[: len(n)]


def test_the_switch_is_where_the_constants_say():
    assert (SIZE, NMAX) == (64, 1000)
    n = np.full(SIZE, NMAX)
    c = np.arange(SIZE) * 7
    k = np.arange(1, SIZE + 1) * 3
    exact_side = passatk.pass_at_k(n, c, k)
    # exactly at the limits: correctly rounded, bit for bit the reference
    assert exact_side.tolist() == [reference.pass_at_k(NMAX, int(a), int(b))
                                   for a, b in zip(c, k, strict=True)]
    # one triple more, or one n above the limit: the kernels, within 2 ulp of the exact value
    more = passatk.pass_at_k(np.append(n, NMAX), np.append(c, 0), np.append(k, 1))[:SIZE]
    bigger = passatk.pass_at_k(np.append(n[:-1], NMAX + 1), c, k)[:-1]
    for got in (more, bigger):
        errs = [ulps(float(v), exact(NMAX, int(a), int(b), "pass"))
                for v, a, b in zip(got, c[: got.size], k[: got.size], strict=True)]
        assert max(errs) <= 2.0


@pytest.mark.parametrize("what", sorted(FUNCS))
@pytest.mark.parametrize("n", [2, 17, 200, NMAX - 1, NMAX])
def test_both_sides_agree_within_the_contract(what, n):
    func = FUNCS[what]
    rng = np.random.default_rng(n)
    c = sorted({0, 1, n // 2, n - 1, n, *rng.integers(0, n + 1, 40).tolist()})
    for k in sorted({1, 2, n // 3 or 1, n - 1 or 1, n, int(rng.integers(1, n + 1))}):
        ns, cs, ks = [n] * len(c), c, [k] * len(c)
        exact_side = func(np.array(ns), np.array(cs), np.array(ks)).tolist()  # len <= SIZE
        kern = kernel_values(func, ns, cs, ks)
        scalars = [func(n, ci, k) for ci in c]  # Python ints: the kernel, bit for bit
        assert scalars == kern.tolist()
        for v, w, ci in zip(exact_side, kern, c, strict=True):
            ref = exact(n, ci, k, what)
            assert ulps(v, ref) <= 0.5, (n, ci, k)
            assert ulps(float(w), ref) <= 2.0, (n, ci, k)


def test_invalid_triples_are_reported_alike_on_both_sides():
    for size in (3, SIZE + 5):
        n = np.full(size, 10)
        c = np.zeros(size, dtype=np.int64)
        c[1] = 11
        with pytest.raises(ValueError, match=r"index 1 with n=10, c=11"):
            passatk.pass_at_k(n, c, 3)
        got = passatk.pass_at_k(n, c, 3, errors="nan")
        assert np.isnan(got[1]) and not np.isnan(got[0])
    assert np.isnan(passatk.pass_at_k([10], [11], [3], errors="nan")[0])


def test_one_minus_ratio_exact_side_matches_the_kernel():
    rng = np.random.default_rng(5)
    n = rng.integers(2, NMAX + 1, 60)
    c = rng.integers(0, n + 1)
    for k in (1, 2, 5, 40):
        ok = n >= 2 * k
        a, b = n[ok], c[ok]
        small = SK.one_minus_ratio(a, b, k)
        assert a.size <= SIZE
        padded = SK.one_minus_ratio(np.append(a, np.full(SIZE, a[0])),
                                    np.append(b, np.full(SIZE, b[0])), k)[: a.size]
        for ni, ci, v, w in zip(a.tolist(), b.tolist(), small, padded, strict=True):
            if ci == 0 or ci + k > ni - k:
                ref = Fraction(0 if ci == 0 else 1)
            else:
                ref = 1 - (reference.fail_at_k_exact(ni - k, ci, k)
                           / reference.fail_at_k_exact(ni, ci, k))
            assert ulps(float(v), ref) <= 0.5
            # the kernel sums min(c, k) logarithms: about one ulp each
            assert ulps(float(w), ref) <= 2.0 + min(ci, k), (ni, ci, k)


_NUMBA_AFTER = ("import sys, numpy as np, passatk\n"
                "{call}\n"
                "print('numba' in sys.modules)")


@pytest.mark.parametrize(("call", "started"), [
    ("passatk.pass_at_k([1000], [13], [10])", False),
    (f"passatk.pass_hat_k(np.full({SIZE}, 1000), 500, 3)", False),
    ("passatk.pass_at_k([1001], [13], [10])", True),
    (f"passatk.fail_at_k(np.full({SIZE + 1}, 20), 5, 3)", True),
    ("passatk.pass_at_k(20, 13, 10)", True),
])
def test_numba_starts_only_past_the_switch(call, started):
    out = subprocess.run([sys.executable, "-c", _NUMBA_AFTER.format(call=call)],
                         capture_output=True, text=True, timeout=300, check=True).stdout
    assert out.split() == [str(started)]


def test_the_command_line_scores_the_example_without_numba():
    code = ("import sys, contextlib, io\n"
            "from passatk.cli import main\n"
            "from passatk.archives import example_path\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert main(['score', str(example_path()), '-k', '1,5,10']) == 0\n"
            "print('numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, check=True).stdout
    assert out.split() == ["False"]


TABLE = _api.TABLE_MIN_SIZE


@pytest.mark.parametrize("what", sorted(FUNCS))
@pytest.mark.parametrize(("ns", "k"), [([1, 10, 200, NMAX], 1), ([20, 21, 500], 7), ([NMAX], 3)])
def test_a_large_call_of_few_n_is_read_from_exact_values(what, ns, k):
    """One k, few distinct n <= EXACT_MAX_N, at least TABLE_MIN_SIZE triples: each value is the
    correctly rounded one (the reference, bit for bit)."""
    rng = np.random.default_rng(len(ns))
    n = rng.choice(ns, TABLE)
    c = rng.integers(0, n + 1)
    got = FUNCS[what](n, c, k)
    ref = {"pass": reference.pass_at_k_exact, "hat": reference.pass_hat_k_exact,
           "fail": reference.fail_at_k_exact}[what]
    pairs = set(zip(n.tolist(), c.tolist(), strict=True))
    want = {(a, b): reference.to_float(ref(a, b, k)) for a, b in pairs}
    assert got.tolist() == [want[a, b] for a, b in zip(n.tolist(), c.tolist(), strict=True)]


def test_the_table_path_names_an_invalid_triple():
    n = np.full(TABLE, 10)
    c = np.arange(TABLE) % 11
    c[777] = 11
    with pytest.raises(ValueError, match=r"c <= n.*index 777"):
        passatk.pass_at_k(n, c, 3)
    got = passatk.pass_at_k(n, c, 3, errors="nan")
    assert np.isnan(got[777]) and np.isfinite(np.delete(got, 777)).all()
    assert got[778] == reference.pass_at_k(10, int(c[778]), 3)


_NUMBA = """
import sys
import numpy as np
import passatk
size, top, k = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
passatk.pass_at_k(np.full(size, top), np.arange(size) % (top + 1), k)
print("numba" in sys.modules)
"""


@pytest.mark.parametrize(("size", "top", "loads"), [
    (TABLE, NMAX, False), (TABLE - 1, NMAX, True), (TABLE, NMAX + 1, True)])
def test_the_table_path_never_starts_numba(size, top, loads):
    out = subprocess.run([sys.executable, "-c", _NUMBA, str(size), str(top), "2"],
                         check=True, capture_output=True, text=True).stdout
    assert out.split() == [str(loads)]


@pytest.mark.parametrize("what", sorted(FUNCS))
def test_k_1_is_one_correctly_rounded_division(what):
    """pass@1 = pass^1 = c/n and P0 = (n-c)/n: one division of exact doubles, at any size and
    any n below 2**53 (the reference, bit for bit)."""
    rng = np.random.default_rng(7)
    n = np.exp(rng.uniform(0, np.log(2.0**53 - 1), 3000)).astype(np.int64)
    c = (rng.random(3000) * (n + 1)).astype(np.int64).clip(0, n)
    ref = {"pass": reference.pass_at_k_exact, "hat": reference.pass_hat_k_exact,
           "fail": reference.fail_at_k_exact}[what]
    want = [reference.to_float(ref(a, b, 1)) for a, b in zip(n.tolist(), c.tolist(), strict=True)]
    assert FUNCS[what](n, c, 1).tolist() == want
    c[5] = n[5] + 1
    with pytest.raises(ValueError, match=r"index 5"):
        FUNCS[what](n, c, 1)


def test_k_1_never_starts_numba():
    out = subprocess.run([sys.executable, "-c", _NUMBA, "5000", "123456789", "1"],
                         check=True, capture_output=True, text=True).stdout
    assert out.split() == ["False"]
