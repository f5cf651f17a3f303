"""A combined score over groups (``score(..., combine=...)``) and ``Counts`` as input.

The combined score is sum_g w_g v_g over the groups' scores v_g, with w_g = 1/G
(``"mean"``, the macro average) or N_g / sum N (``"size"``). Its estimand is stratified:
the groups are fixed and the tasks of each are a sample from that group's population.

    Var = sum_g sum_h w_g w_h Cov(v_g, v_h),  Cov(v_g, v_h) = N_gh c_gh / (N_g N_h)

where N_gh tasks (by id) are in both groups and c_gh is the sample covariance (ddof 1) of
their per-task estimates over those tasks (c_gg = s_g^2, so the diagonal is se_g^2). For
disjoint task sets it is sum_g w_g^2 se_g^2. The interval is t on the Welch-Satterthwaite
df of the diagonal terms.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from ._dist import t_ppf
from ._results import ScoreRow
from ._task import _theta

COMBINE = ("mean", "size")
_WHAT = {"mean": "macro mean", "size": "weighted by task count"}


class GroupData(NamedTuple):
    labels: dict
    n: np.ndarray
    c: np.ndarray
    ids: np.ndarray


def _cov(ta, ia, tb, ib):
    """N_ab * c_ab over the tasks both groups hold (0 when they share fewer than 2)."""
    common, ja, jb = np.intersect1d(ia, ib, assume_unique=True, return_indices=True)
    if common.size < 2:
        return 0.0
    xa, xb = ta[ja], tb[jb]
    return float(np.sum((xa - xa.mean()) * (xb - xb.mean()))) / (common.size - 1) * common.size


def _variance(thetas, groups, w, sizes):
    """Var of sum_g w_g v_g from the group covariances, and its diagonal terms."""
    var = 0.0
    diag = []
    for i, (ti, gi) in enumerate(zip(thetas, groups, strict=True)):
        for j in range(i, len(groups)):
            cov = _cov(ti, gi.ids, thetas[j], groups[j].ids) / (sizes[i] * sizes[j])
            var += (1.0 if i == j else 2.0) * w[i] * w[j] * cov
            if i == j:
                diag.append(w[i] * w[i] * cov)
    return var, np.array(diag)


def _welch_df(diag, sizes):
    den = float(np.sum(diag**2 / (sizes - 1.0)))
    return float(np.sum(diag)) ** 2 / den if den > 0 else float(sizes.sum() - 1)


def combined_row(groups, metric, k, combine, confidence, tau):
    """The combined row of one metric and k, or None when some group has n < k."""
    if any(int(g.n.min()) < k for g in groups) or any(g.n.size < 2 for g in groups):
        return None
    thetas = [_theta(metric, g.n, g.c, k, tau) for g in groups]
    sizes = np.array([t.size for t in thetas], dtype=np.float64)
    w = np.full(len(groups), 1.0 / len(groups)) if combine == "mean" else sizes / sizes.sum()
    value = float(np.dot(w, [float(np.mean(t)) for t in thetas]))
    var, diag = _variance(thetas, groups, w, sizes)
    se = math.sqrt(max(var, 0.0))
    df = _welch_df(diag, sizes)
    h = t_ppf(0.5 + confidence / 2, df) * se
    tasks = len(set().union(*[set(np.asarray(g.ids).tolist()) for g in groups]))
    return ScoreRow(
        group={"combined": combine}, metric=metric, k=k, value=value, se=se,
        ci_low=max(value - h, 0.0), ci_high=min(value + h, 1.0), tasks=tasks,
        samples=int(sum(int(g.n.sum()) for g in groups)),
        reason=None, confidence=confidence, se_super=se, interval="t",
        estimand=(f"combined over {len(groups)} groups ({_WHAT[combine]}), stratified "
                  f"super-population: groups fixed, tasks sampled within each; shared tasks "
                  f"enter by their covariance"),
        ci_method=f"t ({df:.1f} Welch-Satterthwaite df), within [0, 1]",
        tau=tau if metric == "g-pass@k" else None)


def combined_rows(groups, metrics, ks_of, combine, confidence, tau):
    """The combined rows, metric by metric and k by k (the k of the first group)."""
    from ._common import _BAYES

    out = []
    for metric in metrics:
        if metric in _BAYES:
            continue
        for k in ks_of:
            row = combined_row(groups, metric, k, combine, confidence, tau)
            if row is not None:
                out.append(row)
    return out


def is_group_counts(x: Any) -> bool:
    """Whether ``x`` is one group of a ``Counts`` (a ``GroupCounts`` from ``iter_groups``)."""
    return isinstance(x, tuple) and getattr(x, "_fields", None) == ("group", "task", "n", "c")


def is_counts(x: Any) -> bool:
    """Whether ``x`` is a ``Counts`` (from :func:`passatk.archives.read_counts`)."""
    return hasattr(x, "iter_groups") and hasattr(x, "groups") and hasattr(x, "task")
