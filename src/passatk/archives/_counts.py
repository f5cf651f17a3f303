"""Per-(group, task) counts: the one thing every reader produces."""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from .._limits import MAX_N as MAX_COUNT  # counts stay exact in a double
from ._errors import Skipped, show

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Counts", "GroupCounts", "StoredMetric", "merge_counts"]

GroupKey = tuple[tuple[str, object], ...]

_DIGITS = re.compile(r"([0-9]+)")


def _task_key(task: str) -> tuple:
    """Natural order ("HumanEval/2" before "HumanEval/10") without int(): text and ASCII digit
    runs alternate, and a run compares by its length without leading zeros, then its digits.

    >>> sorted(["T/10", "T/9", "T/09", "x1²", "U"], key=lambda t: (_task_key(t), t))
    ['T/09', 'T/9', 'T/10', 'U', 'x1²']
    """
    parts = _DIGITS.split(task)
    for i in range(1, len(parts), 2):
        run = parts[i].lstrip("0")
        parts[i] = f"{len(run):010d}{run}"
    return tuple(parts)


def _sort_key(task: str) -> tuple:
    return _task_key(task), task


def _natural_sorted(tasks) -> list[str]:
    """``sorted(tasks, key=_sort_key)``, with one str per key instead of a tuple of parts.

    The parts joined by NUL compare as the tuple does when no id holds a NUL (a proper
    prefix sorts first either way); ties on the key fall back to the id (the first sort).
    """
    out = sorted(tasks)
    if any("\0" in t for t in out):
        out.sort(key=_task_key)
    else:
        out.sort(key=lambda t: "\0".join(_task_key(t)))
    return out


def _value_key(value: object) -> tuple:
    if value is None:
        return (0, 0, "")
    if isinstance(value, bool):
        return (1, int(value), "")
    if isinstance(value, (int, float)):
        return (2, value, "")
    return (3, 0, str(value))


def _group_key(group: GroupKey) -> tuple:
    return tuple((name, _value_key(value)) for name, value in group)


class Tally:
    """Sums of n and c per (group, task): one dict of row numbers per group, and the sums in
    two int64 arrays (no Python object per row beyond the task id and its row number).

    >>> t = Tally()
    >>> t.add((), "T/1", 3, 1), t.add((), "T/1", 2, 2), t.add((), "T/2", 1, 0)
    (0, 0, 1)
    >>> t.n.tolist(), t.c.tolist()
    ([5, 1], [3, 0])
    """

    def __init__(self) -> None:
        self.rows: dict[GroupKey, dict[str, int]] = {}
        self.n = array("q")
        self.c = array("q")

    def __len__(self) -> int:
        return len(self.n)

    def items(self) -> Iterator[tuple[tuple[GroupKey, str], tuple[int, int]]]:
        """``((group, task), (n, c))`` per row, as a dict of the sums would give."""
        n, c = self.n, self.c
        for group, rows in self.rows.items():
            for task, i in rows.items():
                yield (group, task), (n[i], c[i])

    def __iter__(self) -> Iterator[tuple[GroupKey, str]]:
        return (key for key, _ in self.items())

    def merge(self, other: Tally, label: GroupKey = ()) -> None:
        """Add every row of ``other``, its group prefixed with ``label``."""
        for (group, task), (n, c) in other.items():
            self.add(label + group, task, n, c)

    def relabel(self, old: GroupKey, new: GroupKey) -> None:
        """Move the rows of group ``old`` into group ``new`` (summed with its rows)."""
        rows = self.rows.pop(old)
        for task, i in rows.items():
            self.add(new, task, self.n[i], self.c[i])
            self.n[i] = self.c[i] = 0

    def find(self, group: GroupKey, task: str) -> int | None:
        """The row number of (group, task), or None."""
        rows = self.rows.get(group)
        return None if rows is None else rows.get(task)

    def add(self, group: GroupKey, task: str, n: int, c: int) -> int:
        """Add to the row of (group, task); return its row number."""
        rows = self.rows.get(group)
        if rows is None:
            rows = self.rows[group] = {}
        i = rows.get(task)
        try:
            if i is None:
                i = rows[task] = len(self.n)
                self.n.append(n)
                self.c.append(c)
            else:
                self.n[i] += n
                self.c[i] += c
        except OverflowError:
            raise ValueError(_too_many(group, task)) from None
        return i


def _too_many(group: GroupKey, task: str) -> str:
    where = f" in group {dict(group)}" if group else ""
    return (f"task {show(task)}{where}: n sums to 2**53 or more over the files read (counts "
            "must be exact in a double)")


@dataclass(frozen=True)
class StoredMetric:
    """A number an archive stores about itself, normalized to a fraction.

    Attributes
    ----------
    group : tuple of (field, value) pairs
        The group it belongs to, in the same form as ``Counts.groups``.
    metric : str
        ``"pass@k"`` or ``"pass^k"``.
    k : int
        The k of the stored number.
    value : float
        The stored number as a fraction (percent values are divided by 100).
    source : str
        Where it was found: ``file: $.json.path``.
    scale : str
        ``"fraction"`` or ``"percent"``: the scale the archive used.
    task : str or None
        The task for per-task stored numbers (LiveCodeBench per-problem pass@1), else None.
    """

    group: GroupKey
    metric: str
    k: int
    value: float
    source: str
    scale: str = "fraction"
    task: str | None = None


class GroupCounts(NamedTuple):
    """The rows of one group: its fields and parallel arrays ``task``, ``n``, ``c``."""

    group: dict
    task: np.ndarray
    n: np.ndarray
    c: np.ndarray


def _readonly(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False)
class Counts:
    """Per-(group, task) sample counts read from result archives.

    Rows are sorted by group, then by task in natural order ("HumanEval/2" before
    "HumanEval/10"). The arrays are parallel and read-only.

    Attributes
    ----------
    group : numpy.ndarray of int64
        Index of each row's group in ``groups``.
    groups : tuple of tuples of (field, value) pairs
        The distinct groups, e.g. ``(("model", "a"), ("metric_set", "plus"))``; ``()`` when
        the archive is not grouped. ``group_dicts`` gives them as dicts.
    task : numpy.ndarray of object
        Task id of each row (Python str, kept exactly: trailing NULs and long ids included).
    n : numpy.ndarray of int64
        Number of samples of the task.
    c : numpy.ndarray of int64
        Number of correct samples of the task.
    metric : str
        ``"pass@k"`` (default) or ``"pass^k"`` (tau-bench trials).
    stored : tuple of StoredMetric
        Numbers the archives store about themselves, as fractions, for ``passatk check``.
    skipped : Skipped
        Records skipped with ``skip_bad=True`` (count and places).
    files : tuple of str
        The files that were read.
    notes : tuple of str
        Things a reader noticed that change no number but deserve a look (files skipped in a
        walk, a field chosen by detection, one error string on every failed sample).

    Examples
    --------
    >>> counts = Counts.from_rows([("HumanEval/1", 10, 3), ("HumanEval/0", 10, 7)])
    >>> counts.task.tolist(), counts.n.tolist(), counts.c.tolist()
    (['HumanEval/0', 'HumanEval/1'], [10, 10], [7, 3])
    >>> merged = counts.merge(Counts.from_rows([("HumanEval/0", 5, 5)]))
    >>> merged.n.tolist(), merged.c.tolist()
    ([15, 10], [12, 3])
    >>> for g in merged.iter_groups():
    ...     print(g.group, g.task.tolist(), g.c.tolist())
    {} ['HumanEval/0', 'HumanEval/1'] [12, 3]
    """

    group: np.ndarray
    groups: tuple[GroupKey, ...]
    task: np.ndarray
    n: np.ndarray
    c: np.ndarray
    metric: str = "pass@k"
    stored: tuple[StoredMetric, ...] = ()
    skipped: Skipped = field(default_factory=Skipped)
    files: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_rows(
        cls,
        rows: Iterable[tuple],
        *,
        metric: str = "pass@k",
        stored: Iterable[StoredMetric] = (),
        skipped: Skipped | None = None,
        files: Iterable[str] = (),
    ) -> Counts:
        """Build from rows ``(task, n, c)`` or ``(group, task, n, c)``; equal keys are summed.

        ``group`` is a tuple of (field, value) pairs or a dict.
        """
        acc = Tally()
        for row in rows:
            if len(row) == 3:
                group, (task, n, c) = (), row
            elif len(row) == 4:
                group, task, n, c = row
            else:
                raise ValueError(f"row must be (task, n, c) or (group, task, n, c), got {row!r}")
            if isinstance(group, dict):
                group = tuple(group.items())
            acc.add(tuple(group), str(task), int(n), int(c))
        return cls._from_acc(acc, metric=metric, stored=tuple(stored),
                             skipped=skipped or Skipped(), files=tuple(files))

    @classmethod
    def _from_acc(
        cls,
        acc: Tally,
        *,
        metric: str,
        stored: tuple[StoredMetric, ...] = (),
        skipped: Skipped | None = None,
        files: tuple[str, ...] = (),
    ) -> Counts:
        import numpy as np  # here, so that an error before any reading never loads it

        if metric not in ("pass@k", "pass^k"):
            raise ValueError(f"metric must be 'pass@k' or 'pass^k', got {metric!r}")
        groups = sorted(acc.rows, key=_group_key)
        group_parts, task_parts, index_parts = [], [], []
        for g, group in enumerate(groups):
            rows = acc.rows[group]
            tasks = _natural_sorted(rows)
            task_parts.append(np.array(tasks, dtype=object))
            index_parts.append(np.fromiter((rows[t] for t in tasks), np.int64, len(tasks)))
            group_parts.append(np.full(len(tasks), g, dtype=np.int64))
        order = np.concatenate(index_parts) if groups else np.zeros(0, np.int64)
        n = np.frombuffer(acc.n, dtype=np.int64)[order] if len(acc) else order.copy()
        c = np.frombuffer(acc.c, dtype=np.int64)[order] if len(acc) else order.copy()
        task = np.concatenate(task_parts) if groups else np.array([], dtype=object)
        group = np.concatenate(group_parts) if groups else order.copy()
        big = np.flatnonzero(n >= MAX_COUNT)
        if big.size:
            raise ValueError(_too_many(groups[group[big[0]]], task[big[0]]))
        return cls(
            group=_readonly(group),
            groups=tuple(groups),
            task=_readonly(task),
            n=_readonly(n),
            c=_readonly(c),
            metric=metric,
            stored=stored,
            skipped=skipped if skipped is not None else Skipped(),
            files=files,
        )

    # ------------------------------------------------------------------ access
    def __len__(self) -> int:
        return int(self.task.shape[0])

    def __repr__(self) -> str:
        return (
            f"Counts({len(self)} rows, {len(self.groups)} group(s), {self.samples} samples, "
            f"metric={self.metric!r}, stored={len(self.stored)}, skipped={self.skipped.count})"
        )

    @property
    def samples(self) -> int:
        """Total number of samples (the sum of n)."""
        return int(self.n.sum())

    @property
    def group_dicts(self) -> list[dict]:
        """The groups as dicts, in the order of ``groups``."""
        return [dict(g) for g in self.groups]

    def iter_groups(self) -> Iterator[GroupCounts]:
        """Yield one ``GroupCounts(group, task, n, c)`` per group, in order."""
        for i, g in enumerate(self.groups):
            rows = self.group == i
            yield GroupCounts(dict(g), self.task[rows], self.n[rows], self.c[rows])

    def stored_for(self, group: dict | GroupKey) -> list[StoredMetric]:
        """The stored numbers that belong to ``group``."""
        key = tuple(group.items()) if isinstance(group, dict) else tuple(group)
        return [s for s in self.stored if s.group == key]

    def to_rows(self) -> list[dict]:
        """One dict per row: the group fields, then ``task_id``, ``n`` and ``c``."""
        return [
            {**dict(self.groups[g]), "task_id": str(t), "n": int(n), "c": int(c)}
            for g, t, n, c in zip(
                self.group.tolist(), self.task, self.n.tolist(), self.c.tolist(), strict=True
            )
        ]

    # ------------------------------------------------------------------ merging
    def merge(self, *others: Counts) -> Counts:
        """Sum n and c per (group, task) with the other counts: the exact merge of partial reads.

        Raises
        ------
        TypeError
            If an argument is not a Counts.
        ValueError
            If the metrics differ (pass@k and pass^k counts cannot be pooled).
        """
        return merge_counts([self, *others])


def merge_counts(parts: Iterable[Counts]) -> Counts:
    """Merge counts from partial reads: n and c are summed per (group, task).

    The result does not depend on the order of ``parts``. Stored metrics, skipped records and
    files are concatenated.

    Parameters
    ----------
    parts : iterable of Counts
        At least one.

    Returns
    -------
    Counts

    Examples
    --------
    >>> a = Counts.from_rows([({"model": "x"}, "t1", 3, 1)])
    >>> b = Counts.from_rows([({"model": "x"}, "t1", 2, 2), ({"model": "y"}, "t1", 4, 0)])
    >>> m = merge_counts([a, b])
    >>> m.group_dicts, m.n.tolist(), m.c.tolist()
    ([{'model': 'x'}, {'model': 'y'}], [5, 4], [3, 0])
    """
    parts = list(parts)
    if not parts:
        raise ValueError("merge_counts needs at least one Counts, got none")
    for i, p in enumerate(parts):
        if not isinstance(p, Counts):
            raise TypeError(f"merge_counts: parts[{i}] must be Counts, got {type(p).__name__}")
    metrics = {p.metric for p in parts}
    if len(metrics) > 1:
        raise ValueError(
            f"cannot merge counts of different metrics {sorted(metrics)}: pass@k and pass^k "
            "archives must be scored separately"
        )
    acc = Tally()
    for p in parts:
        for g, t, n, c in zip(p.group.tolist(), p.task.tolist(), p.n.tolist(), p.c.tolist(),
                              strict=True):
            acc.add(p.groups[g], t, n, c)
    skipped = Skipped()
    for p in parts:
        skipped = skipped + p.skipped
    return Counts._from_acc(
        acc,
        metric=parts[0].metric,
        stored=tuple(s for p in parts for s in p.stored),
        skipped=skipped,
        files=tuple(f for p in parts for f in p.files),
    )
