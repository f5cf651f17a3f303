"""Frozen result objects returned by :mod:`passatk.stats`.

Every result holds a tuple of rows. A row is one (group, metric, k) and carries the
point estimate, its standard error, an interval, the number of tasks and samples, and the
reason whenever a number is missing. ``records()`` gives one plain ``dict`` per row with
JSON-ready values (``None`` for a missing number, never NaN); the command line prints
exactly these records.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, NamedTuple, TypeVar, overload

#: The stable machine names of ``ci_method`` (the method actually used), each from the start of
#: the readable text the statistics write (kept in ``ci_text``); the first match wins.
CI_NAMES = (
    ("hull of t and quasi-binomial Wilson", "t-wilson-hull"),
    ("t (clusters - 1 df), CR1", "cluster-t"),
    ("t (", "t"),
    ("paired t, CR1", "paired-cluster-t"),
    ("paired t", "paired-t"),
    ("paired studentized bootstrap", "paired-bootstrap-t"),
    ("t, ", "t"),
    ("normal", "normal"),
    ("bootstrap percentile", "percentile"),
    ("bootstrap BCa", "bca"),
    ("Wilson score (binary outcomes)", "wilson"),
    ("Wilson score with the", "wilson-bounded"),
    ("Clopper-Pearson", "clopper-pearson"),
    ("credible", "credible"),
)
_MACHINE = frozenset(name for _, name in CI_NAMES)


def ci_name(text: str) -> str:
    """The stable machine name of an interval method from its readable text.

    >>> ci_name("t, clipped to [0, 1]"), ci_name("bootstrap BCa"), ci_name("t")
    ('t', 'bca', 't')
    """
    if text in _MACHINE:
        return text
    for start, name in CI_NAMES:
        if text.startswith(start):
            return name
    return "other"


class ConfidenceInterval(NamedTuple):
    """The two ends of an interval, as scipy's ``ConfidenceInterval(low, high)``."""

    low: float | None
    high: float | None


def _plain(v: Any) -> Any:
    """A JSON-ready copy of ``v``: NaN becomes None, numpy scalars become Python scalars."""
    if isinstance(v, dict):
        return {str(key): _plain(val) for key, val in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if hasattr(v, "item") and callable(v.item) and getattr(v, "ndim", None) == 0:
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):  # NaN, and the overflow sentinel inf
        return None
    return v


def _to_pandas(records: list[dict[str, Any]]):
    try:
        import pandas as pd
    except ImportError as exc:  # the message is what the caller sees
        raise ImportError(
            "to_pandas() needs pandas, which is not installed; "
            "install it with `pip install passatk[pandas]` or use to_dict()/records()"
        ) from exc
    from .._output import columns, flatten  # the one flattening rule, shared with CSV

    names = columns(records)  # group columns first, even those of later rows only
    return pd.DataFrame.from_records([{c: row.get(c) for c in names}
                                      for row in map(flatten, records)])


def _row_dict(row) -> dict[str, Any]:
    out = {}
    for f in dataclasses.fields(row):
        out[f.name] = _plain(getattr(row, f.name))
    return out


_REPR_FIELDS = {
    "ScoreRow": ("metric", "k", "value", "se", "ci_low", "ci_high", "tasks", "interval"),
    "CompareRow": ("metric", "k", "diff", "se", "ci_low", "ci_high", "p_value", "tasks"),
    "TaskRow": ("task", "n", "c", "k", "value", "ci_low", "ci_high"),
}
_REPR_TEXT = 60  # characters of a text field (a reason) shown in a repr
_REPR_ROWS = 3  # rows shown at each end of a result's repr


def _short(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, str) and len(v) > _REPR_TEXT:
        return repr(v[:_REPR_TEXT - 3] + "...")
    return repr(v)


class _Row:
    """A compact ``repr`` (the main fields, floats to 6 digits) and ``confidence_interval``."""

    __slots__ = ()

    def __post_init__(self) -> None:
        # The statistics name the method in words; the row keeps the words in ci_text and a
        # stable machine name in ci_method (a copy made by dataclasses.replace has both).
        text = getattr(self, "ci_method", None)
        if text is None:
            return
        if text not in _MACHINE:
            object.__setattr__(self, "ci_text", text)
            object.__setattr__(self, "ci_method", ci_name(text))
        elif getattr(self, "ci_text", None) is None:
            object.__setattr__(self, "ci_text", text)

    def __repr__(self) -> str:
        names = _REPR_FIELDS[type(self).__name__]
        parts = [f"group={self.group!r}"] if getattr(self, "group", None) else []
        parts += [f"{name}={_short(getattr(self, name))}" for name in names]
        if self.reason:
            parts.append(f"reason={_short(self.reason)}")
        return f"{type(self).__name__}({', '.join(parts)})"

    @property
    def confidence_interval(self) -> ConfidenceInterval:
        """``(low, high)`` of this row's interval, as scipy's ``confidence_interval``."""
        return ConfidenceInterval(self.ci_low, self.ci_high)

    def to_dict(self) -> dict[str, Any]:
        """This row as a JSON-ready ``dict``, its fields in order (``None``, never NaN)."""
        return _row_dict(self)


_R = TypeVar("_R", bound=_Row)


class _Rows(Generic[_R]):
    """A sequence of result rows: ``len``, iteration, indexing, a DataFrame view, a compact
    ``repr`` (the first and last rows) and the intervals of all rows as arrays."""

    __slots__ = ()
    rows: tuple[_R, ...]

    def __repr__(self) -> str:
        fields = [f"{f.name}={_short(getattr(self, f.name))}" for f in dataclasses.fields(self)
                  if f.name != "rows" and getattr(self, f.name) not in ((), None)]
        head = f"{type(self).__name__}({len(self.rows)} rows, {', '.join(fields)})"
        rows = [repr(r) for r in self.rows]
        if len(rows) > 2 * _REPR_ROWS + 1:
            more = len(rows) - 2 * _REPR_ROWS
            rows = [*rows[:_REPR_ROWS], f"... {more} more rows ...", *rows[-_REPR_ROWS:]]
        return "\n  ".join([head, *rows])

    @property
    def confidence_interval(self) -> ConfidenceInterval:
        """The intervals of all rows as two float64 arrays (NaN where a row has none).

        Like scipy's result for a vectorized statistic; ``row.confidence_interval`` gives
        one row's ``(low, high)``.
        """
        import numpy as np

        def ends(name: str):
            return np.array([np.nan if getattr(r, name) is None else getattr(r, name)
                             for r in self.rows], dtype=np.float64)

        return ConfidenceInterval(ends("ci_low"), ends("ci_high"))

    def to_pandas(self):
        """The rows as a ``pandas.DataFrame``, one column per group label; needs pandas."""
        return _to_pandas(self.records())

    def to_polars(self):
        """The rows as a ``polars.DataFrame``, the columns of :meth:`to_pandas`; needs polars."""
        try:
            import polars as pl
        except ImportError as exc:
            raise ImportError("to_polars() needs polars, which is not installed; install it "
                              "with `pip install polars` or use to_dict()/records()") from exc
        from .._output import columns, flatten

        records = self.records()
        flat = [flatten(rec) for rec in records]
        names = columns(records)
        return pl.DataFrame([{c: row.get(c) for c in names} for row in flat],
                            infer_schema_length=None)

    def _repr_html_(self) -> str:
        """The rows as an HTML table, for notebooks (the command line's table columns)."""
        from .._output import render_html

        return render_html(self.records(), _REPR_FIELDS[_ROW_TYPES[type(self).__name__].__name__])

    def records(self) -> list[dict[str, Any]]:
        """One JSON-ready ``dict`` per row; the keys are the field names of the row class."""
        return [r.to_dict() for r in self.rows]

    #: the command named in the envelope
    _COMMAND: ClassVar[str] = ""

    def to_dict(self) -> dict[str, Any]:
        """The whole result as the JSON envelope of docs/cli.md (``schema``, ``passatk``,
        ``command``, ``inputs``, ``seed``, the result's fields, ``rows``)."""
        from .._output import envelope

        fields = {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)
                  if f.name != "rows"}
        return envelope(self._COMMAND, self.records(), **fields)

    @classmethod
    def from_dict(cls, data: Any) -> Any:
        """The result back from :meth:`to_dict` (or from the command line's ``--format json``).

        Non-finite numbers were written as null and come back as None.
        """
        from .._output import check_envelope

        data = check_envelope(data, cls._COMMAND)
        row_type = _ROW_TYPES[cls.__name__]
        names = [f.name for f in dataclasses.fields(row_type)]
        rows = []
        for i, rec in enumerate(data["rows"]):
            unknown = sorted(set(rec) - set(names))
            if unknown:
                raise ValueError(f"rows[{i}] has field(s) {unknown} that a {row_type.__name__} "
                                 "does not have")
            try:
                rows.append(row_type(**rec))
            except TypeError as exc:
                raise ValueError(f"rows[{i}] is not a {row_type.__name__}: {exc}") from None
        kw = {f.name: data[f.name] for f in dataclasses.fields(cls)
              if f.name != "rows" and f.name in data}
        for name, value in kw.items():
            if isinstance(value, list):
                kw[name] = tuple(tuple(v) if isinstance(v, list) else v for v in value)
        try:
            return cls(rows=tuple(rows), **kw)
        except TypeError as exc:
            raise ValueError(f"not the envelope of a {cls.__name__}: {exc}") from None

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[_R]:
        return iter(self.rows)

    @overload
    def __getitem__(self, i: int) -> _R: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[_R, ...]: ...
    def __getitem__(self, i: int | slice) -> _R | tuple[_R, ...]:
        return self.rows[i]


@dataclass(frozen=True, repr=False)
class ScoreRow(_Row):
    """One benchmark score: one group, one metric, one k.

    ``value`` is the mean over tasks of the per-task estimate; ``se``, ``ci_low`` and
    ``ci_high`` belong to the estimand named in ``estimand`` and were computed by
    ``ci_method``; ``interval`` names the interval this row used (``"credible"`` on the
    Bayesian rows, ``"wilson"`` after a stated fallback). The other standard errors are
    given as well where they could be computed (``None`` otherwise, with the reason in
    ``se_fixed_reason`` or ``reason``). Bayesian rows leave ``se`` empty and put the
    posterior standard deviation in ``posterior_sd``. ``tau`` is the threshold of the
    G-Pass@k rows.
    """

    group: dict = field(hash=False)
    metric: str
    k: int
    value: float | None
    se: float | None
    ci_low: float | None
    ci_high: float | None
    tasks: int
    samples: int
    reason: str | None
    estimand: str
    ci_method: str | None
    confidence: float
    biased: bool = False
    se_super: float | None = None
    se_fixed: float | None = None
    se_fixed_reason: str | None = None
    se_cluster: float | None = None
    clusters: int | None = None
    sd_between: float | None = None
    percentile_low: float | None = None
    percentile_high: float | None = None
    bca_low: float | None = None
    bca_high: float | None = None
    interval: str | None = None
    posterior_sd: float | None = None
    tau: float | None = None
    ci_text: str | None = None
    wild_low: float | None = None
    wild_high: float | None = None
    wild_weights: str | None = None
    wild_resamples: int | None = None


@dataclass(frozen=True, repr=False)
class ScoreResult(_Rows[ScoreRow]):
    """The result of :func:`passatk.score`: rows ordered by group, metric, then k."""

    rows: tuple[ScoreRow, ...]
    interval: str | None
    confidence: float
    merged_duplicates: tuple = ()
    n_resamples: int | None = None

    _COMMAND = "score"


@dataclass(frozen=True, repr=False)
class CompareRow(_Row):
    """The paired comparison of run A and run B at one k: ``diff`` = mean(A) - mean(B).

    ``se``, ``ci_low``, ``ci_high`` and ``p_value`` come from the paired t test on the
    per-task differences (cluster-robust CR1 on clusters - 1 df when ``clusters`` is set).
    ``boot_low``/``boot_high`` are the paired studentized bootstrap interval (over
    clusters when given); ``band_low``/``band_high`` the simultaneous studentized max-T
    band over all k compared in the call. The Wilcoxon test answers another question
    (symmetry of the differences about 0), named in ``wilcoxon_hypothesis``.
    """

    group: dict = field(hash=False)
    metric: str
    k: int
    diff: float | None
    se: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    tasks: int
    reason: str | None
    estimand: str
    confidence: float
    value_a: float | None = None
    value_b: float | None = None
    df: int | None = None
    t_stat: float | None = None
    p_value_holm: float | None = None
    p_value_bh: float | None = None
    boot_low: float | None = None
    boot_high: float | None = None
    band_low: float | None = None
    band_high: float | None = None
    perm_p_value: float | None = None
    perm_exact: bool | None = None
    wilcoxon_stat: float | None = None
    wilcoxon_p_value: float | None = None
    wilcoxon_method: str | None = None
    mcnemar_b: int | None = None
    mcnemar_c: int | None = None
    mcnemar_p_value: float | None = None
    samples_a: int | None = None
    samples_b: int | None = None
    ci_method: str | None = None
    clusters: int | None = None
    wilcoxon_hypothesis: str | None = None
    ci_text: str | None = None
    wild_low: float | None = None
    wild_high: float | None = None
    wild_p_value: float | None = None
    wild_weights: str | None = None
    wild_resamples: int | None = None


@dataclass(frozen=True, repr=False)
class CompareResult(_Rows[CompareRow]):
    """The result of :func:`passatk.compare`: one row per k."""

    rows: tuple[CompareRow, ...]
    confidence: float
    only_in_a: tuple = ()
    only_in_b: tuple = ()
    band_critical_value: float | None = None
    n_resamples: int | None = None

    _COMMAND = "compare"


@dataclass(frozen=True)
class PlanResult:
    """A planning answer: ``value`` (tasks, samples or an effect size) and its inputs."""

    quantity: str
    value: float
    inputs: dict = field(hash=False)
    note: str = ""

    to_dict = _Row.to_dict


@dataclass(frozen=True, eq=False)
class Simulation:
    """Simulated benchmark(s) from :func:`passatk.simulate`.

    ``p`` holds the true per-task success rates, ``n`` and ``c`` the counts; all three have
    shape ``(n_tasks,)``, or ``(n_benchmarks, n_tasks)`` when several benchmarks were drawn.
    """

    n: Any
    c: Any
    p: Any
    a: float
    b: float

    def true_pass_at_k(self, k: int):
        """The mean over the simulated tasks of 1 - (1 - p_i)^k: the fixed-benchmark truth."""
        import numpy as np

        with np.errstate(divide="ignore"):  # p = 1 gives log1p(-1) = -inf, pass@k = 1
            return np.mean(-np.expm1(k * np.log1p(-self.p)), axis=-1)

    def population_pass_at_k(self, k: int) -> float:
        """E[1 - (1 - p)^k] for p ~ Beta(a, b): the super-population truth.

        It is 1 - prod_{j<k} (b + j) / (a + b + j).
        """
        s = 0.0
        for j in range(k):
            s += math.log1p(-self.a / (self.a + self.b + j))
        return -math.expm1(s)

    def to_dict(self) -> dict[str, Any]:
        """The counts and rates as JSON-ready lists."""
        return {"n": self.n.tolist(), "c": self.c.tolist(), "p": self.p.tolist(),
                "a": self.a, "b": self.b}


@dataclass(frozen=True, repr=False)
class TaskRow(_Row):
    """One task's estimate and an interval for its own success quantity.

    ``value`` is the unbiased per-task estimate; ``ci_low``/``ci_high`` map a Wilson or
    Clopper-Pearson interval for the task's success rate p through the increasing
    g(p) = 1 - (1 - p)^k (pass@k) or p^k (pass^k), so they hold the same coverage.
    """

    task: Any
    n: int
    c: int
    k: int
    metric: str
    value: float | None
    ci_low: float | None
    ci_high: float | None
    p_low: float
    p_high: float
    ci_method: str
    confidence: float
    reason: str | None = None
    ci_text: str | None = None


@dataclass(frozen=True, repr=False)
class TaskResult(_Rows[TaskRow]):
    """The result of :func:`passatk.stats.task_intervals`: one row per task, in input order."""

    rows: tuple[TaskRow, ...]
    method: str
    confidence: float

    _COMMAND = "task_intervals"

    def to_dict(self) -> dict[str, Any]:
        """The whole result as a JSON-ready ``dict`` with the rows under ``"rows"``."""
        return {"kind": "tasks", "method": self.method, "confidence": self.confidence,
                "rows": self.records()}


@dataclass(frozen=True, repr=False)
class LeaderboardRow(_Row):
    """One model at one k in :func:`passatk.leaderboard`: its score row (as
    :func:`passatk.score` gives it), its rank interval [``rank_low``, ``rank_high``], how
    many models it is significantly better (``better_than``) and worse (``worse_than``)
    than, the indistinguishable groups it belongs to (1-based, see
    ``LeaderboardResult.groups``) and the models with exactly the same score (``tied``)."""

    k: int
    model: str
    metric: str
    value: float | None
    se: float | None
    ci_low: float | None
    ci_high: float | None
    rank_low: int
    rank_high: int
    tasks: int
    samples: int
    better_than: int
    worse_than: int
    groups: tuple
    tied: tuple
    ci_method: str | None
    interval: str | None
    estimand: str
    confidence: float
    reason: str | None = None
    ci_text: str | None = None


@dataclass(frozen=True, repr=False)
class PairRow(_Row):
    """One pair (``model_a`` - ``model_b``) at one k: the paired difference on the ``tasks``
    both share (``only_a``/``only_b`` tasks of each were left out), its SE, t interval and
    p-value, the p-value adjusted over all pairs of this k (``adjust``), whether it is
    significant at 1 - confidence, and with max-T the simultaneous interval
    ``sim_low``/``sim_high``."""

    k: int
    metric: str
    model_a: str
    model_b: str
    diff: float | None
    se: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    p_adjusted: float | None
    adjust: str
    significant: bool
    tasks: int
    confidence: float
    df: int | None = None
    t_stat: float | None = None
    only_a: int = 0
    only_b: int = 0
    sim_low: float | None = None
    sim_high: float | None = None
    reason: str | None = None


_REPR_FIELDS["LeaderboardRow"] = ("k", "model", "value", "ci_low", "ci_high", "rank_low",
                                  "rank_high")
_REPR_FIELDS["PairRow"] = ("k", "model_a", "model_b", "diff", "p_value", "p_adjusted",
                           "significant")


@dataclass(frozen=True, repr=False)
class LeaderboardResult(_Rows):
    """The result of :func:`passatk.leaderboard`.

    ``rows``: one per model and k, best first within each k. ``pairs``: one per pair and k.
    ``groups``: for each k, the indistinguishable groups (tuples of model names, best
    first). ``rank_adjust`` names the family-wise procedure behind the rank intervals and
    groups; ``critical_values`` the max-T critical value per k (None for Holm and BH).
    """

    rows: tuple[LeaderboardRow, ...]
    pairs: tuple[PairRow, ...]
    groups: dict = field(hash=False)
    adjust: str = "holm"
    rank_adjust: str = "holm"
    confidence: float = 0.95
    metric: str = "pass@k"
    critical_values: dict = field(default_factory=dict, hash=False)
    n_resamples: int | None = None

    def records(self) -> list[dict[str, Any]]:
        """One JSON-ready ``dict`` per model and k."""
        return [r.to_dict() for r in self.rows]

    def pair_records(self) -> list[dict[str, Any]]:
        """One JSON-ready ``dict`` per pair and k."""
        return [p.to_dict() for p in self.pairs]

    @property
    def models(self) -> list[str]:
        """The model names, best first at the first k."""
        k0 = self.rows[0].k
        return [r.model for r in self.rows if r.k == k0]

    def matrix(self, k: int | None = None, what: str = "diff"):
        """(names, M x M array) of ``what`` ("diff", "p_value", "p_adjusted", "se" or
        "tasks") at ``k`` (default: the first k), models best first; entry [i, j] is for
        row model i minus column model j (NaN on the diagonal and where undefined)."""
        import numpy as np

        k = self.rows[0].k if k is None else k
        names = [r.model for r in self.rows if r.k == k]
        if not names:
            raise ValueError(f"k={k} is not in this leaderboard")
        if what not in ("diff", "p_value", "p_adjusted", "se", "tasks"):
            raise ValueError(f"what must be one of 'diff', 'p_value', 'p_adjusted', 'se', "
                             f"'tasks', got {what!r}")
        at = {m: i for i, m in enumerate(names)}
        out = np.full((len(names), len(names)), np.nan)
        for p in self.pairs:
            if p.k != k:
                continue
            v = getattr(p, what)
            if v is None:
                continue
            i, j = at[p.model_a], at[p.model_b]
            out[i, j] = v
            out[j, i] = -v if what == "diff" else v
        return names, out

    def to_dict(self) -> dict[str, Any]:
        """The whole result as a JSON-ready ``dict``."""
        return {
            "kind": "leaderboard",
            "metric": self.metric,
            "confidence": self.confidence,
            "adjust": self.adjust,
            "rank_adjust": self.rank_adjust,
            "n_resamples": self.n_resamples,
            "critical_values": {str(k): _plain(v) for k, v in self.critical_values.items()},
            "groups": {str(k): [list(g) for g in v] for k, v in self.groups.items()},
            "rows": self.records(),
            "pairs": self.pair_records(),
        }

    def to_latex(self, k: int | None = None, decimals: int = 3) -> str:
        """A booktabs LaTeX table of the models at ``k`` (default: every k)."""
        from ._report import latex_table

        return latex_table(self, k, decimals)

#: the row class of each result class, for from_dict
_ROW_TYPES = {"ScoreResult": ScoreRow, "CompareResult": CompareRow, "TaskResult": TaskRow}
