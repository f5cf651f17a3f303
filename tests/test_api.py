"""Types, broadcasting, validation messages and thread safety of the public functions."""

import math
import threading

import numpy as np
import pytest

import passatk
from passatk import _lnfact, fail_at_k, reference

FUNCS = [passatk.pass_at_k, passatk.pass_hat_k, fail_at_k]


class ArrayLike:
    """Stands in for a CPU torch tensor: only __array__."""

    def __init__(self, values, dtype=np.int64):
        self.values = np.asarray(values, dtype=dtype)

    def __array__(self, dtype=None, copy=None):
        return self.values if dtype is None else self.values.astype(dtype)


def test_scalar_returns_float():
    v = passatk.pass_at_k(10, 2, 3)
    assert type(v) is float
    assert type(passatk.pass_at_k(np.int32(10), np.int64(2), np.uint8(3))) is float
    assert type(passatk.pass_at_k(np.array(10), 2, 3)) is float


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                                   np.uint32, np.uint64])
def test_every_integer_dtype(dtype):
    n = np.array([10, 20, 30], dtype=dtype)
    c = np.array([2, 0, 30], dtype=dtype)
    got = passatk.pass_at_k(n, c, np.array([3, 3, 3], dtype=dtype))
    assert got.dtype == np.float64
    assert got.tolist() == [reference.pass_at_k(10, 2, 3), 0.0, 1.0]


def test_lists_tuples_and_array_likes():
    want = passatk.pass_at_k(np.array([10, 20]), np.array([2, 5]), 3)
    np.testing.assert_array_equal(passatk.pass_at_k([10, 20], (2, 5), 3), want)
    np.testing.assert_array_equal(passatk.pass_at_k(ArrayLike([10, 20]), ArrayLike([2, 5]), 3),
                                  want)
    np.testing.assert_array_equal(passatk.pass_at_k(10, range(3), 2),
                                  passatk.pass_at_k(10, [0, 1, 2], 2))


def test_broadcasting_shapes():
    n = np.array([[100], [200]])
    c = np.array([0, 10, 50])
    k = 5
    got = passatk.pass_at_k(n, c, k)
    assert got.shape == (2, 3)
    for i in range(2):
        for j in range(3):
            assert got[i, j] == reference.pass_at_k(int(n[i, 0]), int(c[j]), 5)
    # Non-contiguous views work too.
    big = np.arange(40).reshape(4, 10)[:, ::2] + 100
    got = passatk.pass_at_k(big, 3, 2)
    assert got[1, 2] == reference.pass_at_k(int(big[1, 2]), 3, 2)


def test_empty_input_gives_empty_output():
    assert passatk.pass_at_k([], [], []).shape == (0,)
    assert passatk.pass_at_k(np.zeros((0, 3), np.int64), 0, 1).shape == (0, 3)


@pytest.mark.parametrize("bad", [True, 3.0, float("nan"), "3", None, 2 + 0j, object()])
@pytest.mark.parametrize("arg", ["n", "c", "k"])
def test_type_errors_name_argument_and_fix(bad, arg):
    args = {"n": 10, "c": 2, "k": 3}
    args[arg] = bad
    with pytest.raises(TypeError, match=rf"^{arg} must be an integer .*convert it"):
        passatk.pass_at_k(**args)


@pytest.mark.parametrize("bad", [np.array([1.0, 2.0]), np.array([True]), [1, 2.5],
                                 ["a"], [1, True]])
def test_array_type_errors(bad):
    with pytest.raises(TypeError, match=r"^c must be an integer"):
        passatk.pass_at_k(10, bad, 1)


def test_object_array_reports_the_bad_element():
    with pytest.raises(TypeError, match=r"float 2.0 at index 1"):
        passatk.pass_at_k(np.array([1, 2.0, 3], dtype=object), 0, 1)


@pytest.mark.parametrize(
    ("n", "c", "k", "pattern"),
    [
        (5, 0, 10, r"^k must satisfy k <= n .*got n=5, c=0, k=10$"),
        (5, 7, 1, r"^c must satisfy c <= n .*got n=5, c=7, k=1$"),
        (5, 2, 0, r"^k must satisfy k >= 1; got n=5, c=2, k=0$"),
        (5, -1, 1, r"^c must satisfy c >= 0; got n=5, c=-1, k=1$"),
        (-5, 0, 1, r"^n must satisfy 1 <= n < 2\*\*53 .*got n=-5, c=0, k=1$"),
        (2**53, 1, 1, r"^n must satisfy 1 <= n < 2\*\*53 .*got n=9007199254740992"),
        (2**70, 1, 1, r"^n must satisfy 1 <= n < 2\*\*53 .*got n=1180591620717411303424"),
    ],
)
@pytest.mark.parametrize("func", FUNCS)
def test_value_errors_scalars(func, n, c, k, pattern):
    with pytest.raises(ValueError, match=pattern):
        func(n, c, k)
    assert math.isnan(func(n, c, k, errors="nan"))


def test_value_error_position_and_count():
    n = np.array([[10, 10, 10], [10, 10, 10]])
    c = np.array([[1, 2, 3], [11, 4, 12]])
    with pytest.raises(ValueError) as info:
        passatk.pass_at_k(n, c, 2)
    msg = str(info.value)
    assert msg.startswith("c must satisfy c <= n")
    assert "index (1, 0) with n=10, c=11, k=2" in msg
    assert "2 of 6 elements break this rule" in msg


def test_value_error_counts_all_rules():
    with pytest.raises(ValueError, match=r"^k must satisfy k <= n .*index 1 with n=5, c=0, k=6; "
                       r"1 of 4 elements break this rule \(3 invalid in all\)"):
        passatk.pass_at_k([5, 5, 5, 5], [0, 0, 9, 1], [1, 6, 1, 0])


def test_uint64_beyond_int64_is_rejected_with_its_value():
    n = np.array([10, 2**64 - 1], dtype=np.uint64)
    with pytest.raises(ValueError, match=r"n=18446744073709551615"):
        passatk.pass_at_k(n, 1, 1)


def test_errors_nan_marks_only_invalid_positions():
    got = passatk.pass_at_k([5, 5, 10, 5], [0, 7, 2, 2], [10, 1, 3, 0], errors="nan")
    assert np.isnan(got[[0, 1, 3]]).all()
    assert got[2] == reference.pass_at_k(10, 2, 3)


def test_errors_policy_is_checked():
    with pytest.raises(ValueError, match=r"errors must be 'raise' or 'nan', got 'clip'"):
        passatk.pass_at_k(10, 2, 3, errors="clip")


def test_broadcast_mismatch_message():
    with pytest.raises(ValueError, match=r"must broadcast to one shape.*\(2,\), \(3,\)"):
        passatk.pass_at_k([1, 2], [0, 0, 0], 1)


def test_curve_validation():
    with pytest.raises(ValueError, match=r"k must satisfy k <= n"):
        passatk.pass_at_k_curve([5, 3], [1, 1], k_max=4)
    got = passatk.pass_at_k_curve([5, 3], [1, 1], k_max=4, errors="nan")
    assert np.isnan(got[1, 3]) and not np.isnan(got[1, 2])
    with pytest.raises(TypeError, match=r"k_max must be an int"):
        passatk.pass_at_k_curve(5, 1, k_max=2.0)
    with pytest.raises(ValueError, match=r"k_max must satisfy k_max >= 1"):
        passatk.pass_at_k_curve(5, 1, k_max=0)


def test_plugin_validation():
    with pytest.raises(TypeError):
        passatk.pass_at_k_plugin(10, 2.0, 3)
    with pytest.raises(ValueError, match=r"c must satisfy c <= n \(more correct"):
        passatk.pass_at_k_plugin(10, 11, 3)
    assert passatk.pass_at_k_plugin(3, 1, 5) == pytest.approx(1 - (2 / 3) ** 5, rel=1e-15)


def test_bulk_parallel_path_equals_scalar_path():
    rng = np.random.default_rng(7)
    n = rng.integers(1, 3000, 50_000)
    c = rng.integers(0, n + 1)
    k = rng.integers(1, n + 1)
    got = passatk.pass_at_k(n, c, k)
    for i in rng.integers(0, n.size, 300):
        assert got[i] == passatk.pass_at_k(int(n[i]), int(c[i]), int(k[i]))


def test_eight_threads_match_single_thread():
    rng = np.random.default_rng(3)
    n = rng.choice([20, 200, 10**6, 10**9], 200_000)
    c = rng.integers(0, n + 1)
    k = np.minimum(rng.choice([1, 10, 100], n.size), n)
    want = passatk.pass_at_k(n, c, k)
    results = [None] * 8
    barrier = threading.Barrier(8)

    def work(i):
        barrier.wait()
        results[i] = passatk.pass_at_k(n, c, k)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        np.testing.assert_array_equal(r, want)


def test_lnfact_table_rebuilds_bit_for_bit():
    hi, lo = _lnfact.table()
    bh, bl = _lnfact.build(3000)
    np.testing.assert_array_equal(hi[:3001], bh)
    np.testing.assert_array_equal(lo[:3001], bl)
    assert hi.shape == (2**17 + 1,)
    assert not hi.flags.writeable


def test_delta_table_matches_decimal():
    from decimal import Decimal, localcontext

    from passatk import _kernels

    with localcontext() as ctx:
        ctx.prec = 60
        half_ln_2pi = (2 * Decimal("3.14159265358979323846264338327950288419716939937510582"))
        half_ln_2pi = half_ln_2pi.ln() / 2
        lnfact = Decimal(0)
        for m in range(1, 31):
            lnfact += Decimal(m).ln()
            d = lnfact - ((m + Decimal("0.5")) * Decimal(m).ln() - m + half_ln_2pi)
            assert _kernels._DELTA_HI[m] == float(d)


@pytest.mark.parametrize("what", FUNCS)
def test_reuse_path_equals_direct_values(what):
    # A realistic archive mix takes the tabulated path; every value must equal the scalar one.
    rng = np.random.default_rng(11)
    n = rng.choice([1, 5, 20, 200, 1000], 40_000, p=[0.05, 0.05, 0.3, 0.5, 0.1])
    c = rng.binomial(n, rng.beta(0.5, 0.5, n.size))
    k = np.minimum(rng.choice([1, 10, 100], n.size), n)
    assert passatk._api._repeated_pairs(n, k, n.size) is not None
    n[123], c[456], k[789] = 300, 7, 3  # pairs outside the sample's table
    got = what(n, c, k)
    for i in [*rng.integers(0, n.size, 400).tolist(), 123, 456, 789]:
        assert got[i] == what(int(n[i]), int(c[i]), int(k[i]))
    c[5000] = n[5000] + 1
    with pytest.raises(ValueError, match=r"index 5000"):
        what(n, c, k)
    assert np.isnan(what(n, c, k, errors="nan")[5000])


def test_reuse_is_not_chosen_for_spread_out_n():
    rng = np.random.default_rng(1)
    n = rng.integers(1, 10**6, 50_000)
    assert passatk._api._repeated_pairs(n, np.ones_like(n), n.size) is None


def test_ln1p_table_rebuilds_bit_for_bit():
    from passatk import _kernels

    hi, lo = _lnfact.build_ln1p(_lnfact.LN1P_STEPS)
    np.testing.assert_array_equal(_kernels._LN1P_HI, hi)
    np.testing.assert_array_equal(_kernels._LN1P_LO, lo)


def test_cpu_torch_tensors():
    torch = pytest.importorskip("torch")
    n = torch.tensor([10, 200, 200], dtype=torch.int32)
    c = torch.tensor([2, 37, 0])
    got = passatk.pass_at_k(n, c, torch.tensor(3))
    assert got.tolist() == [reference.pass_at_k(10, 2, 3), reference.pass_at_k(200, 37, 3), 0.0]
    with pytest.raises(TypeError, match=r"^n must be an integer .*dtype float32"):
        passatk.pass_at_k(torch.tensor([10.0]), 2, 3)
    with pytest.raises(ValueError, match=r"c must satisfy c <= n"):
        passatk.pass_at_k(torch.tensor([5]), torch.tensor([7]), 1)
