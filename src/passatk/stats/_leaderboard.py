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
from ._maxt import max_t_null
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


def leaderboard(runs: Any, k: V.KSpec = 1, *, metric: str | None = None,
                adjust: str = "holm", interval: str = "auto", confidence: float = 0.95,
                unmatched: str = "raise", n_resamples: int = 10_000, rng: V.RngLike = None,
                seed: V.RngLike = None) -> LeaderboardResult:
    """Rank many models with honest ties: per-model scores, every pair compared, rank
    intervals and indistinguishable groups.

    Per model and k: the row that :func:`passatk.score` gives (value, SE, interval).
    Per pair and k: the paired difference on the tasks both share, its SE sd(D)/sqrt(N),
    the t interval and p-value on N - 1 df (as :func:`passatk.compare` computes them), and
    the p-value adjusted over all M (M - 1) / 2 pairs of that k: Holm (family-wise,
    default), Benjamini-Hochberg (false discovery rate) or a studentized max-T bootstrap
    over tasks (family-wise, with simultaneous intervals ``sim_low``/``sim_high``).

    A model's rank interval is [1 + the number of models significantly better, M - the
    number significantly worse], from a family-wise procedure at level 1 - ``confidence``
    (Holm when ``adjust`` is "holm" or "bh", max-T for "max-t"): all rank intervals hold at
    once with that probability. ``groups`` are the maximal sets of models in which no pair
    differs significantly (the cliques of the "not significantly different" graph). Rows
    are sorted by score; models with equal scores are listed by name and named in ``tied``.

    Parameters
    ----------
    runs : Counts or mapping of str to run
        A ``Counts`` with several groups (one model per group, e.g. ``read_counts(...,
        by=["model"])``), or a mapping of run name to a ``Counts`` (one group, or one model
        per group named ``name[group]``), to a ``(task_ids, n, c)`` triple, or to a mapping
        with those keys.
    k : int, sequence of int, "ladder" or "all"
    metric : {"pass@k", "pass^k", "plugin"}, optional
        Default: the ``metric`` of the Counts (pass^k for tau-bench), else ``"pass@k"``.
    adjust : {"holm", "bh", "max-t"}
    interval : str
        The per-model interval, as in :func:`passatk.score`.
    confidence : float
        The level of the intervals; 1 - confidence is the family-wise (or FDR) level.
    unmatched : {"raise", "exclude"}
        A task that some model lacks: an error, or each pair is compared on the tasks it
        shares (``tasks`` of each pair says how many). max-T needs a common task set.
    n_resamples : int
        Bootstrap resamples of the max-T critical value (``adjust="max-t"``) and of the
        per-model bootstrap intervals.
    rng, seed : as in :func:`passatk.score`

    Returns
    -------
    LeaderboardResult
        ``.rows`` (one per model and k, best first), ``.pairs``, ``.groups``,
        ``.matrix(k)``, ``.records()``, ``.pair_records()``, ``.to_latex()``.

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
    >>> p = lb.pairs[0]
    >>> p.model_a, p.model_b, round(p.diff, 3), p.tasks, p.significant
    ('a', 'b', 0.625, 4, True)
    """
    models = _models(runs)
    if metric is None:
        metric = getattr(runs, "metric", None) or next(
            (getattr(r, "metric", None) for r in getattr(runs, "values", list)()
             if hasattr(r, "iter_groups")), None) or "pass@k"
    metric = V.choice(metric, "metric", ("pass@k", "pass^k", "plugin"))
    adjust = V.choice(adjust, "adjust", ADJUSTMENTS)
    unmatched = V.choice(unmatched, "unmatched", ("raise", "exclude"))
    confidence = V.confidence_level(confidence)
    n_resamples = V.n_resamples_arg(n_resamples)
    rng = V.normalize_rng(rng, seed)
    ks = _k_spec(k)
    board = _board(models, unmatched)
    if adjust == "max-t" and not board.has.all():
        raise ValueError("adjust='max-t' resamples tasks jointly and needs every model to "
                         "have every task; use adjust='holm' with unmatched='exclude'")
    kvals = list(_k_values(ks, int(min(m.n.min() for m in models))))
    scores = _model_scores(models, kvals, metric, interval, confidence, n_resamples, rng)
    rows, pairs, groups, crits = [], [], {}, {}
    for kv in kvals:
        x = np.zeros(board.has.shape)
        for i, m in enumerate(models):
            x[i, board.pos[i]] = _theta(metric, m.n, m.c, kv)
        krows, kpairs, kgroups, crit = _one_k(models, scores, kv, x, board, adjust,
                                              confidence, n_resamples, rng, metric)
        rows.extend(krows)
        pairs.extend(kpairs)
        groups[kv] = kgroups
        crits[kv] = crit
    return LeaderboardResult(rows=tuple(rows), pairs=tuple(pairs), groups=groups,
                             adjust=adjust, rank_adjust="max-t" if adjust == "max-t" else "holm",
                             confidence=confidence, metric=metric,
                             critical_values=crits,
                             n_resamples=n_resamples if adjust == "max-t" else None)


def _model_scores(models, kvals, metric, interval, confidence, n_resamples, rng):
    """{(model, k): ScoreRow} from :func:`passatk.score`, exactly as it gives them."""
    out = {}
    for m in models:
        try:
            res = score(m.n, m.c, kvals, metric=metric, task_ids=m.task, interval=interval,
                        confidence=confidence, n_resamples=n_resamples, rng=rng)
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


def _max_t(x, pairs_ij, ses, confidence, n_resamples, rng):
    """Critical value and the sorted null draws of the largest |t| over the pairs.

    The draws are those of the paired t statistics themselves under normal task values
    with the observed covariance (``_maxt``), each pair with its own SE on N - 1 df.
    """
    live = ses > 0
    if not live.any():
        return None, None
    top = max_t_null(x, pairs_ij[live, 0], pairs_ij[live, 1], n_resamples, rng)
    return float(np.quantile(top, confidence)), top


def _one_k(models, scores, kv, x, board, adjust, confidence, n_resamples, rng, metric):
    names = [m.name for m in models]
    size = len(models)
    shared, diff, sd = _pair_moments(x, board.has)
    pairs_ij = np.array([(i, j) for i in range(size) for j in range(i + 1, size)])
    stats = [_pair_stats(i, j, shared, diff, sd, confidence) for i, j in pairs_ij]
    raw = np.array([np.nan if s[3] is None else s[3] for s in stats])
    holm = _holm(raw)
    adj = {"holm": holm, "bh": _bh(raw)}.get(adjust)
    crit = None
    if adjust == "max-t":
        ses = np.array([0.0 if s[0] is None else s[0] for s in stats])
        crit, mx = _max_t(x, pairs_ij, ses, confidence, n_resamples, rng)
        mx = np.full(0, np.inf) if mx is None else mx
        tabs = np.array([np.inf if s[2] is None else abs(s[2]) for s in stats])
        adj = np.array([raw[q] if stats[q][2] is None else
                        (1 + mx.size - np.searchsorted(mx, tabs[q], side="left"))
                        / (mx.size + 1) for q in range(len(stats))])
    fam = adj if adjust == "max-t" else holm
    alpha = 1.0 - confidence
    better = np.zeros((size, size), dtype=bool)  # better[i, j]: i significantly above j
    pairs = []
    for q, (i, j) in enumerate(pairs_ij):
        se, df, t, p, lo, hi, why = stats[q]
        d = float(diff[i, j]) if shared[i, j] else None
        sig = bool(p is not None and fam[q] < alpha)
        if sig:
            better[i, j], better[j, i] = d > 0, d < 0
        sim = (None, None)
        if crit is not None and se:
            sim = (max(d - crit * se, -1.0), min(d + crit * se, 1.0))
        pairs.append(PairRow(
            k=kv, metric=metric, model_a=names[i], model_b=names[j], diff=d, se=se,
            ci_low=lo, ci_high=hi, df=df, t_stat=t, p_value=p,
            p_adjusted=None if math.isnan(adj[q]) else float(adj[q]), adjust=adjust,
            significant=bool(p is not None and adj[q] < alpha), tasks=int(shared[i, j]),
            only_a=int(board.has[i].sum() - shared[i, j]),
            only_b=int(board.has[j].sum() - shared[i, j]), sim_low=sim[0], sim_high=sim[1],
            confidence=confidence, reason=why))
    groups = _cliques(better, [scores[(nm, kv)].value for nm in names], names)
    rows = _rank_rows(models, scores, kv, better, groups)
    return rows, pairs, groups, crit


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
