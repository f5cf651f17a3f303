"""pandas, polars and pyarrow columns as inputs of the API (the way stumpy repeats its tests
with ``pd.Series``): the same numbers as numpy arrays and the exact reference, and missing
values refused with the index of the first."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import passatk
from passatk.reference import pass_at_k_exact

N = [10, 10, 20, 5, 7, 1]
C = [3, 0, 20, 5, 6, 1]
C_B = [2, 1, 19, 5, 7, 0]
TASKS = ["T/0", "T/1", "T/2", "T/3", "T/4", "T/5"]


def _pandas(values):
    pd = pytest.importorskip("pandas")
    return pd.Series(values)


def _pandas_nullable(values):
    pd = pytest.importorskip("pandas")
    return pd.Series(values, dtype="Int64" if isinstance(values[0], int) else "string")


def _polars(values):
    pl = pytest.importorskip("polars")
    return pl.Series(values)


def _arrow(values):
    pa = pytest.importorskip("pyarrow")
    return pa.array(values)


def _arrow_chunked(values):
    pa = pytest.importorskip("pyarrow")
    return pa.chunked_array([values[:2], values[2:]])


KINDS = {"pandas": _pandas, "pandas-nullable": _pandas_nullable, "polars": _polars,
         "pyarrow": _arrow, "pyarrow-chunked": _arrow_chunked}


@pytest.fixture(params=list(KINDS))
def column(request):
    return KINDS[request.param]


@pytest.mark.parametrize("k", [1, 2, 5])
def test_pass_at_k_equals_the_exact_reference(column, k):
    n, c = [10, 10, 20, 5, 7, 6], [3, 0, 20, 5, 6, 1]
    got = passatk.pass_at_k(column(n), column(c), k)
    assert isinstance(got, np.ndarray)
    assert got.tolist() == [float(pass_at_k_exact(a, b, k)) for a, b in zip(n, c, strict=True)]


def test_k_above_some_n_is_refused_as_for_lists(column):
    with pytest.raises(ValueError) as info:
        passatk.pass_at_k(column(N), column(C), 2)
    with pytest.raises(ValueError) as want:
        passatk.pass_at_k(N, C, 2)
    assert str(info.value) == str(want.value)


def test_pass_hat_k_and_plugin_equal_numpy(column):
    for fn in (passatk.pass_hat_k, passatk.pass_at_k_plugin):
        got = fn(column(N), column(C), 1)
        assert got.tolist() == fn(np.array(N), np.array(C), 1).tolist()
    assert passatk.pass_at_k_plugin(column(N), column(C), 1).tolist() == [
        float(Fraction(c, n)) for n, c in zip(N, C, strict=True)]


def test_score_equals_numpy(column):
    got = passatk.score(column(N), column(C), [1], task_ids=column(TASKS), interval="t")
    want = passatk.score(np.array(N), np.array(C), [1], task_ids=np.array(TASKS),
                         interval="t")
    assert got.rows == want.rows


def test_compare_equals_numpy(column):
    got = passatk.compare(column(N), column(C), column(N), column(C_B), [1],
                          task_ids_a=column(TASKS), task_ids_b=column(TASKS), seed=0)
    want = passatk.compare(np.array(N), np.array(C), np.array(N), np.array(C_B), [1],
                           task_ids_a=TASKS, task_ids_b=TASKS, seed=0)
    assert got.rows == want.rows


@pytest.mark.parametrize("kind", ["pandas-nullable", "polars", "pyarrow"])
def test_missing_values_are_refused_with_their_index(kind):
    n = KINDS[kind]([10, 10, None])
    with pytest.raises(ValueError) as info:
        passatk.pass_at_k(n, [1, 1, 1], 1)
    assert str(info.value) == ("n contains missing values (NA, None or NaN), the first at "
                               "index 2; drop or fill them before computing")
