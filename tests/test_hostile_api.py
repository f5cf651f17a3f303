"""API inputs that numpy would silently turn into other numbers (reliability audit W4, W5, U4,
M4, C7; reproducers r03, r05, r15, r18, r21)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import passatk

BOOLS = [
    ([[10, True]], (0, 1)),
    ([10, np.True_], 1),
    ([[10, 11], [12, np.False_]], (1, 1)),
    (([10], (10, True)), (1, 1)),
]


@pytest.mark.parametrize(("n", "pos"), BOOLS)
@pytest.mark.parametrize("fn", [passatk.pass_at_k, passatk.pass_hat_k])
def test_bool_at_any_depth_is_a_type_error(fn, n, pos):
    with pytest.raises(TypeError, match=r"n must be .*bool .* at index " + re.escape(str(pos))):
        fn(n, 1, 1)


def test_bool_in_score_and_compare_is_a_type_error():
    with pytest.raises(TypeError, match=r"n must be an integer or an array of integers, "
                       r"got bool True at index 1"):
        passatk.score([10, True], [1, 1])
    with pytest.raises(TypeError, match=r"c must be an integer or an array of integers, "
                       r"got bool np.True_ at index 0"):
        passatk.score([10, 10], [np.True_, 1])
    with pytest.raises(TypeError, match=r"n_a must be an integer or an array of integers, "
                       r"got bool True at index 1"):
        passatk.compare([10, True], [1, 1], [10, 10], [3, 1])


def test_masked_entries_are_refused_everywhere():
    n = np.ma.array([10, 10], mask=[False, True])
    c = np.ma.array([1, 9], mask=[False, True])
    for call in (lambda: passatk.pass_at_k(n, c, 1), lambda: passatk.score(n, c),
                 lambda: passatk.compare(n, c, [10, 10], [1, 1])):
        with pytest.raises(TypeError, match=r"masked array with masked entries .*index 1"):
            call()


def test_masked_array_without_masked_entries_is_its_data():
    n = np.ma.array([10, 10], mask=[False, False])
    assert passatk.pass_at_k(n, [1, 9], 1).tolist() == [0.1, 0.9]
    assert passatk.score(n, [1, 9])[0].value == 0.5


def _missing_inputs():
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    return [pd.array([10, None], dtype="Int64"), pd.Series([10, None], dtype="Int64"),
            pa.array([10, None]), [10, None]]


def test_missing_values_are_named_not_float64():
    for n in _missing_inputs():
        with pytest.raises(ValueError, match=r"n contains missing values .* at index 1"):
            passatk.pass_at_k(n, 1, 1)
        with pytest.raises(ValueError, match=r"n contains missing values .* at index 1"):
            passatk.score(n, [1, 1])


def test_floats_stay_a_dtype_error():
    pd = pytest.importorskip("pandas")
    with pytest.raises(TypeError, match="dtype float64"):
        passatk.pass_at_k(pd.Series([1.0, None]), 1, 1)
    with pytest.raises(TypeError, match="float"):
        passatk.pass_at_k([10, float("nan")], 1, 1)


def test_python_ints_beyond_int64_are_range_errors():
    with pytest.raises(ValueError, match=r"n must satisfy 1 <= n < 2\*\*53.*index 0"):
        passatk.pass_at_k([2**63, 5], 1, 1)


def test_group_labels_past_2_63_combinations():
    tasks, columns = 10, 20  # 10**20 label combinations: an int64 code would wrap
    groups = {f"g{j:02d}": [(i + j) % tasks for i in range(tasks)] for j in range(columns)}
    rows = passatk.score([10] * tasks, list(range(tasks)), k=1, groups=groups).rows
    assert len(rows) == tasks
    for row in rows:
        i = row.group["g00"]
        assert row.value == i / 10
        assert all(row.group[f"g{j:02d}"] == (i + j) % tasks for j in range(columns))
    assert [row.group["g00"] for row in rows] == sorted(row.group["g00"] for row in rows)


def test_many_high_cardinality_groups_match_a_dict_of_tuples():
    rng = np.random.default_rng(5)
    size = 3_000
    cols = {f"c{j}": rng.integers(0, 10**6, size) for j in range(5)}
    n = rng.integers(1, 20, size)
    c = rng.integers(0, n + 1)
    rows = passatk.score(n, c, k=1, groups=cols, interval="fixed").rows
    expect = {}
    for i in range(size):
        key = tuple(int(cols[f"c{j}"][i]) for j in range(5))
        expect.setdefault(key, []).append(c[i] / n[i])
    assert len(rows) == len(expect)
    for row in rows:
        key = tuple(row.group[f"c{j}"] for j in range(5))
        assert row.value == pytest.approx(np.mean(expect[key]), rel=1e-12)


def test_k_ladder_default_for_large_n_is_short():
    rows = passatk.score([10**6, 10**6], [3, 500_000], k="ladder").rows
    ks = [row.k for row in rows]
    assert ks == [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10**4, 2 * 10**4,
                  5 * 10**4, 10**5, 2 * 10**5, 5 * 10**5, 10**6]
    for row in rows:
        assert row.value == pytest.approx(np.mean(passatk.pass_at_k([10**6] * 2, [3, 500_000],
                                                                    row.k)), rel=1e-15)
    assert [r.k for r in passatk.score([7, 9], [1, 2], k="ladder").rows] == [1, 2, 5, 7]


def test_k_all_is_bounded_with_a_clear_message():
    with pytest.raises(ValueError, match=r"k='all' asks for every k = 1\.\.1000000 .*'ladder'"):
        passatk.score([10**6, 10**6], [3, 5], k="all")
    with pytest.raises(ValueError, match=r"k='all' asks for every k"):
        passatk.compare([10**6] * 2, [3, 5], [10**6] * 2, [4, 5], k="all")
    assert len(passatk.score([50, 60], [3, 5], k="all").rows) == 50
    ladder = passatk.compare([10**6] * 2, [3, 5], [10**6] * 2, [4, 5], k="ladder").rows
    assert [row.k for row in ladder][-1] == 10**6


@pytest.mark.parametrize(("n", "k_max"), [(10**12, None), (10, 2**70), ([10**4] * 4000, 10**4)])
def test_pass_at_k_curve_is_bounded(n, k_max):
    with pytest.raises(ValueError, match=r"at most 33554432 are allowed"):
        passatk.pass_at_k_curve(n, 5, k_max)


def test_pass_at_k_curve_below_the_bound_is_unchanged():
    curve = passatk.pass_at_k_curve(10**5, 17)
    assert curve.shape == (10**5,)
    assert curve[[0, 9, 99_999]].tolist() == passatk.pass_at_k(10**5, 17, [1, 10, 10**5]).tolist()
