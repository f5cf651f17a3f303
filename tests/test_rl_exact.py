"""Exact values where a dashboard can see rounding: constant groups, [0, 1] bounds, None answers."""

from fractions import Fraction

import naive_rl
import numpy as np
import pytest

from passatk import rl

ORDER = ["best@k", "worst@k", "mean@n", "std@n"]


@pytest.mark.parametrize("estimator", ["unbiased", "verl"])
def test_all_correct_groups_give_exactly_one(estimator):
    """The audit: best@k of all-ones groups was 1.0000000000000002 in 1,081 of 2,079 (n, k)."""
    for n in range(1, 65):
        res = rl.group_metrics(np.ones(n), k=list(range(1, n + 1)), metrics=ORDER,
                               estimator=estimator)
        for name, values in res.values.items():
            want = 0.0 if "std" in name else 1.0
            assert values[0] == want, (n, name, values[0])
        summary = res.summary()
        assert all(v == (0.0 if "std" in key and "/se" not in key else 1.0)
                   for key, v in summary.items() if not key.endswith("/se")), summary


@pytest.mark.parametrize("estimator", ["unbiased", "verl"])
@pytest.mark.parametrize("value", [0.7, -1.0, 0.1, 1 / 3, 0.0, 12.5])
def test_constant_groups_give_the_score_and_std_zero(estimator, value):
    for n in (2, 3, 4, 7, 16, 33):
        res = rl.group_metrics([value] * n, k=[2, n], metrics=[*ORDER, "maj@k"],
                               answers=["x"] * n, estimator=estimator)
        for name, values in res.values.items():
            want = 0.0 if "std" in name else value
            assert values[0] == want, (n, name, values[0])


def test_zero_one_metrics_stay_in_the_unit_interval():
    rng = np.random.default_rng(3)
    for n in range(2, 40):
        scores = (rng.random((50, n)) < rng.random((50, 1))).astype(float)
        answers = rng.integers(0, 3, (50, n)).astype(str).tolist()
        for estimator in ("unbiased", "verl"):
            res = rl.group_metrics(scores, k=list(range(1, n + 1)), metrics="all",
                                   answers=answers, estimator=estimator)
            m = res.matrix[["std" not in nm for nm in res.names]]
            assert m.min() >= 0.0 and m.max() <= 1.0, (n, estimator)


def test_bounds_do_not_move_values_inside_them():
    """The bounds only ever replace a value that rounding took outside [min, max]."""
    rng = np.random.default_rng(5)
    for n in (3, 5, 8):
        scores = rng.random(n)
        for k in range(1, n + 1):
            res = rl.group_metrics(scores, k=k, metrics=["best@k", "worst@k"])
            exact_best = naive_rl.best_at_k([Fraction(s) for s in scores], k)
            assert abs(res.values[f"best@{k}"][0] - float(exact_best)) <= 2e-15


def _sentinel(answers):
    return ["<no answer>" if a is None else a for a in answers]


@pytest.mark.parametrize("estimator", ["unbiased", "verl"])
def test_none_answers_vote_counts_none_as_an_answer(estimator):
    rng = np.random.default_rng(9)
    for n in range(2, 8):
        scores = rng.integers(0, 2, n).astype(float)
        answers = [None if v < 0.3 else str(int(v * 3)) for v in rng.random(n)]
        ks = list(range(1, n + 1))
        got = rl.group_metrics(scores, k=ks, metrics=["maj@k"], answers=answers,
                               estimator=estimator, none_answers="vote")
        want = rl.group_metrics(scores, k=ks, metrics=["maj@k"], answers=_sentinel(answers),
                                estimator=estimator)
        np.testing.assert_array_equal(got.matrix, want.matrix)
        if estimator == "unbiased":
            exact = [float(naive_rl.maj_at_k([Fraction(s) for s in scores], _sentinel(answers),
                                             k)) for k in ks]
            np.testing.assert_allclose(got.matrix[:, 0], exact, rtol=0, atol=2e-15)


def test_none_answers_skip_is_verl_09s_rule():
    """The audit's example: verl 0.9.1 drops maj@k for a prompt with a None answer."""
    scores = [1, 1, 0, 0, 1, 0, 0, 0]
    answers = ["7", "7", "5", "5", "12", "3", "3", None]
    groups = ["q1"] * 4 + ["q2"] * 4
    res = rl.group_metrics(scores, groups, k=[2, 4], metrics=["maj@k"], answers=answers,
                           none_answers="skip")
    assert np.isnan(res.values["maj@2"][1]) and res.values["maj@2"][0] == 0.5
    assert np.isnan(res.mean["maj@2"]) and "none_answers='skip'" in res.missing["maj@2"]
    kept = rl.group_metrics(scores, groups, k=[2, 4], metrics=["maj@k"], answers=answers,
                            none_answers="skip", short_groups="exclude")
    assert kept.mean["maj@4"] == kept.values["maj@4"][0] and kept.used["maj@4"] == 1
    abstain = rl.group_metrics(scores, groups, k=2, metrics=["maj@k"], answers=answers)
    assert abstain.values["maj@2"][1] == pytest.approx(1 / 3, abs=1e-15)
    with pytest.raises(ValueError, match="none_answers must be one of"):
        rl.group_metrics(scores, groups, k=2, answers=answers, none_answers="drop")


def test_constant_scores_with_an_unanswered_rollout_are_not_constant_for_maj():
    """A draw with no answer scores 0 ("abstain"), so maj@k of [-1, -1] with one None varies."""
    res = rl.group_metrics([-1.0, -1.0], k=2, metrics=["maj@k"], answers=["a", None],
                           estimator="verl")
    assert res.values["maj@2"][0] == -0.75 and res.values["maj@2/std"][0] > 0.4
