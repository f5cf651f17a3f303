"""passatk.rl.group_metrics against brute-force enumeration over every k-subset.

The oracles (tests/naive_rl.py) enumerate subsets (or, for the verl bootstrap, every
sequence of draws with replacement) in exact Fractions; each test measures the kernels'
error against them.
"""

from __future__ import annotations

import math
from fractions import Fraction

import naive_rl as nv
import numpy as np
import pytest

import passatk
from passatk import reference, rl

ALL = ("pass@k", "pass^k", "best@k", "worst@k", "maj@k", "mean@n", "std@n", "g-pass@k",
       "mg-pass@k")
TAUS = (0.25, 0.5, 0.75, 1.0)
# Largest error allowed against the exact value, for scores of size about 1: a few ulp of
# accumulated rounding over n <= 8 terms (measured maxima are about 4e-16).
TOL = 2e-15


def _groups_case(seed, n_groups=5, n_max=8, holes=True):
    """Ragged groups of scores in {-1, 0, 0.25, 0.5, 1} (ties), answers with None."""
    rng = np.random.default_rng(seed)
    groups = []
    for _ in range(n_groups):
        n = int(rng.integers(1, n_max + 1))
        scores = rng.choice([-1.0, 0.0, 0.25, 0.5, 1.0], size=n).tolist()
        answers = [None if a == 3 else f"a{a}" for a in rng.integers(0, 4, size=n)]
        groups.append((scores, answers))
    return groups


def _flatten(groups, rng):
    """Interleaved 1-D input: scores, labels and answers in a shuffled order."""
    rows = [(s, f"g{g}", a) for g, (ss, aa) in enumerate(groups)
            for s, a in zip(ss, aa, strict=True)]
    perm = rng.permutation(len(rows))
    rows = [rows[i] for i in perm]
    return [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]


def _close(got, exact, tol=TOL):
    if isinstance(exact, Fraction):
        return abs(Fraction(got) - exact) <= tol
    return abs(got - exact) <= tol


def _check_group(res, g, scores, answers, ks, threshold):
    correct = [s >= threshold for s in scores]
    v = res.values
    n = len(scores)
    mu, var = nv.mean_std_at_n(scores)
    assert _close(v["mean@n"][g], mu)
    assert _close(v["std@n"][g] ** 2, float(var))
    for k in ks:
        if k > n:
            for name in (f"pass@{k}", f"best@{k}", f"maj@{k}", f"mg-pass@{k}"):
                assert math.isnan(v[name][g])
            continue
        assert _close(v[f"pass@{k}"][g], nv.pass_at_k(correct, k))
        assert _close(v[f"pass^{k}"][g], nv.pass_hat_k(correct, k))
        assert _close(v[f"best@{k}"][g], nv.best_at_k(scores, k))
        assert _close(v[f"worst@{k}"][g], nv.worst_at_k(scores, k))
        assert _close(v[f"maj@{k}"][g], nv.maj_at_k(scores, answers, k))
        assert _close(v[f"mg-pass@{k}"][g], nv.mg_pass_at_k(correct, k))
        for tau in TAUS:
            got = v[f"g-pass@{k}_{tau!r}"][g]
            assert _close(got, nv.g_pass_at_k(correct, k, Fraction(tau)))


@pytest.mark.parametrize("seed", range(6))
def test_every_metric_matches_enumeration_1d_interleaved(seed):
    groups = _groups_case(seed)
    scores, labels, answers = _flatten(groups, np.random.default_rng(seed + 100))
    ks = list(range(1, 9))
    res = rl.group_metrics(scores, labels, k=ks, metrics="all", threshold=0.5,
                           answers=answers, tau=TAUS)
    assert res.groups.tolist() == sorted(set(labels), key=labels.index)
    for g, label in enumerate(res.groups.tolist()):
        scores_g, answers_g = groups[int(label[1:])]
        assert res.n[g] == len(scores_g)
        _check_group(res, g, scores_g, answers_g, ks, 0.5)


@pytest.mark.parametrize("seed", range(4))
def test_dense_with_nan_holes_matches_enumeration(seed):
    rng = np.random.default_rng(seed)
    x = rng.choice([0.0, 1.0], size=(6, 8))
    x[rng.random((6, 8)) < 0.3] = np.nan
    x[0] = np.nan  # a group with no scored rollout
    answers = rng.integers(0, 3, size=(6, 8)).astype(object)
    answers[rng.random((6, 8)) < 0.2] = None
    ks = [1, 2, 3, 5, 8]
    res = rl.group_metrics(x, k=ks, metrics="all", answers=answers, tau=TAUS)
    assert res.n[0] == 0
    for g in range(6):
        keep = ~np.isnan(x[g])
        scores = x[g][keep].tolist()
        if scores:
            _check_group(res, g, scores, answers[g][keep].tolist(), ks, 1.0)
    assert all(math.isnan(res.values[name][0]) for name in res.names)
    assert "no scored rollouts" in res.missing["mean@n"]


@pytest.mark.parametrize("seed", range(4))
def test_verl_estimator_matches_enumeration_with_replacement(seed):
    groups = _groups_case(seed, n_groups=4, n_max=6)
    scores, labels, answers = _flatten(groups, np.random.default_rng(seed))
    ks = [1, 2, 3, 4]
    res = rl.group_metrics(scores, labels, k=ks, metrics=["best@k", "worst@k", "maj@k"],
                           answers=answers, estimator="verl")
    for g, label in enumerate(res.groups.tolist()):
        s, a = groups[int(label[1:])]
        for k in [k for k in ks if k <= len(s)]:
            for name, (mu, var) in (("best", nv.verl_best_at_k(s, k)),
                                    ("worst", nv.verl_worst_at_k(s, k)),
                                    ("maj", nv.verl_maj_at_k(s, a, k))):
                assert _close(res.values[f"{name}@{k}"][g], mu)
                assert _close(res.values[f"{name}@{k}/std"][g] ** 2, float(var), 4 * TOL)


def test_pass_metrics_are_passatks_own_values_and_within_2_ulp_of_exact():
    rng = np.random.default_rng(7)
    n = np.array([1, 5, 16, 64, 200, 1000])
    x = [rng.random(m) < rng.random() for m in n]
    scores = np.concatenate(x)
    labels = np.repeat(np.arange(n.size), n)
    ks = [1, 2, 3, 7, 16, 64, 200]
    res = rl.group_metrics(scores, labels, k=ks, metrics=["pass@k", "pass^k", "g-pass@k"],
                           tau=[1.0, 0.001])
    for g, m in enumerate(n.tolist()):
        c = int(x[g].sum())
        for k in [k for k in ks if k <= m]:
            got = res.values[f"pass@{k}"][g]
            assert got == passatk.pass_at_k(m, c, k)
            assert res.values[f"pass^{k}"][g] == passatk.pass_hat_k(m, c, k)
            assert res.values[f"g-pass@{k}_1.0"][g] == res.values[f"pass^{k}"][g]
            assert res.values[f"g-pass@{k}_0.001"][g] == got
            exact = reference.pass_at_k_exact(m, c, k)
            assert reference.ulp_error(got, exact) <= 2


def test_large_groups_stay_finite_and_agree_with_pass_at_k():
    # best@k of 0/1 scores is pass@k; n in the thousands overflows any binomial in float64.
    rng = np.random.default_rng(3)
    x = (rng.random(5000) < 0.01).astype(float)
    res = rl.group_metrics(x, k=[1, 100, 2500, 5000], metrics=["pass@k", "best@k", "g-pass@k"],
                           tau=[0.001, 0.5])
    c = int(x.sum())
    for k in (1, 100, 2500, 5000):
        best = res.values[f"best@{k}"][0]
        exact = float(reference.pass_at_k_exact(5000, c, k))
        assert np.isfinite(best)
        assert abs(best - exact) <= 1e-12 * max(exact, 1e-300) + 1e-300
        assert res.values[f"g-pass@{k}_0.5"][0] == pytest.approx(
            float(sum(Fraction(math.comb(c, j) * math.comb(5000 - c, k - j), math.comb(5000, k))
                      for j in range(math.ceil(k / 2), min(c, k) + 1))), rel=1e-12, abs=1e-300)


def test_verl_bias_one_correct_of_16():
    x = np.zeros(16)
    x[3] = 1.0
    exact = rl.group_metrics(x, k=16, metrics=["best@k"]).values["best@16"][0]
    verl = rl.group_metrics(x, k=16, metrics=["best@k"], estimator="verl")
    assert exact == 1.0
    assert verl.values["best@16"][0] == pytest.approx(1 - (15 / 16) ** 16, rel=1e-15)
    p = 1 - (15 / 16) ** 16
    assert verl.values["best@16/std"][0] == pytest.approx(math.sqrt(p * (1 - p)), rel=1e-14)
    assert verl.summary()["best@16/std"] == verl.values["best@16/std"][0]


def test_missing_groups_are_never_one_and_never_dropped_silently():
    x = [1, 1, 1, 0, 1, 0, 0, 1]
    g = ["a", "a", "a", "b", "b", "b", "b", "c"]
    res = rl.group_metrics(x, g, k=[1, 3, 4])
    assert math.isnan(res.values["pass@4"][0]) and math.isnan(res.values["pass@4"][2])
    assert math.isnan(res.mean["pass@4"]) and res.used["pass@4"] == 1
    assert "2 of 3 groups have fewer than 4" in res.missing["pass@4"]
    assert "group 'a' with n=3" in res.missing["pass@4"]
    assert "pass@1" not in res.missing
    ex = rl.group_metrics(x, g, k=[1, 3, 4], short_groups="exclude")
    assert ex.mean["pass@4"] == ex.values["pass@4"][1] == passatk.pass_at_k(4, 1, 4)
    assert math.isnan(ex.se["pass@4"])  # one group: no standard error
    assert ex.mean["pass@3"] == pytest.approx(np.mean([1.0, passatk.pass_at_k(4, 1, 3)]))
    assert "averages the other 1" in ex.missing["pass@4"]
    assert ex.short_groups == "exclude"


def test_default_k_ladder_and_metrics():
    x = np.ones((3, 12))
    x[1, 10:] = np.nan
    res = rl.group_metrics(x)
    assert res.names[:5] == ("pass@1", "pass@2", "pass@4", "pass@8", "pass@10")
    assert {n.rstrip("0123456789") for n in res.names} == {
        "pass@", "pass^", "best@", "worst@", "mean@n", "std@n"}
    assert res.names[-2:] == ("mean@n", "std@n")
    with_answers = rl.group_metrics(x, answers=np.zeros((3, 12), int))
    assert "maj@10" in with_answers.names
    assert rl.group_metrics([1.0, 0.0]).names[:2] == ("pass@1", "pass@2")


def test_summary_per_group_and_pandas():
    res = rl.group_metrics([[1, 0, 1, 1], [0, 0, 0, 1]], k=[1, 4], answers=[[1, 2, 1, 1]] * 2,
                           metrics=["pass@k", "maj@k", "mean@n"])
    s = res.summary()
    assert list(s) == ["pass@1/mean", "pass@1/se", "pass@4/mean", "pass@4/se", "maj@1/mean",
                       "maj@1/se", "maj@4/mean", "maj@4/se", "mean@n/mean", "mean@n/se"]
    assert all(type(v) is float for v in s.values())
    assert s["pass@1/mean"] == 0.5 and s["pass@1/se"] == pytest.approx(0.25)
    assert res.per_group["group"].tolist() == [0, 1]
    assert res.per_group["pass@4"].tolist() == [1.0, 1.0]
    pd = pytest.importorskip("pandas")
    df = res.to_pandas()
    assert isinstance(df, pd.DataFrame) and list(df.columns[:3]) == ["group", "n", "pass@1"]
    assert df["maj@4"].tolist() == res.values["maj@4"].tolist()


def test_result_is_frozen():
    res = rl.group_metrics([1, 0, 1])
    with pytest.raises(AttributeError):
        res.names = ()
    with pytest.raises(ValueError):
        res.values["pass@1"][0] = 3.0
    with pytest.raises(TypeError):
        res.values["pass@1"] = np.zeros(1)
    assert "GroupMetrics(1 groups" in repr(res)


def test_metric_selection_and_threshold():
    x = [0.2, 0.9, 0.7, 0.1]
    res = rl.group_metrics(x, k=2, metrics=["pass@k", "best@k"], threshold=0.7)
    assert res.names == ("pass@2", "best@2")
    assert res.values["pass@2"][0] == passatk.pass_at_k(4, 2, 2)
    assert res.values["best@2"][0] == pytest.approx(float(nv.best_at_k(x, 2)), abs=TOL)
    only_cont = rl.group_metrics(x, k=2, metrics=["best@k", "worst@k", "mean@n", "std@n"])
    assert only_cont.names == ("best@2", "worst@2", "mean@n", "std@n")


def test_threshold_is_compared_in_the_scores_precision():
    x32 = np.array([0.7, 0.2, 0.69], np.float32)
    res = rl.group_metrics(x32, k=1, metrics=["pass@k"], threshold=0.7)
    assert res.values["pass@1"][0] == passatk.pass_at_k(3, 1, 1)
    res64 = rl.group_metrics(x32.astype(np.float64), k=1, metrics=["pass@k"], threshold=0.7)
    assert res64.values["pass@1"][0] == 0.0  # float32(0.7) widened is below 0.7
    torch = pytest.importorskip("torch")
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        t = torch.tensor([0.7, 0.2, 0.69], dtype=dtype)
        got = rl.group_metrics(t, k=1, metrics=["pass@k"], threshold=0.7).values["pass@1"][0]
        want = int((t >= 0.7).sum()) / 3
        assert got == pytest.approx(want, abs=0)


def test_bool_and_integer_dtypes_give_the_same_floats():
    base = rl.group_metrics([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
    for x in ([[True, False, True], [False, False, True]],
              np.array([[1, 0, 1], [0, 0, 1]], np.int8),
              np.array([[1, 0, 1], [0, 0, 1]], np.uint16),
              np.array([[1, 0, 1], [0, 0, 1]], np.float32)):
        res = rl.group_metrics(x)
        assert res.summary() == base.summary()


@pytest.mark.parametrize("labels", [
    [3, 7, 3, 7, 7],
    ["p", "q", "p", "q", "q"],
    [b"p", b"q", b"p", b"q", b"q"],
    np.array([3, 7, 3, 7, 7], np.uint32),
    "uuid",
])
def test_group_label_kinds(labels):
    import uuid
    if isinstance(labels, str):
        u, v = uuid.uuid4(), uuid.uuid4()
        labels = [u, v, u, v, v]
    res = rl.group_metrics([1, 0, 0, 1, 1], labels, k=2)
    assert res.n.tolist() == [2, 3]
    assert res.values["pass@2"].tolist() == [1.0, 1.0]
    assert res.values["pass^2"].tolist() == [0.0, passatk.pass_hat_k(3, 2, 2)]


def test_order_independence_bit_for_bit():
    rng = np.random.default_rng(11)
    G, n = 40, 12
    scores = rng.choice([0.0, 0.5, 1.0, 0.25], size=G * n)
    labels = np.repeat(np.arange(G), n)
    answers = rng.integers(0, 4, size=G * n).astype(object)
    answers[rng.random(G * n) < 0.1] = None
    kw = dict(k=[1, 2, 5, 12], metrics="all", threshold=0.5, answers=None)
    base = rl.group_metrics(scores, labels, **{**kw, "answers": answers})
    verl = rl.group_metrics(scores, labels, estimator="verl", **{**kw, "answers": answers})
    for seed in range(3):
        perm = np.random.default_rng(seed).permutation(G * n)
        for ref, est in ((base, "unbiased"), (verl, "verl")):
            res = rl.group_metrics(scores[perm], labels[perm], estimator=est,
                                   **{**kw, "answers": answers[perm]})
            order = [res.groups.tolist().index(g) for g in ref.groups.tolist()]
            for name in ref.names:
                np.testing.assert_array_equal(res.values[name][order], ref.values[name])
            assert res.summary() == pytest.approx(ref.summary(), rel=0, abs=0, nan_ok=True)


def test_threads_give_identical_results():
    import threading
    rng = np.random.default_rng(5)
    x = rng.random((300, 16))
    answers = rng.integers(0, 4, size=(300, 16))
    barrier = threading.Barrier(8)
    outs = [None] * 8

    def run(i):
        barrier.wait()  # all eight enter the kernels (maj@k's on numba's threads) at once
        for est in ("unbiased", "verl"):
            res = rl.group_metrics(x, metrics="all", threshold=0.5, answers=answers,
                                   estimator=est)
            outs[i] = (outs[i] or ()) + (res.matrix, res.summary())

    ref = []
    for est in ("unbiased", "verl"):
        res = rl.group_metrics(x, metrics="all", threshold=0.5, answers=answers, estimator=est)
        ref += [res.matrix, res.summary()]
    threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for out in outs:
        for got, want in zip(out, ref, strict=True):
            if isinstance(want, dict):
                assert got == pytest.approx(want, rel=0, abs=0, nan_ok=True)
            else:
                np.testing.assert_array_equal(got, want)


def test_no_global_rng_use():
    state = np.random.get_state()  # noqa: NPY002 - the legacy global RNG is what verl reseeds
    rl.group_metrics(np.random.default_rng(0).random((20, 8)), metrics=["best@k"],
                     estimator="verl")
    after = np.random.get_state()  # noqa: NPY002
    assert all(np.array_equal(a, b) for a, b in zip(state[1:3], after[1:3], strict=True))


def test_maj_ties_split_equally_and_none_never_votes():
    # answers x and y tie 1:1 at k = 2; x is right, y wrong: half credit.
    res = rl.group_metrics([1, 0], k=2, metrics=["maj@k"], answers=["x", "y"])
    assert res.values["maj@2"][0] == 0.5
    only_none = rl.group_metrics([1, 1], k=[1, 2], metrics=["maj@k"], answers=[None, None])
    assert only_none.values["maj@1"][0] == 0.0 and only_none.values["maj@2"][0] == 0.0


def test_maj_large_group_matches_a_closed_form():
    # Two answers, sizes a and b; k = 1: maj@1 is the share of the right answer's rollouts.
    a, b = 300, 500
    x = np.r_[np.ones(a), np.zeros(b)]
    answers = ["r"] * a + ["w"] * b
    res = rl.group_metrics(x, k=[1, 3], metrics=["maj@k"], answers=answers)
    assert res.values["maj@1"][0] == pytest.approx(a / (a + b), rel=1e-14)
    n = a + b
    exact3 = Fraction(math.comb(a, 3) + math.comb(a, 2) * b, math.comb(n, 3))
    assert res.values["maj@3"][0] == pytest.approx(float(exact3), rel=1e-13)


# ------------------------------------------------------------------------------ errors


@pytest.mark.parametrize(("kwargs", "exc", "match"), [
    (dict(scores=[1, 0], groups=[1, [2]]), TypeError, r"groups\[1\] is not hashable"),
    (dict(scores=[1, 0, 1], groups=[1, 2]), ValueError, "length 2 but scores have 3"),
    (dict(scores=[1, 0], k=0), ValueError, "k must be >= 1, got 0"),
    (dict(scores=[1, 0], k=[2, -1]), ValueError, r"k\[1\] must be >= 1, got -1"),
    (dict(scores=[1, 0], k=True), TypeError, "k must be an int"),
    (dict(scores=[1, 0], k=1.5), TypeError, "k must be an int"),
    (dict(scores=[1, 0.7]), ValueError, r"scores\[1\] = 0.7 is not 0 or 1.*threshold="),
    (dict(scores=[[1, 0], [0.7, 1]]), ValueError, r"scores\[1, 0\] = 0.7 is not 0 or 1"),
    (dict(scores=[1, float("nan")]), ValueError, r"scores\[1\] is NaN.*nan='drop'"),
    (dict(scores=[1, 0], answers=["a"]), ValueError, "answers has length 1"),
    (dict(scores=[[1, 0]], answers=[["a"]]), ValueError, r"answers\[0\] has length 1"),
    (dict(scores=[1, 0], metrics=["maj@k"]), ValueError, "maj@k needs answers"),
    (dict(scores=[1, 0], metrics=["pass@x"]), ValueError, r"metrics\[0\] = 'pass@x'"),
    (dict(scores=[1, 0], estimator="boot"), ValueError, "estimator must be one of"),
    (dict(scores=[1, 0], short_groups="drop"), ValueError, "short_groups must be one of"),
    (dict(scores=[1, 0], threshold="0.5"), TypeError, "threshold must be a finite real"),
    (dict(scores=[1, 0], metrics=["g-pass@k"], tau=[1.5]), ValueError, "0 <= tau <= 1"),
    (dict(scores=["a", 0]), TypeError, r"scores\[0\] must be a real number"),
])
def test_errors_name_the_rule_and_position(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        rl.group_metrics(**kwargs)


def test_empty_and_all_hole_inputs_are_missing_not_errors():
    empty = rl.group_metrics([], k=2)
    assert empty.groups.size == 0 and math.isnan(empty.summary()["pass@2/mean"])
    holes = rl.group_metrics(np.full((3, 4), np.nan), k=1)
    assert holes.n.tolist() == [0, 0, 0] and holes.used["pass@1"] == 0
    assert holes.missing["pass@1"].startswith("3 of 3 groups have no scored rollouts")
    with pytest.raises(ValueError, match="no scored rollout, so there is no default k"):
        rl.group_metrics(np.full((3, 4), np.nan))


def test_g_pass_threshold_is_the_statistics_layers():
    # (5/7) * 7 is 5.000000000000001 in floats; it needs 5 successes, like passatk.score.
    x = np.r_[np.ones(5), np.zeros(2)]
    res = rl.group_metrics(x, k=7, metrics=["g-pass@k"], tau=[5 / 7, 0.1])
    assert res.values[f"g-pass@7_{5 / 7!r}"][0] == 1.0
    assert res.values["g-pass@7_0.1"][0] == 1.0


def test_nan_drop_leaves_the_rollout_out():
    res = rl.group_metrics([1, float("nan"), 0, 1], ["a", "a", "b", "b"], k=2, nan="drop")
    assert res.n.tolist() == [1, 2]
    assert math.isnan(res.values["pass@2"][0]) and res.values["pass@2"][1] == 1.0


@pytest.mark.parametrize("estimator", ["unbiased", "verl"])
def test_maj_with_huge_scores_stays_finite(estimator):
    # C(1000, 500) is 2.7e299: times a score of 1e12 it would overflow without the scaling.
    x = np.r_[np.full(500, 1e12), np.full(500, -3e11)]
    answers = ["a"] * 500 + ["b"] * 500
    k = [1, 500] if estimator == "unbiased" else [1, 600]
    res = rl.group_metrics(x, k=k, metrics=["maj@k"], answers=answers, estimator=estimator)
    assert res.values["maj@1"][0] == pytest.approx(0.5 * 1e12 - 0.5 * 3e11, rel=1e-13)
    # the two answers are symmetric: the value at any k is the same mean
    assert res.values[f"maj@{k[1]}"][0] == pytest.approx(3.5e11, rel=1e-12)


def test_maj_size_limit_is_an_error_not_a_guess():
    x = np.ones(1001)
    with pytest.raises(ValueError, match="maj@k is computed for n <= 1000"):
        rl.group_metrics(x, k=1, metrics=["maj@k"], answers=[1] * 1001)


# ------------------------------------------------------------------------------- torch


def test_torch_tensors():
    torch = pytest.importorskip("torch")
    x = torch.tensor([[1.0, 0.0, 1.0, float("nan")], [0.0, 0.0, 1.0, 1.0]])
    ref = rl.group_metrics(x.numpy(), answers=[[1, 2, 1, 3], [2, 2, 1, 1]])
    res = rl.group_metrics(x, answers=torch.tensor([[1, 2, 1, 3], [2, 2, 1, 1]]))
    assert res.summary() == pytest.approx(ref.summary(), rel=0, abs=0, nan_ok=True)
    flat = rl.group_metrics(torch.tensor([1, 0, 1, 1], dtype=torch.int32),
                            torch.tensor([0, 0, 1, 1]), k=2)
    assert flat.values["pass@2"].tolist() == [1.0, 1.0]
    bools = rl.group_metrics(torch.tensor([[True, False], [True, True]]), k=[1, 2])
    assert bools.values["pass^2"].tolist() == [0.0, 1.0]


def test_groups_too_large_for_shared_buffers_take_the_per_group_path():
    # 18 budgets x 200,001 weights and the G-Pass memo exceed the kernels' 16 MB of shared
    # buffers, so weights and G-Pass values are recomputed per group: same results.
    scipy_stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(4)
    n = 200_000
    x = (rng.random((2, n)) < [[0.001], [0.3]]).astype(float)
    ks = [1, 7, 1000, 65536, n]
    res = rl.group_metrics(x, k=ks, metrics=["pass@k", "pass^k", "best@k", "g-pass@k"],
                           tau=[0.0, 0.5, 1.0])
    for g in range(2):
        c = int(x[g].sum())
        for k in ks:
            v = {name: res.values[name][g] for name in res.names}
            assert v[f"g-pass@{k}_0.0"] == v[f"pass@{k}"] == passatk.pass_at_k(n, c, k)
            assert v[f"g-pass@{k}_1.0"] == v[f"pass^{k}"]
            assert v[f"best@{k}"] == pytest.approx(v[f"pass@{k}"], rel=1e-11, abs=1e-300)
            want = scipy_stats.hypergeom.sf(math.ceil(k / 2) - 1, n, c, k)
            assert v[f"g-pass@{k}_0.5"] == pytest.approx(want, rel=1e-9, abs=1e-300)
