"""The frozen result of :func:`passatk.rl.group_metrics`."""

from __future__ import annotations

import math
import types
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["GroupMetrics"]


@dataclass(frozen=True, eq=False, repr=False)
class GroupMetrics:
    """Per-group metrics and their means over groups, from :func:`passatk.rl.group_metrics`.

    Attributes
    ----------
    groups : numpy.ndarray
        The group labels, in order of first appearance (row numbers for dense input).
    n : numpy.ndarray
        int64: scored rollouts per group (NaN holes and dropped NaN are not counted).
    names : tuple of str
        The metric columns, e.g. ``("pass@1", "pass@2", "best@2", "mean@n")``; with
        ``estimator="verl"``, ``"best@k/std"`` (and worst, maj) hold the bootstrap's std.
    values : mapping of str to numpy.ndarray
        Per-group values of each column (read-only float64, NaN where missing).
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

    groups: np.ndarray
    n: np.ndarray
    names: tuple
    values: types.MappingProxyType
    mean: types.MappingProxyType
    se: types.MappingProxyType
    used: types.MappingProxyType
    missing: types.MappingProxyType
    estimator: str
    short_groups: str

    @property
    def per_group(self) -> types.MappingProxyType:
        """``{"group": labels, "n": counts, name: values, ...}``, one entry per group."""
        return types.MappingProxyType({"group": self.groups, "n": self.n, **self.values})

    def summary(self) -> dict[str, float]:
        """A flat ``dict`` of floats for a logger: ``"pass@4/mean"``, ``"pass@4/se"``, ...

        Bootstrap std columns (``estimator="verl"``) give their mean over groups under
        their own name (``"best@4/std"``), as verl logs them. A missing value is NaN.
        """
        out: dict[str, float] = {}
        for name in self.names:
            if name.endswith("/std"):
                out[name] = self.mean[name]
            else:
                out[f"{name}/mean"] = self.mean[name]
                out[f"{name}/se"] = self.se[name]
        return out

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


def _fmt(v: Any) -> str:
    return "nan" if math.isnan(v) else f"{v:.4g}"


def build(groups, n, names, matrix, mean, se, used, missing, estimator, short_groups):
    """Freeze the arrays and wrap them; ``matrix`` is (columns, groups)."""
    for a in (groups, n, matrix):
        a.flags.writeable = False
    values = dict(zip(names, matrix, strict=True))
    return GroupMetrics(
        groups=groups,
        n=n,
        names=tuple(names),
        values=types.MappingProxyType(values),
        mean=types.MappingProxyType(dict(zip(names, mean.tolist(), strict=True))),
        se=types.MappingProxyType(dict(zip(names, se.tolist(), strict=True))),
        used=types.MappingProxyType(dict(zip(names, used.tolist(), strict=True))),
        missing=types.MappingProxyType(missing),
        estimator=estimator,
        short_groups=short_groups,
    )
