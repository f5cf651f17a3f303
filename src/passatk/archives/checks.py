"""Recompute the numbers an archive stores about itself (``passatk check``)."""

import functools
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

from passatk.archives.counts import Counts, GroupCounts, StoredMetric

#: a stored 1.0 where k exceeds some task's n (CRUXEval's pass_at_5 = 100 for a greedy run):
#: the harness's convention, not a number passatk can reproduce
UNDEFINED = "undefined"


@dataclass(frozen=True)
class CheckRow:
    """One stored number (``group``, ``metric``, ``k``, ``task`` or None) and its value as a
    fraction, recomputed from the samples (None: ``reason`` says why), ``rel_diff`` = |recomputed
    - stored| / |stored| (or the absolute difference), ``status`` ``"ok"``, ``"MISMATCH"``,
    ``"MISSING"`` or ``"undefined"``, the archive's ``scale`` and the ``source`` (file: $.path)."""

    group: dict
    metric: str
    k: int
    task: str | None
    stored: float
    recomputed: float | None
    rel_diff: float | None
    status: str
    scale: str
    source: str
    reason: str | None

    def to_dict(self) -> dict[str, Any]:
        """The fields as a dict, in order."""
        return asdict(self)


@dataclass(frozen=True)
class CheckResult:
    """The rows of :func:`check`, the tolerance, and whether an undefined row is a finding."""

    rows: tuple[CheckRow, ...]
    tolerance: float
    strict: bool = False

    def __iter__(self) -> Iterator[CheckRow]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def count(self, status: str) -> int:
        """How many rows have ``status``."""
        return sum(r.status == status for r in self.rows)

    @property
    def findings(self) -> int:
        """Rows that do not agree: MISMATCH and MISSING, plus undefined ones when strict."""
        return len(self.rows) - self.count("ok") - (0 if self.strict else self.count(UNDEFINED))

    @property
    def ok(self) -> bool:
        """True when there are no findings."""
        return self.findings == 0

    def summary(self) -> str:
        """One line: how many numbers agree, how many do not, how many are undefined."""
        total, agree, undefined = len(self.rows), self.count("ok"), self.count(UNDEFINED)
        bad = total - agree - undefined
        text = (f"{agree} of {total} stored number(s) agree within relative "
                f"{self.tolerance:g}" + (f"; {bad} do not" if bad else ""))
        if undefined:
            text += (f"; {undefined} undefined (k > n; the harness stored 1.0), a finding "
                     + ("with --strict" if self.strict else "only with --strict"))
        return text


def _row(stored: StoredMetric, g: GroupCounts | None, index: Callable[[tuple], dict[str, int]],
         tolerance: float) -> CheckRow:
    """One stored number recomputed from its group's counts (``index``: a group's task rows)."""
    import passatk  # the numerics when needed: reading archives does not need numba
    recomputed, rel, status = None, None, "MISSING"
    i = None if g is None or stored.task is None else index(tuple(stored.group)).get(
        str(stored.task))
    if g is None:
        reason = "no samples of this group in the archives"
    elif stored.task is None:
        row = passatk.score(g.n, g.c, stored.k, metric=stored.metric, task_ids=g.task,
                            missing="report")[0]
        recomputed, reason = row.value, row.reason
    elif i is None:
        reason = f"no samples of task {stored.task} in the archives"
    elif g.n[i] < stored.k:
        reason = f"k={stored.k} exceeds n={int(g.n[i])} of task {stored.task}"
    else:
        fn = passatk.pass_hat_k if stored.metric == "pass^k" else passatk.pass_at_k
        recomputed, reason = float(fn(int(g.n[i]), int(g.c[i]), stored.k)), None
    if recomputed is not None:
        diff = abs(recomputed - stored.value)
        rel = diff / abs(stored.value) if stored.value != 0 else diff
        status = "ok" if rel <= tolerance else "MISMATCH"
    elif g is not None and abs(stored.value - 1.0) <= tolerance and int(g.n.min()) < stored.k:
        status = UNDEFINED
        reason = f"undefined: k > n; the stored value is the harness's 1.0 ({reason})"
    return CheckRow(dict(stored.group), stored.metric, stored.k, stored.task, stored.value,
                    recomputed, rel, status, stored.scale, stored.source, reason)


def check(counts: Counts, *, tolerance: float = 1e-9, strict: bool = False) -> CheckResult:
    """Recompute every number the archives store about themselves from their samples (a
    ValueError when they store none).

    Parameters
    ----------
    counts : Counts
        What :func:`read_counts` returned; its ``stored`` numbers are checked.
    tolerance : float, optional
        The largest relative difference that counts as agreement (default 1e-9).
    strict : bool, optional
        Count a stored 1.0 where k exceeds some task's n (the harness's convention, status
        ``"undefined"``) as a finding.

    Returns
    -------
    CheckResult
        One :class:`CheckRow` per stored number; ``findings`` counts the disagreements.

    Examples
    --------
    >>> import os, tempfile
    >>> from passatk.archives import check, read_counts, write_archive
    >>> path = os.path.join(tempfile.mkdtemp(), "eval_results.json")
    >>> _ = write_archive(path, ["t/0", "t/1"], [[True, False], [True, True]], format="evalplus")
    >>> result = check(read_counts(path))
    >>> result.ok, [(r.k, r.stored, r.status) for r in result]
    (True, [(1, 0.75, 'ok')])
    >>> result.summary()
    '1 of 1 stored number(s) agree within relative 1e-09'
    """
    if not isinstance(counts, Counts):
        raise TypeError(f"counts must be a Counts (from read_counts), got {type(counts).__name__}")
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)):
        raise TypeError(f"tolerance must be a number, got {tolerance!r}")
    if not tolerance > 0 or tolerance == float("inf"):
        raise ValueError(f"tolerance must be positive and finite, got {tolerance!r}")
    if not counts.stored:
        raise ValueError("nothing to check: the archives store no pass@k numbers about "
                         "themselves (EvalPlus v3, CRUXEval, BigCodeBench *_pass_at_k.json, "
                         "lm-eval results, ...)")
    by_group = {tuple(g.group.items()): g for g in counts.iter_groups()}
    index = functools.cache(lambda group: {str(t): i for i, t in enumerate(
        by_group[group].task.tolist())})  # made at a group's first per-task number
    rows = (_row(s, by_group.get(tuple(s.group)), index, float(tolerance)) for s in counts.stored)
    return CheckResult(tuple(rows), float(tolerance), bool(strict))
