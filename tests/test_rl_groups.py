"""passatk.rl._groups: coercion, factorization (every fast path against a dict) and CSR."""

import datetime
import uuid

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from passatk.rl._groups import coerce_scores, factorize, layout


def _naive_factorize(labels):
    index = {}
    codes = [index.setdefault(x, len(index)) for x in labels]
    return codes, list(index)


def _check(labels, arr=None):
    codes, uniques = factorize(labels if arr is None else arr, len(labels))
    want_codes, want_uniques = _naive_factorize(labels)
    assert codes.dtype == np.int64 and codes.tolist() == want_codes
    assert list(uniques) == want_uniques
    return uniques


LABELS = st.one_of(
    st.integers(-3, 3), st.text(max_size=3), st.binary(max_size=2),
    st.tuples(st.integers(0, 2), st.text(max_size=1)),
)


@settings(max_examples=100, deadline=None)
@given(st.lists(LABELS, max_size=40))
def test_lists_and_object_arrays_match_a_dict(labels):
    _check(labels)
    arr = np.empty(len(labels), dtype=object)
    for i, x in enumerate(labels):
        arr[i] = x
    _check(labels, arr)
    runs = sorted(labels, key=repr)  # contiguous runs: the vectorized path
    arr = np.empty(len(runs), dtype=object)
    for i, x in enumerate(runs):
        arr[i] = x
    _check(runs, arr)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.integers(-(2**63), 2**63 - 1), max_size=40)
    | st.lists(st.integers(0, 3), max_size=40),
    st.sampled_from([np.int64, np.int32, np.int8, np.uint64, np.uint8]),
)
def test_integer_arrays_match_a_dict(values, dtype):
    info = np.iinfo(dtype)
    values = [v for v in values if info.min <= v <= info.max]
    arr = np.array(values, dtype=dtype)
    uniques = _check(arr.tolist(), arr)
    assert uniques.dtype == dtype


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(max_size=5), max_size=40), st.booleans())
def test_string_arrays_match_a_dict(values, as_bytes):
    if as_bytes:
        values = [v.encode("utf-8").rstrip(b"\0") for v in values]  # numpy S drops trailing NULs
    else:
        values = [v.rstrip("\0") for v in values]
    arr = np.array(values, dtype="S" if as_bytes else "U")
    _check(arr.tolist(), arr)


def test_large_unsigned_floats_datetimes_and_bools():
    big = np.array([2**64 - 1, 0, 2**63, 2**64 - 1], dtype=np.uint64)
    assert factorize(big, 4)[0].tolist() == [0, 1, 2, 0]
    codes, uniques = factorize(np.array([0.0, -0.0, 1.5, 0.0]), 4)
    assert codes.tolist() == [0, 0, 1, 0] and uniques.tolist() == [0.0, 1.5]
    days = np.array(["2024-01-02", "2024-01-01", "2024-01-02"], dtype="datetime64[D]")
    assert factorize(days, 3)[0].tolist() == [0, 1, 0]
    assert factorize(np.array([True, False, True]), 3)[0].tolist() == [0, 1, 0]
    assert factorize(np.array(["", "", "a"]), 3)[0].tolist() == [0, 0, 1]
    assert factorize(np.array(["", ""]), 2)[0].tolist() == [0, 0]
    when = [datetime.date(2024, 1, 1), datetime.date(2024, 1, 2), datetime.date(2024, 1, 1)]
    assert factorize(when, 3)[0].tolist() == [0, 1, 0]


def test_uuid_objects_bytes_and_torch():
    u = [uuid.uuid4() for _ in range(3)]
    codes, uniques = factorize([u[1], u[0], u[1], u[2]], 4)
    assert codes.tolist() == [0, 1, 0, 2] and list(uniques) == [u[1], u[0], u[2]]
    assert factorize((b"x", b"y", b"x"), 3)[0].tolist() == [0, 1, 0]
    assert factorize(range(3), 3)[0].tolist() == [0, 1, 2]
    torch = pytest.importorskip("torch")
    assert factorize(torch.tensor([7, 3, 7]), 3)[0].tolist() == [0, 1, 0]


def test_factorize_errors_name_the_position():
    with pytest.raises(TypeError, match=r"groups\[2\] is not hashable \(dict\)"):
        factorize(["a", "a", {}], 3)
    with pytest.raises(TypeError, match=r"groups\[1\] is not hashable \(list\)"):
        arr = np.empty(2, dtype=object)
        arr[0], arr[1] = (1,), [2]
        factorize(arr, 2)
    with pytest.raises(ValueError, match=r"groups\[1\] is NaN"):
        factorize([1.0, float("nan")], 2)
    with pytest.raises(ValueError, match=r"groups\[0\] is NaN"):
        factorize(np.array([np.nan, 1.0]), 2)
    with pytest.raises(ValueError, match=r"groups\[1\] is NaN"):
        factorize(np.array(["a", float("nan")], dtype=object), 2)
    with pytest.raises(ValueError, match="groups has length 2 but scores have 3"):
        factorize(["a", "b"], 3)
    with pytest.raises(ValueError, match="must be 1-D"):
        factorize(np.zeros((2, 2)), 4)
    with pytest.raises(TypeError, match="sequence of hashable labels"):
        factorize("abc", 3)
    with pytest.raises(TypeError, match="answers"):
        factorize(5, 1, name="answers")


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.booleans()), max_size=50))
def test_csr_layout_groups_in_first_appearance_and_input_order(rows):
    labels = [g for g, _ in rows]
    values = np.array([np.nan if hole else float(i) for i, (_, hole) in enumerate(rows)])
    lay = layout(values, labels, nan="drop")
    _, uniques = _naive_factorize(labels)
    assert lay.labels.tolist() == uniques
    assert lay.offsets[0] == 0 and lay.offsets[-1] == lay.order.size
    for g, label in enumerate(uniques):
        members = lay.order[lay.offsets[g] : lay.offsets[g + 1]].tolist()
        want = [i for i, (x, hole) in enumerate(rows) if x == label and not hole]
        assert members == want
        assert lay.first[g] == labels.index(label)
        assert lay.n[g] == len(want)
    assert lay.size == len(rows)


def test_dense_layout_with_holes():
    dense = np.array([[1.0, np.nan, 0.0], [np.nan, np.nan, np.nan], [0.5, 0.5, 1.0]])
    lay = layout(dense)
    assert lay.order.tolist() == [0, 2, 6, 7, 8]
    assert lay.offsets.tolist() == [0, 2, 2, 5]
    assert lay.n.tolist() == [2, 0, 3] and lay.labels.tolist() == [0, 1, 2]
    assert lay.first.tolist() == [0, 3, 6] and lay.position(7) == (2, 1)
    full = layout(np.zeros((2, 3)))
    assert full.order.tolist() == list(range(6)) and full.offsets.tolist() == [0, 3, 6]
    assert layout(np.zeros((0, 3))).offsets.tolist() == [0]
    one = layout(np.array([0.5, 1.0]))
    assert one.offsets.tolist() == [0, 2] and one.labels.tolist() == [0]


def test_layout_errors():
    with pytest.raises(ValueError, match=r"scores\[2\] is NaN; pass nan='drop'"):
        layout(np.array([1.0, 0.0, np.nan]), ["a", "b", "c"])
    with pytest.raises(ValueError, match="groups is only for 1-D"):
        layout(np.zeros((2, 2)), [0, 1])
    with pytest.raises(ValueError, match="nan must be one of"):
        layout(np.zeros(2), nan="zero")


def test_coerce_types_and_restore():
    s = coerce_scores(np.array([1, 0], np.uint8))
    assert s.values.dtype == np.float64 and s.restore(s.values).dtype == np.float64
    s = coerce_scores(np.array([0.5], np.float32))
    assert s.restore(s.values).dtype == np.float32
    s = coerce_scores([[1, 0], [0, 1]])
    assert s.kind == "list" and s.shape == (2, 2) and isinstance(s.restore(s.values), np.ndarray)
    s = coerce_scores((True, False))
    assert s.values.tolist() == [1.0, 0.0]
    from fractions import Fraction

    s = coerce_scores(np.array([1, 0.5, Fraction(1, 4), np.float32(2)], dtype=object))
    assert s.values.tolist() == [1.0, 0.5, 0.25, 2.0] and s.restore(s.values).dtype == np.float64
    assert coerce_scores([Fraction(1, 2), 1]).values.tolist() == [0.5, 1.0]


def test_coerce_torch():
    torch = pytest.importorskip("torch")
    for dtype, out in [(torch.float64, torch.float64), (torch.float16, torch.float16),
                       (torch.bool, torch.get_default_dtype()), (torch.int32, torch.float32)]:
        t = torch.ones(3, dtype=dtype)
        s = coerce_scores(t)
        assert s.values.dtype == np.float64 and s.values.tolist() == [1.0, 1.0, 1.0]
        back = s.restore(s.values)
        assert isinstance(back, torch.Tensor) and back.dtype == out and back.device == t.device
    with pytest.raises(TypeError, match="real numbers or bool"):
        coerce_scores(torch.ones(2, dtype=torch.complex64))


def test_coerce_errors_name_the_position():
    with pytest.raises(TypeError, match=r"scores\[1\] must be a real number or bool, got NoneType"):
        coerce_scores([0.5, None])
    with pytest.raises(TypeError, match=r"scores\[1, 0\] must be a real number or bool, got str"):
        coerce_scores([[0.5, 1.0], ["x", 1.0]])
    with pytest.raises(TypeError, match=r"scores\[0\] must be a real number"):
        coerce_scores(np.array(["a", "b"], dtype=object))
    with pytest.raises(TypeError, match="dtype complex128"):
        coerce_scores(np.array([1j]))
    with pytest.raises(TypeError, match="dtype <U1"):
        coerce_scores(np.array(["a"]))
    with pytest.raises(TypeError, match="got str"):
        coerce_scores("0101")
    with pytest.raises(TypeError, match="got float"):
        coerce_scores(0.5)
    with pytest.raises(ValueError, match=r"1-D \(N,\) with groups, or dense 2-D"):
        coerce_scores(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="rows of a dense 2-D list must have equal length"):
        coerce_scores([[1.0, 0.0], [1.0]])
    with pytest.raises(ValueError, match=r"scores\[0, 1\] is -inf"):
        coerce_scores(np.array([[0.0, -np.inf]]))


def test_dense_input_with_no_columns_has_one_empty_group_per_row():
    from passatk import rl

    result = rl.group_metrics(np.empty((3, 0)), k=1, metrics=["pass@k"])
    assert result.per_group["n"].tolist() == [0, 0, 0]
    assert np.isnan(result.per_group["pass@1"]).all()
    assert np.isnan(result.summary(why=None)["pass@1/mean"])
