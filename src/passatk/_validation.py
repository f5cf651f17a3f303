"""The one home of input validation: integer arrays, the count rules and their texts, the
limits, choices, positive integers, the confidence level and random generators.

Every public function of :mod:`passatk` and :mod:`passatk.stats` checks its arguments
here, so that one rule has one wording. ``reference.py`` keeps its own copy of the rules on
purpose: it is the stdlib-only oracle the tests hold this code against
(``tests/test_validation.py`` checks that the two agree).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._limits import MAX_N, MAX_RESAMPLES, TABLE_MAX  # noqa: F401 (re-exported)
from ._show import brief, grouped, length, show
from ._types import KSpec  # noqa: F401 (re-exported)

#: What ``rng=`` (and its alias ``seed=``) accepts: whatever numpy.random.default_rng does.
RngLike = (None | int | Sequence[int] | np.random.SeedSequence | np.random.BitGenerator
           | np.random.Generator)

#: The most ints of a seed sequence (``rng=[...]``): entropy far beyond what a seed needs.
MAX_SEED_WORDS = 2**16

_CLIP = 2**62  # values beyond int64 are saturated here, so that the range rules reject them


# --------------------------------------------------------------------------------------
# Integer arrays
# --------------------------------------------------------------------------------------


class MissingValuesError(ValueError):
    """Missing values (NA, None, NaN) in an integer input."""


def type_error(name: str, what: str) -> TypeError:
    """The TypeError of a non-integer count: one wording for every function."""
    return TypeError(
        f"{name} must be an integer or an array of integers, got {what}; "
        f"convert it first, e.g. np.asarray({name}).astype(np.int64) after checking that "
        f"the values are whole numbers"
    )


def fmt_index(pos: tuple) -> str:
    """An index for messages: ``3`` for 1-d positions, ``(1, 0)`` otherwise."""
    return str(tuple(int(p) for p in pos)) if len(pos) != 1 else str(int(pos[0]))


def as_int(x: Any, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Return (int64 ndarray, original array) for one argument, or raise TypeError/ValueError.

    Values beyond int64 are saturated to +-2**62 so that the range rules reject them; the
    messages read the original array.
    """
    if isinstance(x, bool | np.bool_):
        raise type_error(name, f"bool {show(x)}")
    if isinstance(x, int | np.integer) and not isinstance(x, np.ndarray):
        arr = np.asarray(x)
    elif isinstance(x, float | np.floating | str | bytes | complex):
        raise type_error(name, f"{type(x).__name__} {show(x)}")
    elif isinstance(x, np.ndarray | list | tuple | range) or hasattr(x, "__array__"):
        arr = checked_array(x, name)
    else:
        raise type_error(name, f"{type(x).__name__} {show(x)}")
    kind = arr.dtype.kind
    if arr.size == 0 and kind in "fO":  # [] becomes float64: nothing in it can be wrong
        return arr.astype(np.int64), arr
    if kind == "i":
        return (arr if arr.dtype == np.int64 else arr.astype(np.int64)), arr
    if kind == "u":
        return _unsigned_ints(arr), arr
    if kind == "O":
        return _object_ints(arr, name), arr
    raise _dtype_error(arr, x, name)


def _unsigned_ints(arr: np.ndarray) -> np.ndarray:
    """An unsigned array as int64, uint64 values past int64 saturated to 2**62."""
    if arr.dtype.itemsize == 8 and arr.size and int(arr.max()) >= 2**63:
        return np.minimum(arr, _CLIP).astype(np.int64)
    return arr.astype(np.int64)


def _dtype_error(arr: np.ndarray, x: Any, name: str) -> TypeError:
    """The TypeError of an array (or numpy scalar) whose dtype is not an integer one."""
    if arr.dtype.kind == "b":
        what = "a bool array" if arr.ndim else f"bool {show(x)}"
    else:
        what = f"an array of dtype {arr.dtype}" if arr.ndim else f"{arr.dtype} {show(x)}"
    return type_error(name, what)


def _object_ints(arr: np.ndarray, name: str) -> np.ndarray:
    flat = arr.reshape(-1)
    for i, v in enumerate(flat):
        if isinstance(v, bool | np.bool_) or not isinstance(v, int | np.integer):
            pos = np.unravel_index(i, arr.shape) if arr.ndim else ()
            raise type_error(name, f"{type(v).__name__} {show(v)} at index {fmt_index(pos)}")
    clipped = [min(max(int(v), -_CLIP), _CLIP) for v in flat]
    return np.array(clipped, dtype=np.int64).reshape(arr.shape)


def int_array(x: Any, name: str) -> np.ndarray:
    """A 1-d int64 array of counts, one per task (``score``, ``compare``, planning)."""
    arr, orig = as_int(x, name)
    if arr.ndim > 1:
        raise ValueError(f"{name} must be 1-dimensional (one entry per task), got shape "
                         f"{arr.shape}")
    arr = np.atleast_1d(arr)
    if orig.dtype.kind in "uO" and arr.size:
        big = np.flatnonzero(np.abs(arr) >= _CLIP)
        if big.size:
            i = int(big[0])
            raise ValueError(f"{name} must be < 2**53, got {show(np.atleast_1d(orig)[i])} at "
                             f"index {i}")
    return arr


def detached(x: Any) -> Any:
    """``x.detach()`` for a torch tensor that requires grad (whose ``numpy()`` raises
    RuntimeError), else ``x``: counts and budgets carry no gradient, only their values count."""
    if getattr(x, "requires_grad", False) is True and callable(getattr(x, "detach", None)):
        return x.detach()
    return x


def finite_float(v: Any, name: str) -> float:
    """``float(v)`` for a real number ``v`` (not bool), or a TypeError / ValueError naming
    ``name``: an int too large for a float is a ValueError, not an OverflowError.

    >>> finite_float(10**400, "a")
    Traceback (most recent call last):
    ...
    ValueError: a must be a finite number, got an integer of 401 digits
    """
    if isinstance(v, bool | np.bool_) or not isinstance(v, int | float | np.integer | np.floating):
        raise TypeError(f"{name} must be a number, got {type(v).__name__}")
    try:
        x = float(v)
    except OverflowError:
        digits = len(str(abs(int(v)))) if abs(v) < 10**4000 else "over 4000"
        raise ValueError(f"{name} must be a finite number, got an integer of {digits} "
                         "digits") from None
    if not math.isfinite(x):
        raise ValueError(f"{name} must be a finite number, got {name}={x!r}")
    return x


def checked_array(x: Any, name: str) -> np.ndarray:
    """``np.asarray(x)``, refusing what numpy would silently turn into numbers.

    Bools at any depth of a list or tuple and masked entries of a masked array raise TypeError;
    missing values of a pandas or pyarrow integer column (which numpy turns into NaN) raise
    ValueError; Python ints that overflow int64 stay ints (an object array), not floats.
    """
    ma = sys.modules.get("numpy.ma")  # a masked array exists only once numpy.ma is imported
    if ma is not None and isinstance(x, ma.MaskedArray):
        return _unmasked(x, ma, name)
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, range) and x.stop - x.start > 2**62:  # len() overflows past 2**63
        raise ValueError(f"{name} must fit in memory, got {show(x)}")
    x = detached(x)
    try:
        if isinstance(x, list | tuple):
            pos = _bool_position(x, ())
            if pos is not None:
                raise type_error(name, f"bool {_at(x, pos)!r} at index {fmt_index(pos)}")
        arr = np.asarray(x)
    except (ValueError, TypeError, RecursionError, MemoryError) as e:
        if isinstance(e, TypeError) and str(e).startswith(name):
            raise  # our own bool error above
        raise _conversion_error(e, x, name) from None
    if arr.dtype.kind in "fO" and arr.size:  # only these can hide NaN, None or NA
        return _float_or_object(arr, x, name)
    return arr


def _unmasked(x: Any, ma: Any, name: str) -> np.ndarray:
    """The data of a masked array without masked entries, else TypeError."""
    mask = ma.getmaskarray(x)
    if mask.any():
        pos = np.unravel_index(int(np.argmax(mask)), mask.shape)
        raise type_error(name, f"a masked array with masked entries (the first at index "
                               f"{fmt_index(pos)}); fill or drop them first")
    return np.asarray(x.data)


def _conversion_error(e: BaseException, x: Any, name: str) -> Exception:
    """The error for what ``np.asarray(x)`` raised ``e`` on."""
    if isinstance(e, RecursionError):
        return type_error(name, f"a {type(x).__name__} nested too deeply")
    if isinstance(e, MemoryError):  # range(2**62): more values than memory holds
        size = f"{length(x):,} values" if isinstance(x, range) else "more values than fit in memory"
        return ValueError(f"{name} must fit in memory, got {type(x).__name__} of {size}")
    # ragged nesting, unconvertible objects
    return type_error(name, f"{type(x).__name__} that numpy cannot convert ({brief(e)})")


def _float_or_object(arr: np.ndarray, x: Any, name: str) -> np.ndarray:
    """A non-empty float or object ``arr`` from ``x``, refusing missing values.

    A list of ints beyond int64 that numpy made floats becomes an object array of ints.
    """
    if arr.dtype.kind == "f":
        if isinstance(x, list | tuple) and not _has_float(x):
            return np.asarray(x, dtype=object)  # ints beyond int64: let the range rules speak
        missing = np.isnan(arr) if not _has_float(x) else None
    else:
        missing = np.asarray(np.frompyfunc(_is_na, 1, 1)(arr), dtype=bool)  # 0-d: a bool
    if missing is not None and missing.any():
        pos = np.unravel_index(int(np.argmax(missing)), arr.shape)
        raise MissingValuesError(f"{name} contains missing values (NA, None or NaN), the first "
                                 f"at index {fmt_index(pos)}; drop or fill them before computing")
    return arr


def _is_na(v: Any) -> bool:
    return v is None or type(v).__name__ in ("NAType", "NaTType")


def _bool_position(x: list | tuple, pos: tuple) -> tuple | None:
    """The index tuple of the first bool in nested lists/tuples, else None."""
    types = set(map(type, x))
    if bool in types or np.bool_ in types:
        i = next(i for i, v in enumerate(x) if isinstance(v, bool | np.bool_))
        return (*pos, i)
    if list in types or tuple in types:
        for i, v in enumerate(x):
            if isinstance(v, list | tuple):
                found = _bool_position(v, (*pos, i))
                if found is not None:
                    return found
    return None


def _at(x: Any, pos: tuple) -> Any:
    for i in pos:
        x = x[i]
    return x


def _has_float(x: Any) -> bool:
    """Whether a list (nested) or an array-like holds floats of its own (not converted ints)."""
    if isinstance(x, list | tuple):
        types = set(map(type, x))
        if any(issubclass(t, float | np.floating) for t in types):
            return True
        return any(_has_float(v) for v in x if isinstance(v, list | tuple))
    dtype = getattr(x, "dtype", None)
    if getattr(dtype, "kind", None) == "f" or getattr(dtype, "is_floating_point", False):
        return True  # numpy/pandas floats, torch floating tensors
    return str(getattr(x, "type", "")) in ("double", "float", "halffloat")  # pyarrow


# --------------------------------------------------------------------------------------
# The count rules 1 <= n < 2**53, 0 <= c <= n, 1 <= k <= n
# --------------------------------------------------------------------------------------


def count_rules(n: np.ndarray, c: np.ndarray, k: np.ndarray | None = None, *,
                names: tuple[str, str] = ("n", "c"), k_max: bool = True) -> list:
    """(text, violation mask) of each rule, in the order they are checked at one position.

    Without ``k`` only the rules of n and c; with ``k_max=False`` k may exceed n (the
    plug-in estimator is defined there).
    """
    nn, cc = names
    rules = [
        (f"{nn} must satisfy 1 <= {nn} < 2**53 (every count must be exact in a double)",
         (n < 1) | (n >= MAX_N)),
        (f"{cc} must satisfy {cc} >= 0", c < 0),
        (f"{cc} must satisfy {cc} <= {nn} (more correct samples than samples)", c > n),
    ]
    if k is not None:
        rules.append(("k must satisfy k >= 1", k < 1))
        if k_max:
            rules.append(("k must satisfy k <= n (pass@k is undefined when k exceeds the "
                          "samples)", k > n))
    return rules


def counts_ok(n: int, c: int, k: int) -> bool:
    """The count rules for one triple of Python ints (the scalar fast path)."""
    return 0 <= c <= n and 1 <= k <= n < MAX_N


def check_n(n: np.ndarray, name: str = "n") -> None:
    """The rule of n alone (1-d), for callers that draw c themselves (``simulate``)."""
    text, mask = count_rules(n, np.zeros_like(n), names=(name, "c"))[0]
    if mask.any():
        i = int(np.argmax(mask))
        raise ValueError(f"{text}; got {name}={int(n[i])} at index {i}")


def count_arrays(n: Any, c: Any, nname: str = "n",
                 cname: str = "c") -> tuple[np.ndarray, np.ndarray]:
    """The counts of one run of tasks as 1-d int64 arrays, checked against the rules."""
    n, c = int_array(n, nname), int_array(c, cname)
    check_counts(n, c, nname, cname)
    return n, c


def check_counts(n: np.ndarray, c: np.ndarray, nname: str = "n", cname: str = "c") -> None:
    """The rules of one run of tasks (1-d n and c of one length, at least one task)."""
    if n.shape != c.shape:
        raise ValueError(f"{nname} and {cname} must have the same length, got {n.size} and "
                         f"{c.size}")
    if n.size == 0:
        raise ValueError(f"{nname} must hold at least one task, got an empty array")
    for text, mask in count_rules(n, c, names=(nname, cname)):
        if mask.any():
            i = int(np.argmax(mask))
            raise ValueError(f"{text}; got {nname}={int(n[i])}, {cname}={int(c[i])} at index "
                             f"{i} ({int(mask.sum())} invalid)")


# --------------------------------------------------------------------------------------
# Options
# --------------------------------------------------------------------------------------


def choice(value: Any, name: str, allowed: tuple[str, ...]) -> str:
    """``value`` if it is one of ``allowed``, else TypeError/ValueError."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, one of {allowed}, got {type(value).__name__}")
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {show(value)}")
    return value


def positive_int(value: Any, name: str, minimum: int = 1, maximum: int | None = None) -> int:
    """An int with ``minimum <= value`` (and ``<= maximum`` when given)."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {show(value)}")
    if value < minimum:
        raise ValueError(f"{name} must satisfy {name} >= {minimum}, got {name}={show(value)}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must satisfy {name} <= {maximum:,}, got {name}="
                         f"{grouped(value)}; the resamples are held in memory")
    return int(value)


def n_resamples_arg(value: Any, minimum: int = 2) -> int:
    """The number of bootstrap resamples: an int in [minimum, MAX_RESAMPLES]."""
    return positive_int(value, "n_resamples", minimum, MAX_RESAMPLES)


def confidence_level(confidence: Any) -> float:
    """The confidence level, a float strictly between 0 and 1."""
    if isinstance(confidence, bool) or not isinstance(confidence, int | float | np.floating):
        raise TypeError(f"confidence must be a float, got {type(confidence).__name__}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must satisfy 0 < confidence < 1, got {show(confidence)}")
    return float(confidence)


def check_errors(errors: Any) -> None:
    """The ``errors=`` policy of the estimator functions."""
    if not isinstance(errors, str) or errors not in ("raise", "nan"):
        raise ValueError(f"errors must be 'raise' or 'nan', got {show(errors)}")


# --------------------------------------------------------------------------------------
# Randomness (SPEC 7)
# --------------------------------------------------------------------------------------

_UNSET: Any = object()


_SEED_TYPES = (int, np.integer, Sequence, np.random.SeedSequence, np.random.BitGenerator)


def normalize_rng(rng: Any = None, seed: Any = _UNSET) -> np.random.Generator:
    """A ``numpy.random.Generator`` from ``rng=`` (or its alias ``seed=``).

    Accepts whatever :func:`numpy.random.default_rng` accepts (None, an int or a sequence of
    ints, a ``SeedSequence``, a ``BitGenerator`` or a ``Generator``, which is used as is),
    as SPEC 7 asks. Passing both ``rng`` and ``seed`` is an error. The global random state
    is never used.
    """
    name = "rng"
    if seed is not _UNSET:
        if rng is not None and seed is not None:
            raise TypeError("pass rng= or its alias seed=, not both")
        if rng is None:
            rng, name = seed, "seed"
    if isinstance(rng, np.random.Generator):
        return rng
    what = (f"{name} must be None, an int, a sequence of ints, a SeedSequence, a BitGenerator "
            f"or a numpy.random.Generator (what numpy.random.default_rng accepts), got "
            f"{type(rng).__name__}")
    if isinstance(rng, bool | np.bool_ | float | np.floating | str | bytes):
        raise TypeError(f"{what} {show(rng)}")
    if isinstance(rng, Sequence) and length(rng) > MAX_SEED_WORDS:  # range(2**62) never ends
        raise ValueError(f"{name} must be a sequence of at most {MAX_SEED_WORDS:,} ints, got "
                         f"{show(rng)} of {grouped(length(rng))} values")
    rng = detached(rng)
    if not (rng is None or hasattr(rng, "__array__") or isinstance(rng, _SEED_TYPES)):
        raise TypeError(f"{what} {show(rng)}")  # numpy would repr it, whatever that raises
    try:
        return np.random.default_rng(rng)
    except TypeError as e:
        raise TypeError(f"{what} ({brief(e)})") from None
    except (ValueError, OverflowError, RecursionError) as e:  # negative seeds, deep lists
        raise ValueError(f"{name} must be a valid seed for numpy.random.default_rng, got "
                         f"{show(rng)} ({brief(e)})") from None

