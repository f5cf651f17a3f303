"""Shared pieces of the statistics: vocabularies, argument checks specific to scores,
grouping, duplicate ids, the clustered SE and message formatting."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

from .. import _show as SH
from .._api import k_ladder
from .._limits import MAX_N
from .._validation import brief, detached, grouped, show

METRICS = ("pass@k", "pass^k", "plugin", "g-pass@k", "mg-pass@k", "posterior",
           "posterior-population", "bayes@n")


INTERVALS = ("auto", "t", "fixed", "cluster", "percentile", "bca", "wilson", "clopper-pearson")


_BAYES = ("posterior", "posterior-population", "bayes@n")


_GPASS = ("g-pass@k", "mg-pass@k")


_LIST = 10  # how many offending ids an error message lists


_P_FLOOR = 2.2250738585072014e-308  # p-values are never reported as 0 from a finite sample


ESTIMANDS = {
    "auto": "super-population",
    "t": "super-population",
    "percentile": "super-population",
    "bca": "super-population",
    "fixed": "fixed-benchmark",
    "cluster": "super-population (clustered)",
    "wilson": "super-population",
    "clopper-pearson": "super-population",
}


CI_METHODS = {
    "auto": "hull of t and quasi-binomial Wilson (t quantile), within [0, 1]",
    "t": "t",
    "fixed": "normal",
    "cluster": "t (clusters - 1 df), CR1",
    "wilson": "Wilson score (binary outcomes)",
    "clopper-pearson": "Clopper-Pearson exact (binary outcomes)",
    "percentile": "bootstrap percentile",
    "bca": "bootstrap BCa",
}


def _label_array(x, name, size):
    what = f"{name} must be an array-like with one entry per task"
    if isinstance(x, str | bytes):
        raise TypeError(f"{what}, got {type(x).__name__} {show(x)}")
    length = SH.length(x)  # None for a 0-d array
    if length is not None and length != size:  # before converting: range(2**62)
        raise ValueError(f"{name} must have one entry per task ({size}), got "
                         f"{type(x).__name__} of {grouped(length)}")
    try:
        arr = np.asarray(detached(x))
    except (MemoryError, ValueError, TypeError, RecursionError) as e:  # ragged, 5,000 deep
        raise TypeError(f"{what}, got {type(x).__name__} {show(x)} that numpy cannot convert "
                        f"({brief(e)})") from None
    if arr.ndim == 0:
        raise TypeError(f"{what}, got {type(x).__name__} {show(x)}")
    if arr.ndim != 1 or arr.shape[0] != size:
        raise ValueError(f"{name} must have one entry per task ({size}), got shape {arr.shape}")
    return arr


#: k="all" scores every k = 1..min(n); above this many it is refused (k="ladder" is bounded).
MAX_ALL_K = 10_000


def _k_spec(k):
    """Return "all", "ladder" or a tuple of ints >= 1."""
    if isinstance(k, str):
        if k not in ("all", "ladder"):
            raise ValueError(f"k must be an int, a sequence of ints, 'all' or 'ladder', got "
                             f"{show(k)}")
        return k
    ks = _k_list(detached(k))
    if not ks:
        raise ValueError("k must hold at least one value, got an empty sequence")
    out = []
    for i, v in enumerate(ks):
        if isinstance(v, bool | np.bool_) or not isinstance(v, int | np.integer):
            raise TypeError(f"k must be an int, a sequence of ints, or 'all', got "
                            f"{type(v).__name__} {show(v)} at index {i}")
        if v < 1:
            raise ValueError(f"k must satisfy k >= 1, got k={show(int(v))} at index {i}")
        if v >= MAX_N:
            raise ValueError(f"k must satisfy k < 2**53 (k <= n, and every n is below 2**53), "
                             f"got k={show(int(v))} at index {i}")
        out.append(int(v))
    return tuple(dict.fromkeys(out))


def _k_list(k):
    """The values of a k spec as a list, refusing sizes and shapes before they are built."""
    if isinstance(k, Sequence):
        if SH.length(k) > MAX_ALL_K:
            raise ValueError(f"k must hold at most {MAX_ALL_K:,} values, got "
                             f"{type(k).__name__} of {grouped(SH.length(k))}")
        return list(k)
    try:
        return [k] if np.ndim(k) == 0 else list(np.asarray(k).reshape(-1))
    except (MemoryError, ValueError, TypeError, RecursionError) as e:
        raise TypeError(f"k must be an int, a sequence of ints, 'all' or 'ladder', got "
                        f"{type(k).__name__} {show(k)} ({brief(e)})") from None


def _k_values(ks, k_max, where=""):
    """The k of one group: ``ks`` itself, the ladder up to k_max, or 1..k_max (bounded)."""
    if ks == "ladder":
        return k_ladder(k_max)
    if ks == "all":
        if k_max > MAX_ALL_K:
            raise ValueError(f"k='all'{where} asks for every k = 1..{k_max} (the smallest n); at "
                             f"most {MAX_ALL_K} are allowed: pass k='ladder' (1, 2, 5, 10, ... "
                             f"{k_max}) or the k you need")
        return range(1, k_max + 1)
    return ks


def _seed64(rng):
    return np.uint64(rng.integers(0, 2**63, dtype=np.int64))


def _prior(prior):
    if not isinstance(prior, tuple | list) or len(prior) != 2:
        raise TypeError(f"prior must be a pair (alpha0, beta0), got {show(prior)}")
    a0, b0 = prior
    for name, v in (("prior alpha0", a0), ("prior beta0", b0)):
        if isinstance(v, bool) or not isinstance(v, int | float | np.integer | np.floating):
            raise TypeError(f"{name} must be a number, got {type(v).__name__}")
        if not (v > 0 and math.isfinite(v)):
            raise ValueError(f"{name} must be a finite number > 0, got {show(v)}")
    return float(a0), float(b0)


def _tau(tau):
    if isinstance(tau, bool) or not isinstance(tau, int | float | np.integer | np.floating):
        raise TypeError(f"tau must be a float, got {type(tau).__name__} {show(tau)}")
    if not 0.0 < tau <= 1.0:
        raise ValueError(f"tau must satisfy 0 < tau <= 1, got tau={show(tau)}")
    return float(tau)


def _py(v):
    """A Python scalar (for group labels and ids in messages)."""
    return v.item() if hasattr(v, "item") else v


def _short_tasks(k, n, short, size, where, id_word, names):
    """Why k cannot be reported: "every task has n = 1 (greedy)" when all share one n, else
    the first ids and their n."""
    if short.size == size and size and _all_equal(n):
        n0 = int(n[0])
        return (f"k={k} exceeds n: every task has n = {n0}" + (" (greedy)" if n0 == 1 else "")
                + f" ({size} tasks{where})")
    return (f"k={k} exceeds n for {short.size} of {size} tasks{where}: {id_word} "
            f"{_show(names[short])} have n={_show(n[short])}")


def _show(ids, limit=_LIST):
    ids = [_py(i) for i in ids]
    more = f" and {len(ids) - limit} more" if len(ids) > limit else ""
    return f"{ids[:limit]}{more}"


def _f(x):
    """A Python float, or None for NaN/None."""
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def _groups(cols, size):
    """Yield (group dict, row indices) in sorted label order."""
    if not cols:
        yield {}, None
        return
    invs, uniq = [], []
    for name, arr in cols:
        try:
            u, inv = np.unique(arr, return_inverse=True)
        except TypeError as e:
            raise TypeError(f"group labels {name!r} must be sortable values of one type: {e}"
                            ) from None
        invs.append(inv.reshape(-1))
        uniq.append(u)
    # Rows of label indices, not one mixed-radix code: a code wraps past 2**63 combinations.
    keys, ginv = np.unique(np.stack(invs, axis=1), axis=0, return_inverse=True)
    ginv = ginv.reshape(-1)
    order = np.argsort(ginv, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(ginv, minlength=len(keys)))])
    for g, key in enumerate(keys):
        labels = {name: _py(u[j]) for (name, _), u, j in zip(cols, uniq, key, strict=True)}
        yield labels, order[bounds[g]:bounds[g + 1]]


def _dedupe(ids, n, c, extra, duplicates, where):
    """Check or merge duplicate task ids. Returns ids, n, c, extra, merged ids."""
    try:
        # One sorted copy proves the usual case (ids from a file are unique per group) without
        # the index, inverse and counts arrays of the full np.unique: 10M ids at a third of
        # the memory.
        s = np.sort(ids)
        if len(s) < 2 or not np.any(s[1:] == s[:-1]):
            return ids, n, c, extra, []
        del s
        u, first, inv, counts = np.unique(ids, return_index=True, return_inverse=True,
                                          return_counts=True)
    except TypeError as e:
        raise TypeError(f"task ids{where} must be comparable values of one type (task_ids), "
                        f"got {brief(e)}") from None
    if len(u) == len(ids):
        return ids, n, c, extra, []
    dup = u[counts > 1]
    if duplicates == "raise":
        raise ValueError(
            f"duplicate task ids{where}: {_show(dup)} appear more than once (task_ids must be "
            f"distinct); pass duplicates='merge' to sum their counts")
    inv = inv.reshape(-1)
    n2 = np.zeros(len(u), dtype=np.int64)
    c2 = np.zeros(len(u), dtype=np.int64)
    np.add.at(n2, inv, n)
    np.add.at(c2, inv, c)
    keep = np.sort(first)
    pos = np.argsort(first)  # unique index -> order of first appearance
    ext2 = None
    if extra is not None:
        ext2 = extra[first]
        for j in np.flatnonzero(counts > 1):
            vals = extra[inv == j]
            if np.any(vals != vals[0]):
                raise ValueError(f"task id {_py(u[j])!r}{where} is merged but its rows carry "
                                 f"different cluster labels: {_show(vals)}")
        ext2 = ext2[pos]
    return ids[keep], n2[pos], c2[pos], ext2, [_py(x) for x in dup]


def _cluster_se(d, cl):
    """CR1 cluster-robust SE of the mean of d: sqrt(G/(G-1) sum_g S_g^2) / N, and G.

    S_g is the sum of the centred d_i in cluster g. The G/(G-1) factor is the CR1
    small-sample correction that statsmodels and Stata use by default.
    """
    _, cinv = np.unique(cl, return_inverse=True)
    cinv = cinv.reshape(-1)
    g = int(cinv.max()) + 1
    if g < 2 or d.size < 2:
        return None, g
    sums = np.bincount(cinv, weights=d - float(np.mean(d)), minlength=g)
    return math.sqrt(g / (g - 1) * float(np.sum(sums * sums))) / d.size, g


def _all_equal(x):
    """Whether the values are equal up to rounding (0.6 - 0.2 and 1.0 - 0.6 are both 0.4)."""
    lo, hi = np.min(x), np.max(x)  # np.ptp and np.abs would each make a copy of x
    return float(hi - lo) <= 1e-12 * max(1.0, float(abs(lo)), float(abs(hi)))


def _replace(row, **kw):
    return dataclasses.replace(row, **kw)
