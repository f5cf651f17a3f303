"""Result objects: compact repr, confidence_interval, one flattening rule, public names."""

import csv
import io

import numpy as np
import pytest

import passatk
from passatk._output import flatten, render_csv
from passatk.stats import ConfidenceInterval


def test_repr_of_a_long_curve_is_short():
    r = passatk.score([200] * 50, [i * 4 for i in range(50)], k="all")
    assert len(r) == 200
    text = repr(r)
    assert len(text) < 1500
    lines = text.splitlines()
    assert lines[0] == "ScoreResult(200 rows, interval='auto', confidence=0.95)"
    assert lines[4] == "  ... 194 more rows ..."
    assert lines[1] == "  " + repr(r[0]) and lines[-1] == "  " + repr(r[-1])
    assert len(repr(r[0])) < 200
    c = passatk.compare([10] * 5, [1, 2, 3, 4, 5], [10] * 5, [0, 2, 2, 3, 3], k="all", seed=0)
    assert len(repr(c)) < 1500 and repr(c).startswith("CompareResult(10 rows, ")


def test_row_repr_names_the_main_fields():
    row = passatk.score([5, 5, 5], [2, 0, 5], groups={"m": ["a", "a", "a"]})[0]
    assert repr(row) == (f"ScoreRow(group={{'m': 'a'}}, metric='pass@k', k=1, "
                         f"value={row.value:.6g}, se={row.se:.6g}, ci_low={row.ci_low:.6g}, "
                         f"ci_high={row.ci_high:.6g}, tasks=3, interval='auto')")
    short = passatk.score([3, 4], [1, 2], k=5, missing="report")[0]
    assert repr(short).endswith("reason='k=5 exceeds n for 2 of 2 tasks: task positions [0, "
                                "1] hav...')")


def test_confidence_interval_on_rows_and_results():
    r = passatk.score([10, 10, 10, 10], [1, 4, 6, 9], k=[1, 2, 20], missing="report")
    row = r[0]
    assert row.confidence_interval == ConfidenceInterval(row.ci_low, row.ci_high)
    assert row.confidence_interval.low == row.ci_low and row.confidence_interval[1] == row.ci_high
    assert r[2].confidence_interval == (None, None)
    ci = r.confidence_interval
    assert np.array_equal(ci.low[:2], [r[0].ci_low, r[1].ci_low])
    assert np.isnan(ci.low[2]) and np.isnan(ci.high[2])
    c = passatk.compare([10] * 4, [1, 4, 6, 9], [10] * 4, [0, 4, 5, 5], seed=0)
    assert c[0].confidence_interval == (c[0].ci_low, c[0].ci_high)
    t = passatk.stats.task_intervals([10], [3])
    assert t[0].confidence_interval == (t[0].ci_low, t[0].ci_high)


def test_one_flattening_rule_for_pandas_and_csv():
    pd = pytest.importorskip("pandas")
    r = passatk.score([3, 3], [1, 2], groups={"k": [0, 0], "metric": ["x", "x"]})
    frame = r.to_pandas()
    header = next(csv.reader(io.StringIO(render_csv(r.records()))))
    assert list(frame.columns) == header
    assert header[:4] == ["group_k", "group_metric", "metric", "k"]
    assert frame["group_k"].tolist() == [0] and frame["k"].tolist() == [1]
    assert isinstance(frame, pd.DataFrame)
    assert list(flatten(r.records()[0])) == header


def test_public_names():
    for name in ("norm_cdf", "norm_ppf", "t_cdf", "t_ppf", "mcnemar", "signflip_test",
                 "wilcoxon_signed_rank"):
        assert not hasattr(passatk.stats, name), name
        assert name not in passatk.stats.__all__
    assert passatk.fail_at_k(10, 2, 3) == pytest.approx(1 - passatk.pass_at_k(10, 2, 3))
    assert "fail_at_k" in passatk.__all__
    for name in passatk.__all__:
        assert hasattr(passatk, name)
    for name in passatk.stats.__all__:
        assert hasattr(passatk.stats, name)
