"""The one validation module: shared limits, one wording, rng= (SPEC 7), bounded resamples."""

import ast
import pathlib

import numpy as np
import pytest

import passatk
from passatk import _kernels, _lnfact, _validation, reference

SRC = pathlib.Path(passatk.__file__).parent


def test_limits_are_defined_once():
    assert _validation.MAX_N == 2**53 and _validation.TABLE_MAX == 2**17
    assert _kernels.MAX_N is _validation.MAX_N and _kernels.TABLE_MAX is _validation.TABLE_MAX
    assert _lnfact.TABLE_MAX is _validation.TABLE_MAX
    # reference.py is the stdlib-only oracle and keeps its own copy on purpose: it must agree
    assert reference.MAX_N == _validation.MAX_N
    defined = []
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name) and target.id.lstrip("_") in (
                            "MAX_N", "MAX_COUNT", "TABLE_MAX"):
                        defined.append((path.relative_to(SRC).as_posix(), target.id))
    assert sorted(defined) == [("_limits.py", "MAX_N"), ("_limits.py", "TABLE_MAX"),
                               ("reference.py", "MAX_N")]


@pytest.mark.parametrize("bad", [[5.0, 2], [5, True], np.array([5.0]), "5"])
def test_one_wording_for_integer_inputs(bad):
    with pytest.raises(TypeError) as api:
        passatk.pass_at_k(bad, 1, 1)
    with pytest.raises(TypeError) as stats:
        passatk.score(bad, [1] * np.size(bad))
    assert str(api.value) == str(stats.value)
    assert str(api.value).startswith("n must be an integer or an array of integers, got ")


def test_count_rules_have_one_text():
    with pytest.raises(ValueError) as api:
        passatk.pass_at_k([5, 4], [2, 7], 1)
    with pytest.raises(ValueError) as stats:
        passatk.score([5, 4], [2, 7])
    rule = "c must satisfy c <= n (more correct samples than samples)"
    assert str(api.value).startswith(rule) and str(stats.value).startswith(rule)
    assert "index 1" in str(api.value) and "index 1" in str(stats.value)


def test_huge_python_ints_name_their_index():
    with pytest.raises(ValueError, match=r"^n must be < 2\*\*53, got 1180591620717411303424 at "
                       r"index 1$"):
        passatk.score([5, 2**70], [1, 1])


def _boot(**kw):
    r = passatk.score([10, 10, 10, 10], [1, 4, 6, 9], interval="bca", n_resamples=200, **kw)
    return r[0].ci_low, r[0].ci_high


def test_rng_accepts_what_default_rng_accepts():
    want = _boot(seed=3)
    assert _boot(rng=3) == want
    assert _boot(rng=np.random.SeedSequence(3)) == want
    assert _boot(rng=np.random.PCG64(3)) == want
    assert _boot(rng=np.random.default_rng(3)) == want
    assert _boot(rng=[1, 2]) == _boot(seed=[1, 2])


def test_rng_and_seed_together_is_an_error():
    with pytest.raises(TypeError, match=r"^pass rng= or its alias seed=, not both$"):
        _boot(rng=1, seed=1)


def test_bad_rng_names_the_argument():
    with pytest.raises(TypeError, match=r"^rng must be None, an int, .* got str 'x'$"):
        _boot(rng="x")
    with pytest.raises(TypeError, match=r"^seed must be None, an int, .* got float 1.5$"):
        _boot(seed=1.5)
    with pytest.raises(ValueError, match=r"^rng must be a valid seed .* got -1"):
        _boot(rng=-1)


def test_rng_in_compare_and_simulate():
    runs = ([10] * 30, [i % 11 for i in range(30)], [10] * 30, [5] * 30)
    a = passatk.compare(*runs, k=[1, 2], rng=5)
    b = passatk.compare(*runs, k=[1, 2], seed=5)
    assert a == b
    s1 = passatk.simulate(20, 5, 1.0, 1.0, rng=np.random.SeedSequence(9))
    s2 = passatk.simulate(20, 5, 1.0, 1.0, seed=9)
    assert np.array_equal(s1.c, s2.c) and np.array_equal(s1.p, s2.p)


@pytest.mark.parametrize("func", ["score", "compare"])
def test_n_resamples_is_bounded(func):
    args = ([10, 10], [1, 2]) if func == "score" else ([10, 10], [1, 2], [10, 10], [2, 2])
    with pytest.raises(ValueError, match=r"^n_resamples must satisfy n_resamples <= "
                       r"10,000,000, got n_resamples=1,000,000,000,000; the resamples are "
                       r"held in memory$"):
        getattr(passatk, func)(*args, n_resamples=10**12)
