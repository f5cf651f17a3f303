"""``group_metrics``: exact per-group metrics for RL logging and validation, in one call.

Validation and names live here; the arithmetic is in ``passatk._rl_kernels`` (formulas and
citations in docs/rl.md). Inputs go through ``_groups`` (coercion, factorization, CSR).
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
import types
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import numpy as np

from .. import _rl_kernels as R
from .._jit import threads_usable
from .._limits import MAX_N
from .._lnfact import table
from .._validation import finite_float, grouped, length, show
from ..stats._gpass import threshold as gpass_threshold
from . import _results
from ._groups import coerce_scores, factorize, layout

if TYPE_CHECKING:
    from .._types import NanRule, NoneAnswers, RLMetric, RLMetricEstimator, RLShortGroups
    from ._results import GroupMetrics

METRICS = ("pass@k", "pass^k", "best@k", "worst@k", "maj@k", "mean@n", "std@n", "g-pass@k",
           "mg-pass@k")
DEFAULT_METRICS = ("pass@k", "pass^k", "best@k", "worst@k", "mean@n", "std@n")
BINARY = ("pass@k", "pass^k", "g-pass@k", "mg-pass@k")
DEFAULT_TAU = (0.25, 0.5, 0.75, 1.0)
ESTIMATORS = ("unbiased", "verl")
SHORT_GROUPS = ("missing", "exclude")
NONE_ANSWERS = ("abstain", "vote", "skip")
_PARALLEL = 1 << 20  # rollouts x budgets below which one thread beats starting the pool
_PARALLEL_MAJ = 64  # groups from which maj@k's dynamic programs share out over threads


def group_metrics(scores: Any, groups: Any = None, *, k: Any = None,
                  metrics: RLMetric | Sequence[RLMetric] | Literal["all"] | None = None,
                  threshold: float | None = None, answers: Any = None,
                  estimator: RLMetricEstimator = "unbiased", tau: Any = None,
                  nan: NanRule = "raise", short_groups: RLShortGroups = "missing",
                  none_answers: NoneAnswers = "abstain") -> GroupMetrics:
    """Exact pass@k, pass^k, best@k, worst@k, maj@k, mean@n, std@n, G-Pass@k and
    mG-Pass@k for every group of rollouts, with means over groups and standard errors.

    Parameters
    ----------
    scores : array_like
        1-D ``(N,)`` scores with ``groups``, or a dense 2-D ``(G, n)`` array whose rows are
        groups and whose NaN entries are unscorable rollouts. Lists, numpy arrays of any
        real or bool dtype, and torch tensors (CPU; CUDA by one copy to the host).
    groups : sequence of hashables, optional
        1-D input: the group of each rollout (ints, str, bytes, uuid, ...; groups may be
        ragged and interleaved). None makes the whole 1-D input one group.
    k : int or sequence of int, optional
        The budgets. Default: 1, 2, 4, ... up to the smallest group, plus that size.
        A group with fewer than k scored rollouts is missing for that k (NaN, with the
        reason in ``missing``), never 1.0.
    metrics : sequence of str, optional
        Any of ``"pass@k"``, ``"pass^k"``, ``"best@k"``, ``"worst@k"``, ``"maj@k"``,
        ``"mean@n"``, ``"std@n"``, ``"g-pass@k"``, ``"mg-pass@k"``, or ``"all"``.
        Default: pass@k, pass^k, best@k, worst@k, mean@n, std@n, and maj@k when
        ``answers`` is given.
    threshold : float, optional
        A rollout counts as correct for pass@k, pass^k, G-Pass@k and mG-Pass@k when its
        score is ``>= threshold``, compared in the scores' own float type (a float32 0.7
        passes threshold=0.7). Without it those metrics need scores that are 0 or 1
        (bool, int, or float 0.0 and 1.0). best@k, worst@k, maj@k, mean@n and std@n always
        use the scores themselves.
    answers : sequence of hashables, optional
        For maj@k: each rollout's final answer (the same shape as ``scores``); None means
        the rollout gave no answer, so it never votes (a draw with no answer scores 0).
    estimator : {"unbiased", "verl"}
        "unbiased" averages over all k-subsets drawn without replacement. "verl" gives,
        for best@k, worst@k and maj@k, the exact mean and std (columns ``".../std"``) of
        verl's with-replacement bootstrap, without sampling; it is biased low.
    tau : sequence of float, optional
        Thresholds in [0, 1] for G-Pass@k_tau; default (0.25, 0.5, 0.75, 1.0). It needs
        ceil(tau k) successes, at least one; a tau k within rounding of an integer is that
        integer (0.1 * 10 needs 1, (5/7) * 7 needs 5), as in ``passatk.score``.
    nan : {"raise", "drop"}
        1-D input: NaN is an error naming its index, or with "drop" an unscored rollout.
    short_groups : {"missing", "exclude"}
        What the mean over groups does when some group has fewer than k rollouts: stays
        missing (NaN), or averages the groups that have them (``used`` says how many).
    none_answers : {"abstain", "vote", "skip"}
        maj@k with a None answer: it never votes and a draw with no answer scores 0
        ("abstain"); None is an answer like any other (verl <= 0.6); or a group with a
        None answer has no maj@k, missing with the reason (verl 0.9).

    Returns
    -------
    GroupMetrics
        Frozen: ``per_group``, ``mean``, ``se``, ``used``, ``missing``, ``summary()`` (a
        flat dict such as ``{"pass@4/mean": ..., "pass@4/se": ...}``) and ``to_pandas()``.

    Examples
    --------
    >>> from passatk import rl
    >>> r = rl.group_metrics([[1, 0, 0, 1], [0, 0, 0, 1]], k=[1, 2])
    >>> r.names[:4]
    ('pass@1', 'pass@2', 'pass^1', 'pass^2')
    >>> r.values["pass@2"]
    array([0.83333333, 0.5       ])
    >>> round(r.summary()["pass@2/mean"], 4), round(r.summary()["pass@2/se"], 4)
    (0.6667, 0.1667)
    >>> r = rl.group_metrics([1, 0, 1], ["a", "a", "b"], k=2, metrics=["pass@k"])
    >>> r.values["pass@2"], r.mean["pass@2"]
    (array([ 1., nan]), nan)
    >>> print(r.missing["pass@2"])  # doctest: +NORMALIZE_WHITESPACE
    1 of 2 groups have fewer than 2 scored rollouts (first: group 'b' with n=1); the mean
    over groups is missing (short_groups='exclude' averages the 1 groups that have them)
    """
    plan = _plan(metrics, answers, estimator, short_groups, threshold)
    if none_answers not in NONE_ANSWERS:
        raise ValueError(f"none_answers must be one of {NONE_ANSWERS}, got {none_answers!r}")
    s = coerce_scores(scores)
    lay = layout(s.values, groups, nan=nan)
    x = s.values.reshape(-1)
    ks = _ks(k, lay)
    taus = _taus(tau) if "g-pass@k" in plan else ()
    cols = _columns(plan, tuple(ks.tolist()), taus, estimator)
    if threshold is None and cols.binary:
        _check_binary(x, lay)
    G = lay.offsets.size - 1
    sv = np.empty(x.size)
    n = np.empty(G, np.int64)
    c = np.zeros(G, np.int64)
    out = np.empty((R.ROW_GPASS + len(taus), ks.size, G))
    th, tl = table()
    big = x.size * ks.size >= _PARALLEL
    kernel = R.group_pass_parallel if big and threads_usable() else R.group_pass
    kernel(x, lay.order, lay.offsets, ks, _threshold(s, threshold), cols.want, cols.j0, th, tl,
           sv, n, c, out)
    full = out.reshape(out.shape[0] * ks.size, G)
    unanswered = None
    if "maj@k" in plan:
        *maj, unanswered = _maj(x, n, lay, ks, answers, estimator, none_answers)
        full = np.concatenate((full, *maj))
    matrix = full[cols.source]
    _bound(matrix, cols.names, _extremes(sv, lay.offsets, n), unanswered, none_answers)
    res = _finish(lay, n, cols, matrix, estimator, short_groups,
                  unanswered if none_answers == "skip" else None)
    if estimator == "unbiased" and (threshold is None or 0.0 < threshold <= 1.0) \
            and R.first_non_binary(x) < 0:
        object.__setattr__(res, "repeats", _repeats(cols.names))
    return res


def _repeats(names):
    """For 0/1 scores: best@k is pass@k and worst@k is pass^k, by definition."""
    have = set(names)
    out = {}
    for name in names:
        head, _, k = name.partition("@")
        twin = {"best": f"pass@{k}", "worst": f"pass^{k}"}.get(head)
        if twin in have:
            out[name] = twin
    return types.MappingProxyType(out)


def _extremes(sv, offsets, n):
    """Each group's smallest and largest score (NaN for a group with none)."""
    lo = np.full(n.size, np.nan)
    hi = np.full(n.size, np.nan)
    has = n > 0
    start = offsets[:-1][has]
    lo[has] = sv[start]
    hi[has] = sv[start + n[has] - 1]
    return lo, hi


def _bound(matrix, names, extremes, unanswered, none_answers):
    """Rounding must not take a value outside what its definition allows.

    best@k, worst@k, maj@k and mean@n are averages of scores of the group, so they lie in
    [min, max] of its scores, and equal the score exactly in a group of equal scores (with
    no None answer: a draw without an answer scores 0 under "abstain", so 0 joins the
    range); every std is >= 0, and exactly 0 for a group of equal scores.
    """
    lo, hi = extremes
    constant = lo == hi
    lo_maj, hi_maj, constant_maj = lo, hi, constant
    if unanswered is not None and none_answers == "abstain":
        lo_maj = np.where(unanswered, np.minimum(lo, 0.0), lo)
        hi_maj = np.where(unanswered, np.maximum(hi, 0.0), hi)
        constant_maj = lo_maj == hi_maj
    for i, name in enumerate(names):
        head = name.split("@")[0]
        row = matrix[i]
        if name.endswith("/std") or name == "std@n":
            np.maximum(row, 0.0, out=row, where=~np.isnan(row))
            row[(constant_maj if head == "maj" else constant) & ~np.isnan(row)] = 0.0
        elif head in ("best", "worst") or name == "mean@n":
            np.clip(row, lo, hi, out=row)
        elif head == "maj":
            np.clip(row, lo_maj, hi_maj, out=row)


class _Columns(NamedTuple):
    names: tuple  # column names
    source: np.ndarray  # row of each column in the kernels' outputs, stacked
    index: types.MappingProxyType  # name -> column
    keys: tuple  # summary() keys
    want: np.ndarray  # group_pass switches
    j0: np.ndarray  # successes each G-Pass@k_tau needs, (taus, ks)
    binary: bool  # whether a binary metric is asked for


@functools.lru_cache(maxsize=256)
def _columns(plan, ks, taus, estimator):
    """Names and output rows of every column, in the order of ``plan``, then k, then tau.

    Depends on the options only, so it is cached (bounded; lru_cache is thread-safe).
    """
    K, T, verl = len(ks), len(taus), estimator == "verl"
    maj0 = (R.ROW_GPASS + T) * K
    rows = {"pass@k": (R.ROW_PASS, None), "pass^k": (R.ROW_HAT, None),
            "best@k": (R.ROW_BEST, R.ROW_BEST_SD), "worst@k": (R.ROW_WORST, R.ROW_WORST_SD),
            "mg-pass@k": (R.ROW_MG, None), "maj@k": (None, None)}
    names, source = [], []
    for metric in plan:
        if metric in ("mean@n", "std@n"):
            names.append(metric)
            source.append((R.ROW_MEAN if metric == "mean@n" else R.ROW_STD) * K)
            continue
        for j, k in enumerate(ks):
            if metric == "g-pass@k":
                names.extend(f"g-pass@{k}_{tau!r}" for tau in taus)
                source.extend((R.ROW_GPASS + t) * K + j for t in range(T))
                continue
            row, sd = rows[metric]
            names.append(f"{metric[:-1]}{k}")
            source.append(maj0 + j if metric == "maj@k" else row * K + j)
            if verl and metric in ("best@k", "worst@k", "maj@k"):
                names.append(f"{metric[:-1]}{k}/std")
                source.append(maj0 + K + j if metric == "maj@k" else sd * K + j)
    keys = []
    for name in names:
        keys.extend([name] if name.endswith("/std") else [f"{name}/mean", f"{name}/se"])
    return _Columns(tuple(names), np.array(source, np.int64),
                    types.MappingProxyType({nm: i for i, nm in enumerate(names)}),
                    tuple(keys), _want(plan, estimator), _j0(taus, ks),
                    not set(plan).isdisjoint(BINARY))


def _want(plan, estimator):
    want = np.zeros(7, np.int64)
    want[R.WANT_C] = not set(plan).isdisjoint(BINARY)
    want[R.WANT_PASS] = "pass@k" in plan
    want[R.WANT_HAT] = "pass^k" in plan
    want[R.WANT_ORDER] = "best@k" in plan or "worst@k" in plan
    want[R.WANT_BOOT] = estimator == "verl"
    want[R.WANT_GPASS] = "g-pass@k" in plan or "mg-pass@k" in plan
    want[R.WANT_MEAN] = "mean@n" in plan or "std@n" in plan
    want.flags.writeable = False
    return want


def _j0(taus, ks):
    """Successes G-Pass@k_tau needs: ceil(tau k), at least 1, by the statistics layer's rule."""
    rows = [[gpass_threshold(t, k) for k in ks] for t in taus]
    j0 = np.array(rows, np.int64).reshape(len(taus), len(ks))
    j0.flags.writeable = False
    return j0


def _plan(metrics, answers, estimator, short_groups, threshold):
    if not isinstance(estimator, str) or estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {ESTIMATORS}, got {show(estimator)}")
    if not isinstance(short_groups, str) or short_groups not in SHORT_GROUPS:
        raise ValueError(f"short_groups must be one of {SHORT_GROUPS}, got {show(short_groups)}")
    _check_threshold(threshold)
    if metrics is None:
        return DEFAULT_METRICS + (("maj@k",) if answers is not None else ())
    if isinstance(metrics, str):
        metrics = METRICS if metrics == "all" else (metrics,)
    out = []
    for i, m in enumerate(_bounded(metrics, "metrics", 4 * len(METRICS))):
        if not isinstance(m, str) or m not in METRICS:
            raise ValueError(f"metrics[{i}] = {show(m)} is not a metric; choose from {METRICS}")
        if m not in out:
            out.append(m)
    if "maj@k" in out and answers is None:
        raise ValueError("maj@k needs answers: one hashable per rollout (None: no answer)")
    return tuple(out)


def _check_threshold(threshold):
    if threshold is None:
        return
    if (isinstance(threshold, bool) or not isinstance(threshold, int | float | np.number)
            or not math.isfinite(finite_float(threshold, "threshold"))):
        raise TypeError(f"threshold must be a finite real number, got {show(threshold)}")


def _ks(k, lay):
    """The sorted distinct budgets, checked; by default the power-of-two ladder."""
    if k is None:
        return _ladder(R.smallest_group(lay.offsets))
    items = [k] if isinstance(k, int | np.integer) and not isinstance(k, bool) else k
    if isinstance(k, bool | str | bytes) or not hasattr(items, "__iter__"):
        raise TypeError(f"k must be an int or a sequence of ints, got {type(k).__name__} "
                        f"{show(k)}")
    out = []
    for i, v in enumerate(_bounded(items, "k", _MAX_KS)):
        where = "k" if items is not k else f"k[{i}]"
        if isinstance(v, bool) or not isinstance(v, int | np.integer):
            raise TypeError(f"{where} must be an int, got {type(v).__name__} {show(v)}")
        if v < 1:
            raise ValueError(f"{where} must be >= 1, got {show(v)}")
        if v >= MAX_N:  # also keeps it an int64 for the kernels
            raise ValueError(f"{where} must be < 2**53 (no group is larger), got {show(v)}")
        out.append(operator.index(v))
    if not out:
        raise ValueError("k must hold at least one budget")
    ks = np.array(sorted(set(out)), np.int64)
    ks.flags.writeable = False  # like the cached ladder: one array type for the kernels
    return ks


#: The most budgets one call may ask for (``k=range(2**62)`` would never finish).
_MAX_KS = 10_000


def _bounded(items, name, limit):
    """The first ``limit`` values of the iterable ``items`` as a list, or a ValueError naming
    ``name`` when it holds more (read lazily: a range of 2**62 or a generator never ends)."""
    try:
        out = list(itertools.islice(iter(items), limit + 1))
    except TypeError:  # a 0-d array
        raise TypeError(f"{name} must be a sequence, got {type(items).__name__} "
                        f"{show(items)}") from None
    if len(out) > limit:
        size = f"{grouped(length(items))} values" if length(items) is not None else "more"
        raise ValueError(f"{name} must hold at most {limit:,} values, got {size}")
    return out


@functools.lru_cache(maxsize=64)
def _ladder(top):
    """1, 2, 4, ... below the smallest group, and its size."""
    if top == 0:
        raise ValueError("scores hold no scored rollout, so there is no default k")
    ladder = [1 << i for i in range(top.bit_length()) if (1 << i) < top]
    out = np.array([*ladder, top], np.int64)
    out.flags.writeable = False
    return out


def _taus(tau):
    taus = DEFAULT_TAU if tau is None else tau
    if isinstance(taus, int | float):
        taus = (taus,)
    out = []
    for i, t in enumerate(taus):
        if isinstance(t, bool) or not isinstance(t, int | float | np.number):
            raise TypeError(f"tau[{i}] must be a number in [0, 1], got {t!r}")
        if not 0.0 <= float(t) <= 1.0:
            raise ValueError(f"tau[{i}] must satisfy 0 <= tau <= 1, got {t!r}")
        if float(t) not in out:
            out.append(float(t))
    return tuple(out)


def _threshold(s, threshold):
    """The threshold rounded to the scores' own float type, so that a float32 score of 0.7
    passes threshold=0.7; 1.0 (a score of 1 is correct) without one."""
    if threshold is None:
        return 1.0
    if s.kind == "torch" and s.dtype.is_floating_point:
        torch = __import__("sys").modules["torch"]
        return float(torch.tensor(threshold, dtype=s.dtype).item())
    if s.kind == "numpy" and s.dtype.kind == "f":
        return float(np.asarray(threshold, dtype=s.dtype))
    return float(threshold)


def _check_binary(x, lay):
    """Without a threshold, the binary metrics need every score to be 0 or 1."""
    i = R.first_non_binary(x)
    if i >= 0:
        pos = lay.position(i)
        where = pos if isinstance(pos, int) else ", ".join(map(str, pos))
        raise ValueError(
            f"scores[{where}] = {float(x[i])!r} is not 0 or 1: pass@k, pass^k, g-pass@k and "
            "mg-pass@k need binary scores (bool, 0/1, 0.0/1.0), or threshold= to say "
            "which scores count as correct; or choose metrics= without them"
        )


def _maj(x, n, lay, ks, answers, estimator, none_answers):
    """(mean, std) per group and k of maj@k (std only for the verl bootstrap), and which
    groups have a scored rollout without an answer."""
    codes = _answer_codes(answers, lay.shape, x.size, none_answers == "vote")
    G = n.size
    cls = (np.empty(x.size, np.int64), np.empty(x.size), np.empty(x.size),
           np.empty(G, np.int64), np.empty(G, np.int64))
    mean = np.empty((ks.size, G))
    sd = np.empty((ks.size, G))
    verl = estimator == "verl"
    if verl:
        _check_maj_size(n, ks, lay, R.MAJ_MAX_K_VERL, "k")
    else:
        _check_maj_size(n, ks, lay, R.MAJ_MAX_N, "n")
    th, tl = table()
    kernel = R.maj_parallel if G >= _PARALLEL_MAJ and threads_usable() else R.maj
    kernel(x, codes, lay.order, lay.offsets, n, ks, verl, th, tl, cls, mean, sd)
    scored = lay.order[~np.isnan(x[lay.order])]
    owner = np.repeat(np.arange(G), np.diff(lay.offsets))[~np.isnan(x[lay.order])]
    unanswered = np.bincount(owner[codes[scored] < 0], minlength=G) > 0
    if none_answers == "skip":
        mean[:, unanswered] = np.nan
        sd[:, unanswered] = np.nan
    return mean, sd, unanswered


def _check_maj_size(n, ks, lay, limit, what):
    size = np.minimum(n, ks.max()) if what == "k" else n
    if size.size and int(size.max()) > limit:
        g = int(np.argmax(size))
        raise ValueError(
            f"maj@k: group {_label(lay.labels, g)!r} has {int(n[g])} scored rollouts; maj@k is "
            f"computed for {what} <= {limit} (its exact counts must fit in float64)"
        )


def _answer_codes(answers, shape, size, none_votes=False):
    """int64 code per flat position; None (no answer) becomes -1 unless ``none_votes``."""
    flat = answers
    if len(shape) == 2:
        arr = _answers_2d(answers, shape)
        flat = arr.reshape(-1)
    codes, uniques = factorize(flat, size, name="answers")
    if uniques.dtype == object and not none_votes:
        for i, u in enumerate(uniques.tolist()):
            if u is None:
                codes = np.where(codes == i, -1, codes)
                break
    return codes


def _answers_2d(answers, shape):
    torch = __import__("sys").modules.get("torch")
    if torch is not None and isinstance(answers, torch.Tensor):
        answers = answers.detach().to("cpu").numpy()
    if isinstance(answers, np.ndarray):
        if answers.shape != shape:
            raise ValueError(f"answers has shape {answers.shape} but scores have {shape}")
        return answers
    arr = np.empty(shape, dtype=object)
    if len(answers) != shape[0]:
        raise ValueError(f"answers has {len(answers)} rows but scores have {shape[0]}")
    for g, row in enumerate(answers):
        if len(row) != shape[1]:
            raise ValueError(f"answers[{g}] has length {len(row)} but scores rows have "
                             f"{shape[1]}")
        arr[g, :] = list(row)
    return arr


def _finish(lay, n, cols, matrix, estimator, short_groups, skipped=None):
    M = matrix.shape[0]
    mean = np.empty(M)
    se = np.empty(M)
    used = np.empty(M, np.int64)
    short = R.column_stats(matrix, short_groups == "exclude", mean, se, used)
    missing = {}
    if short:
        for i, name in enumerate(cols.names):
            if used[i] < n.size:
                missing[name] = _reason(name, matrix[i], n, lay.labels, short_groups,
                                        int(used[i]), skipped)
    return _results.GroupMetrics(lay.labels, n, cols.names, matrix, mean, se, used, missing,
                                 estimator, short_groups, cols.index, cols.keys)


def _reason(name, row, n, labels, short_groups, used, skipped=None):
    bad = np.isnan(row)
    g = int(np.flatnonzero(bad)[0])
    k = _k_of(name)
    if skipped is not None and name.startswith("maj@") and skipped[g]:
        what = (f"{int(bad.sum())} of {n.size} groups have no maj@k: a rollout without an "
                "answer (none_answers='skip', verl 0.9's rule), or fewer than k rollouts")
    elif k is None or n[g] == 0:
        what = f"{int(bad.sum())} of {n.size} groups have no scored rollouts"
    else:
        what = f"{int(bad.sum())} of {n.size} groups have fewer than {k} scored rollouts"
    what += f" (first: group {_label(labels, g)!r} with n={int(n[g])})"
    if short_groups == "exclude":
        return f"{what}; the mean over groups averages the other {used}"
    return (f"{what}; the mean over groups is missing (short_groups='exclude' averages "
            f"the {used} groups that have them)")


def _k_of(name):
    head = name.split("/")[0].split("_")[0].replace("^", "@")  # pass^4 as pass@4
    tail = head.rpartition("@")[2]
    return int(tail) if tail.isdigit() else None


def _label(labels, g):
    v = labels[g]
    return v.item() if isinstance(v, np.generic) else v
