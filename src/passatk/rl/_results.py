"""The frozen result of :func:`passatk.rl.group_metrics`."""

from __future__ import annotations

import math
import re
import threading
import types
import warnings
from typing import Any, NamedTuple

import numpy as np

__all__ = ["Curve", "GroupMetrics", "MissingMetricWarning"]

WHY = ("warn", "key", None)
_WARNED = set()  # summary() names already warned about, once per process
_WARNED_LOCK = threading.Lock()
_AT_K = re.compile(r"^(?P<metric>[^/@^]+)(?P<sep>[@^])(?P<k>\d+)$")


class MissingMetricWarning(RuntimeWarning):
    """A ``summary()`` mean is NaN; the message says why (once per name and process)."""


class Curve(NamedTuple):
    """Rows of a metric against k, for ``wandb.Table(columns=..., data=...)`` or TensorBoard."""

    columns: tuple
    rows: list


class GroupMetrics:
    """Per-group metrics and their means over groups, from :func:`passatk.rl.group_metrics`.

    Read-only: the attributes cannot be rebound and the arrays cannot be written.

    Attributes
    ----------
    groups : numpy.ndarray
        The group labels, in order of first appearance (row numbers for dense input).
    n : numpy.ndarray
        int64: scored rollouts per group (NaN holes and dropped NaN are not counted).
    names : tuple of str
        The metric columns, e.g. ``("pass@1", "pass@2", "best@2", "mean@n")``; with
        ``estimator="verl"``, ``"best@k/std"`` (and worst, maj) hold the bootstrap's std.
    matrix : numpy.ndarray
        float64 ``(len(names), len(groups))``: every column's per-group values, NaN where
        missing.
    values : mapping of str to numpy.ndarray
        ``matrix`` by column name.
    mean, se : mapping of str to float
        Mean over groups and its standard error (sample std over groups / sqrt(groups)).
        NaN when a group is missing that column (unless ``short_groups="exclude"``) or,
        for ``se``, when fewer than two groups count.
    used : mapping of str to int
        How many groups each mean averages.
    missing : mapping of str to str
        For each column with a missing group, why, and what the mean did about it.
    estimator, short_groups : str
        The options the metrics were computed with.
    repeats : mapping of str to str
        Columns that equal another column by definition for these scores, and which:
        ``{"best@4": "pass@4", "worst@4": "pass^4"}`` when every score is 0 or 1 (unbiased
        estimator). ``summary(drop_repeats=True)`` leaves them out.
    """

    __slots__ = ("_index", "_keys", "_maps", "_mean", "_se", "_used", "estimator", "groups",
                 "matrix", "missing", "n", "names", "repeats", "short_groups")

    def __init__(self, groups, n, names, matrix, mean, se, used, missing, estimator,
                 short_groups, index, keys, repeats=None):
        groups.setflags(write=False)
        n.setflags(write=False)
        matrix.setflags(write=False)
        put = object.__setattr__
        put(self, "groups", groups)
        put(self, "n", n)
        put(self, "names", names)
        put(self, "matrix", matrix)
        put(self, "_mean", mean)
        put(self, "_se", se)
        put(self, "_used", used)
        put(self, "missing", types.MappingProxyType(missing))
        put(self, "estimator", estimator)
        put(self, "short_groups", short_groups)
        put(self, "_index", index)
        put(self, "_keys", keys)
        put(self, "_maps", {})
        put(self, "repeats", types.MappingProxyType(dict(repeats or {})))

    def __setattr__(self, name, value):
        raise AttributeError(f"GroupMetrics is read-only; cannot set {name!r}")

    __delattr__ = __setattr__

    def _map(self, what, rows):
        # Built on first use: a training loop that logs summary() never pays for them.
        # Two threads may both build one; they build equal read-only mappings.
        got = self._maps.get(what)
        if got is None:
            got = types.MappingProxyType(dict(zip(self.names, rows, strict=True)))
            self._maps[what] = got
        return got

    @property
    def values(self) -> types.MappingProxyType:
        return self._map("values", self.matrix)

    @property
    def mean(self) -> types.MappingProxyType:
        return self._map("mean", self._mean.tolist())

    @property
    def se(self) -> types.MappingProxyType:
        return self._map("se", self._se.tolist())

    @property
    def used(self) -> types.MappingProxyType:
        return self._map("used", self._used.tolist())

    @property
    def per_group(self) -> types.MappingProxyType:
        """``{"group": labels, "n": counts, name: values, ...}``, one entry per group."""
        return types.MappingProxyType({"group": self.groups, "n": self.n, **self.values})

    def summary(self, prefix="", *, drop_repeats=False, why="warn") -> dict[str, float]:
        """A flat ``dict`` of floats for a logger: ``"pass@4/mean"``, ``"pass@4/se"``, ...

        Bootstrap std columns (``estimator="verl"``) give their mean over groups under
        their own name (``"best@4/std"``), as verl logs them. A missing value is NaN.

        Parameters
        ----------
        prefix : str
            Put before every key (``"val/"`` groups the charts in one wandb section).
        drop_repeats : bool
            Leave out the columns of ``repeats`` (for 0/1 scores best@k is pass@k and
            worst@k is pass^k).
        why : {"warn", "key", None}
            For a NaN mean: a :class:`MissingMetricWarning` with the reason from
            ``missing``, once per name and process ("warn"); or a companion key
            ``"<name>/missing"``, the number of groups without the value ("key"); or
            nothing.

        >>> from passatk import rl
        >>> res = rl.group_metrics([[1, 0, 1, 1], [0, 0, 0, 1]], k=[2])
        >>> sorted(res.summary("val/", drop_repeats=True))[:3]
        ['val/mean@n/mean', 'val/mean@n/se', 'val/pass@2/mean']
        """
        if why not in WHY:
            raise ValueError(f"why must be one of {WHY}, got {why!r}")
        std = np.array([name.endswith("/std") for name in self.names])
        pairs = np.stack([self._mean, self._se], axis=1)
        vals = pairs[~std].reshape(-1) if not std.any() else _interleave(pairs, std)
        out = dict(zip(self._keys, vals.tolist(), strict=True))
        if drop_repeats and self.repeats:
            for name in self.repeats:
                for key in (f"{name}/mean", f"{name}/se"):
                    out.pop(key, None)
        if self.missing and why is not None:
            self._why(out, why)
        return {prefix + key: v for key, v in out.items()} if prefix else out

    def _why(self, out, why):
        for name, reason in self.missing.items():
            key = name if name.endswith("/std") else f"{name}/mean"
            if key not in out or not math.isnan(out[key]):
                continue
            if why == "key":
                out[f"{name}/missing"] = float(len(self.groups) - self._used[self._index[name]])
                continue
            with _WARNED_LOCK:
                fresh = name not in _WARNED
                _WARNED.add(name)
            if fresh:
                warnings.warn(f"{key} is NaN: {reason}", MissingMetricWarning, stacklevel=3)

    def curve(self, metrics=None, *, step=None) -> Curve:
        """The mean (and se) of each metric against k, as rows.

        One row per column ``"<metric>@<k>"`` or ``"pass^<k>"`` (pass@k, pass^k, best@k,
        worst@k, maj@k, mg-pass@k): ``(k, metric, mean, se)``, with ``step`` first when given.
        ``wandb.Table(columns=list(c.columns), data=c.rows)`` takes it as it is, and
        ``wandb.plot.line(table, "k", "mean", stroke="metric")`` draws the curve.

        >>> from passatk import rl
        >>> c = rl.group_metrics([[1, 0, 0, 1], [0, 0, 0, 1]], k=[1, 2, 4]).curve("pass@k")
        >>> c.columns
        ('k', 'metric', 'mean', 'se')
        >>> [row[:3] for row in c.rows]
        [[1, 'pass@k', 0.375], [2, 'pass@k', 0.6666666666666666], [4, 'pass@k', 1.0]]
        """
        wanted = (metrics,) if isinstance(metrics, str) else metrics
        rows = []
        for i, name in enumerate(self.names):
            m = _AT_K.match(name)
            if m is None:
                continue
            metric = m["metric"] + m["sep"] + "k"
            if wanted is not None and metric not in wanted:
                continue
            row = [int(m["k"]), metric, float(self._mean[i]), float(self._se[i])]
            rows.append(row if step is None else [step, *row])
        columns = ("k", "metric", "mean", "se")
        return Curve(columns if step is None else ("step", *columns), rows)

    def to_pandas(self):
        """One row per group: ``group``, ``n`` and every column; needs pandas."""
        try:
            import pandas as pd
        except ImportError as exc:
            raise ImportError(
                "to_pandas() needs pandas, which is not installed; install it with "
                "`pip install passatk[pandas]` or use per_group / summary()"
            ) from exc
        return pd.DataFrame({"group": self.groups, "n": self.n, **self.values})

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={_fmt(v)}" for k, v in list(self.mean.items())[:6])
        more = ", ..." if len(self.names) > 6 else ""
        return (f"GroupMetrics({len(self.groups)} groups, estimator={self.estimator!r}; "
                f"means: {shown}{more})")


def _interleave(pairs, std):
    """(mean, se) for ordinary columns, the mean alone for bootstrap-std columns."""
    out = []
    for row, is_std in zip(pairs, std, strict=True):
        out.extend(row[:1] if is_std else row)
    return np.array(out)


def _fmt(v: Any) -> str:
    return "nan" if math.isnan(v) else f"{v:.4g}"
