"""summary() for loggers: prefix, repeated keys, NaN reasons; curve() rows against k."""

import warnings

import numpy as np
import pytest

from passatk import rl
from passatk.rl import _results


@pytest.fixture(autouse=True)
def fresh_warnings():
    _results._WARNED.clear()
    yield
    _results._WARNED.clear()


SCORES = [[1, 0, 1, 1], [0, 0, 0, 1], [1, 1, 1, 1]]


def test_prefix_puts_every_key_in_one_section():
    res = rl.group_metrics(SCORES, k=[1, 2, 4])
    plain = res.summary()
    val = res.summary(prefix="val/")
    assert list(val) == [f"val/{key}" for key in plain]
    assert list(val.values()) == list(plain.values())
    assert res.summary("val/passatk/")["val/passatk/pass@2/mean"] == plain["pass@2/mean"]


def test_drop_repeats_for_binary_scores():
    res = rl.group_metrics(SCORES, k=[1, 2, 4])
    assert dict(res.repeats) == {f"best@{k}": f"pass@{k}" for k in (1, 2, 4)} | {
        f"worst@{k}": f"pass^{k}" for k in (1, 2, 4)}
    full, short = res.summary(), res.summary(drop_repeats=True)
    for name, twin in res.repeats.items():
        assert full[f"{name}/mean"] == pytest.approx(full[f"{twin}/mean"], abs=1e-15)
        assert f"{name}/mean" not in short and f"{name}/se" not in short
    assert set(full) - set(short) == {f"{name}/{s}" for name in res.repeats
                                      for s in ("mean", "se")}


@pytest.mark.parametrize("kwargs", [{"estimator": "verl"}, {"threshold": 0.5}, {}])
def test_no_repeats_where_they_do_not_hold(kwargs):
    scores = [[0.2, 0.9, 0.6, 1.0], [0.0, 0.4, 0.7, 0.1]] if kwargs != {"estimator": "verl"} \
        else SCORES
    if kwargs == {}:  # continuous scores: no binary metric, no repeats
        res = rl.group_metrics(scores, k=2, metrics=["best@k", "worst@k"])
    else:
        res = rl.group_metrics(scores, k=2, metrics=["best@k", "worst@k", "pass@k", "pass^k"],
                               **kwargs)
    assert dict(res.repeats) == {}
    assert res.summary(drop_repeats=True) == res.summary()


def test_a_nan_mean_warns_once_per_name_with_the_reason():
    res = rl.group_metrics([1, 0, 1, 1, 0], ["a", "a", "a", "b", "b"], k=[2, 3],
                           metrics=["pass@k", "pass^k"])
    with pytest.warns(_results.MissingMetricWarning) as caught:
        out = res.summary()
    assert np.isnan(out["pass@3/mean"]) and np.isnan(out["pass^3/mean"])
    messages = sorted(str(w.message) for w in caught)
    assert len(messages) == 2
    assert messages[0].startswith("pass@3/mean is NaN: 1 of 2 groups have fewer than 3 scored")
    assert messages[1].startswith("pass^3/mean is NaN: 1 of 2 groups have fewer than 3 scored")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res.summary()  # once per name: no second warning
        rl.group_metrics([1, 0, 1], ["a", "a", "b"], k=3, metrics=["pass@k"]).summary()


def test_a_nan_mean_as_a_companion_key_or_nothing():
    res = rl.group_metrics([1, 0, 1, 1, 0, 1], ["a", "a", "a", "b", "b", "c"], k=[2, 3],
                           metrics=["pass@k"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        keyed = res.summary(why="key")
        silent = res.summary(why=None)
    assert keyed["pass@3/missing"] == 2.0 and keyed["pass@2/missing"] == 1.0
    assert "pass@2/missing" not in silent and set(keyed) - set(silent) == {
        "pass@2/missing", "pass@3/missing"}
    assert all(isinstance(v, float) for v in keyed.values())
    excluded = rl.group_metrics([1, 0, 1, 1, 0, 1], ["a", "a", "a", "b", "b", "c"], k=3,
                                metrics=["pass@k"], short_groups="exclude")
    assert "pass@3/missing" not in excluded.summary(why="key")  # the mean is not NaN
    with pytest.raises(ValueError, match="why must be one of"):
        res.summary(why="text")


def test_curve_rows_against_k():
    res = rl.group_metrics(SCORES, k=[1, 2, 4], metrics=["pass@k", "pass^k", "mean@n"])
    curve = res.curve()
    assert curve.columns == ("k", "metric", "mean", "se")
    assert [row[:2] for row in curve.rows] == [[1, "pass@k"], [2, "pass@k"], [4, "pass@k"],
                                               [1, "pass^k"], [2, "pass^k"], [4, "pass^k"]]
    for k, metric, mean, se in curve.rows:
        name = metric.replace("k", str(k))
        assert mean == res.mean[name] and se == res.se[name]
    stepped = res.curve("pass^k", step=7)
    assert stepped.columns == ("step", "k", "metric", "mean", "se")
    assert [row[:3] for row in stepped.rows] == [[7, 1, "pass^k"], [7, 2, "pass^k"],
                                                 [7, 4, "pass^k"]]
    verl = rl.group_metrics(SCORES, k=[2, 4], metrics=["best@k"], estimator="verl").curve()
    assert [row[:2] for row in verl.rows] == [[2, "best@k"], [4, "best@k"]]  # no /std rows
