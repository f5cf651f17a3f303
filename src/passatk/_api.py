"""Public pass@k functions: input validation, broadcasting and dispatch to the kernels."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any, Literal, TypeAlias, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _kernels as K
from ._jit import threads_usable
from ._limits import MAX_N
from ._lnfact import table
from ._validation import as_int, check_errors, count_rules, counts_ok, fmt_index, show

__all__ = ["fail_at_k", "pass_at_k", "pass_at_k_curve", "pass_at_k_plugin", "pass_hat_k"]

_SMALL = 1 << 14  # below this many triples the serial kernel beats the thread launch
_SAMPLE = 1024  # triples sampled to decide whether repeated (n, k) pay for a table
MAX_CURVE_VALUES = 1 << 25  # 256 MiB of float64: pass_at_k_curve refuses larger outputs

# The overloads: three scalars give a float, an array (or list) in any place an array. A 0-d
# array counts as a scalar at run time (a float), as in numpy's own typing of 0-d results.
_Scalar: TypeAlias = int | np.integer[Any]
_Array: TypeAlias = NDArray[Any] | Sequence[Any]
_Errors: TypeAlias = Literal["raise", "nan"]
_Floats: TypeAlias = NDArray[np.float64]

#: An array call of at most EXACT_MAX_SIZE triples, all with n <= EXACT_MAX_N, is computed with
#: exact integers (math.comb; the division rounds correctly) and never starts numba: a command
#: on a small archive then skips numba's 0.3-0.5 s start. Larger calls, and Python-int scalars
#: (the values training loops and ``rl.group_metrics`` share), run the kernels, which agree
#: within their 2-ulp contract (tests/test_exact_switch.py shows both sides of the switch).
EXACT_MAX_SIZE = 64
EXACT_MAX_N = 1000
#: A call of at least TABLE_MIN_SIZE triples and one k, whose n are few values of at most
#: EXACT_MAX_N (an archive: one n per run), reads each value from a table of the exact values
#: for every (n, c) seen: correctly rounded, and numba is never started (an archive of 10M tasks
#: is scored without the kernels' 130 MB and 0.7 s start; docs/estimator.md, "Speed paths").
TABLE_MIN_SIZE = 1 << 16
TABLE_MAX_VALUES = 1 << 16  # values in the table, over every n seen
_TABLE_BLOCK = 1 << 18  # triples read at a time (the index temporaries stay 2 MB)


def _exact(n: int, c: int, k: int, mode: int) -> float:
    """The correctly rounded value of one valid triple, from exact binomials."""
    if mode == K.MODE_HAT:
        return math.comb(c, k) / math.comb(n, k)
    if mode == K.MODE_FAIL:
        return math.comb(n - c, k) / math.comb(n, k)
    if c == 0:
        return 0.0
    if c + k > n:
        return 1.0
    d = math.comb(n, k)
    return (d - math.comb(n - c, k)) / d


def _exact_fill(flat, mode, out) -> int:
    """:func:`_exact` over (broadcast) flat int64 arrays; NaN and a count for invalid ones."""
    n, c, k = (a.tolist() for a in flat)
    size = out.size
    bad = 0
    vals = []
    for i in range(size):
        ni = n[i if len(n) > 1 else 0]
        ci = c[i if len(c) > 1 else 0]
        ki = k[i if len(k) > 1 else 0]
        if counts_ok(ni, ci, ki):
            vals.append(_exact(ni, ci, ki, mode))
        else:
            vals.append(math.nan)
            bad += 1
    out[:] = vals
    return bad


def _k1_fill(flat, mode, out) -> int | None:
    """k = 1: pass@1 = pass^1 = c/n and P0 = (n-c)/n, one division of exact doubles (n < 2**53),
    so correctly rounded; None when k is not 1 or a triple is invalid (the kernels name it)."""
    n, c, k = flat
    if k.size != 1 or int(k[0]) != 1 or int(n.min()) < 1 or int(n.max()) >= MAX_N or int(
            c.min()) < 0 or bool(np.any(c > n)):
        return None
    np.divide(n - c if mode == K.MODE_FAIL else c, n, out=out)
    return 0


def _table_fill(flat, mode, out) -> int | None:
    """The values of a large call of one k and few distinct small n, read from the exact
    values for every (n, c) seen; None when the call is not of that shape or a triple is
    invalid (the kernels then count it)."""
    n, c, k = flat
    if out.size < TABLE_MIN_SIZE or k.size != 1 or not n.size == c.size == out.size:
        return None
    top, low, kk = int(n.max()), int(n.min()), int(k[0])
    if top > EXACT_MAX_N or not 1 <= kk <= low or int(c.min()) < 0:
        return None
    if low == top:  # one n (an archive's run): each value is values[c]
        if int(c.max()) > top:
            return None
        np.take(np.array([_exact(top, j, kk, mode) for j in range(top + 1)]), c, out=out)
        return 0
    seen = np.flatnonzero(np.bincount(n, minlength=top + 1))
    if int((seen + 1).sum()) > TABLE_MAX_VALUES or bool(np.any(c > n)):
        return None
    start = np.zeros(top + 1, np.int64)
    start[seen] = np.cumsum(seen + 1) - (seen + 1)
    values = np.array([_exact(m, j, kk, mode) for m in seen.tolist() for j in range(m + 1)])
    for s in range(0, out.size, _TABLE_BLOCK):
        at = slice(s, s + _TABLE_BLOCK)
        index = start.take(n[at])
        index += c[at]
        np.take(values, index, out=out[at])
    return 0


def _raise_invalid(n, c, k, originals, shape):
    n, c, k = np.broadcast_arrays(n, c, k)
    on, oc, ok = (np.broadcast_to(o, shape) for o in originals)
    rules = count_rules(n, c, k)
    any_bad = np.zeros(shape, dtype=bool)
    for _, mask in rules:
        any_bad |= mask
    pos = np.unravel_index(int(np.argmax(any_bad)), shape)
    text, mask = next((t, m) for t, m in rules if m[pos])
    if shape == ():
        raise ValueError(f"{text}; got n={show(on[()])}, c={show(oc[()])}, k={show(ok[()])}")
    count = int(mask.sum())
    total = int(any_bad.sum())
    others = f" ({total} invalid in all)" if total != count else ""
    raise ValueError(
        f"{text}; the first invalid element is at index {fmt_index(pos)} with "
        f"n={show(on[pos])}, c={show(oc[pos])}, k={show(ok[pos])}; {count} of {any_bad.size} "
        f"elements break this rule{others} "
        f"(errors='nan' gives NaN at invalid positions)"
    )


def _common_shape(*shapes):
    """The broadcast shape when every shape is one shape or (), else None (the slow path)."""
    big = None
    for sh in shapes:
        if sh != ():
            if big is None:
                big = sh
            elif sh != big:
                return None
    return () if big is None else big


def _compute(n, c, k, mode, errors):
    check_errors(errors)
    # Fast path for plain Python ints: training loops call this every step.
    if type(n) is int and type(c) is int and type(k) is int:
        if counts_ok(n, c, k):
            th, tl = table()
            return K.value(n, c, k, mode, th, tl)
        if errors == "nan":
            return float("nan")
        a = np.asarray(min(max(n, -(2**62)), 2**62))
        b = np.asarray(min(max(c, -(2**62)), 2**62))
        d = np.asarray(min(max(k, -(2**62)), 2**62))
        _raise_invalid(a, b, d, (np.asarray(n), np.asarray(c), np.asarray(k)), ())
    (n64, on), (c64, oc), (k64, ok) = as_int(n, "n"), as_int(c, "c"), as_int(k, "k")
    shape = _common_shape(n64.shape, c64.shape, k64.shape)
    try:
        shape = shape if shape is not None else np.broadcast_shapes(
            n64.shape, c64.shape, k64.shape)
    except ValueError:
        raise ValueError(
            f"n, c and k must broadcast to one shape, got shapes {n64.shape}, {c64.shape} "
            f"and {k64.shape}"
        ) from None
    flat = []
    for a in (n64, c64, k64):
        if a.size == 1:
            flat.append(a.reshape(1))
        elif a.shape == shape:
            flat.append(np.ascontiguousarray(a).reshape(-1))
        else:
            flat.append(np.ascontiguousarray(np.broadcast_to(a, shape)).reshape(-1))
    out = np.empty(shape, dtype=np.float64)
    if out.size:
        bad = _fill(flat, mode, out.reshape(-1))
        if bad and errors == "raise":
            _raise_invalid(n64, c64, k64, (on, oc, ok), shape)
    if shape == ():
        return float(out[()])
    return out


def _fill(flat, mode, out):
    """Values of the flat triples into ``out``: exact for a small call, else the kernels."""
    if out.size <= EXACT_MAX_SIZE and max(int(a.max()) for a in flat) <= EXACT_MAX_N:
        return _exact_fill(flat, mode, out)
    if (bad := _k1_fill(flat, mode, out)) is not None or (
            bad := _table_fill(flat, mode, out)) is not None:
        return bad
    th, tl = table()
    return _dispatch(flat, mode, th, tl, out)


def _repeated_pairs(n, k, size):
    """The distinct (n, k) of a strided sample when tabulating them pays, else None.

    Real archives hold one n per run and a few k, so a vector over c = 0..n per pair,
    computed once, turns each triple into one read (docs/estimator.md, "Speed paths").
    """
    pn, pk = K.sample_pairs(n, k, size, _SAMPLE, _SAMPLE // 8)
    return (pn, pk) if pn.size else None


def _dispatch(flat, mode, th, tl, out):
    n, c, k = flat
    if out.size < _SMALL or not threads_usable():
        return K.bulk_serial(n, c, k, mode, th, tl, out)
    pairs = _repeated_pairs(n, k, out.size)
    if pairs is not None:
        return K.bulk_reuse(n, c, k, mode, th, tl, out, *pairs)
    return K.bulk(n, c, k, mode, th, tl, out)


@overload
def pass_at_k(n: _Scalar, c: _Scalar, k: _Scalar, *, errors: _Errors = ...) -> float: ...
@overload
def pass_at_k(n: _Array, c: ArrayLike, k: ArrayLike, *, errors: _Errors = ...) -> _Floats: ...
@overload
def pass_at_k(n: ArrayLike, c: _Array, k: ArrayLike, *, errors: _Errors = ...) -> _Floats: ...
@overload
def pass_at_k(n: ArrayLike, c: ArrayLike, k: _Array, *, errors: _Errors = ...) -> _Floats: ...
@overload
def pass_at_k(n: ArrayLike, c: ArrayLike, k: ArrayLike, *,
              errors: _Errors = ...) -> float | _Floats: ...
def pass_at_k(n: ArrayLike, c: ArrayLike, k: ArrayLike, *,
              errors: _Errors = "raise") -> float | _Floats:
    """Unbiased pass@k = 1 - C(n-c, k) / C(n, k) (Chen et al. 2021, eq. 1).

    The probability that at least one of k samples, drawn without replacement from n samples
    of which c are correct, is correct. Accurate to 2 ulp of the exact rational value
    (4 ulp for n > 1e12); see docs/estimator.md.

    Parameters
    ----------
    n, c, k : int or array_like of int
        Samples per task, correct samples, and the budget k. They broadcast like NumPy
        arrays. Any integer dtype and objects with ``__array__`` (CPU torch tensors) work;
        bool, float and str raise TypeError.
    errors : {"raise", "nan"}
        With "raise" (the default), a triple that breaks 0 <= c <= n, 1 <= k <= n or
        n < 2**53 raises ValueError naming the rule, the first offending index and the
        number of invalid elements. With "nan", such positions are NaN.

    Returns
    -------
    float or numpy.ndarray
        A float for scalar inputs, else a float64 array of the broadcast shape.

    Examples
    --------
    >>> import passatk
    >>> [passatk.pass_at_k(5, 2, k) for k in range(1, 6)]
    [0.4, 0.7, 0.9, 1.0, 1.0]
    >>> round(passatk.pass_at_k(10, 2, 3), 6)
    0.533333
    >>> passatk.pass_at_k([200, 200], [0, 37], 10)
    array([0.        , 0.87737457])
    >>> passatk.pass_at_k(5, 0, 10)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: k must satisfy k <= n (pass@k is undefined ...); got n=5, c=0, k=10
    """
    return _compute(n, c, k, K.MODE_PASS, errors)


@overload
def pass_hat_k(n: _Scalar, c: _Scalar, k: _Scalar, *, errors: _Errors = ...) -> float: ...
@overload
def pass_hat_k(n: _Array, c: ArrayLike, k: ArrayLike, *, errors: _Errors = ...) -> _Floats: ...
@overload
def pass_hat_k(n: ArrayLike, c: _Array, k: ArrayLike, *, errors: _Errors = ...) -> _Floats: ...
@overload
def pass_hat_k(n: ArrayLike, c: ArrayLike, k: _Array, *, errors: _Errors = ...) -> _Floats: ...
@overload
def pass_hat_k(n: ArrayLike, c: ArrayLike, k: ArrayLike, *,
               errors: _Errors = ...) -> float | _Floats: ...
def pass_hat_k(n: ArrayLike, c: ArrayLike, k: ArrayLike, *,
               errors: _Errors = "raise") -> float | _Floats:
    """pass^k = C(c, k) / C(n, k): the probability that all k draws pass (tau-bench).

    Same inputs, rules and accuracy as :func:`pass_at_k`.

    Examples
    --------
    >>> import passatk
    >>> [round(passatk.pass_hat_k(5, 2, k), 12) for k in range(1, 4)]
    [0.4, 0.1, 0.0]
    >>> passatk.pass_hat_k(4, 4, 4)
    1.0
    """
    return _compute(n, c, k, K.MODE_HAT, errors)


@overload
def fail_at_k(n: _Scalar, c: _Scalar, k: _Scalar, *, errors: _Errors = ...) -> float: ...
@overload
def fail_at_k(n: _Array, c: ArrayLike, k: ArrayLike, *, errors: _Errors = ...) -> _Floats: ...
@overload
def fail_at_k(n: ArrayLike, c: _Array, k: ArrayLike, *, errors: _Errors = ...) -> _Floats: ...
@overload
def fail_at_k(n: ArrayLike, c: ArrayLike, k: _Array, *, errors: _Errors = ...) -> _Floats: ...
@overload
def fail_at_k(n: ArrayLike, c: ArrayLike, k: ArrayLike, *,
              errors: _Errors = ...) -> float | _Floats: ...
def fail_at_k(n: ArrayLike, c: ArrayLike, k: ArrayLike, *,
              errors: _Errors = "raise") -> float | _Floats:
    """P0 = C(n-c, k) / C(n, k) = 1 - pass@k, with small relative error even when tiny.

    Examples
    --------
    >>> import passatk
    >>> passatk.fail_at_k(10, 2, 3)
    0.4666666666666667
    """
    return _compute(n, c, k, K.MODE_FAIL, errors)


@overload
def pass_at_k_plugin(n: _Scalar, c: _Scalar, k: _Scalar) -> float: ...
@overload
def pass_at_k_plugin(n: _Array, c: ArrayLike, k: ArrayLike) -> _Floats: ...
@overload
def pass_at_k_plugin(n: ArrayLike, c: _Array, k: ArrayLike) -> _Floats: ...
@overload
def pass_at_k_plugin(n: ArrayLike, c: ArrayLike, k: _Array) -> _Floats: ...
@overload
def pass_at_k_plugin(n: ArrayLike, c: ArrayLike, k: ArrayLike) -> float | _Floats: ...
def pass_at_k_plugin(n: ArrayLike, c: ArrayLike, k: ArrayLike) -> float | _Floats:
    """The plug-in approximation 1 - (1 - c/n)**k, kept for comparison. It is biased.

    Replacing the without-replacement probability by (1 - c/n)**k underestimates pass@k:
    the bias is about -k(k-1) p (1-p)**(k-1) / (2n) (statistics.md). For n=10, c=2, k=3 it
    gives 0.488 where the unbiased estimator gives 0.5333. Unlike pass@k it is defined for
    k > n. Requires integers with n >= 1, 0 <= c <= n and k >= 1.

    Examples
    --------
    >>> import passatk
    >>> round(passatk.pass_at_k_plugin(10, 2, 3), 3)
    0.488
    """
    (n64, _), (c64, _), (k64, _) = as_int(n, "n"), as_int(c, "c"), as_int(k, "k")
    n64, c64, k64 = np.broadcast_arrays(n64, c64, k64)
    for text, mask in count_rules(n64, c64, k64, k_max=False):
        if mask.any():
            pos = np.unravel_index(int(np.argmax(mask)), mask.shape)
            where = f" at index {fmt_index(pos)}" if mask.ndim else ""
            raise ValueError(
                f"{text}; got n={n64[pos]}, c={c64[pos]}, k={k64[pos]}{where} "
                f"({int(mask.sum())} invalid)"
            )
    with np.errstate(divide="ignore"):
        out = -np.expm1(k64 * np.log1p(-(c64 / n64)))
    return float(out) if out.ndim == 0 else out


def k_ladder(k_max: int) -> list[int]:
    """The default budgets of a curve: 1, 2, 5, 10, 20, 50, ... below ``k_max``, then ``k_max``.

    >>> from passatk._api import k_ladder
    >>> k_ladder(200)
    [1, 2, 5, 10, 20, 50, 100, 200]
    >>> len(k_ladder(2**53 - 1))
    49
    """
    out = []
    step = 1
    while step < k_max:
        out.extend(m * step for m in (1, 2, 5) if m * step < k_max)
        step *= 10
    return [*out, k_max]


def pass_at_k_curve(n: ArrayLike, c: ArrayLike, k_max: int | None = None, *,
                    errors: _Errors = "raise") -> _Floats:
    """pass@k for every k = 1..k_max in one call, along a new trailing axis.

    Parameters
    ----------
    n, c : int or array_like of int
        As in :func:`pass_at_k`; they broadcast to the leading shape.
    k_max : int, optional
        The largest k. Defaults to the smallest n, so every value is defined. A k_max above
        some n raises ValueError (or gives NaN there with ``errors="nan"``), and so does a
        curve of more than ``MAX_CURVE_VALUES`` (2**25) values in all.

    Returns
    -------
    numpy.ndarray
        float64 array of shape ``broadcast(n, c).shape + (k_max,)``.

    Examples
    --------
    >>> import passatk
    >>> passatk.pass_at_k_curve(5, 2)
    array([0.4, 0.7, 0.9, 1. , 1. ])
    >>> passatk.pass_at_k_curve([5, 10], [2, 2], k_max=3).round(4)
    array([[0.4   , 0.7   , 0.9   ],
           [0.2   , 0.3778, 0.5333]])
    """
    check_errors(errors)
    (n64, _), (c64, _) = as_int(n, "n"), as_int(c, "c")
    # copies: numpy warns (FutureWarning) when numba reads the writeable flag of a broadcast view
    n64, c64 = (a.copy() for a in np.broadcast_arrays(n64, c64))
    if k_max is None:
        if n64.size == 0:
            raise ValueError("k_max is required when n is empty")
        k_max = int(n64.min())
        if k_max < 1:
            pos = np.unravel_index(int(np.argmin(n64)), n64.shape)
            raise ValueError(
                f"n must satisfy n >= 1 for a pass@k curve; got n={k_max} at index "
                f"{fmt_index(pos)}"
            )
    elif isinstance(k_max, bool) or not isinstance(k_max, int | np.integer):
        raise TypeError(f"k_max must be an int, got {type(k_max).__name__} {show(k_max)}")
    k_max = operator.index(k_max)
    if k_max < 1:
        raise ValueError(f"k_max must satisfy k_max >= 1, got k_max={show(k_max)}")
    if max(n64.size, 1) * k_max > MAX_CURVE_VALUES:
        raise ValueError(
            f"a pass@k curve up to k_max={show(k_max)} for {n64.size} task(s) has "
            f"{show(max(n64.size, 1) * k_max)} values, at most {MAX_CURVE_VALUES} are allowed; "
            f"pass a smaller k_max, or call pass_at_k(n, c, ks) with the k you need (1, 2, 5, "
            f"10, ...)")
    ks = np.arange(1, k_max + 1, dtype=np.int64)
    return pass_at_k(n64[..., None], c64[..., None], ks, errors=errors)
