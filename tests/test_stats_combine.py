"""score and compare taking Counts; the combined score over groups and its SE."""

import math

import numpy as np
import pytest

import passatk
from passatk.archives import Counts


def _counts(rng, sets=(("he", 40, 0.3), ("mbpp", 25, 0.7)), n=10, shared=False):
    rows = []
    for name, size, p in sets:
        for t in range(size):
            task = f"t/{t}" if shared else f"{name}/{t}"
            rows.append(({"set": name}, task, n, int(rng.binomial(n, p))))
    return Counts.from_rows(rows)


def test_score_of_counts_is_the_score_of_each_group():
    rng = np.random.default_rng(0)
    counts = _counts(rng)
    got = passatk.score(counts, k=[1, 3])
    want = []
    for g in counts.iter_groups():
        for r in passatk.score(g.n, g.c, [1, 3], task_ids=g.task):
            want.append((g.group, r.k, r.value, r.se, r.ci_low, r.ci_high))
    assert [(r.group, r.k, r.value, r.se, r.ci_low, r.ci_high) for r in got] == want
    tau = Counts.from_rows([("a", 4, 2), ("b", 4, 4)], metric="pass^k")
    assert passatk.score(tau, k=2)[0].metric == "pass^k"


@pytest.mark.parametrize("k", [1, 4])
def test_combined_size_on_disjoint_sets_is_the_pooled_mean_with_the_stratified_se(k):
    rng = np.random.default_rng(1)
    counts = _counts(rng)
    res = passatk.score(counts, k=k, combine="size")
    comb = res[-1]
    assert comb.group == {"combined": "size"} and comb.tasks == 65
    theta = passatk.pass_at_k(counts.n, counts.c, np.full(len(counts), k))
    assert comb.value == pytest.approx(theta.mean(), rel=1e-12)
    parts = [theta[np.asarray(counts.group) == i] for i in range(2)]
    w = np.array([p.size for p in parts]) / 65
    se = math.sqrt(sum(wi**2 * np.var(p, ddof=1) / p.size for wi, p in zip(w, parts,
                                                                             strict=True)))
    assert comb.se == pytest.approx(se, rel=1e-12)
    assert comb.ci_low < comb.value < comb.ci_high and "stratified" in comb.estimand


def test_combined_mean_on_the_same_tasks_uses_their_covariance():
    # the same 30 tasks under two metric sets (base and plus): the combined score's SE is
    # the SE of the per-task mean of the two, computed directly
    rng = np.random.default_rng(2)
    p = rng.beta(2, 2, 30)
    rows = []
    for t in range(30):
        cb = int(rng.binomial(10, p[t]))
        rows.append(({"metric_set": "base"}, f"t/{t}", 10, cb))
        rows.append(({"metric_set": "plus"}, f"t/{t}", 10, max(cb - int(rng.integers(0, 3)), 0)))
    counts = Counts.from_rows(rows)
    comb = passatk.score(counts, combine="mean")[-1]
    base, plus = (g.c / g.n for g in counts.iter_groups())
    u = 0.5 * (base + plus)
    assert comb.value == pytest.approx(u.mean(), rel=1e-12)
    assert comb.se == pytest.approx(np.std(u, ddof=1) / math.sqrt(30), rel=1e-12)
    assert comb.tasks == 30
    naive = math.sqrt(0.25 * (np.var(base, ddof=1) + np.var(plus, ddof=1)) / 30)
    assert comb.se > 1.2 * naive  # the covariance is positive and counted


def test_combine_with_groups_of_arrays_and_errors():
    n = [10] * 6
    c = [1, 2, 3, 7, 8, 9]
    r = passatk.score(n, c, groups=["a"] * 3 + ["b"] * 3, combine="mean")
    assert r[-1].value == pytest.approx(np.mean([np.mean(c[:3]), np.mean(c[3:])]) / 10)
    with pytest.raises(ValueError, match="at least 2 groups"):
        passatk.score(n, c, combine="mean")
    with pytest.raises(ValueError, match="combine must be one of"):
        passatk.score(n, c, groups=[0] * 3 + [1] * 3, combine="median")
    counts = _counts(np.random.default_rng(3))
    with pytest.raises(TypeError, match="takes its c from the Counts"):
        passatk.score(counts, [1])
    with pytest.raises(TypeError, match="needs c"):
        passatk.score([10, 10])


def test_compare_of_counts_is_compare_of_each_group_pair():
    rng = np.random.default_rng(4)
    a, b = _counts(rng), _counts(rng)
    got = passatk.compare(a, b, k=[1, 2], seed=0)
    assert [r.group for r in got] == [{"set": "he"}] * 2 + [{"set": "mbpp"}] * 2
    ga, gb = list(a.iter_groups()), list(b.iter_groups())
    want = passatk.compare(ga[0].n, ga[0].c, gb[0].n, gb[0].c, [1, 2], task_ids_a=ga[0].task,
                           task_ids_b=gb[0].task, seed=0)
    for x, y in zip(got.rows[:2], want.rows, strict=True):
        assert (x.diff, x.se, x.p_value, x.ci_low) == (y.diff, y.se, y.p_value, y.ci_low)
    with pytest.raises(TypeError, match="as a keyword"):
        passatk.compare(a, b, 1)
    with pytest.raises(TypeError, match="must be a Counts too"):
        passatk.compare(a, [1, 2])
