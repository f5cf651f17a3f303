"""pass@k against k, as a figure for a paper; needs matplotlib (``pip install 'passatk[plot]'``).

The numbers arrive computed by :func:`passatk.score`; this module only draws them, with
matplotlib's object interface (``Figure`` and the Agg canvas, never ``pyplot``), so that it
touches no global plotting state. matplotlib is imported when a figure is drawn.

The defaults fit a paper's column: one panel, 3.5 x 2.6 in, 8 pt text, PDF or SVG by the file's
extension and 300 dpi for PNG. Each group is one curve with its confidence band; the band is
clipped to [0, 1], and the legend (or :func:`caption`) names the interval method actually used.
The legend sits outside the axes, right of the data. The biased plug-in ``1-(1-c/n)^k`` is drawn
dashed when the rows hold it (``metric=["pass@k", "plugin"]``), with one legend entry for it.
When every curve has one k (greedy runs, n = 1), the figure is a dot-and-whisker plot per group.

:func:`save` writes through :func:`style`, passatk's own style context: TrueType (Type 42)
fonts in PDF and PostScript, which ACM and IEEE checkers require, and editable text in SVG.
The user's global ``rcParams`` are never changed; a figure saved with ``fig.savefig`` outside
``with style():`` gets matplotlib's defaults (Type 3 fonts).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NamedTuple

__all__ = ["caption", "figure", "outside_legend", "plot_pass_at_k", "save", "style"]

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


#: passatk's style: fonts a paper's checker accepts (TrueType, not Type 3) and SVG text that
#: stays text; applied by :func:`style` around saving, never to the global rcParams
STYLE = {"pdf.fonttype": 42, "ps.fonttype": 42, "svg.fonttype": "none"}


@contextlib.contextmanager
def style() -> Iterator[None]:
    """passatk's style context (:data:`STYLE`), for ``fig.savefig`` of a figure of your own.

    >>> import matplotlib
    >>> before = matplotlib.rcParams["pdf.fonttype"]
    >>> with style():
    ...     matplotlib.rcParams["pdf.fonttype"]
    42
    >>> matplotlib.rcParams["pdf.fonttype"] == before
    True
    """
    import matplotlib

    with matplotlib.rc_context(STYLE):
        yield


def save(fig: Any, path: str, image_format: str | None = None) -> None:
    """Write ``fig`` to ``path``: the format from the extension (or ``image_format``), 300 dpi,
    in :func:`style` (Type 42 fonts in PDF, text in SVG)."""
    with style():
        fig.savefig(path, format=image_format, dpi=PNG_DPI)


def outside_legend(ax: Any, handles: Sequence[Any], labels: Sequence[str],
                   title: str | None = None, *, own: bool = True) -> Any:
    """A legend outside the data: below the axes, across the figure, for a figure of its own
    (``own``; constrained layout makes room); right of the axes when drawing into a caller's."""
    kw = dict(fontsize=FONT_SIZE, frameon=False, title=title, title_fontsize=FONT_SIZE - 1)
    if own:  # as many columns as fit the figure's width
        fig = ax.figure
        renderer = fig.canvas.get_renderer()
        for ncol in range(min(len(handles), 3), 0, -1):
            legend = fig.legend(handles, labels, loc="outside lower center", ncol=ncol,
                                columnspacing=1.0, handlelength=1.5, **kw)
            if ncol == 1 or legend.get_window_extent(renderer).width <= 0.98 * fig.bbox.width:
                return legend
            legend.remove()
    return ax.legend(handles, labels, loc="center left", bbox_to_anchor=(1.01, 0.5),
                     borderaxespad=0.0, alignment="left", **kw)


def _nan(values: Iterable[float | None]) -> list[float]:
    return [math.nan if v is None else float(v) for v in values]


def _curves(rows: Iterable[Any]) -> dict[tuple, list[Any]]:
    """Rows -> {(group key, metric): rows sorted by k}, groups in order of appearance."""
    curves: dict[tuple, list[Any]] = {}
    for row in rows:
        key = (tuple((row.group or {}).items()), row.metric)
        curves.setdefault(key, []).append(row)
    return {key: sorted(rs, key=lambda r: r.k) for key, rs in curves.items()}


def _labels(groups: Sequence[tuple], metric: str) -> list[str]:
    """One label per group: the value of a single field (for ``path`` groups, the part of the
    path that varies between the runs), else ``field=value`` pairs."""
    if groups and all(len(g) == 1 for g in groups) and str(groups[0][0][0]).startswith("path"):
        from ._cli_output import varying_labels

        return varying_labels([str(g[0][1]) for g in groups])
    return [str(g[0][1]) if len(g) == 1 else ",".join(f"{k}={v}" for k, v in g) or metric
            for g in groups]


def _band(ax: Any, rows: list[Any], color: str) -> None:
    """Fill the band between the interval's ends, clipped to [0, 1]."""
    low = [min(max(x, 0.0), 1.0) for x in _nan(r.ci_low for r in rows)]
    high = [min(max(x, 0.0), 1.0) for x in _nan(r.ci_high for r in rows)]
    ax.fill_between([r.k for r in rows], low, high, color=color, alpha=0.2, linewidth=0)


#: how a figure names each ``ci_method`` (the stable names of the result rows)
METHOD_NAMES = {
    "t-wilson-hull": "t/Wilson hull", "wilson": "Wilson", "wilson-bounded": "bounded Wilson",
    "t": "t", "normal": "normal", "cluster-t": "clustered t", "percentile": "bootstrap percentile",
    "bca": "bootstrap BCa", "clopper-pearson": "Clopper-Pearson", "credible": "credible",
}


def _methods(rows: list[Any]) -> str:
    """The interval method of a curve's rows, with any other used at some k in parentheses."""
    by: dict[str, list[int]] = {}
    for r in rows:
        if r.ci_low is not None and r.ci_method is not None:
            by.setdefault(r.ci_method, []).append(r.k)
    if not by:
        return "no"
    main = max(by, key=lambda m: len(by[m]))
    others = []
    for m, ks in by.items():
        if m != main:
            shown = ", ".join(str(k) for k in ks[:3]) + (", ..." if len(ks) > 3 else "")
            others.append(f"{METHOD_NAMES.get(m, m)} at k = {shown}")
    name = METHOD_NAMES.get(main, main) + " interval"
    return name + (f" ({'; '.join(others)})" if others else "")


def _band_text(rows: list[Any]) -> str:
    return f"band: {rows[0].confidence:.0%} {_methods(rows)}, within [0, 1]"


def _k_axis(ax: Any, ticker: Any, log_k: bool, k_max: int) -> None:
    """Integer k ticks, always with a tick at k = 1 (the value readers look for first)."""
    if log_k:
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda x, _: f"{x:g}"))
        ax.xaxis.set_minor_formatter(ticker.NullFormatter())
        return
    ticks = ticker.MaxNLocator(integer=True, steps=[1, 2, 5, 10]).tick_values(1, k_max)
    ticks = [1, *(t for t in ticks if 1 < t <= k_max)]
    if len(ticks) > 2 and ticks[1] - 1 < (ticks[2] - ticks[1]) / 2:
        del ticks[1]  # 1 and 2 would crowd, 1, 5, 10 read better than 1, 2, 5, 10 here
    ax.xaxis.set_major_locator(ticker.FixedLocator(ticks))


def _y_label(metric: str, rows: list[Any]) -> str:
    if metric == "g-pass@k":
        taus = {r.tau for r in rows if r.tau is not None}
        if len(taus) == 1:
            return f"G-Pass@k (\N{GREEK SMALL LETTER TAU} = {taus.pop():g})"
    return metric


def plot_pass_at_k(result: Any, ax: Any = None, *, log_k: bool = False, legend: bool | None = None,
                   width: float = WIDTH, height: float = HEIGHT) -> Any:
    """Draw pass@k (or pass^k) against k with its confidence band, one curve per group.

    Parameters
    ----------
    result : ScoreResult or iterable of ScoreRow
        What :func:`passatk.score` returned, or its rows with ``group`` set (one curve per
        group). Rows of metric ``"plugin"`` are drawn dashed, as the biased plug-in overlay.
        When every curve has a single k (greedy runs with n = 1), each group is one dot with
        its interval as a whisker.
    ax : matplotlib Axes, optional
        Where to draw; by default a new one-panel figure of ``width`` x ``height`` inches with
        8 pt text (see :func:`figure`).
    log_k : bool, optional
        A logarithmic k axis, labelled 1, 2, 5, 10, 20, ...
    legend : bool, optional
        Draw a legend outside the data (:func:`outside_legend`: the figure's, below the axes,
        when ``ax`` is None; else right of ``ax``); by default only when there is something to
        tell apart (several groups, or the plug-in overlay). Its title names the interval
        method of the band; the band is clipped to [0, 1].
    width, height : float, optional
        Figure size in inches when ``ax`` is None (default 3.5 x 2.6, a paper's column).

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn into; :func:`save` writes its figure (300 dpi, Type 42 fonts).

    Examples
    --------
    >>> import passatk
    >>> from passatk.plot import plot_pass_at_k
    >>> result = passatk.score([10, 10, 10], [2, 5, 9], k=[1, 2, 5, 10])
    >>> ax = plot_pass_at_k(result)
    >>> ax.get_xlabel(), ax.get_ylabel(), ax.figure.legends, 1 in ax.get_xticks()
    ('k', 'pass@k', [], True)
    """
    _, ticker, _ = _matplotlib()
    rows = list(getattr(result, "rows", result))
    if not rows:
        raise ValueError("nothing to plot: the result has no rows")
    own = ax is None
    if own:
        ax = figure(width, height).subplots()
    p = _layout(rows)
    if all(len({r.k for r in rs}) == 1 for rs in p.curves.values()):
        _dots(ax, p.curves, p.groups, p.labels, p.metric)
    else:
        _curve_panel(ax, p, ticker, log_k, legend, own)
    ax.grid(True, alpha=0.3, linewidth=0.5)
    if own:
        ax.tick_params(labelsize=FONT_SIZE)
        ax.xaxis.label.set_size(FONT_SIZE + 1)
        ax.yaxis.label.set_size(FONT_SIZE + 1)
    return ax


class _Layout(NamedTuple):
    """What is drawn: the curves by (group, metric), the groups, their labels, the metric."""

    curves: dict[tuple, list[Any]]
    groups: list[tuple]
    labels: list[str]
    metric: str
    has_main: bool


def _layout(rows: list[Any]) -> _Layout:
    curves = _curves(rows)
    groups = list(dict.fromkeys(group for group, _ in curves))
    main = [m for m in dict.fromkeys(metric for _, metric in curves) if m != "plugin"]
    metric = main[0] if main else "plugin"
    return _Layout(curves, groups, _labels(groups, metric), metric, bool(main))


def _curve_panel(ax: Any, p: _Layout, ticker: Any, log_k: bool, legend: bool | None,
                 own: bool) -> None:
    """Curves against k, their axes, and the legend outside the data when it tells apart."""
    handles = _lines(ax, p.curves, p.groups, p.labels, p.metric, p.has_main)
    drawn = [r for (_, m), rs in p.curves.items() if m == p.metric for r in rs]
    ax.set_xlabel("k")
    ax.set_ylabel(_y_label(p.metric, drawn))
    _k_axis(ax, ticker, log_k, max(r.k for rs in p.curves.values() for r in rs))
    if legend is None:
        plugin = p.has_main and any(m == "plugin" for _, m in p.curves)
        legend = len(p.groups) > 1 or plugin
    if legend:
        title = caption(drawn).removesuffix(", within [0, 1]")
        outside_legend(ax, [h for h, _ in handles], [t for _, t in handles], title=title,
                       own=own)


def _lines(ax: Any, curves: dict[tuple, list[Any]], groups: list[tuple], labels: list[str],
           metric: str, has_main: bool) -> list[tuple[Any, str]]:
    """One curve and band per group, the plug-in dashed; the legend's (handle, label) pairs:
    one per group, and one "dashed" entry for the plug-in however many groups."""
    handles: list[tuple[Any, str]] = []
    plugin = None
    for i, (group, label) in enumerate(zip(groups, labels, strict=True)):
        color = f"C{i % 10}"
        for (g, m), rs in curves.items():
            if g != group:
                continue
            ks, values = [r.k for r in rs], _nan(r.value for r in rs)
            if m == "plugin" and has_main:
                plugin = ax.plot(ks, values, color=color, linestyle="--", linewidth=1)[0]
                continue
            marker = "o" if len(rs) < 30 else None
            line = ax.plot(ks, values, color=color, marker=marker, markersize=2.5,
                           linewidth=1.2)[0]
            _band(ax, rs, color)
            handles.append((line, label if group else metric))
    if plugin is not None:
        if len(groups) > 1:
            from matplotlib.lines import Line2D

            plugin = Line2D([], [], color="0.4", linestyle="--", linewidth=1)
        handles.append((plugin, "plug-in 1-(1-c/n)^k (biased)"))
    return handles


def _dots(ax: Any, curves: dict[tuple, list[Any]], groups: list[tuple], labels: list[str],
          metric: str) -> None:
    """A dot per group with its interval as a whisker: the figure of runs with one k."""
    rows = [rs[0] for (_, m), rs in curves.items() if m == metric]
    xs = list(range(len(rows)))
    values = _nan(r.value for r in rows)
    low = [v - min(max(lo, 0.0), 1.0) for v, lo in zip(values, _nan(r.ci_low for r in rows),
                                                        strict=True)]
    high = [min(max(hi, 0.0), 1.0) - v for v, hi in zip(values, _nan(r.ci_high for r in rows),
                                                         strict=True)]
    for x, v, lo, hi in zip(xs, values, low, high, strict=True):
        ax.errorbar([x], [v], yerr=[[lo], [hi]], fmt="o", color=f"C{x % 10}", markersize=3,
                    capsize=2, linewidth=1)
    ax.set_xticks(xs, [lab if g else metric for g, lab in zip(groups, labels, strict=True)],
                  rotation=30 if len(xs) > 3 else 0, ha="right" if len(xs) > 3 else "center")
    ax.set_xlim(-0.6, len(xs) - 0.4)
    k = rows[0].k
    name = metric.replace("@k", f"@{k}").replace("^k", f"^{k}")
    ax.set_ylabel(f"{name}, {rows[0].confidence:.0%} {_methods(rows)}")


def caption(result: Any) -> str:
    """What the bands are, for a caption (or the legend's title): the interval method used.

    >>> import passatk
    >>> caption(passatk.score([10, 10, 10], [2, 5, 9], k=[1, 2], interval="t"))
    'band: 95% t interval, within [0, 1]'
    >>> caption(passatk.score([10, 10, 10], [2, 5, 9], k=[1, 10]))
    'band: 95% t/Wilson hull interval (Wilson at k = 10), within [0, 1]'
    """
    rows = [r for r in getattr(result, "rows", result) if r.metric != "plugin"]
    curves = list(_curves(rows).values())
    levels = "/".join(dict.fromkeys(f"{rs[0].confidence:.0%}" for rs in curves))
    methods = "; ".join(dict.fromkeys(_methods(rs) for rs in curves))
    return f"band: {levels} {methods}, within [0, 1]"


#: characters of a model name on the forest plot's axis (the end of a longer one is kept)
NAME_CHARS = 24


def _short_name(name: str) -> str:
    return name if len(name) <= NAME_CHARS else "..." + name[-(NAME_CHARS - 3):]


def _rank_label(r: Any) -> str:
    """A model's axis label: its (shortened) name and its rank interval, one number if tight."""
    head = f"{_short_name(r.model)}  (rank {r.rank_low}"
    return head + (f"-{r.rank_high})" if r.rank_high != r.rank_low else ")")


def _forest_whiskers(ax: Any, rows: list[Any], y: list[int]) -> None:
    """A dot and interval per model at height ``y``, coloured by its first group; a missing
    bound draws no whisker; one legend entry per group, at its first model."""
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
    _forest_whiskers(ax, rows, y)
    ax.set_yticks(y)
    ax.set_yticklabels([_rank_label(r) for r in rows])
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
