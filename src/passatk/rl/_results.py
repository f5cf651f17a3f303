"""The frozen result of :func:`passatk.rl.group_metrics`."""

from __future__ import annotations

import math
import types
from typing import Any

import numpy as np

__all__ = ["GroupMetrics"]


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
    """

    __slots__ = ("_index", "_keys", "_maps", "_mean", "_se", "_used", "estimator", "groups",
                 "matrix", "missing", "n", "names", "short_groups")

    def __init__(self, groups, n, names, matrix, mean, se, used, missing, estimator,
                 short_groups, index, keys):
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

    def summary(self) -> dict[str, float]:
        """A flat ``dict`` of floats for a logger: ``"pass@4/mean"``, ``"pass@4/se"``, ...

        Bootstrap std columns (``estimator="verl"``) give their mean over groups under
        their own name (``"best@4/std"``), as verl logs them. A missing value is NaN.
        """
        std = np.array([name.endswith("/std") for name in self.names])
        pairs = np.stack([self._mean, self._se], axis=1)
        vals = pairs[~std].reshape(-1) if not std.any() else _interleave(pairs, std)
        return dict(zip(self._keys, vals.tolist(), strict=True))

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
