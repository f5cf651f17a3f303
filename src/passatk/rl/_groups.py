"""Input coercion, validation and the grouped (CSR) layout shared by ``passatk.rl``.

Two steps, each one home for its concern:

1. :func:`coerce_scores` turns lists, numpy arrays (any real or bool dtype) and torch tensors
   (CPU, or CUDA by one copy to the host) into a float64 host array, and remembers how to give
   results back in the caller's type (:meth:`Scores.restore`): numpy in, numpy out; torch in,
   torch out, on the same device; a list gives numpy. Integer and bool inputs give floats.
2. :func:`layout` groups the rollouts. Either a 1-D ``(N,)`` array with ``groups`` of length N
   (any hashables, ragged, not necessarily contiguous), or a dense 2-D ``(G, n)`` array whose
   rows are groups and whose NaN entries are holes (unscorable rollouts). The result is a CSR
   layout: the rollouts of group g are the flat positions ``order[offsets[g]:offsets[g+1]]``
   (in input order), groups are numbered in order of first appearance, and ``labels[g]`` is the
   caller's label. Kernels gather ``values.ravel()[order]`` and scatter results back the same
   way, so the output order always follows the input.

:func:`factorize` is the hashable-to-code step on its own (``answers`` for maj@k reuse it).

>>> s = coerce_scores([1, 0, 1, 1])
>>> lay = layout(s.values, ["b", "a", "b", "a"])
>>> lay.labels.tolist(), lay.n.tolist(), lay.order.tolist()
(['b', 'a'], [2, 2], [0, 2, 1, 3])
>>> s.restore(s.values * 0.5).dtype
dtype('float64')
"""

import math
import numbers
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _adv_kernels
from .._show import length

_REAL_KINDS = "biuf"
_NAN_OPTIONS = ("raise", "drop")


@dataclass(frozen=True, slots=True, eq=False)
class Scores:
    """Scores as a float64 host array, with what is needed to return results in kind.

    Attributes
    ----------
    values : numpy.ndarray
        float64, C-contiguous, the caller's shape (1-D or 2-D), on the host. A fresh array
        unless the caller passed float64 numpy (then it may be the caller's own: never write).
    kind : str
        ``"numpy"``, ``"list"`` or ``"torch"``.
    dtype : object
        The caller's dtype (numpy dtype or torch dtype).
    device : object
        The torch device, or None.
    """

    values: np.ndarray
    kind: str
    dtype: Any
    device: Any

    @property
    def shape(self):
        return self.values.shape

    def restore(self, out):
        """Return float64 ``out`` (same shape) as the caller's type, float dtype and device.

        Float inputs keep their dtype (float32 in, float32 out); int and bool inputs give
        float64 (numpy, lists) or torch's default float dtype (torch).
        """
        if self.kind == "torch":
            torch = sys.modules["torch"]
            dtype = self.dtype if self.dtype.is_floating_point else torch.get_default_dtype()
            return torch.from_numpy(out).to(device=self.device, dtype=dtype)
        if self.kind == "numpy" and self.dtype.kind == "f":
            return out.astype(self.dtype, copy=False)
        return out


@dataclass(frozen=True, slots=True, eq=False)
class Layout:
    """Rollouts grouped as CSR over the flat (C-order) positions of the scores.

    Attributes
    ----------
    order : numpy.ndarray
        int64 flat positions, group by group, input order within a group. Holes (NaN in a
        dense array, or NaN dropped from a 1-D array) are not in it.
    offsets : numpy.ndarray
        int64 ``(G + 1,)``; group g is ``order[offsets[g]:offsets[g + 1]]``.
    labels : numpy.ndarray
        ``(G,)`` group labels in order of first appearance (row numbers for dense input,
        ``[0]`` for 1-D input without groups). Its dtype follows the labels: the numpy
        dtype of a numeric or string array, or object (lists, object arrays).
    first : numpy.ndarray
        int64 ``(G,)``: flat position of each group's first rollout (holes included), for
        error messages.
    shape : tuple
        Shape of the scores (positions are into ``values.ravel()``).
    """

    order: np.ndarray
    offsets: np.ndarray
    labels: np.ndarray
    first: np.ndarray
    shape: tuple

    @property
    def n(self):
        """int64 ``(G,)``: scored rollouts per group (0 for a group that is all holes)."""
        return np.diff(self.offsets)

    @property
    def size(self):
        """Number of flat positions, holes included."""
        return math.prod(self.shape)

    def position(self, flat):
        """The caller's index of flat position ``flat``: ``i`` (1-D) or ``(row, col)`` (2-D)."""
        if len(self.shape) == 1:
            return int(flat)
        return tuple(int(i) for i in np.unravel_index(int(flat), self.shape))


def coerce_scores(scores, *, name="scores"):
    """Validate ``scores`` and return :class:`Scores` (float64 host values).

    Raises TypeError for a type or dtype that is not real numbers or bool (naming the first bad
    position of a list), ValueError for a shape that is not 1-D or 2-D and for +-inf (with the
    position). NaN is left in place; :func:`layout` decides what it means.

    >>> coerce_scores([True, False]).values
    array([1., 0.])
    >>> coerce_scores([0.5, "x"])
    Traceback (most recent call last):
    ...
    TypeError: scores[1] must be a real number or bool, got str 'x'
    """
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(scores, torch.Tensor):
        host = _torch_to_host(scores, name)
        out = Scores(host, "torch", scores.dtype, scores.device)
    elif isinstance(scores, np.ndarray):
        _check_dtype(scores, name)
        out = Scores(_as_float64(scores), "numpy", scores.dtype, None)
    else:
        try:
            out = Scores(_from_sequence(scores, name), "list", None, None)
        except MemoryError:  # range(2**62): more values than memory holds
            raise ValueError(f"{name} holds more values than fit in memory") from None
    if out.values.ndim not in (1, 2):
        raise ValueError(
            f"{name} must be 1-D (N,) with groups, or dense 2-D (G, n); "
            f"got shape {out.values.shape}"
        )
    _check_finite(out.values, name)
    return out


def _torch_to_host(t, name):
    torch = sys.modules["torch"]
    t = t.detach()
    if t.device.type != "cpu":
        t = t.to("cpu")  # the one copy to the host
    if t.dtype in (torch.bfloat16, torch.float16):
        t = t.to(torch.float64)
    try:
        a = t.numpy()
    except TypeError:
        raise TypeError(f"{name} must hold real numbers or bool, got torch {t.dtype}") from None
    _check_dtype(a, name)
    return _as_float64(a)


def _as_float64(a):
    return np.ascontiguousarray(a, dtype=np.float64)


def _check_dtype(a, name):
    """Real or bool dtypes pass; an object array passes when every item is a real number."""
    if a.dtype.kind == "O":
        _first_non_real(a.ravel(), name, a.shape)
    elif a.dtype.kind not in _REAL_KINDS:
        raise TypeError(f"{name} must hold real numbers or bool, got dtype {a.dtype}")


def _from_sequence(seq, name):
    if isinstance(seq, (str, bytes)) or not hasattr(seq, "__len__"):
        raise TypeError(
            f"{name} must be a list, numpy array or torch tensor of numbers, "
            f"got {type(seq).__name__}"
        )
    try:
        a = np.asarray(seq)
    except ValueError as exc:
        raise ValueError(
            f"{name}: rows of a dense 2-D list must have equal length ({exc})"
        ) from None
    if a.dtype.kind not in _REAL_KINDS and a.dtype.kind != "O":
        _first_non_real(_flat_items(seq), name, a.shape)
    _check_dtype(a, name)
    return _as_float64(a)


def _flat_items(seq):
    out = []
    for item in seq:
        if isinstance(item, (list, tuple)):
            out.extend(item)
        else:
            out.append(item)
    return out


def _first_non_real(flat, name, shape):
    for i, item in enumerate(flat):
        if not isinstance(item, (numbers.Real, np.bool_)):
            pos = i if len(shape) < 2 else tuple(int(j) for j in np.unravel_index(i, shape))
            raise TypeError(
                f"{name}[{_fmt(pos)}] must be a real number or bool, "
                f"got {type(item).__name__} {item!r:.40}"
            )


def _fmt(pos):
    return ", ".join(map(str, pos)) if isinstance(pos, tuple) else str(pos)


def _check_finite(values, name):
    bad = np.isinf(values)
    if bad.any():
        i = int(np.flatnonzero(bad.ravel())[0])
        pos = i if values.ndim == 1 else np.unravel_index(i, values.shape)
        pos = pos if values.ndim == 1 else tuple(int(j) for j in pos)
        raise ValueError(f"{name}[{_fmt(pos)}] is {values.ravel()[i]}; scores must be finite")


def layout(values, groups=None, *, nan="raise", name="scores"):
    """Group the rollouts of float64 ``values`` (from :func:`coerce_scores`) as CSR.

    Parameters
    ----------
    values : numpy.ndarray
        1-D ``(N,)`` or dense 2-D ``(G, n)`` float64.
    groups : sequence of hashables, numpy array or torch tensor, optional
        Only with 1-D values: one label per rollout. None means one group (1-D) or one group
        per row (2-D).
    nan : {"raise", "drop"}
        1-D input only: NaN raises ValueError naming its index, or with "drop" it becomes a
        hole like NaN in a dense array (not in ``order``; results there are NaN).

    >>> lay = layout(np.array([[1.0, np.nan], [0.0, 1.0]]))
    >>> lay.order.tolist(), lay.offsets.tolist(), lay.position(3)
    ([0, 2, 3], [0, 1, 3], (1, 1))
    """
    if nan not in _NAN_OPTIONS:
        raise ValueError(f"nan must be one of {_NAN_OPTIONS}, got {nan!r}")
    holes = np.isnan(values)
    if values.ndim == 2:
        if groups is not None:
            raise ValueError(
                f"groups is only for 1-D {name}; dense 2-D {name} {values.shape} "
                "has one group per row"
            )
        return _dense_layout(values.shape, holes)
    any_hole = bool(holes.any())
    if any_hole and nan == "raise":
        i = int(np.flatnonzero(holes)[0])
        raise ValueError(f"{name}[{i}] is NaN; pass nan='drop' to leave such rollouts out")
    if groups is None:
        return _one_group(values.size, holes if any_hole else None)
    codes, labels = factorize(groups, values.size)
    order, offsets, first = _adv_kernels.csr(codes, labels.size, holes)
    return Layout(order, offsets, labels, first, values.shape)


def _one_group(size, holes):
    """1-D scores without groups: one group (none when empty)."""
    order = np.arange(size, dtype=np.int64) if holes is None else np.flatnonzero(~holes)
    count = 1 if size else 0
    offsets = np.array([0, order.size][: count + 1], dtype=np.int64)
    zeros = np.zeros(count, np.int64)
    return Layout(order, offsets, zeros, zeros, (size,))


def _dense_layout(shape, holes):
    rows, cols = shape
    if holes.any():
        order = np.flatnonzero(~holes.ravel()).astype(np.int64)
        offsets = np.zeros(rows + 1, np.int64)
        np.cumsum(cols - holes.sum(axis=1), out=offsets[1:])
    else:
        order = np.arange(rows * cols, dtype=np.int64)
        offsets = np.arange(rows + 1, dtype=np.int64) * cols
    labels = np.arange(rows, dtype=np.int64)
    return Layout(order, offsets, labels, labels * cols, shape)


def factorize(labels, size, *, name="groups"):
    """Codes ``0..G-1`` in order of first appearance for ``size`` hashable labels.

    Accepts a list or tuple of hashables (ints, str, bytes, uuid.UUID, tuples, ...), a 1-D
    numpy array (int, bool, float, string or object dtype) or a 1-D torch tensor. Labels are
    one group when they are equal (Python ``==`` and hash; numpy strings byte for byte).
    Fast paths: numeric and numpy string arrays by a numba hash table; object arrays whose
    groups are contiguous runs (verl's uuid arrays) by one vectorized comparison.

    Returns ``(codes, uniques)``: int64 codes ``(size,)`` and the ``(G,)`` labels (the
    input array's dtype, or object for lists and object arrays).

    Raises TypeError naming the index of an unhashable label, ValueError for a length other
    than ``size`` or a NaN label.

    >>> codes, uniques = factorize(["x", "y", "x"], 3)
    >>> codes.tolist(), uniques.tolist()
    ([0, 1, 0], ['x', 'y'])
    >>> factorize([1, [2]], 2)
    Traceback (most recent call last):
    ...
    TypeError: groups[1] is not hashable (list); group labels must be hashable
    """
    arr = _labels_array(labels, name)
    if len(arr) != size:
        raise ValueError(f"{name} has length {len(arr)} but scores have {size} rollouts")
    if len(arr) == 0:
        return np.zeros(0, np.int64), arr[:0]
    if arr.dtype.kind in "biufSUMm":
        return _factorize_fixed(arr, name)
    runs = _contiguous_runs(arr)
    if runs is not None:
        return runs
    return _factorize_hashables(arr.tolist(), name)


def _labels_array(labels, name):
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(labels, torch.Tensor):
        try:
            labels = labels.detach().to("cpu").numpy()
        except TypeError:  # bfloat16 has no numpy dtype
            raise TypeError(f"{name} must be labels numpy can hold, got a torch tensor of "
                            f"dtype {labels.dtype}") from None
    if isinstance(labels, np.ndarray):
        if labels.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {labels.shape}")
        return labels
    if isinstance(labels, (str, bytes)) or not hasattr(labels, "__len__"):
        kind = type(labels).__name__
        raise TypeError(f"{name} must be a sequence of hashable labels, got {kind}")
    # An object array keeps tuples whole and lets contiguous runs take the fast path.
    try:
        return np.fromiter(labels, dtype=object, count=len(labels))
    except (ValueError, MemoryError, OverflowError):  # range(2**62)
        raise ValueError(f"{name} must hold one label per rollout, got "
                         f"{type(labels).__name__} of {length(labels):,} values, more than "
                         "fit in memory") from None


def _factorize_fixed(arr, name):
    rows = _key_rows(arr, name)
    if rows.shape[1] == 0:  # zero-width strings: all equal
        rows = np.zeros((len(arr), 1), np.uint8)
    codes, first = _adv_kernels.factorize_rows(np.ascontiguousarray(rows))
    return codes, arr[first]


def _key_rows(arr, name):
    """Each label as a row of unsigned words; equal labels give equal rows."""
    kind = arr.dtype.kind
    if kind == "f":
        bad = np.isnan(arr)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{name}[{i}] is NaN; labels must not be NaN")
        keys = (arr.astype(np.float64) + 0.0).view(np.uint64)  # + 0.0: -0.0 and 0.0 are one
    elif kind in "biu":
        keys = arr.astype(np.int64).view(np.uint64)  # uint64 wraps: still one-to-one
    elif kind in "Mm":
        keys = arr.view(np.int64).view(np.uint64)
    else:
        size = arr.dtype.itemsize
        word = next(w for w in (np.uint64, np.uint32, np.uint8) if size % w().itemsize == 0)
        return np.ascontiguousarray(arr).view(word).reshape(len(arr), -1)
    return keys.reshape(len(arr), 1)


def _contiguous_runs(arr):
    """Codes for an object array whose equal labels form contiguous runs, else None."""
    if len(arr) == 0:
        return None
    try:
        starts = np.flatnonzero(np.asarray(arr[1:] != arr[:-1], dtype=bool)) + 1
        if 2 * starts.size > len(arr):
            return None  # runs of mostly one rollout: groups are mixed, the dict is faster
        heads = arr[np.concatenate(([0], starts))]
        if len(set(heads.tolist())) != len(heads):
            return None
    except (TypeError, ValueError):
        return None  # unhashable or odd __ne__: the general path finds and names it
    lengths = np.diff(np.concatenate(([0], starts, [len(arr)])))
    codes = np.repeat(np.arange(len(heads), dtype=np.int64), lengths)
    _check_nan_labels(heads, np.concatenate(([0], starts)), "groups")
    return codes, heads


def _factorize_hashables(seq, name):
    try:
        index = dict.fromkeys(seq)
    except TypeError:
        _raise_unhashable(seq, name)
        raise
    uniques = np.empty(len(index), dtype=object)
    for g, label in enumerate(index):
        uniques[g] = label
        index[label] = g
    codes = np.fromiter(map(index.__getitem__, seq), dtype=np.int64, count=len(seq))
    if any(isinstance(u, float) for u in index):
        first = [next(i for i, x in enumerate(seq) if x is u) for u in uniques]
        _check_nan_labels(uniques, np.array(first, np.int64), name)
    return codes, uniques


def _check_nan_labels(uniques, first, name):
    for label, pos in zip(uniques.tolist(), first.tolist(), strict=True):
        if isinstance(label, float) and label != label:
            raise ValueError(f"{name}[{pos}] is NaN; labels must not be NaN")


def _raise_unhashable(seq, name):
    for i, label in enumerate(seq):
        try:
            hash(label)
        except TypeError:
            raise TypeError(
                f"{name}[{i}] is not hashable ({type(label).__name__}); "
                "group labels must be hashable"
            ) from None
