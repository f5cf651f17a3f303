"""``compare`` in four steps: match the tasks, build the per-k paired rows, the max-T band
over k, then the p-value adjustments."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from .. import _validation as V
from .._types import CompareMetric, Duplicates, Missing, Unmatched
from ..errors import HintedError, Option
from . import _intervals as IV
from . import _kernels as SK
from ._combine import is_counts
from ._common import (
    _P_FLOOR,
    _all_equal,
    _cluster_se,
    _dedupe,
    _f,
    _k_spec,
    _k_values,
    _label_array,
    _py,
    _replace,
    _seed64,
    _short_tasks,
    _show,
)
from ._dist import _t_tail, norm_ppf, t_ppf
from ._paired import _bh, _holm, mcnemar, signflip_test, wilcoxon_signed_rank
from ._results import CompareResult, CompareRow
from ._task import _theta
from ._wild import PAIRS_BOOT_MIN, few_clusters_reason, wild_fields


class _CompareArgs(NamedTuple):
    """The validated arguments of :func:`compare`."""

    n_a: np.ndarray
    c_a: np.ndarray
    n_b: np.ndarray
    c_b: np.ndarray
    ks: Any
    ids_a: np.ndarray | None
    ids_b: np.ndarray | None
    cl: np.ndarray | None
    metric: str
    unmatched: str
    duplicates: str
    missing: str
    confidence: float
    n_resamples: int
    rng: np.random.Generator
    group: dict


class _Matched(NamedTuple):
    """The tasks of both runs, paired, in run A's order."""

    n_a: np.ndarray
    c_a: np.ndarray
    n_b: np.ndarray
    c_b: np.ndarray
    cl: np.ndarray | None
    names: np.ndarray
    id_word: str
    only_a: list
    only_b: list


def _task_ids_args(task_ids_a, task_ids_b, n_a, n_b):
    if (task_ids_a is None) != (task_ids_b is None):
        raise TypeError("task_ids_a and task_ids_b must be given together (or both omitted, "
                        "to match tasks by position)")
    if task_ids_a is None:
        if n_a.size != n_b.size:
            raise ValueError(f"without task ids, tasks are matched by position and the runs "
                             f"must have the same length, got {n_a.size} and {n_b.size}")
        return None, None
    return (_label_array(task_ids_a, "task_ids_a", n_a.size),
            _label_array(task_ids_b, "task_ids_b", n_b.size))


def _compare_iv(n_a, c_a, n_b, c_b, k, task_ids_a=None, task_ids_b=None, metric="pass@k",
                unmatched="raise", duplicates="raise", missing="raise", confidence=0.95,
                n_resamples=2, rng=None, seed=None, group=None, clusters=None):
    n_a, c_a = V.count_arrays(n_a, c_a, "n_a", "c_a")
    n_b, c_b = V.count_arrays(n_b, c_b, "n_b", "c_b")
    ids_a, ids_b = _task_ids_args(task_ids_a, task_ids_b, n_a, n_b)
    cl = None if clusters is None else _label_array(clusters, "clusters", n_a.size)
    ks = _k_spec(k)
    if group is None:
        group = {}
    if not isinstance(group, Mapping):
        raise TypeError(f"group must be a mapping of labels, got {type(group).__name__}")
    return _CompareArgs(
        n_a, c_a, n_b, c_b, ks, ids_a, ids_b, cl,
        V.choice(metric, "metric", ("pass@k", "pass^k", "plugin")),
        V.choice(unmatched, "unmatched", ("raise", "exclude")),
        V.choice(duplicates, "duplicates", ("raise", "merge")),
        V.choice(missing, "missing", ("raise", "report")),
        V.confidence_level(confidence), V.n_resamples_arg(n_resamples), V.normalize_rng(rng, seed),
        dict(group))


def _match_runs(n_a, c_a, n_b, c_b, ids_a, ids_b, cl, unmatched, duplicates):
    """Pair the tasks of run A and run B (by id, else by position).

    Returns a :class:`_Matched` (n_a, c_a, n_b, c_b, cl, names, id_word, only_a, only_b);
    ``cl`` (cluster labels given per row of run A) follows run A's tasks.
    """
    if ids_a is None:
        return _Matched(n_a, c_a, n_b, c_b, cl, np.arange(n_a.size), "task positions", [], [])
    ids_a, n_a, c_a, cl, _ = _dedupe(ids_a, n_a, c_a, cl, duplicates, " in run A")
    ids_b, n_b, c_b, _, _ = _dedupe(ids_b, n_b, c_b, None, duplicates, " in run B")
    try:
        common, ia, ib = np.intersect1d(ids_a, ids_b, assume_unique=True, return_indices=True)
    except TypeError as e:
        raise TypeError(f"task ids must be comparable values of one type: {e}") from None
    only_a: list = []
    only_b: list = []
    if common.size < ids_a.size or common.size < ids_b.size:
        only_a = [_py(x) for x in np.setdiff1d(ids_a, common, assume_unique=True)]
        only_b = [_py(x) for x in np.setdiff1d(ids_b, common, assume_unique=True)]
        if unmatched == "raise":
            raise HintedError(
                f"tasks must be present in both runs: {len(only_a)} only in run A "
                f"{_show(only_a)}, {len(only_b)} only in run B {_show(only_b)}; pass ",
                Option("unmatched", "exclude"), " to leave them out and report them")
    if common.size == 0:
        raise ValueError("the two runs share no task ids")
    keep = np.sort(ia)  # run A's order
    ib = ib[np.argsort(ia)]
    cl = None if cl is None else cl[keep]
    return _Matched(n_a[keep], c_a[keep], n_b[ib], c_b[ib], cl, ids_a[keep], "task ids",
                    only_a, only_b)


def compare(n_a: ArrayLike, c_a: ArrayLike, n_b: ArrayLike | None = None,
            c_b: ArrayLike | None = None, k: V.KSpec = 1, *,
            task_ids_a: ArrayLike | None = None, task_ids_b: ArrayLike | None = None,
            metric: CompareMetric | None = None, unmatched: Unmatched = "raise",
            duplicates: Duplicates = "raise", missing: Missing = "raise",
            confidence: float = 0.95, n_resamples: int = 10_000,
            rng: V.RngLike = None, seed: V.RngLike = None, group: Mapping | None = None,
            clusters: ArrayLike | None = None) -> CompareResult:
    """Paired comparison of run A and run B on the same tasks, at one or several k.

    Matched by task id (or position); per k the paired t test of D_i = thetahat_A,i -
    thetahat_B,i, the studentized bootstrap, sign-flip, Wilcoxon (symmetry, not the mean),
    McNemar (n = 1), Holm/BH over the k and a max-T band over all k (docs/statistics.md,
    "Comparing two runs"). All differences equal: the exact sign-flip p and a ``reason``.

    Parameters
    ----------
    n_a, c_a, n_b, c_b : array_like of int
        Samples and correct samples per task in run A and run B. Or two ``Counts``: their
        groups paired as :func:`passatk.archives.pair_runs` pairs them, rows named.
    k : int, sequence of int, "ladder" or "all"
        Budgets, as in :func:`passatk.score` (over both runs).
    task_ids_a, task_ids_b : array_like, optional
        Task ids of each run (both or neither).
    metric : {"pass@k", "pass^k", "plugin"}, optional
        Default ``"pass@k"`` (the Counts' own metric for two Counts).
    unmatched : {"raise", "exclude"}
        Tasks in one run only: an error, or left out and listed in ``only_in_a``/``_b``.
    duplicates : {"raise", "merge"}
    missing : {"raise", "report"}
        A k above some task's n: error, or a row with ``diff=None`` and the reason.
    confidence : float
        With ``clusters``, intervals are CR1 on clusters - 1 df.
    n_resamples : int
        Bootstrap resamples, and random sign patterns when N > 20; at most 10**7.
    rng, seed : as in :func:`passatk.score` (``seed`` is an alias of ``rng``)
    group : mapping, optional
        Labels copied into every row's ``group``.
    clusters : array_like, optional
        One cluster label per row of run A (the passage or repository of each task).

    Returns
    -------
    CompareResult

    Examples
    --------
    >>> import passatk
    >>> r = passatk.compare([10, 10, 10, 10], [9, 7, 5, 8], [10, 10, 10, 10], [6, 7, 2, 4],
    ...                     k=1, seed=0)
    >>> round(r[0].diff, 3), round(r[0].se, 3), r[0].tasks, r[0].perm_p_value
    (0.25, 0.087, 4, 0.25)
    >>> one = passatk.compare([1] * 5, [1] * 5, [1] * 5, [0] * 5, seed=0)[0]
    >>> one.p_value, round(one.mcnemar_p_value, 12)   # A always wins: exact p, never 0
    (0.0625, 0.0625)
    """
    if is_counts(n_a):
        return _compare_counts(n_a, c_a, n_b, c_b, k, dict(
            task_ids_a=task_ids_a, task_ids_b=task_ids_b, metric=metric, unmatched=unmatched,
            duplicates=duplicates, missing=missing, confidence=confidence,
            n_resamples=n_resamples, rng=rng, seed=seed, group=group, clusters=clusters))
    if n_b is None or c_b is None:
        raise TypeError("compare needs n_a, c_a, n_b and c_b, or two Counts")
    return _compare_arrays(_compare_iv(
        n_a, c_a, n_b, c_b, k, task_ids_a, task_ids_b, "pass@k" if metric is None else metric,
        unmatched, duplicates, missing, confidence, n_resamples, rng, seed, group, clusters))


def _compare_arrays(a):
    """``compare`` of two runs of arrays, ``a`` its checked arguments."""
    m = _match_runs(a.n_a, a.c_a, a.n_b, a.c_b, a.ids_a, a.ids_b, a.cl, a.unmatched,
                    a.duplicates)
    kvals = list(_k_values(a.ks, int(min(m.n_a.min(), m.n_b.min()))))
    cinv = None if m.cl is None else np.unique(m.cl, return_inverse=True)[1].reshape(-1)
    rows, diffs = _paired_rows(a, m, kvals, cinv)
    few = cinv is not None and int(cinv.max()) + 1 < PAIRS_BOOT_MIN
    crit = (_compare_boot(rows, diffs, cinv, a.confidence, a.n_resamples, a.rng)
            if diffs and not few else None)
    return CompareResult(rows=_adjust(rows, kvals), confidence=a.confidence,
                         only_in_a=tuple(m.only_a), only_in_b=tuple(m.only_b),
                         band_critical_value=crit, n_resamples=a.n_resamples)


def _compare_counts(counts_a, counts_b, n_b, c_b, k, kw):
    """``compare(counts_a, counts_b)``: each pair of groups compared on its task ids."""
    from ..archives.pairs import pair_runs  # counts -> statistics: the data's direction

    if n_b is not None or c_b is not None:
        raise TypeError("compare(counts_a, counts_b, k=...) takes k as a keyword")
    for name in ("task_ids_a", "task_ids_b", "group", "clusters"):
        if kw.pop(name) is not None:
            raise TypeError(f"compare(counts_a, counts_b) takes {name} from the Counts")
    if not is_counts(counts_b):
        raise TypeError(f"with a Counts as run A, run B must be a Counts too, got "
                        f"{type(counts_b).__name__}")
    if kw["metric"] is None:
        if "mixed" in (counts_a.metric, counts_b.metric):
            raise ValueError("a run holds both pass@k and pass^k groups; compare runs of one "
                             "metric, or pass metric=")
        if counts_a.metric != counts_b.metric:
            raise ValueError(f"run A holds {counts_a.metric} data and run B "
                             f"{counts_b.metric} data; they cannot be compared")
        kw["metric"] = counts_a.metric
    rng = V.normalize_rng(kw.pop("rng"), kw.pop("seed"))
    pairs = pair_runs(counts_a, counts_b)
    rows, only_a, only_b, out = [], [], [], None
    for p in pairs:
        out = compare(p.a.n, p.a.c, p.b.n, p.b.c, k, task_ids_a=p.a.task,
                      task_ids_b=p.b.task, group=p.group, rng=rng, **kw)
        rows.extend(out.rows)
        only_a.extend(out.only_in_a if len(pairs) == 1 else
                      [(dict(p.group), t) for t in out.only_in_a])
        only_b.extend(out.only_in_b if len(pairs) == 1 else
                      [(dict(p.group), t) for t in out.only_in_b])
    return CompareResult(rows=tuple(rows), confidence=out.confidence, only_in_a=tuple(only_a),
                         only_in_b=tuple(only_b), n_resamples=out.n_resamples,
                         band_critical_value=out.band_critical_value if len(pairs) == 1
                         else None)


def _paired_rows(a, m, kvals, cinv):
    """The per-k rows (before the band and the adjustments) and the differences behind them."""
    size = m.n_a.size
    nmin = int(min(m.n_a.min(), m.n_b.min()))
    base = {"group": a.group, "metric": a.metric, "tasks": size, "confidence": a.confidence,
            "samples_a": int(m.n_a.sum()), "samples_b": int(m.n_b.sum()),
            "estimand": "super-population paired difference (A - B)"
            + (", clustered" if m.cl is not None else "")}
    rows: dict = {}
    diffs: dict = {}
    thetas: dict = {}
    for kv in kvals:
        if kv > nmin:
            short = np.flatnonzero((m.n_a < kv) | (m.n_b < kv))
            reason = (f"k={kv} exceeds n for {short.size} of {size} tasks: {m.id_word} "
                      f"{_show(m.names[short])}")
            if _all_equal(np.concatenate([m.n_a, m.n_b])):  # one n in both runs: say it
                reason = _short_tasks(kv, m.n_a, short, size, "", m.id_word, m.names)
            if a.missing == "raise":
                raise HintedError(f"cannot compare {a.metric} at k={kv}: {reason}; pass ",
                                  Option("missing", "report"), " to report this k as missing")
            rows[kv] = CompareRow(k=kv, diff=None, se=None, ci_low=None, ci_high=None,
                                  p_value=None, reason=reason, **base)
            continue
        thetas[kv] = (_theta(a.metric, m.n_a, m.c_a, kv), _theta(a.metric, m.n_b, m.c_b, kv))
    perm = _signflip_all({kv: ta - tb for kv, (ta, tb) in thetas.items()}, a.n_resamples,
                         a.rng)
    for kv, (ta, tb) in thetas.items():
        rows[kv] = _compare_row(ta, tb, kv, a, m, cinv, base, perm[kv])
        if rows[kv].se is not None:
            diffs[kv] = ta - tb
    return {kv: rows[kv] for kv in kvals}, diffs


#: the sign patterns of one block of the random sign-flip test (bounds its memory)
_FLIP_BLOCK = 2_000_000


def _signflip_all(diffs, n_resamples, rng):
    """{k: (p, exact)}: the sign-flip test of every k, with the same random signs for all k.

    Exact enumeration for N <= 20 (as :func:`signflip_test`); above, B random patterns drawn
    once, their sums for every k as one matrix product per block: p = (1 + #{|sum_b| >=
    |sum|}) / (B + 1).
    """
    if not diffs:
        return {}
    kk = list(diffs)
    mat = np.column_stack([diffs[kv] for kv in kk])
    size = mat.shape[0]
    if size <= 20:
        return {kv: signflip_test(diffs[kv]) for kv in kk}
    target = np.abs(mat.sum(axis=0)) - 1e-10 * np.maximum(np.abs(mat).sum(axis=0), 1e-300)
    count = np.zeros(len(kk), dtype=np.int64)
    step = max(1, _FLIP_BLOCK // size)
    for lo in range(0, n_resamples, step):
        signs = rng.integers(0, 2, size=(min(step, n_resamples - lo), size), dtype=np.int8)
        sums = (2.0 * signs - 1.0) @ mat
        count += np.count_nonzero(np.abs(sums) >= target[None, :], axis=0)
    return {kv: (float((1 + count[j]) / (n_resamples + 1)), False) for j, kv in enumerate(kk)}


def _adjust(rows, kvals):
    """The rows in k order with Holm and Benjamini-Hochberg adjusted t p-values."""
    raw = [np.nan if rows[kv].p_value is None else rows[kv].p_value for kv in kvals]
    return tuple(_replace(rows[kv], p_value_holm=_f(ph), p_value_bh=_f(pb))
                 for kv, ph, pb in zip(kvals, _holm(raw), _bh(raw), strict=True))


WILCOXON_HYPOTHESIS = ("symmetry of the differences about 0 (pseudo-median 0), not mean 0; "
                       "under a skewed null with mean 0 it rejects far too often")


def _diff_fallback(diff, size, confidence):
    """Wilson with the variance bound on (D + 1)/2 in [0, 1], mapped back to [-1, 1]."""
    lo, hi = IV.wilson((diff + 1.0) / 2.0, size, norm_ppf(0.5 + confidence / 2))
    return 2.0 * lo - 1.0, 2.0 * hi - 1.0


def _paired_t(d, cinv, confidence, perm_p):
    """The t part of a compare row: a dict of fields and a reason (or None)."""
    size = d.size
    diff = float(np.mean(d))
    if cinv is None:
        se, df = math.sqrt(float(np.var(d, ddof=1)) / size), size - 1
    else:
        se, g = _cluster_se(d, cinv)
        if se is None:
            return {}, "a clustered standard error needs at least 2 clusters"
        df = g - 1
    if _all_equal(d):
        se = 0.0
    fields = {"se": se, "df": df, "clusters": None if cinv is None else df + 1}
    if se == 0.0:
        lo, hi = _diff_fallback(diff, size, confidence)
        p = 1.0 if diff == 0 else perm_p
        fields.update(p_value=p, ci_low=lo, ci_high=hi,
                      ci_method="Wilson score with the [-1, 1] variance bound (degenerate data)")
        return fields, (f"all {size} differences equal {diff:.6g}, so their sd is 0 and there "
                        f"is no t test: p_value is the sign-flip p-value and the interval the "
                        f"Wilson interval with the [-1, 1] variance bound")
    tstat = diff / se
    h = t_ppf(0.5 + confidence / 2, df) * se
    lo, hi, cut = IV.clip(diff - h, diff + h, -1.0, 1.0)
    fields.update(t_stat=tstat, p_value=max(min(2.0 * _t_tail(tstat, df), 1.0), _P_FLOOR),
                  ci_low=lo, ci_high=hi,
                  ci_method="paired t" + (", CR1 clusters" if cinv is not None else "")
                  + (", clipped to [-1, 1]" if cut else ""))
    return fields, None


def _compare_row(ta, tb, kv, a, m, cinv, base, perm):
    """One k's paired row: t (or its degenerate fallback), sign-flip, Wilcoxon, McNemar."""
    d = ta - tb
    size = d.size
    fields = {"value_a": float(np.mean(ta)), "value_b": float(np.mean(tb))}
    pp, exact = perm
    reason = "a standard error needs at least 2 tasks"
    if size >= 2:
        t_fields, reason = _paired_t(d, cinv, a.confidence, pp)
        fields.update(t_fields)
    # values equal in exact arithmetic can differ in the last bits (0.3 - 0.1 vs 0.2):
    # round before ranking so that such ties and zeros are seen as ties and zeros
    w, wp, wm = wilcoxon_signed_rank(np.round(d, 12))
    fields.update(perm_p_value=pp, perm_exact=exact, wilcoxon_stat=w, wilcoxon_p_value=wp,
                  wilcoxon_method=wm, wilcoxon_hypothesis=WILCOXON_HYPOTHESIS)
    if bool(np.all(m.n_a == 1) and np.all(m.n_b == 1)) and kv == 1 and a.metric != "plugin":
        mb = int(np.sum((m.c_a == 1) & (m.c_b == 0)))  # with n = 1, pass@1 = pass^1 = c
        mc = int(np.sum((m.c_a == 0) & (m.c_b == 1)))
        fields.update(mcnemar_b=mb, mcnemar_c=mc, mcnemar_p_value=mcnemar(mb, mc))
    for key in ("se", "ci_low", "ci_high", "p_value"):
        fields.setdefault(key, None)
    if cinv is not None:
        reason = _join(reason, *_cluster_notes(d, cinv, a))
        wild, why = wild_fields(d, cinv, a.confidence, a.n_resamples, a.rng, -1.0, 1.0, True)
        fields.update(wild)
        reason = _join(reason, why)
    return CompareRow(k=kv, diff=float(np.mean(d)), reason=reason, **base, **fields)


def _join(*parts):
    text = "; ".join(p for p in parts if p)
    return text or None


def _cluster_notes(d, cinv, a):
    """The warnings of a clustered row: few clusters, and no pairs bootstrap below 10."""
    g = int(cinv.max()) + 1
    notes = [few_clusters_reason(g)]
    if g < PAIRS_BOOT_MIN:
        notes.append(f"the cluster pairs bootstrap (boot_low/boot_high, band_low/band_high) "
                     f"is not offered below {PAIRS_BOOT_MIN} clusters")
    return notes


#: resamples x rows up to which the bootstrap sums are one matrix product (the index
#: matrix of the draws is held: 8 bytes each); above, the streaming kernel
_MATMUL_DRAWS = 12_000_000
_BLOCK = 1024


def _resampled_sums(cols, seed, n_resamples):
    """Sums of the columns of ``cols`` over each bootstrap resample of its rows.

    The resamples are those of ``boot_means`` (the same indices from the same seed); for
    moderate sizes the sums are the product of the resample counts with ``cols``, else
    ``boot_means`` streams them.
    """
    g = cols.shape[0]
    cols = np.ascontiguousarray(cols)
    if g * n_resamples > _MATMUL_DRAWS:
        return SK.boot_means(cols, seed, n_resamples) * g
    idx = SK.boot_indices(g, seed, n_resamples)
    out = np.empty((n_resamples, cols.shape[1]))
    for lo in range(0, n_resamples, _BLOCK):
        blk = idx[lo:lo + _BLOCK]
        rows = np.arange(blk.shape[0])[:, None] * g
        counts = np.bincount((rows + blk).ravel(), minlength=blk.shape[0] * g)
        out[lo:lo + _BLOCK] = counts.reshape(blk.shape[0], g).astype(np.float64) @ cols
    return out


def _boot_t(mat, cinv, confidence, n_resamples, rng):
    """Studentized bootstrap over tasks (or clusters) of the column means of ``mat``.

    Returns (means, ses, t) per resample: the resampled mean of each column, its CR1 SE
    within the resample (sd/sqrt(N) for single-task clusters), and (mean* - mean) / se*.
    """
    if cinv is None:
        cinv = np.arange(mat.shape[0])
    g = int(cinv.max()) + 1
    sums = np.column_stack([np.bincount(cinv, weights=mat[:, j], minlength=g)
                            for j in range(mat.shape[1])])
    size = np.bincount(cinv, minlength=g).astype(np.float64)[:, None]
    kk = mat.shape[1]
    if g == mat.shape[0]:  # one task per cluster: sum(size * x) = sum(x), sum(size) = g
        reps = _resampled_sums(np.hstack([sums, sums * sums]), _seed64(rng), n_resamples)
        s, s2, sn = reps[:, :kk], reps[:, kk:], reps[:, :kk]
        tot = tot2 = np.full((n_resamples, 1), float(g))
    else:
        cols = np.hstack([sums, sums * sums, sums * size, size, size * size])
        reps = _resampled_sums(cols, _seed64(rng), n_resamples)
        s, s2, sn = reps[:, :kk], reps[:, kk:2 * kk], reps[:, 2 * kk:3 * kk]
        tot, tot2 = reps[:, 3 * kk:3 * kk + 1], reps[:, 3 * kk + 1:]
    mean = s / tot
    ss = np.maximum(s2 - 2.0 * mean * sn + mean * mean * tot2, 0.0)
    se = np.sqrt(g / (g - 1) * ss) / tot
    est = mat.mean(axis=0)
    dev = mean - est
    tol = 1e-10 * max(float(np.max(np.abs(mat))), 1e-300)
    with np.errstate(divide="ignore", invalid="ignore"):
        tt = np.where(se > 0, dev / se, np.where(np.abs(dev) <= tol, 0.0, np.sign(dev) * 1e300))
    return mean, se, tt


def _compare_boot(rows, diffs, cinv, confidence, n_resamples, rng):
    """Fill the studentized bootstrap interval and the max-T band; return the critical value."""
    kk = list(diffs)
    mat = np.ascontiguousarray(np.column_stack([diffs[kv] for kv in kk]))
    _, _, tt = _boot_t(mat, cinv, confidence, n_resamples, rng)
    ses = np.array([rows[kv].se for kv in kk])
    live = ses > 0
    crit = None
    if live.any():
        crit = float(np.quantile(np.max(np.abs(tt[:, live]), axis=1), confidence))
        crit = math.inf if crit >= 1e300 else crit  # the sentinel of _boot_t: no finite band
    for j, kv in enumerate(kk):
        row = rows[kv]
        if not live[j]:  # degenerate: the fallback interval stands in for both
            rows[kv] = _replace(row, boot_low=row.ci_low, boot_high=row.ci_high,
                                band_low=row.ci_low, band_high=row.ci_high)
            continue
        # symmetric bootstrap-t: the |T*| quantile (two-sided error O(1/N^2), and at N = 20
        # closer to its level than the equal-tailed bootstrap-t or the percentile interval)
        q = float(np.quantile(np.abs(tt[:, j]), confidence))
        blo, bhi, _ = IV.clip(row.diff - q * row.se, row.diff + q * row.se, -1.0, 1.0)
        half = crit * row.se
        lo, hi, _ = IV.clip(row.diff - half, row.diff + half, -1.0, 1.0)
        rows[kv] = _replace(row, boot_low=blo, boot_high=bhi, band_low=lo, band_high=hi)
    return crit
