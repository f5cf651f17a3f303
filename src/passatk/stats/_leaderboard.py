"""``leaderboard``: many models at once, with every pair compared on the tasks it shares,
adjusted p-values, rank intervals and the sets of models that cannot be told apart.

The pairwise work is vectorized: with X the models x tasks matrix of per-task estimates
(centred per model) and W the matrix of which model has which task, the sums over the
tasks that each pair shares are matrix products (``X W^T``, ``X^2 W^T``, ``X X^T``,
``W W^T``), so the M (M - 1) / 2 paired t tests cost a few products, not M^2 calls of
:func:`passatk.compare`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from .. import _validation as V
from ..errors import HintedError, Option
from ._common import _P_FLOOR, _dedupe, _k_spec, _k_values, _label_array, _show
from ._compare import _diff_fallback
from ._dist import _t_tail, t_ppf
from ._maxt import max_t_nulls
from ._paired import _bh, _holm
from ._results import LeaderboardResult, LeaderboardRow, PairRow
from ._score import score
from ._task import _theta

ADJUSTMENTS = ("holm", "bh", "max-t")

#: the most models one leaderboard takes (the pairs grow like M^2, the tied sets faster)
MAX_MODELS = 500


class _Model(NamedTuple):
    name: str
    task: np.ndarray
    n: np.ndarray
    c: np.ndarray


def _label(group: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in group.items()) or "all"


def _from_counts(counts, prefix=None):
    """The models of one ``Counts``: one per group, named by its labels."""
    out = []
    for g in counts.iter_groups():
        name = _label(g.group) if prefix is None else (
            prefix if len(counts.groups) == 1 else f"{prefix}[{_label(g.group)}]")
        out.append(_Model(name, np.asarray(g.task), np.asarray(g.n), np.asarray(g.c)))
    return out


def _one_run(name, run):
    if hasattr(run, "iter_groups"):
        return _from_counts(run, name)
    if isinstance(run, Mapping):
        try:
            task, n, c = run["task_ids"], run["n"], run["c"]
        except KeyError as e:
            raise ValueError(f"run {name!r} must have keys 'task_ids', 'n' and 'c', "
                             f"missing {e}") from None
    elif isinstance(run, tuple | list) and len(run) == 3:
        task, n, c = run
    else:
        raise TypeError(f"run {name!r} must be a Counts, a (task_ids, n, c) triple or a "
                        f"mapping with those keys, got {type(run).__name__}")
    n, c = V.count_arrays(n, c, f"runs[{name!r}] n", f"runs[{name!r}] c")
    task = _label_array(task, f"runs[{name!r}] task_ids", n.size)
    task, n, c, _, _ = _dedupe(task, n, c, None, "raise", f" of run {name!r}")
    return [_Model(name, task, n, c)]


def _models(runs):
    """The models of ``runs`` (a Counts with several groups, or a mapping name -> run)."""
    if hasattr(runs, "iter_groups"):
        models = _from_counts(runs)
    elif isinstance(runs, Mapping):
        models = []
        for name, run in runs.items():
            if not isinstance(name, str):
                raise TypeError(f"run names must be str, got {type(name).__name__} {name!r}")
            models.extend(_one_run(name, run))
    else:
        raise TypeError(f"runs must be a Counts with several groups or a mapping of run name "
                        f"to counts, got {type(runs).__name__}")
    if len(models) < 2:
        raise ValueError(f"a leaderboard needs at least 2 models, got {len(models)}"
                         + (": pass by=... to read_counts (or --by) to split the archive into "
                            "models" if hasattr(runs, "iter_groups") else ""))
    if len(models) > MAX_MODELS:
        raise ValueError(f"a leaderboard takes at most {MAX_MODELS} models, got {len(models)}")
    names = [m.name for m in models]
    dup = sorted({x for x in names if names.count(x) > 1})
    if dup:
        raise ValueError(f"model names must be distinct, got {dup} more than once")
    return models


class _Board(NamedTuple):
    """All tasks of all models on one axis: the union of task ids, and who has which."""

    tasks: np.ndarray
    pos: list
    has: np.ndarray  # models x tasks, float 0/1


def _board(models, unmatched):
    try:
        tasks = np.unique(np.concatenate([np.asarray(m.task, dtype=object) for m in models]))
    except TypeError as e:
        raise TypeError(f"task ids must be comparable values of one type: {e}") from None
    pos = [np.searchsorted(tasks, np.asarray(m.task, dtype=object)) for m in models]
    has = np.zeros((len(models), tasks.size))
    for i, p in enumerate(pos):
        has[i, p] = 1.0
    if unmatched == "raise" and not has.all():
        i = int(np.flatnonzero(~has.all(axis=1))[0])
        miss = tasks[has[i] == 0]
        raise HintedError(
            f"every model must have every task: model {models[i].name!r} lacks "
            f"{miss.size} of {tasks.size} tasks {_show(miss)}; pass ",
            Option("unmatched", "exclude"), " to compare each pair on the tasks it shares")
    return _Board(tasks, pos, has)


def _pair_moments(x, has):
    """Per pair (i, j): shared tasks, mean of D = x_i - x_j over them, and the sd of D."""
    own = has.sum(axis=1)
    mean = (x * has).sum(axis=1) / own
    xc = (x - mean[:, None]) * has
    shared = has @ has.T
    s1 = xc @ has.T  # s1[i, j] = sum over shared of xc_i
    s2 = (xc * xc) @ has.T
    cross = xc @ xc.T
    sum_d = s1 - s1.T
    sum_d2 = s2 + s2.T - 2.0 * cross
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_d = sum_d / shared
        var = np.maximum(sum_d2 - shared * mean_d * mean_d, 0.0) / (shared - 1.0)
    diff = mean_d + mean[:, None] - mean[None, :]
    return shared, diff, np.sqrt(var)


class _Opts(NamedTuple):
    metric: str
    adjust: str
    interval: str
    confidence: float
    n_resamples: int
    rng: Any


def _default_metric(runs):
    """The metric of the Counts (or of the first Counts among the runs), else pass@k."""
    if getattr(runs, "metric", None) == "mixed":
        raise ValueError("the runs hold both pass@k and pass^k groups; rank runs of one "
                         "metric, or pass metric=")
    return getattr(runs, "metric", None) or next(
        (getattr(r, "metric", None) for r in getattr(runs, "values", list)()
         if hasattr(r, "iter_groups")), None) or "pass@k"


def leaderboard(runs: Any, k: V.KSpec = 1, *, metric: str | None = None,
                adjust: str = "holm", interval: str = "auto", confidence: float = 0.95,
                unmatched: str = "raise", n_resamples: int = 10_000, rng: V.RngLike = None,
                seed: V.RngLike = None) -> LeaderboardResult:
    """Rank many models with honest ties: per-model scores, every pair compared, rank
    intervals and indistinguishable groups (docs/statistics.md, "Many models at once").

    Rank interval: [1 + #models significantly better, M - #significantly worse] under a
    family-wise procedure; ``groups``: the maximal sets with no significant pair. Equal
    scores are listed by name and named in ``tied``, never broken silently.

    Parameters
    ----------
    runs : Counts or mapping of str to run
        A ``Counts`` with one model per group, or run name -> ``Counts`` (``name[group]``
        per group), ``(task_ids, n, c)`` or a mapping with those keys.
    k : int, sequence of int, "ladder" or "all"
    metric : {"pass@k", "pass^k", "plugin"}, optional
        Default: the ``metric`` of the Counts (pass^k for tau-bench), else ``"pass@k"``.
    adjust : {"holm", "bh", "max-t"}
        Holm (family-wise), Benjamini-Hochberg (false discovery rate; ranks from Holm) or
        the single-step max-T (family-wise, with simultaneous ``sim_low``/``sim_high``).
    interval : str
        The per-model interval, as in :func:`passatk.score`.
    confidence : float
        The level of the intervals; 1 - confidence is the family-wise (or FDR) level.
    unmatched : {"raise", "exclude"}
        A task some model lacks: an error, or pairs on their shared tasks (not max-T).
    n_resamples : int
        Draws of the max-T null; resamples of per-model bootstrap intervals.
    rng, seed : as in :func:`passatk.score`

    Returns
    -------
    LeaderboardResult
        ``.rows`` (best first), ``.pairs``, ``.groups``, ``.matrix(k)``, ``.to_latex()``.

    Examples
    --------
    >>> import passatk
    >>> runs = {"a": (["t1", "t2", "t3", "t4"], [10] * 4, [9, 8, 9, 7]),
    ...         "b": (["t1", "t2", "t3", "t4"], [10] * 4, [2, 1, 3, 2]),
    ...         "c": (["t1", "t2", "t3", "t4"], [10] * 4, [3, 1, 2, 2])}
    >>> lb = passatk.leaderboard(runs, k=1)
    >>> [(r.model, round(r.value, 3), r.rank_low, r.rank_high) for r in lb.rows]
    [('a', 0.825, 1, 1), ('b', 0.2, 2, 3), ('c', 0.2, 2, 3)]
    >>> lb.rows[1].tied, lb.groups[1]
    (('c',), (('a',), ('b', 'c')))
    """
    models = _models(runs)
    opts = _Opts(V.choice(_default_metric(runs) if metric is None else metric, "metric",
                          ("pass@k", "pass^k", "plugin")),
                 V.choice(adjust, "adjust", ADJUSTMENTS), interval,
                 V.confidence_level(confidence), V.n_resamples_arg(n_resamples),
                 V.normalize_rng(rng, seed))
    board = _board(models, V.choice(unmatched, "unmatched", ("raise", "exclude")))
    if opts.adjust == "max-t" and not board.has.all():
        raise ValueError("adjust='max-t' draws the pairs jointly and needs every model to "
                         "have every task; use adjust='holm' with unmatched='exclude'")
    kvals = list(_k_values(_k_spec(k), int(min(m.n.min() for m in models))))
    return _ranked(models, board, kvals, opts)


class _KStats(NamedTuple):
    """One k: the models x tasks estimates, every pair's moments and its t test."""

    x: np.ndarray
    shared: np.ndarray
    diff: np.ndarray
    pairs_ij: np.ndarray
    stats: list


def _k_stats(models, board, kv, opts):
    x = np.zeros(board.has.shape)
    for i, m in enumerate(models):
        x[i, board.pos[i]] = _theta(opts.metric, m.n, m.c, kv)
    shared, diff, sd = _pair_moments(x, board.has)
    size = len(models)
    pairs_ij = np.array([(i, j) for i in range(size) for j in range(i + 1, size)])
    stats = [_pair_stats(i, j, shared, diff, sd, opts.confidence) for i, j in pairs_ij]
    return _KStats(x, shared, diff, pairs_ij, stats)


def _ranked(models, board, kvals, opts):
    scores = _model_scores(models, kvals, opts)
    per_k = {kv: _k_stats(models, board, kv, opts) for kv in kvals}
    maxt = opts.adjust == "max-t"
    nulls = _max_t_nulls(per_k, opts) if maxt else {}
    rows, pairs, groups, crits = [], [], {}, {}
    for kv in kvals:
        krows, kpairs, groups[kv], crits[kv] = _one_k(models, scores, kv, per_k[kv],
                                                      nulls.get(kv), board, opts)
        rows.extend(krows)
        pairs.extend(kpairs)
    return LeaderboardResult(rows=tuple(rows), pairs=tuple(pairs), groups=groups,
                             adjust=opts.adjust, rank_adjust="max-t" if maxt else "holm",
                             confidence=opts.confidence, metric=opts.metric,
                             critical_values=crits,
                             n_resamples=opts.n_resamples if maxt else None)


def _model_scores(models, kvals, opts):
    """{(model, k): ScoreRow} from :func:`passatk.score`, exactly as it gives them."""
    out = {}
    for m in models:
        try:
            res = score(m.n, m.c, kvals, metric=opts.metric, task_ids=m.task,
                        interval=opts.interval, confidence=opts.confidence,
                        n_resamples=opts.n_resamples, rng=opts.rng)
        except ValueError as e:
            raise type(e)(f"model {m.name!r}: {e}") from None
        for row in res.rows:
            out[(m.name, row.k)] = row
    return out


def _pair_stats(i, j, shared, diff, sd, confidence):
    """t test of one pair: (se, df, t, p, lo, hi, reason)."""
    size = int(shared[i, j])
    d = float(diff[i, j])
    if size < 2:
        return None, None, None, None, None, None, (
            f"the two models share {size} task(s); a paired SE needs at least 2")
    se = float(sd[i, j]) / math.sqrt(size)
    if se <= 1e-12 * max(1.0, abs(d)):
        lo, hi = _diff_fallback(d, size, confidence)
        p = 1.0 if abs(d) <= 1e-12 else max(2.0 ** (1 - size), _P_FLOOR)
        return 0.0, size - 1, None, p, lo, hi, (
            f"all {size} differences equal {d:.6g}: no t test; p_value is the exact sign-flip "
            f"p-value and the interval the Wilson interval with the [-1, 1] variance bound")
    t = d / se
    h = t_ppf(0.5 + confidence / 2, size - 1) * se
    p = max(min(2.0 * _t_tail(t, size - 1), 1.0), _P_FLOOR)
    return se, size - 1, t, p, max(d - h, -1.0), min(d + h, 1.0), None


def _live(st):
    """Which pairs of one k have a t test (not all their differences equal)."""
    return np.array([s[2] is not None for s in st.stats])


def _max_t_nulls(per_k, opts):
    """{k: sorted draws of max |T*|} for the k with some t test, drawn jointly (``_maxt``)."""
    todo = [(kv, st, _live(st)) for kv, st in per_k.items() if _live(st).any()]
    if not todo:
        return {}
    tops = max_t_nulls([st.x for _, st, _ in todo],
                       [(st.pairs_ij[ok, 0], st.pairs_ij[ok, 1]) for _, st, ok in todo],
                       opts.n_resamples, opts.rng)
    return {kv: top for (kv, _, _), top in zip(todo, tops, strict=True)}


def _max_t(st, top, confidence):
    """Critical value and adjusted p-values of the single-step max-T over the pairs.

    ``top`` holds the sorted null draws of the largest |t| (the paired t statistics under
    normal task values with the observed covariance, each pair with its own SE on N - 1 df);
    adjusted p = (1 + #{max T* >= |t|}) / (B + 1). A pair without a t test (all its
    differences equal) keeps its exact sign-flip p-value.
    """
    raw = np.array([np.nan if s[3] is None else s[3] for s in st.stats])
    if top is None:
        return None, raw
    live = _live(st)
    tabs = np.array([abs(s[2]) for s, ok in zip(st.stats, live, strict=True) if ok])
    adj = raw.copy()
    adj[live] = (1 + top.size - np.searchsorted(top, tabs, side="left")) / (top.size + 1)
    return float(np.quantile(top, confidence)), adj


def _one_k(models, scores, kv, st, top, board, opts):
    names = [m.name for m in models]
    size = len(models)
    raw = np.array([np.nan if s[3] is None else s[3] for s in st.stats])
    crit = None
    if opts.adjust == "max-t":
        crit, adj = _max_t(st, top, opts.confidence)
        fam = adj
    else:
        fam = _holm(raw)
        adj = fam if opts.adjust == "holm" else _bh(raw)
    better = np.zeros((size, size), dtype=bool)  # better[i, j]: i significantly above j
    pairs = []
    for q, (i, j) in enumerate(st.pairs_ij):
        row = _pair_row(kv, names, board, st.shared, st.diff, st.stats[q], (i, j), adj[q],
                        crit, opts)
        pairs.append(row)
        if row.p_value is not None and fam[q] < 1.0 - opts.confidence:
            better[i, j], better[j, i] = row.diff > 0, row.diff < 0
    groups = _cliques(better, [scores[(nm, kv)].value for nm in names], names)
    return _rank_rows(models, scores, kv, better, groups), pairs, groups, crit


def _pair_row(kv, names, board, shared, diff, stat, ij, adj, crit, opts):
    i, j = ij
    se, df, t, p, lo, hi, why = stat
    d = float(diff[i, j]) if shared[i, j] else None
    sim = (None, None)
    if crit is not None and se:
        sim = (max(d - crit * se, -1.0), min(d + crit * se, 1.0))
    return PairRow(
        k=kv, metric=opts.metric, model_a=names[i], model_b=names[j], diff=d, se=se,
        ci_low=lo, ci_high=hi, df=df, t_stat=t, p_value=p,
        p_adjusted=None if math.isnan(adj) else float(adj), adjust=opts.adjust,
        significant=bool(p is not None and adj < 1.0 - opts.confidence),
        tasks=int(shared[i, j]), only_a=int(board.has[i].sum() - shared[i, j]),
        only_b=int(board.has[j].sum() - shared[i, j]), sim_low=sim[0], sim_high=sim[1],
        confidence=opts.confidence, reason=why)


def _cliques(better, values, names):
    """Maximal sets with no significant pair (Bron-Kerbosch with pivoting), best first."""
    size = len(names)
    tie = ~(better | better.T)
    np.fill_diagonal(tie, False)
    nbr = [set(np.flatnonzero(tie[i]).tolist()) for i in range(size)]
    out = []

    def grow(r, p, x):
        if not p and not x:
            out.append(r)
            if len(out) > 100_000:
                raise ValueError("the models form more than 100,000 indistinguishable groups")
            return
        pivot = max(p | x, key=lambda u: len(nbr[u] & p))
        for v in list(p - nbr[pivot]):
            grow(r | {v}, p & nbr[v], x & nbr[v])
            p = p - {v}
            x = x | {v}

    grow(set(), set(range(size)), set())
    order = _order(values, names)
    rank = {m: r for r, m in enumerate(order)}
    cl = sorted((sorted(c, key=rank.get) for c in out), key=lambda c: [rank[m] for m in c])
    return tuple(tuple(names[m] for m in c) for c in cl)


def _order(values, names):
    """Model indices by score, best first; equal scores by name."""
    return sorted(range(len(names)), key=lambda i: (-(values[i] if values[i] is not None
                                                      else -math.inf), names[i]))


def _rank_rows(models, scores, kv, better, groups):
    names = [m.name for m in models]
    size = len(names)
    vals = [scores[(nm, kv)].value for nm in names]
    rows = []
    for i in _order(vals, names):
        s = scores[(names[i], kv)]
        above, below = int(better[:, i].sum()), int(better[i, :].sum())
        tied = tuple(names[j] for j in _order(vals, names)
                     if j != i and vals[j] is not None and vals[j] == vals[i])
        rows.append(LeaderboardRow(
            k=kv, model=names[i], metric=s.metric, value=s.value, se=s.se, ci_low=s.ci_low,
            ci_high=s.ci_high, ci_method=s.ci_method, interval=s.interval,
            estimand=s.estimand, tasks=s.tasks, samples=s.samples, rank_low=1 + above,
            rank_high=size - below, better_than=below, worse_than=above,
            groups=tuple(g + 1 for g, members in enumerate(groups) if names[i] in members),
            tied=tied, confidence=s.confidence, reason=s.reason))
    return rows


__all__ = ["ADJUSTMENTS", "MAX_MODELS", "leaderboard"]
