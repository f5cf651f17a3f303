"""Figures for ``passatk plot``; matplotlib is imported only when a figure is drawn.

The numbers arrive computed (by :func:`passatk.score`); this module only draws them. It uses
matplotlib's object interface (``Figure`` with the Agg canvas), never ``pyplot``, so that it does
not touch global plotting state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

MISSING_MATPLOTLIB = (
    "plot needs matplotlib, which is not installed; install it with: pip install 'passatk[plot]'"
)


@dataclass
class Curve:
    """One group's curve: k, the estimate, its interval and the plug-in values at the same k."""

    label: str
    k: list[int] = field(default_factory=list)
    value: list[float | None] = field(default_factory=list)
    ci_low: list[float | None] = field(default_factory=list)
    ci_high: list[float | None] = field(default_factory=list)
    plugin: list[float | None] = field(default_factory=list)


def _import_matplotlib():
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.ticker import MaxNLocator
    except ImportError:
        raise ImportError(MISSING_MATPLOTLIB) from None
    return Figure, FigureCanvasAgg, MaxNLocator


def _nan(values: Sequence[float | None]) -> list[float]:
    return [float("nan") if v is None else float(v) for v in values]


def draw(
    curves: Sequence[Curve],
    path: str,
    *,
    metric: str = "pass@k",
    level: float = 0.95,
    interval: str = "t",
    percent: bool = False,
    log_k: bool = False,
    title: str | None = None,
    image_format: str | None = None,
) -> None:
    """Draw ``curves`` into the image file ``path`` (format from its extension or ``image_format``).

    The left panel shows the estimate against k with its confidence band, one curve per group.
    The right panel shows the exact estimate next to the biased plug-in ``1-(1-c/n)^k``.
    """
    Figure, FigureCanvasAgg, MaxNLocator = _import_matplotlib()
    fig = Figure(figsize=(11, 4.5), layout="constrained")
    FigureCanvasAgg(fig)
    left, right = fig.subplots(1, 2, sharey=True)
    unit = " (%)" if percent else ""
    for i, curve in enumerate(curves):
        color = f"C{i % 10}"
        marker = "." if len(curve.k) < 30 else None
        left.plot(curve.k, _nan(curve.value), color=color, marker=marker, label=curve.label)
        left.fill_between(curve.k, _nan(curve.ci_low), _nan(curve.ci_high), color=color, alpha=0.2,
                          linewidth=0)
        right.plot(curve.k, _nan(curve.value), color=color, label=f"{curve.label}: exact")
        if curve.plugin:
            right.plot(curve.k, _nan(curve.plugin), color=color, linestyle="--",
                       label=f"{curve.label}: plug-in 1-(1-c/n)^k")
    left.set_title(f"{metric} with {level:.0%} {interval} interval")
    right.set_title("exact (unbiased) vs plug-in (biased)")
    for ax in (left, right):
        ax.set_xlabel("k")
        ax.grid(True, alpha=0.3)
        if log_k:
            ax.set_xscale("log")
        else:
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    left.set_ylabel(metric + unit)
    left.legend(loc="best", fontsize="small")
    right.legend(loc="best", fontsize="small")
    if title:
        fig.suptitle(title)
    fig.savefig(path, format=image_format, dpi=120)
