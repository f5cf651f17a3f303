"""Every public function meets hostile types and sizes with a TypeError or ValueError of one
line that names the argument (issue 25 item 5, audit reliability-3 T3 and ``api_fuzz.py``).

Each argument of each public call site is replaced in turn by every stand-in of ``HOSTILE``;
the call either returns or raises TypeError/ValueError, never OverflowError, MemoryError,
RuntimeError (torch), RecursionError or anything else. Every stand-in is tried on every
argument, ``range(2**62)`` and a list 5,000 deep included. The message is one line of at most
``MAX_MESSAGE`` characters that names the argument; an ``ArchiveError`` (a file that does not
exist, a record without the named field) names the file and line instead.
"""

from __future__ import annotations

import decimal
import fractions
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import passatk
import passatk.rl as rl
from passatk import archives
from passatk.archives.errors import ArchiveError

torch = pytest.importorskip("torch")
pd = pytest.importorskip("pandas")


def _hostile() -> dict[str, object]:
    """Stand-ins of every kind: wrong types, huge and negative sizes, torch and pandas."""
    return {
        "None": None, "True": True, "np.True_": np.True_, "0": 0, "-1": -1,
        "2**53": 2**53, "2**63": 2**63, "2**64": 2**64, "-2**63": -2**63, "2**1000": 2**1000,
        "10**5000": 10**5000, "1.5": 1.5, "nan": math.nan, "inf": math.inf, "-inf": -math.inf,
        "1e308": 1e308, "complex": 1 + 2j, "str": "3", "long str": "x" * 100_000,
        "bytes": b"3", "Fraction": fractions.Fraction(7, 3), "Decimal": decimal.Decimal("2"),
        "Decimal NaN": decimal.Decimal("NaN"), "[]": [], "[[]]": [[]], "{}": {}, "set": {3},
        "object": object(), "ragged": [[1], [1, 2]], "nested 3-d": [[[10]]],
        "2-d": np.full((2, 2), 10), "0-d": np.array(10), "str array": np.array(["10"]),
        "datetime64": np.array(["2024-01-01"], dtype="M8[D]"), "float16": np.float16(2),
        "uint64 max": np.array([2**64 - 1], dtype=np.uint64), "obj 2**70": np.array(
            [2**70], dtype=object), "masked": np.ma.array([10], mask=[True]),
        "range 2**62": range(2**62), "range 2**64": range(2**64), "bad repr": _BadRepr(),
        "huge list": [10] * 100_000 + [2**64],
        "deep list": _deep(5000), "structured": np.array([(1,)], dtype=[("a", "i8")]),
        "generator": (i for i in range(3)),
        "torch grad": torch.tensor([10.0], requires_grad=True),
        "torch grad 2-d": torch.ones((2, 4), requires_grad=True),
        "torch int": torch.tensor([10]), "torch bool": torch.tensor([True]),
        "torch bf16": torch.tensor([1.0], dtype=torch.bfloat16),
        "pd.NA": pd.NA, "pd.Series NA": pd.Series([10, None], dtype="Int64"),
        "pd.DataFrame": pd.DataFrame({"a": [10]}), "pd.Categorical": pd.Categorical([10]),
    }


class _BadRepr:
    """An object whose repr raises: a message must not depend on it."""

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


def _deep(depth: int) -> list:
    out: list = [10]
    for _ in range(depth):
        out = [out]
    return out


SCORES = np.array([[1, 0, 1, 1], [0, 0, 1, 0]], dtype=float)
EXAMPLE = str(archives.example_path("humaneval"))

#: (label, function, args, kwargs, the arguments to replace: position or keyword)
SITES = [
    *[(f.__name__, f, [10, 3, 2], {}, [(0, "n"), (1, "c"), (2, "k"), ("errors", "errors")])
      for f in (passatk.pass_at_k, passatk.pass_hat_k, passatk.fail_at_k)],
    ("pass_at_k_plugin", passatk.pass_at_k_plugin, [10, 3, 2], {},
     [(0, "n"), (1, "c"), (2, "k")]),
    ("pass_at_k_curve", passatk.pass_at_k_curve, [10, 3, 4], {},
     [(0, "n"), (1, "c"), (2, "k_max")]),
    ("task_variance", passatk.task_variance, [[10, 10], [3, 5], 2], {},
     [(0, "n"), (1, "c"), (2, "k"), ("metric", "metric")]),
    ("score", passatk.score, [[10, 12], [3, 5]], {"k": 2, "interval": "t"},
     [(0, "n"), (1, "c"), ("k", "k"), ("metric", "metric"), ("task_ids", "task_ids"),
      ("clusters", "clusters"), ("confidence", "confidence"), ("tau", "tau"),
      ("prior", "prior"), ("missing", "missing"), ("interval", "interval")]),
    ("score bootstrap", passatk.score, [[10, 12], [3, 5]],
     {"k": 2, "interval": "percentile", "n_resamples": 200, "seed": 1},
     [("n_resamples", "n_resamples"), ("seed", "seed"), ("rng", "rng")]),
    ("compare", passatk.compare, [[10, 12], [3, 5], [10, 12], [4, 5]], {"k": 1},
     [(0, "n_a"), (1, "c_a"), (2, "n_b"), (3, "c_b"), ("k", "k"), ("confidence", "confidence"),
      ("unmatched", "unmatched"), ("task_ids_a", "task_ids_a"), ("group", "group")]),
    ("samples_needed", passatk.samples_needed, [[10, 12], [3, 5], 2, 0.05], {},
     [(0, "n"), (1, "c"), (2, "k"), (3, "target_se"), ("metric", "metric")]),
    ("tasks_needed", passatk.tasks_needed, [0.05, 0.2], {},
     [(0, "delta"), (1, "sd"), ("alpha", "alpha"), ("power", "power")]),
    ("min_detectable_effect", passatk.min_detectable_effect, [164, 0.3], {},
     [(0, "n_tasks"), (1, "sd"), ("alpha", "alpha"), ("power", "power")]),
    ("simulate", passatk.simulate, [5, 10, 1.0, 1.0], {"seed": 0},
     [(0, "n_tasks"), (1, "n"), (2, "a"), (3, "b"), ("seed", "seed"),
      ("n_benchmarks", "n_benchmarks")]),
    ("rl.group_metrics", rl.group_metrics, [SCORES], {"k": 2},
     [(0, "scores"), ("k", "k"), ("threshold", "threshold"), ("estimator", "estimator"),
      ("metrics", "metrics")]),
    ("rl.group_metrics groups", rl.group_metrics, [SCORES.ravel()],
     {"k": 2, "groups": [0, 0, 0, 0, 1, 1, 1, 1]}, [("groups", "groups")]),
    ("rl.advantages", rl.advantages, [SCORES], {"k": 2},
     [(0, "scores"), ("k", "k"), ("estimator", "estimator"), ("normalize", "normalize")]),
    ("read_counts", archives.read_counts, [EXAMPLE], {},
     [(0, "paths"), ("workers", "workers"), ("split_bytes", "split_bytes"),
      ("format", "format"), ("by", "by"), ("storage_options", "storage_options"),
      ("scheduler", "scheduler"), ("merge", "merge"), ("skip_bad", "skip_bad")]),
    ("expand_paths", archives.expand_paths, [EXAMPLE], {}, [(0, "paths")]),
    ("format_for_path", archives.format_for_path, ["x_results.jsonl"], {}, [(0, "path")]),
]

#: The longest message allowed: the rule, the value shown by ``passatk._show.show`` (at most
#: 80 characters) and the allowed choices (the 13 archive formats are the longest list).
MAX_MESSAGE = 500


def _call(fn, args, kwargs, where, value):
    args, kwargs = list(args), dict(kwargs)
    if isinstance(where, int):
        args[where] = value
    else:
        kwargs[where] = value
    return fn(*args, **kwargs)


def _check_outcome(label, name, hname, fn, args, kwargs, where, value):
    try:
        _call(fn, args, kwargs, where, value)
    except (TypeError, ValueError) as exc:
        text = str(exc).strip()
        assert text and "\n" not in text, (label, name, hname, text[:300])
        if isinstance(exc, ArchiveError):  # about a file or a record: named by file:line
            return
        assert name in text and len(text) <= MAX_MESSAGE, (label, name, hname, text[:300])
    except BaseException as exc:
        pytest.fail(f"{label}({name}={hname}) raised {type(exc).__name__}: {str(exc)[:200]}")


_CASES = [(label, fn, args, kwargs, where, name)
          for label, fn, args, kwargs, places in SITES for where, name in places]


def test_every_public_argument_is_fuzzed():
    """The 83 arguments of issue 25 item 5, samples_needed's k and target_se (item 6) too."""
    assert len(_CASES) >= 85 and len({(c[0], c[5]) for c in _CASES}) == len(_CASES)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("label, fn, args, kwargs, where, name", _CASES,
                         ids=[f"{c[0]}-{c[5]}" for c in _CASES])
def test_every_argument_meets_hostile_values_with_type_or_value_error(
        label, fn, args, kwargs, where, name):
    for hname, value in _hostile().items():
        _check_outcome(label, name, hname, fn, args, kwargs, where, value)


@pytest.mark.parametrize("call, arg", [
    (lambda: rl.group_metrics(SCORES, k=2**64), "k"),
    (lambda: rl.group_metrics(SCORES, k=[2, 2**70]), "k[1]"),
    (lambda: archives.read_counts(EXAMPLE, workers=2**64), "workers"),
    (lambda: archives.read_counts(EXAMPLE, workers=2**53), "workers"),
    (lambda: passatk.simulate(2**40, 10, 1.0, 1.0), "n_tasks"),
    (lambda: passatk.simulate(2**53, 10, 1.0, 1.0), "n_tasks"),
    (lambda: passatk.simulate(1000, 10, 1.0, 1.0, n_benchmarks=10**6), "n_benchmarks"),
])
def test_the_audit_cases_are_value_errors_naming_the_argument(call, arg):
    with pytest.raises(ValueError, match=arg.replace("[", r"\[").replace("]", r"\]")):
        call()


def test_workers_cap_follows_the_cpus_and_the_override(monkeypatch):
    import os

    from passatk._limits import WORKERS_PER_CPU, max_workers

    monkeypatch.delenv("PASSATK_MAX_WORKERS", raising=False)
    assert max_workers() == WORKERS_PER_CPU * (os.cpu_count() or 1)
    cap = max_workers()
    archives.read_counts(EXAMPLE, workers=cap)  # at the cap: accepted
    with pytest.raises(ValueError, match=f"at most {cap} "):
        archives.read_counts(EXAMPLE, workers=cap + 1)
    monkeypatch.setenv("PASSATK_MAX_WORKERS", str(cap + 1))
    assert max_workers() == cap + 1
    monkeypatch.setenv("PASSATK_MAX_WORKERS", "lots")
    with pytest.raises(ValueError, match="PASSATK_MAX_WORKERS must be a positive integer"):
        max_workers()


def test_simulate_at_its_cap_is_refused_only_above():
    from passatk._limits import MAX_SIMULATED

    with pytest.raises(ValueError, match="n_tasks x n_benchmarks must be at most"):
        passatk.simulate(MAX_SIMULATED + 1, 2, 1.0, 1.0)
    with pytest.raises(ValueError, match="n_tasks x n_benchmarks"):
        passatk.simulate(2, 2, 1.0, 1.0, n_benchmarks=MAX_SIMULATED // 2 + 1)
    assert passatk.simulate(4, 2, 1.0, 1.0, n_benchmarks=3, seed=0).c.shape == (3, 4)


def test_tensors_that_require_grad_give_the_numbers_of_their_values():
    grad = torch.tensor([10.0, 12.0], requires_grad=True)
    with pytest.raises(TypeError, match=r"^n must be"):  # floats are refused, as without grad
        passatk.pass_at_k(grad, [3, 5], 2)
    with pytest.raises(TypeError, match=r"^k must be"):
        passatk.compare([10, 12], [3, 5], [10, 12], [4, 5], k=torch.tensor([1.0],
                                                                          requires_grad=True))
    scores = torch.tensor(SCORES, requires_grad=True)
    got = rl.group_metrics(scores, k=2)
    want = rl.group_metrics(SCORES, k=2)
    assert got.values.keys() == want.values.keys()
    for key, value in want.values.items():
        assert np.array_equal(np.asarray(got.values[key]), value, equal_nan=True), key
    sim = passatk.simulate(3, torch.tensor([10, 12, 14]), 1.0, 1.0, seed=0)
    assert sim.n.tolist() == [10, 12, 14]


_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**80), max_value=2**80),
    st.integers(min_value=2**62, max_value=2**2000), st.floats(allow_nan=True),
    st.text(max_size=5), st.binary(max_size=3), st.fractions(), st.decimals(),
    st.complex_numbers(max_magnitude=1e10))
_VALUES = st.one_of(_SCALARS, st.lists(_SCALARS, max_size=4),
                    st.lists(st.lists(st.integers(-5, 20), max_size=3), max_size=3))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(site=st.sampled_from(_CASES), value=_VALUES)
def test_hypothesis_hostile_values(site, value):
    label, fn, args, kwargs, where, name = site
    if label == "read_counts" and name == "scheduler":
        return  # a valid "local:N" text would start a cluster
    _check_outcome(label, name, repr(value)[:40], fn, args, kwargs, where, value)
