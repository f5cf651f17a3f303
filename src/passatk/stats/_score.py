"""``score``: the per-task estimate, then the standard errors, then the interval."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from .._show import length
from .._types import Duplicates, Interval, Metric, Missing
from .._validation import (
    KSpec,
    RngLike,
    choice,
    confidence_level,
    count_arrays,
    n_resamples_arg,
    normalize_rng,
    show,
)
from ..errors import HintedError, Option
from . import _combine as CMB
from . import _intervals as IV
from . import _kernels as SK
from ._common import (
    _BAYES,
    CI_METHODS,
    ESTIMANDS,
    INTERVALS,
    METRICS,
    _all_equal,
    _cluster_se,
    _dedupe,
    _groups,
    _k_spec,
    _k_values,
    _label_array,
    _prior,
    _replace,
    _seed64,
    _short_tasks,
    _tau,
)
from ._dist import norm_cdf, norm_ppf, t_ppf
from ._results import ScoreResult, ScoreRow
from ._task import _BLOCK, _theta, _vhat_sum


def _quantile(sorted_reps, prob):
    return float(np.quantile(sorted_reps, prob))


def _boot_intervals(theta, reps, confidence):
    """Percentile and BCa intervals for the mean of ``theta`` from bootstrap means ``reps``.

    Returns ((pct_low, pct_high), (bca_low, bca_high) or None, reason or None).
    """
    alpha = 1.0 - confidence
    reps = np.sort(reps)
    b = reps.size
    pct = (_quantile(reps, alpha / 2), _quantile(reps, 1 - alpha / 2))
    mean = float(np.mean(theta))
    d = theta - mean
    s2 = float(np.sum(d * d))
    if s2 == 0.0:
        return pct, (mean, mean), None
    scale = max(float(np.max(np.abs(theta))), 1e-300)
    tol = 1e-10 * scale
    less = int(np.searchsorted(reps, mean - tol, side="left"))
    eq = int(np.searchsorted(reps, mean + tol, side="right")) - less
    prop = (less + 0.5 * eq) / b
    if not 0.0 < prop < 1.0:
        return pct, None, "BCa is undefined: every bootstrap mean lies on one side of the estimate"
    z0 = norm_ppf(prop)
    acc = float(np.sum(d**3)) / (6.0 * s2**1.5)
    ends = []
    for z in (norm_ppf(alpha / 2), norm_ppf(1 - alpha / 2)):
        w = z0 + z
        den = 1.0 - acc * w
        if den <= 0:
            return pct, None, "BCa is undefined: the acceleration is too large for this level"
        ends.append(_quantile(reps, norm_cdf(z0 + w / den)))
    return pct, (ends[0], ends[1]), None


class _ScoreArgs(NamedTuple):
    """The validated arguments of :func:`score`."""

    n: np.ndarray
    c: np.ndarray
    ks: Any
    metrics: tuple[str, ...]
    ids: np.ndarray | None
    cols: list
    cl: np.ndarray | None
    interval: str
    confidence: float
    n_resamples: int
    rng: np.random.Generator
    prior: tuple[float, float]
    missing: str
    duplicates: str
    tau: float


class _Group(NamedTuple):
    """The tasks of one group, after duplicate ids were checked or merged."""

    labels: dict
    n: np.ndarray
    c: np.ndarray
    cl: np.ndarray | None
    names: np.ndarray
    id_word: str
    where: str


def _metrics_arg(metric, ks, k):
    if isinstance(metric, Sequence) and not isinstance(metric, str) and length(metric) > 100:
        raise ValueError(f"metric must name at most 100 metrics, got {show(metric)}")
    metrics = (metric,) if isinstance(metric, str) else tuple(metric) if isinstance(
        metric, Sequence) else None
    if not metrics:
        raise TypeError(f"metric must be a str or a non-empty sequence of str, got "
                        f"{show(metric)}")
    for m in metrics:
        choice(m, "metric", METRICS)
    if "bayes@n" in metrics and ks not in ("all", "ladder", (1,)):
        raise ValueError(f"metric 'bayes@n' is the posterior mean of the pass rate and needs "
                         f"k=1, got k={show(k)}")
    return metrics


def _group_columns(groups, size):
    if groups is None:
        return []
    if isinstance(groups, Mapping):
        items = list(groups.items())
    elif hasattr(groups, "columns") and hasattr(groups, "__getitem__"):  # a DataFrame
        items = [(col, np.asarray(groups[col])) for col in groups.columns]
    else:
        items = [("group", groups)]
    cols = []
    for name, col in items:
        if not isinstance(name, str):
            raise TypeError(f"group names must be str, got {type(name).__name__} {name!r}")
        cols.append((name, _label_array(col, f"groups[{name!r}]", size)))
    return cols


def _score_iv(n, c, k, metric, task_ids, groups, clusters, interval, confidence,
              n_resamples, rng, seed, prior, missing, duplicates, tau):
    n, c = count_arrays(n, c)
    ks = _k_spec(k)
    metrics = _metrics_arg(metric, ks, k)
    ids = None if task_ids is None else _label_array(task_ids, "task_ids", n.size)
    cols = _group_columns(groups, n.size)
    cl = None if clusters is None else _label_array(clusters, "clusters", n.size)
    choice(interval, "interval", INTERVALS)
    if interval == "cluster" and cl is None:
        raise ValueError("interval='cluster' needs cluster labels: pass clusters=...")
    return _ScoreArgs(
        n, c, ks, metrics, ids, cols, cl, interval, confidence_level(confidence),
        n_resamples_arg(n_resamples), normalize_rng(rng, seed), _prior(prior),
        choice(missing, "missing", ("raise", "report")),
        choice(duplicates, "duplicates", ("raise", "merge")), _tau(tau))


def score(n: ArrayLike, c: ArrayLike | None = None, k: KSpec = 1, *,
          metric: Metric | Sequence[Metric] | None = None, task_ids: ArrayLike | None = None,
          groups: Any = None, clusters: ArrayLike | None = None, interval: Interval = "auto",
          confidence: float = 0.95, n_resamples: int = 10_000, rng: RngLike = None,
          seed: RngLike = None, prior: tuple[float, float] = (1, 1), missing: Missing = "raise",
          duplicates: Duplicates = "raise", tau: float = 0.5,
          combine: str | None = None) -> ScoreResult:
    """Benchmark score per group and per k: the mean over tasks of the per-task estimate, its
    SEs (``se_super``, ``se_fixed``, the clustered SE) and the interval chosen by ``interval``.

    Parameters
    ----------
    n, c : array_like of int, or a Counts and no c
        Samples and correct samples per task (1-d; ragged n is fine), or a ``Counts`` from
        :func:`passatk.archives.read_counts` alone: rows per group, named by its fields; or
        one group of it (from ``Counts.iter_groups``, metric pass@k unless given): its ids
        are distinct, so none is sorted or merged.
    k : int, sequence of int, "ladder" (1, 2, 5, 10, ... and min(n)) or "all" (1..min(n))
    metric : str or sequence of str, optional
        ``"pass@k"`` (default; a Counts' own), ``"pass^k"``, ``"plugin"`` (biased low),
        ``"g-pass@k"`` (threshold ``tau``, 0 < tau <= 1), ``"mg-pass@k"``, the Bayesian
        ``"posterior"``, ``"posterior-population"``, ``"bayes@n"`` (``posterior_sd``, no ``se``).
    task_ids : array_like, optional
        One id per row; duplicates in a group are an error, or summed (``duplicates="merge"``).
    groups : array_like or mapping of str to array_like, optional
        Label columns; one row per distinct combination, in sorted order.
    clusters : array_like, optional
        Cluster labels for the clustered SE (Miller 2024).
    interval : str
        What fills ``se``, ``ci_low``, ``ci_high``: ``"auto"`` (Wilson for binary per-task
        values, else the hull of t and quasi-binomial Wilson), ``"t"``, ``"fixed"``,
        ``"cluster"`` (CR1; these clipped to [0, 1]), ``"percentile"``, ``"bca"``, ``"wilson"``,
        ``"clopper-pearson"`` (docs/statistics.md defines each metric and interval).
    confidence, n_resamples : float, int
        The level; the bootstrap resamples (at most 10**7).
    rng, seed : anything :func:`numpy.random.default_rng` accepts (``seed`` is an alias)
    prior : (float, float)
        Beta(alpha0, beta0) prior of the Bayesian metrics; default uniform.
    missing : {"raise", "report"}
        Some task has n < k: a ValueError naming it, or a row with ``value=None``.
    combine : {None, "mean", "size"}
        Also one row over the groups (their mean, or weighted by task count), stratified SE.

    Returns
    -------
    ScoreResult
        ``.rows`` of :class:`~passatk.stats.ScoreRow`; ``.records()`` for JSON.

    Examples
    --------
    >>> import passatk
    >>> r = passatk.score([5, 5, 5], [2, 0, 5], k=[1, 2])
    >>> [(row.k, round(row.value, 4), round(row.se, 4)) for row in r]
    [(1, 0.4667, 0.2906), (2, 0.5667, 0.2963)]
    >>> w = passatk.score([1] * 20, [1] * 19 + [0])[0]   # binary outcomes: Wilson
    >>> w.estimand, w.ci_method, round(w.ci_low, 3), round(w.ci_high, 3)
    ('super-population', 'wilson', 0.764, 0.991)
    """
    kw = dict(metric=metric, interval=interval, confidence=confidence, n_resamples=n_resamples,
              rng=rng, seed=seed, prior=prior, missing=missing, duplicates=duplicates, tau=tau)
    return _score_any(n, c, k, task_ids, groups, clusters, combine, kw)


def _score_any(n, c, k, task_ids, groups, clusters, combine, kw):
    """``score`` of a Counts, or of arrays."""
    if CMB.is_counts(n):
        return _score_counts(n, c, k, task_ids, groups, clusters, combine, kw)
    if CMB.is_group_counts(n):  # one group of a Counts: its ids are distinct, none sorted
        _from_counts(c, task_ids, groups)
        if combine is not None:
            raise ValueError("combine= pools the groups of a Counts; one group was given")
        out = _score_distinct(n, k, clusters, kw)
        return dataclasses.replace(out, rows=tuple(_replace(r, group=dict(n.group))
                                                   for r in out.rows))
    if c is None:
        raise TypeError("score needs c (the correct samples per task), unless n is a Counts")
    return _score_arrays(_args(n, c, k, task_ids, groups, clusters, kw), combine)


def _args(n, c, k, task_ids, groups, clusters, kw):
    metric = "pass@k" if kw["metric"] is None else kw["metric"]
    return _score_iv(
        n, c, k, metric, task_ids, groups, clusters, kw["interval"], kw["confidence"],
        kw["n_resamples"], kw["rng"], kw["seed"], kw["prior"], kw["missing"], kw["duplicates"],
        kw["tau"])


def _score_arrays(a, combine):
    """``score`` of arrays, ``a`` its checked arguments."""
    rows = []
    merged = []
    parts = []
    for labels, idx in _groups(a.cols, a.n.size):
        g, dup = _group(a, labels, idx)
        merged.extend((labels, d) for d in dup)
        gks = _k_values(a.ks, int(g.n.min()), g.where)
        for m in a.metrics:
            rows.extend(_score_group(m, g, gks, a))
        parts.append(CMB.GroupData(labels, g.n, g.c, g.names))
    if combine is not None:
        rows.extend(_combined(parts, a.metrics, a.ks, combine, a.confidence, a.tau))
    bayes_only = all(m in _BAYES for m in a.metrics)
    boot = a.interval in ("percentile", "bca")
    return ScoreResult(rows=tuple(rows), interval="credible" if bayes_only else a.interval,
                       confidence=a.confidence,
                       merged_duplicates=tuple(merged),
                       n_resamples=a.n_resamples if boot else None)


def _combined(parts, metrics, ks, combine, confidence, tau):
    choice(combine, "combine", CMB.COMBINE)
    if len(parts) < 2:
        raise ValueError(f"combine={combine!r} needs at least 2 groups, got {len(parts)}")
    kmax = min(int(p.n.min()) for p in parts)
    return CMB.combined_rows(parts, metrics, _k_values(ks, kmax), combine, confidence, tau)


def _score_counts(counts, c, k, task_ids, groups, clusters, combine, kw):
    """``score(counts)``: each group of the Counts scored, its rows named by its fields."""
    _from_counts(c, task_ids, groups)
    own = kw["metric"] is None  # each group's own metric (pass^k for tau-bench trials)
    if own and counts.group_metrics and combine is not None:
        raise ValueError("combine= cannot pool groups of different metrics "
                         f"{sorted(set(counts.group_metrics))}; pass metric= or score them "
                         "separately")
    if own:
        kw["metric"] = counts.metric_of(0) if counts.groups else counts.metric
    if clusters is not None:
        clusters = _label_array(clusters, "clusters", len(counts))
    rows, parts, out = [], [], None
    for i, g in enumerate(counts.iter_groups()):
        sel = None if clusters is None else clusters[np.asarray(counts.group) == i]
        if own:
            kw["metric"] = counts.metric_of(i)
        out = _score_distinct(g, k, sel, kw)
        rows.extend(_replace(r, group=dict(g.group)) for r in out.rows)
        parts.append(CMB.GroupData(dict(g.group), g.n, g.c, np.asarray(g.task)))
    if out is None:
        raise ValueError("the Counts holds no rows")
    if combine is not None:
        metrics = _metrics_arg(kw["metric"], _k_spec(k), k)
        rows.extend(_combined(parts, metrics, _k_spec(k), combine, out.confidence,
                              _tau(kw["tau"])))
    return dataclasses.replace(out, rows=tuple(rows))


def _from_counts(c, task_ids, groups):
    for name, v in (("c", c), ("task_ids", task_ids), ("groups", groups)):
        if v is not None:
            raise TypeError(f"score(counts) takes its {name} from the Counts; pass {name}=None")


def _score_distinct(g, k, clusters, kw):
    """``score`` of one ``GroupCounts``: its ids are distinct, so none is sorted or merged."""
    a = _args(g.n, g.c, k, g.task, None, clusters, kw)
    return _score_arrays(a._replace(duplicates="distinct"), None)


def _group(a, labels, idx):
    """The tasks of one group (ids checked or merged) and the ids that were merged."""
    n = a.n if idx is None else a.n[idx]
    c = a.c if idx is None else a.c[idx]
    cl = a.cl if (a.cl is None or idx is None) else a.cl[idx]
    where = f" in group {labels}" if labels else ""
    if a.ids is None:
        pos = np.arange(a.n.size) if idx is None else idx
        return _Group(labels, n, c, cl, pos, "task positions", where), []
    ids = a.ids if idx is None else a.ids[idx]
    dup = []
    if a.duplicates != "distinct":  # a Counts' ids are distinct in each group: no sorted copy
        ids, n, c, cl, dup = _dedupe(ids, n, c, cl, a.duplicates, where)
    return _Group(labels, n, c, cl, ids, "task ids", where), dup


def _score_group(metric, g, ks, a):
    """The rows of one group and one metric, in the order of ``ks``."""
    base = {"group": g.labels, "metric": metric, "tasks": g.n.size,
            "samples": int(g.n.sum()), "confidence": a.confidence}
    if metric == "bayes@n":
        return [_bayes_row(metric, g.n, g.c, 1, a.prior, base, a.confidence)]  # k=1/"all"
    estimand = ESTIMANDS[a.interval]
    if metric == "plugin":
        estimand = "plug-in 1-(1-c/n)^k (biased low), " + estimand
    out = {}
    thetas = {}
    for k in ks:
        common = dict(base, k=k, estimand=estimand, ci_method=CI_METHODS[a.interval],
                      biased=metric == "plugin", interval=a.interval,
                      tau=a.tau if metric == "g-pass@k" else None)
        short = _short_row(metric, g, k, a.missing, common)
        if short is not None:
            out[k] = short
        elif metric in _BAYES:
            out[k] = _bayes_row(metric, g.n, g.c, k, a.prior, base, a.confidence)
        else:
            theta = _theta(metric, g.n, g.c, k, a.tau)
            out[k] = _score_row(metric, g, k, a, theta, common)
            if a.interval in ("percentile", "bca") and g.n.size >= 2:
                thetas[k] = theta
    if thetas:
        _boot_rows(out, thetas, a.interval, a.confidence, a.n_resamples, a.rng)
    return [out[k] for k in ks]


def _short_row(metric, g, k, missing, common):
    """The row for a k above some task's n (or the error), else None."""
    n = g.n
    if k <= int(n.min()):
        return None
    short = np.flatnonzero(n < k)
    reason = _short_tasks(k, n, short, n.size, g.where, g.id_word, g.names)
    if missing == "raise":
        raise HintedError(f"cannot report {metric} at k={k}: {reason}; pass ",
                          Option("missing", "report"), " to report this k as missing")
    if metric in _BAYES:
        common = dict(common, estimand=_bayes_estimand(metric, None),
                      ci_method="credible (equal-tailed)", interval="credible")
    return ScoreRow(value=None, se=None, ci_low=None, ci_high=None, reason=reason, **common)


def _fixed_se(metric, n, c, k, tau, s2):
    """(se_fixed, sd_between, reason)."""
    size = n.size
    if metric == "plugin":
        return None, None, ("the plug-in estimator is biased; no unbiased fixed-benchmark "
                            "variance is offered for it")
    if int(n.min()) < 2 * k:
        short = int(np.count_nonzero(n < 2 * k))
        return None, None, (f"no unbiased estimate of the fixed-benchmark variance exists: "
                            f"{short} of {size} tasks have n < 2k = {2 * k}")
    v = _vhat_sum(metric, n, c, k, tau)
    se_fixed = math.sqrt(max(v, 0.0)) / size
    sd_between = None if s2 is None else math.sqrt(max(s2 - v / size, 0.0))
    return se_fixed, sd_between, None


def _variance(x):
    """``np.var(x, ddof=1)``, a block at a time past one block (no temporary the size of
    ``x``: 80 MB for 10M tasks)."""
    if x.size <= _BLOCK:
        return float(np.var(x, ddof=1))
    mean = np.mean(x)
    return sum(float(np.sum(np.square(x[lo:lo + _BLOCK] - mean)))
               for lo in range(0, x.size, _BLOCK)) / (x.size - 1)


def _score_row(metric, g, k, a, theta, common):
    size = theta.size
    value = float(np.mean(theta))
    s2 = None if size < 2 else 0.0 if _all_equal(theta) else _variance(theta)
    se_super = None if s2 is None else math.sqrt(s2 / size)
    se_fixed, sd_between, fixed_reason = _fixed_se(metric, g.n, g.c, k, a.tau, s2)
    se_cl, n_cl = (None, None) if g.cl is None else _cluster_se(theta, g.cl)
    se = {"fixed": se_fixed, "cluster": se_cl}.get(a.interval, se_super)
    spread = _Spread(theta, value, s2, se, n_cl, a.confidence, fixed_reason)
    lo, hi, method, used, reason = _row_interval(spread, a.interval)
    method = method or common["ci_method"]
    if lo is None and hi is None and reason is not None:
        method = None  # a withheld interval has no method
    common = dict(common, ci_method=method, interval=used)
    wild = {}
    if g.cl is not None and n_cl is not None and n_cl >= 2:
        from . import _wild as WILD  # here: only clustered scores use the wild bootstrap

        cinv = np.unique(g.cl, return_inverse=True)[1].reshape(-1)
        wild, why = WILD.wild_fields(theta, cinv, a.confidence, a.n_resamples, a.rng, 0.0, 1.0)
        reason = "; ".join(x for x in (reason, WILD.few_clusters_reason(n_cl), why) if x) or None
    return ScoreRow(value=value, se=se, ci_low=lo, ci_high=hi, reason=reason,
                    se_super=se_super, se_fixed=se_fixed, se_fixed_reason=fixed_reason,
                    se_cluster=se_cl, clusters=n_cl, sd_between=sd_between, **wild, **common)


class _Spread(NamedTuple):
    """What an interval function of one score row may read."""

    theta: np.ndarray
    value: float
    s2: float | None
    se: float | None
    n_cl: int | None
    confidence: float
    fixed_reason: str | None


def _row_interval(s, interval):
    """(lo, hi, ci_method or None, interval used, reason) of one score row."""
    if interval in ("wilson", "clopper-pearson"):
        lo, hi, why = IV.binary_interval(s.theta, s.theta.size, s.confidence, interval)
        return lo, hi, None, interval, why
    if interval == "auto" and IV.binary(s.theta):
        return _auto_interval(s, interval)
    if s.se is None:
        why = {"fixed": s.fixed_reason, "cluster": "a clustered standard error needs at "
               "least 2 tasks and 2 clusters"}.get(interval,
                                                   "a standard error needs at least 2 tasks")
        return None, None, None, interval, why
    if s.s2 == 0.0 and interval != "fixed":
        lo, hi, why = IV.fallback(s.value, s.theta.size, s.confidence)
        return lo, hi, IV.LABELS["fallback"], "wilson", why
    if s.se == 0.0 and interval == "cluster":
        lo, hi, why = IV.fallback(s.value, s.theta.size, s.confidence,
                                  f"all {s.n_cl} cluster means equal {s.value:.6g}, so the "
                                  f"clustered se is 0")
        return lo, hi, IV.LABELS["fallback"], "wilson", why
    return _INTERVAL_FUNCTIONS[interval](s, interval)


def _auto_interval(s, interval):
    lo, hi, method, used = IV.auto(s.theta, s.value, s.s2, s.theta.size, s.confidence)
    return lo, hi, method, used, None


def _bootstrap_later(s, interval):
    return None, None, None, interval, None  # filled in by _boot_rows


def _quantile_interval(s, interval):
    """value -/+ q se with q of the normal (fixed) or of t (t, cluster), clipped to [0, 1]."""
    if interval == "fixed" and s.se == 0.0:
        return None, None, None, interval, (
            "se_fixed is 0 (every task has c = 0 or c = n), so the normal interval would "
            "have zero width; use interval='auto' or 'wilson'")
    df = {"t": s.theta.size - 1, "cluster": (s.n_cl or 0) - 1}.get(interval)
    level = 0.5 + s.confidence / 2
    q = norm_ppf(level) if df is None else t_ppf(level, df)
    lo, hi, cut = IV.clip(s.value - q * s.se, s.value + q * s.se)
    method = CI_METHODS[interval] + (", clipped to [0, 1]" if cut else "")
    return lo, hi, method, interval, None


#: The interval of a score row with a standard error, by ``interval=`` (binary-outcome and
#: degenerate data are settled before this table is read).
_INTERVAL_FUNCTIONS = {
    "auto": _auto_interval,
    "t": _quantile_interval,
    "fixed": _quantile_interval,
    "cluster": _quantile_interval,
    "percentile": _bootstrap_later,
    "bca": _bootstrap_later,
}


def _boot_rows(out, thetas, interval, confidence, n_resamples, rng):
    """Fill the percentile and BCa fields (and the chosen interval) of the rows in ``out``."""
    kk = list(thetas)
    mat = np.ascontiguousarray(np.column_stack([thetas[k] for k in kk]))
    reps = SK.boot_means(mat, _seed64(rng), n_resamples)
    for j, k in enumerate(kk):
        row = out[k]
        if row.interval == "wilson":  # degenerate: the fallback interval is already set
            continue
        pct, bca, why = _boot_intervals(thetas[k], reps[:, j], confidence)
        upd = {"percentile_low": pct[0], "percentile_high": pct[1]}
        if bca is not None:
            upd.update(bca_low=bca[0], bca_high=bca[1])
        if interval == "percentile":
            upd.update(ci_low=pct[0], ci_high=pct[1])
        elif bca is not None:
            upd.update(ci_low=bca[0], ci_high=bca[1])
        else:
            upd["reason"] = "; ".join(x for x in (row.reason, why) if x)
        out[k] = _replace(row, **upd)


def _bayes_estimand(metric, prior, n_max=2):
    if metric == "bayes@n":
        a0, b0 = prior
        return (f"Bayes@N posterior mean of the pass rate on these tasks (Hariri et al. "
                f"2025), independent Beta({a0:g},{b0:g}) prior per task (no pooling)")
    POST, SPIKE = _bayes_models()
    what = ("population pass@k (a new task), 1 - B(a, b+k)/B(a, b)"
            if metric == "posterior-population" else "pass@k on these tasks")
    return f"Bayesian posterior of {what}; {(SPIKE if n_max > 1 else POST).describe()}"


#: the reason of every bayes@n row (audit P3): what its interval is, and what it is not
BAYES_N_NOTE = ("bayes@n is the posterior of the mean pass rate under an independent Beta "
                "prior per task (Hariri et al. 2025): a credible interval for these tasks, "
                "not a confidence interval for pass@1; the prior pulls every task towards "
                "its mean, so with many tasks it can exclude the true pass rate")


#: the reason of a task-set posterior row at 1 < k < n when some task was never solved
TASKSET_NOTE = ("the pass@k of the never-solved tasks (c = 0) is the fitted Beta's "
                "extrapolation below 1/n: on RLVR-shaped simulations this task-set posterior "
                "covered about 92% at k = 10 (93-100% at k = 1 and k = n), under its stated "
                "95%; for a confidence interval use metric='pass@k' (docs/statistics.md)")


def _taskset_note(n, c, k):
    """The zero-one inflated task-set row's reason at an intermediate k, or None."""
    if 1 < k < int(n.min()) and bool(np.any(c == 0)):
        return TASKSET_NOTE
    return None


def _bayes_models():
    """The posterior models (``_posterior``, ``_spike``), imported by Bayesian rows only."""
    from . import _posterior as POST
    from . import _spike as SPIKE

    return POST, SPIKE


def _bayes_row(metric, n, c, k, prior, base, confidence):
    """A Bayesian row: posterior mean, posterior sd (not an SE) and a credible interval."""
    POST, SPIKE = _bayes_models()
    size = n.size
    if metric == "bayes@n":
        a0, b0 = prior
        ab = a0 + b0
        pt = (c + a0) / (n + ab)
        var = pt * (1.0 - pt) / (n + ab + 1.0)
        value = float(np.mean(pt))
        sd = math.sqrt(float(np.sum(var))) / size
        h = norm_ppf(0.5 + confidence / 2) * sd
        lo, hi = max(value - h, 0.0), min(value + h, 1.0)
        method = "credible (normal approximation, clipped to [0, 1])"
    else:
        model = SPIKE if int(n.max()) > 1 else POST
        value, sd, lo, hi = model.summary(n, c, k, confidence,
                                          metric == "posterior-population")
        method = "credible (equal-tailed)"
    reason = None
    if metric == "bayes@n":
        reason = BAYES_N_NOTE
    elif metric == "posterior" and int(n.max()) == 1:
        reason = ("with one sample per task the spread of the p_i is not identified: this "
                  "interval leans on the hyperprior (see docs/statistics.md)")
    else:
        unbiased, se = None, 0.0
        if k <= int(n.min()):
            theta = _theta("pass@k", n, c, k)
            unbiased = float(np.mean(theta))
            if metric == "posterior-population" and size > 1:
                se = float(np.std(theta, ddof=1)) / math.sqrt(size)
        reason = POST.misfit_reason(n, c, value, sd, unbiased, se, edges=model is POST)
        if reason is None and metric == "posterior" and model is SPIKE:
            reason = _taskset_note(n, c, k)
    return ScoreRow(k=k, value=value, se=None, posterior_sd=sd, ci_low=lo, ci_high=hi,
                    reason=reason, estimand=_bayes_estimand(metric, prior, int(n.max())),
                    ci_method=method, interval="credible", **base)
