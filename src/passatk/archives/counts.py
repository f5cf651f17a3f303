"""Per-(group, task) counts: the one thing every reader produces."""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from passatk._limits import MAX_N as MAX_COUNT  # counts stay exact in a double
from passatk.archives.errors import Skipped, show

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


class Block(NamedTuple):
    """Rows added in bulk: per row an index into ``groups``, the task id (a pyarrow string
    array: bytes and offsets), n and c (integers). ``order``: the rows are unique, ``groups``
    is in Counts' group order, and ``order`` sorts the rows as Counts sorts them."""

    groups: tuple[GroupKey, ...]
    g: np.ndarray
    task: Any
    n: np.ndarray
    c: np.ndarray
    order: np.ndarray | None = None


def task_array(tasks: list[str]) -> np.ndarray:
    """Task ids as a NumPy array of str: ``StringDType`` (16 bytes an id of up to 15 bytes,
    longer ones in an arena), or ``object`` before NumPy 2."""
    import numpy as np

    kind = getattr(np.dtypes, "StringDType", None)
    return np.array(tasks, dtype=kind() if kind is not None else object)


_CHUNK = 1 << 16  # ids converted at a time from Arrow to NumPy


def strings(arr: Any, order: np.ndarray) -> np.ndarray:
    """``arr.take(order)`` (pyarrow strings) as :func:`task_array` gives it, a chunk of Python
    str at a time: no sorted copy of the Arrow array, no str per task kept."""
    import numpy as np

    out = np.empty(len(order), dtype=task_array([]).dtype)
    for s in range(0, len(order), _CHUNK):
        out[s:s + _CHUNK] = take(arr, order[s:s + _CHUNK]).to_pylist()
    return out


def take(arr: Any, at: np.ndarray) -> Any:
    """``arr.take(at)`` for a pyarrow array or chunked array; a chunked one is taken from
    chunk by chunk (pyarrow's own joins the chunks on every call)."""
    import numpy as np
    import pyarrow as pa

    if not isinstance(arr, pa.ChunkedArray):
        return arr.take(at)
    if arr.num_chunks == 1:
        return arr.chunk(0).take(at)
    offsets = np.cumsum([0] + [len(c) for c in arr.chunks])
    chunk = np.searchsorted(offsets, at, side="right") - 1
    pieces, where = [], []
    for j in np.unique(chunk).tolist():
        sel = np.flatnonzero(chunk == j)
        pieces.append(arr.chunk(j).take(at[sel] - offsets[j]))
        where.append(sel)
    inverse = np.empty(len(at), np.int64)
    inverse[np.concatenate(where)] = np.arange(len(at))
    return pa.concat_arrays(pieces).take(inverse) if pieces else arr.chunk(0).take(at)


def natural_order(g: np.ndarray | None, t: Any) -> np.ndarray:
    """The permutation that sorts rows by (group ``g``, :func:`_sort_key` of task ``t``);
    ``g`` None: one group.

    The key of each id is built by pyarrow: every ASCII digit run, its leading zeros dropped,
    left-padded with zeros to the width W of the longest such run, between NULs; equal widths
    compare as (length, digits) do, and the NULs as tuple parts do (no id holds a NUL, else
    the ids are sorted in Python).

    >>> import pyarrow as pa
    >>> ids = ["T/10", "T/9", "T/09", "x1\u00b2", "U", "a0", "a000"]
    >>> [ids[i] for i in natural_order(None, pa.array(ids))]
    ['T/09', 'T/9', 'T/10', 'U', 'a0', 'a000', 'x1²']
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    width = _key_width(t)
    if width is None:
        ids = t.to_pylist()
        gs = g.tolist() if g is not None else [0] * len(ids)
        return np.array(sorted(range(len(ids)), key=lambda i: (gs[i], _sort_key(ids[i]))),
                        np.int64)
    if _in_order(g, t, width):  # files are mostly written in task order: no key kept
        return np.arange(len(t), dtype=np.int32 if len(t) < 1 << 31 else np.int64)
    key = pa.chunked_array([c for s in range(0, len(t), _STEP)
                            for c in _chunks(_key(t.slice(s, _STEP), width))], t.type)
    table = pa.table({"k": key} if g is None else {"g": g, "k": key})
    order = pc.sort_indices(table, [(k, "ascending") for k in table.column_names])
    del table
    order = order.to_numpy().astype(np.int32 if len(order) < 1 << 31 else np.int64)
    _break_ties(order, key, g, t)
    return order


def _break_ties(order: np.ndarray, key: Any, g: np.ndarray | None, t: Any) -> None:
    """Rows of equal (group, key) (ids that differ only in leading zeros) sorted by id, in
    place; the sort by key was stable."""
    import numpy as np
    import pyarrow.compute as pc

    step, parts = 1 << 20, []
    for s in range(0, len(order) - 1, step):
        at = order[s:s + step + 1]
        k = take(key, at)
        tie = pc.equal(k.slice(1), k.slice(0, len(k) - 1)).to_numpy(zero_copy_only=False)
        parts.append(tie if g is None else tie & (g[at[1:]] == g[at[:-1]]))
    if not parts or not any(p.any() for p in parts):
        return
    tie = np.concatenate(parts)  # tie[i]: rows i and i + 1 (in order) tie
    edge = np.diff(np.concatenate(([0], tie.view(np.int8), [0])))
    for a, b in zip(np.flatnonzero(edge == 1).tolist(), np.flatnonzero(edge == -1).tolist(),
                    strict=True):
        run = order[a:b + 1]
        ids = take(t, run).to_pylist()
        order[a:b + 1] = run[sorted(range(len(run)), key=ids.__getitem__)]


_STEP = 1 << 20  # ids keyed at a time


def _key_width(t: Any) -> int | None:
    """The digit width of the keys of ``t`` (a power of two), or None: sort in Python."""
    import pyarrow.compute as pc

    if len(t) and pc.any(pc.match_substring(t, "\0")).as_py():
        return None
    width = 8
    while len(t) and pc.any(pc.match_substring_regex(t, f"[1-9][0-9]{{{width}}}")).as_py():
        width *= 2
        if width > 64:
            return None
    return width


def _key(t: Any, width: int) -> Any:
    """The sort keys of the ids ``t`` (see :func:`natural_order`)."""
    import pyarrow.compute as pc

    a = pc.replace_substring_regex(t, "0*([0-9]+)", "\0" + "0" * width + r"\1" + "\0")
    return pc.replace_substring_regex(a, f"[0-9]*([0-9]{{{width}}})\\x00", r"\1" + "\0")


def _in_order(g: np.ndarray | None, t: Any, width: int) -> bool:
    """Whether the rows are already sorted, every (group, id) once (a step of keys at a time)."""
    import numpy as np
    import pyarrow.compute as pc

    last = None
    for s in range(0, len(t), _STEP):
        ids = t.slice(s, _STEP)
        k = _key(ids, width)
        here = [(k[i].as_py(), ids[i].as_py()) for i in (0, len(k) - 1)]
        gs = g[s:s + _STEP] if g is not None else None
        if last is not None and (last[0], last[1]) >= (gs[0] if gs is not None else 0, here[0]):
            return False
        last = (gs[-1] if gs is not None else 0, here[1])

        def pairs(a):
            return a.slice(0, len(a) - 1), a.slice(1)

        (k0, k1), (i0, i1) = pairs(k), pairs(ids)
        after = pc.or_(pc.less(k0, k1), pc.and_(pc.equal(k0, k1), pc.less(i0, i1)))
        after = after.to_numpy(zero_copy_only=False) if len(k) > 1 else np.ones(0, bool)
        if gs is not None:
            after = (gs[1:] > gs[:-1]) | ((gs[1:] == gs[:-1]) & after)
        if not after.all():
            return False
    return True


def _dict_block(acc: Tally) -> Block:
    import numpy as np
    import pyarrow as pa

    groups = tuple(acc.rows)
    g = np.concatenate([np.full(len(acc.rows[x]), i, np.int64) for i, x in enumerate(groups)])
    order = np.fromiter((i for x in groups for i in acc.rows[x].values()), np.int64, len(g))
    return Block(groups, g, pa.array([t for x in groups for t in acc.rows[x]], pa.large_string()),
                 np.frombuffer(acc.n, np.int64)[order], np.frombuffer(acc.c, np.int64)[order])


def _chunks(arr: Any) -> list:
    return arr.chunks if hasattr(arr, "chunks") else [arr]


def _taken(block: Block) -> tuple:
    """(group, task, n, c) of an ordered block, in its order, one array at a time (each
    input array is let go as soon as its sorted copy is made)."""
    import numpy as np
    import pyarrow as pa

    groups, g, task, n, c, order = block
    del block
    if len(groups) == 1:  # a read of millions of tasks is one group: no array of zeros
        g = np.broadcast_to(np.int64(0), (len(order),))
    else:
        g = g[order].astype(np.int64)
    task = strings(task, order)  # first: the Arrow ids are let go before n and c widen,
    pa.default_memory_pool().release_unused()  # and their pages given back
    n = n[order].astype(np.int64, copy=False)
    c = c[order].astype(np.int64, copy=False)
    return g, task, n, c


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
        #: rows added in bulk by the pyarrow readers, their task ids kept as Arrow strings
        self.blocks: list[Block] = []

    def __len__(self) -> int:
        return len(self.n) + sum(len(b.n) for b in self.blocks)

    def items(self) -> Iterator[tuple[tuple[GroupKey, str], tuple[int, int]]]:
        """``((group, task), (n, c))`` per row (a key of several blocks more than once)."""
        n, c = self.n, self.c
        for group, rows in self.rows.items():
            for task, i in rows.items():
                yield (group, task), (n[i], c[i])
        for b in self.blocks:
            for g, task, ni, ci in zip(b.g.tolist(), b.task.to_pylist(), b.n.tolist(),
                                       b.c.tolist(), strict=True):
                yield (b.groups[g], task), (ni, ci)

    def __iter__(self) -> Iterator[tuple[GroupKey, str]]:
        return (key for key, _ in self.items())

    def group_keys(self) -> set[GroupKey]:
        """The groups that hold rows."""
        return set(self.rows).union(*(b.groups for b in self.blocks))

    def add_block(self, block: Block) -> None:
        """Add rows in bulk (summed with any equal key when the Counts are made)."""
        if len(block.n):
            self.blocks.append(block)

    def merge(self, other: Tally, label: GroupKey = ()) -> None:
        """Add every row of ``other``, its group prefixed with ``label``."""
        n, c = other.n, other.c
        for group, rows in other.rows.items():
            for task, i in rows.items():
                self.add(label + group, task, n[i], c[i])
        for b in other.blocks:
            self.blocks.append(b._replace(groups=tuple(label + g for g in b.groups)))

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
    task : numpy.ndarray of str
        Task id of each row, kept exactly (trailing NULs and long ids included), in NumPy's
        variable-width ``StringDType`` (16 bytes a short id; ``object`` before NumPy 2).
    n : numpy.ndarray of int64
        Number of samples of the task.
    c : numpy.ndarray of int64
        Number of correct samples of the task.
    metric : str
        ``"pass@k"`` (default) or ``"pass^k"`` (tau-bench trials); ``"mixed"`` when the
        groups hold different metrics (``group_metrics`` then says which).
    group_metrics : tuple of str
        The metric of each group, parallel to ``groups``, when they differ; ``()`` when
        every group holds ``metric``. :meth:`metric_of` gives one group's.
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
    group_metrics: tuple[str, ...] = ()

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
        group_metric: dict | None = None,
    ) -> Counts:
        import numpy as np  # here, so that an error before any reading never loads it

        if metric not in ("pass@k", "pass^k"):
            raise ValueError(f"metric must be 'pass@k' or 'pass^k', got {metric!r}")
        about = {"metric": metric, "stored": stored, "files": files,
                 "skipped": skipped if skipped is not None else Skipped()}
        if group_metric:  # the groups of pass^k archives; every other group holds ``metric``
            about["group_metrics"] = group_metric
        if acc.blocks:
            return cls._from_blocks(acc, about)
        groups = sorted(acc.rows, key=_group_key)
        group_parts, task_parts, index_parts = [], [], []
        for g, group in enumerate(groups):
            rows = acc.rows[group]
            tasks = _natural_sorted(rows)
            task_parts.append(task_array(tasks))
            index_parts.append(np.fromiter((rows[t] for t in tasks), np.int64, len(tasks)))
            group_parts.append(np.full(len(tasks), g, dtype=np.int64))
        order = np.concatenate(index_parts) if groups else np.zeros(0, np.int64)
        n = np.frombuffer(acc.n, dtype=np.int64)[order] if len(acc) else order.copy()
        c = np.frombuffer(acc.c, dtype=np.int64)[order] if len(acc) else order.copy()
        task = np.concatenate(task_parts) if groups else task_array([])
        group = np.concatenate(group_parts) if groups else order.copy()
        return cls._made(groups, group, task, n, c, about)

    @classmethod
    def _from_blocks(cls, acc: Tally, about: dict) -> Counts:
        """The Counts of a Tally with blocks (which it consumes): the rows summed per key and
        sorted with pyarrow, the ids never one Python str each (see :func:`natural_order`)."""
        import numpy as np
        import pyarrow as pa

        blocks, acc.blocks = list(acc.blocks), []
        if acc.rows:
            blocks.append(_dict_block(acc))
        groups = sorted(set().union(*(b.groups for b in blocks)), key=_group_key)
        if len(blocks) == 1 and blocks[0].order is not None and list(blocks[0].groups) == groups:
            return cls._made(groups, *_taken(blocks.pop()), about)
        rank = {g: i for i, g in enumerate(groups)}
        table = pa.table({
            "g": np.concatenate([np.array([rank[g] for g in b.groups], np.int64)[b.g]
                                 for b in blocks]),
            "t": pa.chunked_array([c.cast(pa.large_string()) for b in blocks
                                   for c in _chunks(b.task)], pa.large_string()),
            "n": np.concatenate([b.n for b in blocks]).astype(np.int64),
            "c": np.concatenate([b.c for b in blocks]).astype(np.int64)})
        del blocks
        table = table.group_by(["g", "t"]).aggregate([("n", "sum"), ("c", "sum")])
        g = table.column("g").to_numpy()
        block = Block(tuple(groups), g, table.column("t"), table.column("n_sum").to_numpy(),
                      table.column("c_sum").to_numpy(),
                      natural_order(g if len(groups) > 1 else None, table.column("t")))
        del table, g
        return cls._made(groups, *_taken(block), about)

    @classmethod
    def _made(cls, groups, group, task, n, c, about: dict) -> Counts:
        """The Counts of sorted columns; ``about``: metric, stored, skipped and files."""
        import numpy as np

        big = np.flatnonzero((n >= MAX_COUNT) | (n < 0))
        if big.size:
            raise ValueError(_too_many(groups[group[big[0]]], str(task[big[0]])))
        about = _metrics_of(tuple(groups), about)
        return cls(
            group=_readonly(group),
            groups=tuple(groups),
            task=_readonly(task),
            n=_readonly(n),
            c=_readonly(c),
            **about,
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
        if len(self.groups) == 1:  # views, not copies: a read of 10M tasks is one group
            yield GroupCounts(dict(self.groups[0]), self.task, self.n, self.c)
            return
        for i, g in enumerate(self.groups):
            rows = self.group == i
            yield GroupCounts(dict(g), self.task[rows], self.n[rows], self.c[rows])

    def metric_of(self, i: int) -> str:
        """The metric of group ``i`` (an index into ``groups``)."""
        return self.group_metrics[i] if self.group_metrics else self.metric

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
    group_metric = _merged_metrics(parts)
    metrics = set(group_metric.values()) or {parts[0].metric}
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
        metric=min(metrics) if len(metrics) == 1 else "pass@k",
        stored=tuple(s for p in parts for s in p.stored),
        skipped=skipped,
        files=tuple(f for p in parts for f in p.files),
        group_metric=group_metric if len(metrics) > 1 else None,
    )


def _merged_metrics(parts: list[Counts]) -> dict:
    """group -> metric over ``parts``; a group of two metrics cannot be pooled."""
    out: dict = {}
    for p in parts:
        for i, g in enumerate(p.groups):
            m = out.setdefault(g, p.metric_of(i))
            if m != p.metric_of(i):
                raise ValueError(
                    f"cannot merge counts of different metrics {sorted({m, p.metric_of(i)})} "
                    f"in one group {dict(g)}: pass@k and pass^k archives must be scored "
                    "separately")
    return out


def _metrics_of(groups: tuple, about: dict) -> dict:
    """``about`` with each group's metric: ``group_metrics`` (and metric ``"mixed"``) when
    the groups differ, else the one metric. ``about["group_metrics"]`` comes in as a dict
    group -> metric, a group missing from it holding ``about["metric"]``."""
    given = about.pop("group_metrics", None)
    if not given:
        return about
    per = tuple(given.get(g, about["metric"]) for g in groups)
    if len(set(per)) > 1:
        return {**about, "metric": "mixed", "group_metrics": per}
    return {**about, "metric": per[0] if per else about["metric"]}
