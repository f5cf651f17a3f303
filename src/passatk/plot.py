"""pass@k against k, as a figure for a paper; needs matplotlib (``pip install 'passatk[plot]'``).

The numbers arrive computed by :func:`passatk.score`; this module only draws them, with
matplotlib's object interface (``Figure`` and the Agg canvas, never ``pyplot``), so that it
touches no global plotting state. matplotlib is imported when a figure is drawn.

The defaults fit a paper's column: one panel, 3.5 x 2.6 in, 8 pt text, PDF or SVG by the file's
extension and 300 dpi for PNG. Each group is one curve with its confidence band; the band is
clipped to [0, 1], and the legend (or :func:`caption`) says which interval it is. The biased plug-in
``1-(1-c/n)^k`` is drawn dashed when the rows hold it (``metric=["pass@k", "plugin"]``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

__all__ = ["caption", "figure", "plot_pass_at_k", "save"]

#: a column of a two-column paper, in inches
WIDTH, HEIGHT = 3.5, 2.6
#: text size in points: tick labels and legend; axis labels get one point more
FONT_SIZE = 8
PNG_DPI = 300

MISSING_MATPLOTLIB = (
    "plot needs matplotlib, which is not installed; install it with: pip install 'passatk[plot]'"
)


def _matplotlib() -> Any:
    try:
        import matplotlib.figure
        import matplotlib.ticker
        from matplotlib.backends import backend_agg
    except ImportError:
        raise ImportError(MISSING_MATPLOTLIB) from None
    return matplotlib.figure, matplotlib.ticker, backend_agg


def figure(width: float = WIDTH, height: float = HEIGHT) -> Any:
    """A matplotlib ``Figure`` of ``width`` x ``height`` inches on the Agg canvas, not pyplot.

    >>> fig = figure()
    >>> [float(x) for x in fig.get_size_inches()]
    [3.5, 2.6]
    """
    for name, value in (("width", width), ("height", height)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{name} must be a number of inches, got {value!r}")
        if not (math.isfinite(value) and 0 < value <= 100):
            raise ValueError(f"{name} must be a number of inches in (0, 100], got {value!r}")
    mfigure, _, backend_agg = _matplotlib()
    fig = mfigure.Figure(figsize=(width, height), layout="constrained")
    backend_agg.FigureCanvasAgg(fig)
    return fig


def save(fig: Any, path: str, image_format: str | None = None) -> None:
    """Write ``fig`` to ``path``: the format from the extension (or ``image_format``), 300 dpi."""
    fig.savefig(path, format=image_format, dpi=PNG_DPI)


def _nan(values: Iterable[float | None]) -> list[float]:
    return [math.nan if v is None else float(v) for v in values]


def _curves(rows: Iterable[Any]) -> dict[tuple, dict[str, list[Any]]]:
    """Rows -> {(group key, metric): rows sorted by k}, groups in order of appearance."""
    curves: dict[tuple, list[Any]] = {}
    for row in rows:
        key = (tuple((row.group or {}).items()), row.metric)
        curves.setdefault(key, []).append(row)
    return {key: sorted(rs, key=lambda r: r.k) for key, rs in curves.items()}


def _label(group: tuple, metric: str) -> str:
    if len(group) == 1:
        return str(group[0][1])
    return ",".join(f"{k}={v}" for k, v in group) or metric


def _band(ax: Any, rows: list[Any], color: str) -> None:
    """Fill the band between the interval's ends, clipped to [0, 1]."""
    low = [min(max(x, 0.0), 1.0) for x in _nan(r.ci_low for r in rows)]
    high = [min(max(x, 0.0), 1.0) for x in _nan(r.ci_high for r in rows)]
    ax.fill_between([r.k for r in rows], low, high, color=color, alpha=0.2, linewidth=0)


def _band_text(rows: list[Any]) -> str:
    row = rows[0]
    name = row.interval or row.ci_method or "confidence"
    return f"band: {row.confidence:.0%} {name} interval, within [0, 1]"


def _k_axis(ax: Any, ticker: Any, log_k: bool) -> None:
    if log_k:
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda x, _: f"{x:g}"))
        ax.xaxis.set_minor_formatter(ticker.NullFormatter())
    else:
        ax.xaxis.set_major_locator(ticker.MaxNLocator(integer=True, steps=[1, 2, 5, 10]))


def plot_pass_at_k(result: Any, ax: Any = None, *, log_k: bool = False, legend: bool | None = None,
                   width: float = WIDTH, height: float = HEIGHT) -> Any:
    """Draw pass@k (or pass^k) against k with its confidence band, one curve per group.

    Parameters
    ----------
    result : ScoreResult or iterable of ScoreRow
        What :func:`passatk.score` returned, or its rows with ``group`` set (one curve per
        group). Rows of metric ``"plugin"`` are drawn dashed, as the biased plug-in overlay.
    ax : matplotlib Axes, optional
        Where to draw; by default a new one-panel figure of ``width`` x ``height`` inches with
        8 pt text (see :func:`figure`).
    log_k : bool, optional
        A logarithmic k axis, labelled 1, 2, 5, 10, 20, ...
    legend : bool, optional
        Draw a legend; by default only when there is something to tell apart (several groups,
        or the plug-in overlay). The legend's title names the band's interval; the band is
        clipped to [0, 1].
    width, height : float, optional
        Figure size in inches when ``ax`` is None (default 3.5 x 2.6, a paper's column).

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn into; ``ax.figure`` saves it (or :func:`save`, 300 dpi).

    Examples
    --------
    >>> import passatk
    >>> from passatk.plot import plot_pass_at_k
    >>> result = passatk.score([10, 10, 10], [2, 5, 9], k=[1, 2, 5, 10])
    >>> ax = plot_pass_at_k(result)
    >>> ax.get_xlabel(), ax.get_ylabel(), ax.get_legend() is None
    ('k', 'pass@k', True)
    """
    _, ticker, _ = _matplotlib()
    rows = list(getattr(result, "rows", result))
    if not rows:
        raise ValueError("nothing to plot: the result has no rows")
    own = ax is None
    if own:
        ax = figure(width, height).subplots()
    curves = _curves(rows)
    groups = list(dict.fromkeys(group for group, _ in curves))
    main = [m for m in dict.fromkeys(metric for _, metric in curves) if m != "plugin"]
    metric = main[0] if main else "plugin"
    notes: set[str] = set()
    for i, group in enumerate(groups):
        color = f"C{i % 10}"
        label = _label(group, metric)
        for (g, m), rs in curves.items():
            if g != group:
                continue
            ks, values = [r.k for r in rs], _nan(r.value for r in rs)
            if m == "plugin" and main:
                ax.plot(ks, values, color=color, linestyle="--", linewidth=1,
                        label=f"{label + ': ' if group else ''}plug-in 1-(1-c/n)^k (biased)")
                continue
            marker = "o" if len(rs) < 30 else None
            ax.plot(ks, values, color=color, marker=marker, markersize=2.5, linewidth=1.2,
                    label=label)
            _band(ax, rs, color)
            notes.add(_band_text(rs))
    ax.set_xlabel("k")
    ax.set_ylabel(metric)
    ax.grid(True, alpha=0.3, linewidth=0.5)
    _k_axis(ax, ticker, log_k)
    if legend is None:
        legend = len(groups) > 1 or (any(m == "plugin" for _, m in curves) and bool(main))
    if legend:
        ax.legend(loc="best", fontsize=FONT_SIZE, frameon=False,
                  title="; ".join(sorted(notes)), title_fontsize=FONT_SIZE - 1)
    if own:
        ax.tick_params(labelsize=FONT_SIZE)
        ax.xaxis.label.set_size(FONT_SIZE + 1)
        ax.yaxis.label.set_size(FONT_SIZE + 1)
    return ax


def caption(result: Any) -> str:
    """What the bands are, for a caption (or the legend's title).

    >>> import passatk
    >>> caption(passatk.score([10, 10, 10], [2, 5, 9], k=[1, 2], interval="t"))
    'band: 95% t interval, within [0, 1]'
    """
    rows = [r for r in getattr(result, "rows", result) if r.metric != "plugin"]
    return "; ".join(dict.fromkeys(_band_text(rs) for rs in _curves(rows).values()))


#: characters of a model name on the forest plot's axis (the end of a longer one is kept)
NAME_CHARS = 24


def _short_name(name: str) -> str:
    return name if len(name) <= NAME_CHARS else "..." + name[-(NAME_CHARS - 3):]


def plot_forest(result: Any, k: int | None = None, ax: Any = None, *,
                width: float = WIDTH, height: float | None = None) -> Any:
    """A forest plot of a :func:`passatk.leaderboard`: one line per model (best on top) with
    its score and interval at ``k`` (default: the first k), coloured by the first
    indistinguishable group it belongs to. The legend (groups, rank intervals' procedure)
    sits below the axes, off the data. Returns the ``Axes``; with ``ax=`` it draws there.

    >>> import passatk
    >>> runs = {"a": (["t1", "t2", "t3"], [10] * 3, [9, 8, 9]),
    ...         "b": (["t1", "t2", "t3"], [10] * 3, [2, 1, 3])}
    >>> ax = plot_forest(passatk.leaderboard(runs))
    >>> [t.get_text() for t in ax.get_yticklabels()], ax.get_xlabel()
    (['a  (rank 1)', 'b  (rank 2)'], 'pass@k, k = 1')
    """
    rows = list(getattr(result, "rows", ()))
    if not rows:
        raise ValueError("nothing to plot: the result has no rows")
    k = rows[0].k if k is None else k
    rows = [r for r in rows if r.k == k]
    if not rows:
        raise ValueError(f"k={k} is not in this leaderboard")
    own = ax is None
    if own:
        tall = max(HEIGHT, 0.9 + 0.2 * len(rows)) if height is None else height
        ax = figure(width, tall).subplots()
    y = list(range(len(rows)))[::-1]  # the best model on top
    seen: set[int] = set()
    for yi, r in zip(y, rows, strict=True):
        g = r.groups[0] if r.groups else 0
        color = f"C{(g - 1) % 10}"
        lo = r.value - r.ci_low if r.ci_low is not None else 0.0
        hi = r.ci_high - r.value if r.ci_high is not None else 0.0
        label = f"group {g}" if g not in seen else None
        seen.add(g)
        ax.errorbar([r.value], [yi], xerr=[[lo], [hi]], fmt="o", color=color, markersize=3,
                    capsize=2, linewidth=1, label=label)
    ax.set_yticks(y)
    ax.set_yticklabels([f"{_short_name(r.model)}  (rank {r.rank_low}"
                        + (f"-{r.rank_high})" if r.rank_high != r.rank_low else ")")
                        for r in rows])
    ax.set_xlabel(f"{rows[0].metric}, k = {k}")
    ax.grid(True, axis="x", alpha=0.3, linewidth=0.5)
    level = f"{100 * rows[0].confidence:g}%"
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.28 if own else -0.2), ncol=4,
              fontsize=FONT_SIZE - 1, frameon=False,
              title=f"{level} intervals; groups: no pair differs ({result.rank_adjust})",
              title_fontsize=FONT_SIZE - 1)
    if own:
        ax.tick_params(labelsize=FONT_SIZE)
        ax.xaxis.label.set_size(FONT_SIZE + 1)
    return ax
