"""Scoring many tasks at bounded memory (issue 25 item 9): the sums and the variance a block at
a time, a Counts' ids never sorted, and the same rows as the plain computation."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import passatk
from passatk.archives import Counts
from passatk.stats import _common, _score, _task


def _exact_var(x: np.ndarray) -> Fraction:
    xs = [Fraction(v) for v in x.tolist()]
    mean = sum(xs, Fraction(0)) / len(xs)
    return sum(((v - mean) ** 2 for v in xs), Fraction(0)) / (len(xs) - 1)


@pytest.mark.parametrize("block", [1, 7, 64, 1 << 18])
def test_the_variance_in_blocks_is_the_variance(monkeypatch, block):
    monkeypatch.setattr(_score, "_BLOCK", block)
    x = np.random.default_rng(block).random(301) ** 3
    got, exact = _score._variance(x), _exact_var(x)
    assert abs(Fraction(got) - exact) <= exact * Fraction(1, 10**13)
    if block >= x.size:  # one block: np.var's own bits
        assert got == float(np.var(x, ddof=1))


@pytest.mark.parametrize(("metric", "k"), [("pass@k", 1), ("pass@k", 3), ("pass^k", 2)])
def test_the_variance_sum_in_blocks_is_the_sum(monkeypatch, metric, k):
    rng = np.random.default_rng(k)
    n = rng.integers(2 * k, 40, 500)
    c = rng.integers(0, n + 1)
    whole = _task._vhat(metric, n, c, k)
    monkeypatch.setattr(_task, "_BLOCK", 37)
    got = _task._vhat_sum(metric, n, c, k)
    exact = sum((Fraction(v) for v in whole.tolist()), Fraction(0))
    assert abs(Fraction(got) - exact) <= abs(exact) * Fraction(1, 10**13)


@pytest.mark.parametrize("x", [np.array([0.4, 0.6 - 0.2, 1.0 - 0.6]), np.array([3, 3, 3]),
                               np.array([-2.0, 2.0]), np.array([1e-300, 0.0])])
def test_all_equal_is_the_ptp_rule(x):
    want = float(np.ptp(x)) <= 1e-12 * max(1.0, float(np.max(np.abs(x))))
    assert _common._all_equal(x) is want


def _counts() -> Counts:
    rng = np.random.default_rng(5)
    rows = [({"model": m}, f"T/{i}", int(n), int(rng.integers(0, n + 1)))
            for m in ("a", "b") for i, n in enumerate(rng.integers(4, 30, 200))]
    return Counts.from_rows(rows)


def test_a_counts_is_scored_without_sorting_its_ids(monkeypatch):
    counts = _counts()
    plain = [passatk.score(g.n, g.c, [1, 2], task_ids=g.task, seed=0).rows
             for g in counts.iter_groups()]
    monkeypatch.setattr(_score, "_dedupe", lambda *a: pytest.fail("ids sorted"))
    got = passatk.score(counts, k=[1, 2], seed=0).rows
    assert [r.group for r in got] == [{"model": m} for m in "aabb"]
    for row, want in zip(got, [r for rows in plain for r in rows], strict=True):
        assert row.to_dict() == {**want.to_dict(), "group": row.group}
    groups = list(counts.iter_groups())
    alone = passatk.score(groups[1], None, [1, 2], seed=0).rows
    assert [r.to_dict() for r in alone] == [{**r.to_dict(), "group": {"model": "b"}}
                                            for r in plain[1]]


def test_a_group_of_a_counts_takes_the_options_of_score():
    g = next(_counts().iter_groups())
    assert passatk.score(g, k=1, interval="t").rows[0].ci_method == "t"
    with pytest.raises(TypeError, match=r"takes its task_ids from the Counts"):
        passatk.score(g, k=1, task_ids=g.task)
    with pytest.raises(ValueError, match="one group was given"):
        passatk.score(g, k=1, combine="pool")
    with pytest.raises(ValueError, match="interval"):
        passatk.score(g, k=1, interval="nope")


def test_array_ids_are_still_checked():
    with pytest.raises(ValueError, match=r"duplicate task ids"):
        passatk.score([5, 5, 5], [1, 2, 3], 1, task_ids=["a", "b", "a"])
