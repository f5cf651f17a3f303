"""Per-(group, task) counts, the one product of every reader: the tally, Counts, the exact merge.
Ids read by pyarrow stay Arrow strings (a buffer and offsets) until they fill ``Counts.task``."""

from __future__ import annotations

import functools
import re
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from importlib.util import find_spec
from itertools import pairwise
from typing import TYPE_CHECKING, Any, NamedTuple

from passatk._limits import MAX_N as MAX_COUNT  # counts stay exact in a double
from passatk.archives.errors import Skipped, show

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Counts", "GroupCounts", "StoredMetric", "merge_counts"]

GroupKey = tuple[tuple[str, object], ...]
_DIGITS = re.compile(r"([0-9]+)")
_CHUNK = 1 << 16  # ids converted at a time from Arrow to NumPy
_STEP = 1 << 18  # ids keyed or compared at a time
_FEW_HEADS = 1 << 12  # texts before the digits past which ids are keyed by regex
_FLUSH = 1 << 18  # rows of a dict Tally past which they become a Block
_BIG = 1 << 18  # rows past which a dict Tally is sorted by pyarrow (a key str per id is 80 B)


def _task_key(task: str) -> tuple:
    """Natural order without int(): a digit run compares by its length sans leading zeros, then
    by its digits.

    >>> sorted(["T/10", "T/9", "T/09", "x1²", "U"], key=_sort_key)
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
    """``sorted(tasks, key=_sort_key)``; the key one str (parts joined by NUL) if no id has NUL."""
    out = sorted(tasks)  # the tie-break by id: the sort by key below is stable
    nul = any("\0" in t for t in out)
    out.sort(key=_task_key if nul else lambda t: "\0".join(_task_key(t)))
    return out


class Block(NamedTuple):
    """Rows added in bulk: per row an index into ``groups``, the task id (pyarrow strings), n, c;
    ``order`` (the rows unique, ``groups`` in Counts' order) sorts them as Counts does."""

    groups: tuple[GroupKey, ...]
    g: np.ndarray
    task: Any
    n: np.ndarray
    c: np.ndarray
    order: np.ndarray | None = None


def _str_dtype() -> Any:
    """NumPy's ``StringDType`` (16 bytes a short id, longer ones in an arena); object before 2."""
    import numpy as np
    return getattr(np.dtypes, "StringDType", lambda: object)()


def _take(arr: Any, at: np.ndarray) -> Any:
    """``arr.take(at)``; a chunked array taken from chunk by chunk (pyarrow's joins them)."""
    import numpy as np
    import pyarrow as pa
    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
    if len(chunks) == 1 or not len(at):
        return chunks[0].take(at)
    offsets = np.cumsum([0] + [len(c) for c in chunks])
    chunk = np.searchsorted(offsets, at, side="right") - 1
    by = np.argsort(chunk, kind="stable")
    cuts = np.searchsorted(chunk[by], np.arange(len(chunks) + 1))
    pieces = [chunks[j].take(at[by[a:b]] - offsets[j]) for j, (a, b) in enumerate(pairwise(cuts))
              if b > a]
    inverse = np.empty(len(at), np.int64)
    inverse[by] = np.arange(len(at))
    return pa.concat_arrays(pieces).take(inverse)


def natural_order(g: np.ndarray | None, t: Any) -> np.ndarray:
    """The permutation that sorts rows by (group ``g`` or None, :func:`_sort_key` of task ``t``).

    Ids of the common shape are keyed by :func:`_split`, others by a pyarrow key string: every
    ASCII digit run, its leading zeros dropped, padded to the width of the longest run, between
    NULs (ids with a NUL or a run over 64 digits: sorted in Python).

    >>> import pyarrow as pa
    >>> ids = ["T/10", "T/9", "T/09", "x1\u00b2", "U", "a0", "a000"]
    >>> [ids[i] for i in natural_order(None, pa.array(ids))]
    ['T/09', 'T/9', 'T/10', 'U', 'a0', 'a000', 'x1²']
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    t = t if isinstance(t, pa.ChunkedArray) else pa.chunked_array([t])
    order = _ordered(g, t, None)
    if order is None and not pc.any(pc.match_substring(t, "\0")).as_py():
        width = next((w for w in (8, 16, 32, 64) if not pc.any(
            pc.match_substring_regex(t, f"[1-9][0-9]{{{w}}}")).as_py()), None)
        order = None if width is None else _ordered(g, t, width)
    if order is None:
        ids = t.to_pylist()
        gs = g.tolist() if g is not None else [0] * len(ids)
        return np.array(sorted(range(len(ids)), key=lambda i: (gs[i], _sort_key(ids[i]))),
                        np.int64)
    return order.astype(np.int32 if len(t) < 1 << 31 else np.int64, copy=False)


def _ordered(g: np.ndarray | None, t: Any, width: int | None) -> np.ndarray | None:
    """:func:`natural_order` by :func:`_split` (``width`` None) or by key strings of ``width``
    (None: not that shape); rows in order are found a step (and the next id) at a time."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    for s in range(0, len(t) - 1, _STEP):
        ids = t.slice(s, _STEP + 1).combine_chunks()
        keys = _split(ids) if width is None else [_key(ids, width), ids]
        if keys is None:
            return None
        less, equal = np.zeros(len(ids) - 1, bool), np.ones(len(ids) - 1, bool)
        for x in keys[:3] if g is None else [g[s:s + len(ids)], *keys[:3]]:
            less |= equal & np.asarray(pc.less(x[:-1], x[1:]))
            equal &= np.asarray(pc.equal(x[:-1], x[1:]))
        if less.all():
            continue
        if width is None:
            return _split_order(g, t)
        key = pa.chunked_array([c for s in range(0, len(t), _STEP)  # key strings a step at a time
                                for c in _key(t.slice(s, _STEP), width).chunks], t.type)
        cols = {"k": key, "t": t} if g is None else {"g": g, "k": key, "t": t}
        return pc.sort_indices(pa.table(cols), [(k, "ascending") for k in cols]).to_numpy()
    return np.arange(len(t))


def _split(ids: Any) -> tuple | None:
    """Per id the rank of its text before a final run of at most 18 digits among those texts,
    that run's value (-1: none), a tie-break of ids that differ in leading zeros (0 for the
    others); fourth, the texts sorted. None when an id has another digit, or the texts are many."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    head = pc.utf8_rtrim(ids, characters="0123456789")
    enc = pc.dictionary_encode(head)
    digits = np.subtract(pc.binary_length(ids), pc.binary_length(head))
    if len(enc.dictionary) > _FEW_HEADS or digits.max(initial=0) > 18 or pc.any(
            pc.match_substring_regex(enc.dictionary, "[0-9]")).as_py():
        return None
    chars = "".join(set("".join(enc.dictionary.to_pylist())))
    tail = pc.utf8_ltrim(ids, characters=chars) if chars else ids
    padded = pc.starts_with(tail, "0").to_numpy(zero_copy_only=False) & (digits > 1)
    tail = pc.binary_join_element_wise(pa.scalar("0", tail.type), tail, pa.scalar("", tail.type))
    value = np.where(digits > 0, pc.cast(tail, pa.int64()), -1)
    by = pc.sort_indices(enc.dictionary).to_numpy()
    rank = np.argsort(by).astype(np.int32)  # at most _FEW_HEADS texts
    return (rank[enc.indices.to_numpy()], value,
            (np.where(value > 0, -digits, digits) * padded).astype(np.int8),
            enc.dictionary.take(by))


def _split_order(g: np.ndarray | None, t: Any) -> np.ndarray | None:
    """:func:`natural_order` by :func:`_split` of each step, its ranks made ranks among all the
    texts; None: not that shape."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    rank, value, tie = (np.empty(len(t), x) for x in (np.int32, np.int32, np.int8))
    heads = []
    for s in range(0, len(t), _STEP):
        if (split := _split(t.slice(s, _STEP).combine_chunks())) is None:
            return None
        if split[1].size and split[1].max() >= 1 << 31 and value.dtype == np.int32:
            value = value.astype(np.int64)  # int32 holds the values of at most 9 digits
        rank[s:s + _STEP], value[s:s + _STEP], tie[s:s + _STEP] = split[:3]
        heads.append(split[3])
    known = pa.concat_arrays(heads).unique().sort()
    for i, h in enumerate(heads):
        at = slice(i * _STEP, (i + 1) * _STEP)
        rank[at] = pc.index_in(h, known).to_numpy()[rank[at]]
    keys = (tie, value, rank)[0 if tie.any() else 1:]  # tie: 0 unless a run has a leading 0
    return np.lexsort(keys if g is None else (*keys, g))


def _key(t: Any, width: int) -> Any:
    """The sort keys of the ids ``t`` (see :func:`natural_order`)."""
    import pyarrow.compute as pc
    a = pc.replace_substring_regex(t, "0*([0-9]+)", "\0" + "0" * width + r"\1" + "\0")
    return pc.replace_substring_regex(a, f"[0-9]*([0-9]{{{width}}})\\x00", r"\1" + "\0")


def run_starts(order: np.ndarray, g: np.ndarray | None, t: Any) -> np.ndarray | None:
    """Where each run of equal (group, id) begins in the rows sorted by ``order``; None: no two
    rows are equal (a step at a time, no sorted copy of the ids)."""
    import numpy as np
    import pyarrow.compute as pc
    parts = []
    for s in range(0, len(order) - 1, _STEP):
        at = order[s:s + _STEP + 1]
        k = _take(t, at)
        same = pc.equal(k.slice(1), k.slice(0, len(k) - 1)).to_numpy(zero_copy_only=False)
        parts.append(same if g is None else same & (g[at[1:]] == g[at[:-1]]))
    if not any(p.any() for p in parts):
        return None
    return np.flatnonzero(np.concatenate(([True], ~np.concatenate(parts))))


def _dict_block(acc: Tally) -> Block:
    import numpy as np
    import pyarrow as pa
    groups = tuple(acc.rows)
    g = np.concatenate([np.full(len(acc.rows[x]), i, np.int64) for i, x in enumerate(groups)])
    order = np.fromiter((i for x in groups for i in acc.rows[x].values()), np.int64, len(g))
    return Block(groups, g, pa.array([t for x in groups for t in acc.rows[x]], pa.large_string()),
                 np.frombuffer(acc.n, np.int64)[order], np.frombuffer(acc.c, np.int64)[order])


def _taken(blocks: list[Block]) -> tuple:
    """(group, task, n, c) of the ordered block popped from ``blocks``, in order: each array
    goes as soon as its sorted copy is made, the Arrow ids (and their pages) first."""
    import numpy as np
    groups, g, task, n, c, order = blocks.pop()
    release_memory()  # what Arrow freed: NumPy allocates ``out``
    same = len(order) == len(n) and np.array_equal(order, np.arange(len(n), dtype=order.dtype))
    g = np.broadcast_to(np.int64(0), (len(order),)) if len(groups) == 1 else (
        g if same else g[order]).astype(np.int64, copy=False)  # one group: no array of zeros
    out = np.empty(len(order), _str_dtype())
    for s in range(0, len(order), _CHUNK):
        ids = task.slice(s, _CHUNK) if same else _take(task, order[s:s + _CHUNK])
        out[s:s + _CHUNK] = ids.to_pylist()
    del task
    release_memory()
    n = (n if same else n[order]).astype(np.int64, copy=False)
    c = (c if same else c[order]).astype(np.int64, copy=False)
    release_memory()  # what the read leaves free goes back before scoring
    return g, out, n, c


def release_memory() -> None:
    """Hand what Arrow's pool and the C allocator hold free back to the system (glibc's
    ``malloc_trim``, where there is one): large columns freed a piece at a time are then
    not counted twice while their copies grow."""
    import pyarrow as pa
    pa.default_memory_pool().release_unused()
    if trim := _malloc_trim():
        trim(0)


@functools.cache
def _malloc_trim() -> Any:
    import ctypes
    return getattr(ctypes.CDLL(None), "malloc_trim", None)


def _group_key(group: GroupKey) -> tuple:
    """Group values ordered None, bools, numbers, then text."""
    return tuple((name, (0, 0, "") if v is None else (1, v, "") if isinstance(v, bool) else
                  (2, v, "") if isinstance(v, (int, float)) else (3, 0, str(v)))
                 for name, v in group)


class Tally:
    """Sums of n and c per (group, task): row numbers per group, the sums in two int64 arrays,
    and the blocks the pyarrow readers add."""

    def __init__(self, compact: bool = True) -> None:
        self.rows: dict[GroupKey, dict[str, int]] = {}
        self.n, self.c = array("q"), array("q")
        self.blocks: list[Block] = []
        #: past _FLUSH rows they become a Block (no str per id kept); row numbers then hold
        #: only until the next one, so a reader that keeps them makes ``Tally(compact=False)``
        self.compact = compact and find_spec("pyarrow") is not None
        self.merged = 0

    def __len__(self) -> int:
        return len(self.n) + sum(len(b.n) for b in self.blocks)

    def items(self) -> Iterator[tuple[tuple[GroupKey, str], tuple[int, int]]]:
        """``((group, task), (n, c))`` per row (a key of several blocks more than once)."""
        for group, rows in self.rows.items():
            for task, i in rows.items():
                yield (group, task), (self.n[i], self.c[i])
        for b in self.blocks:
            for g, task, n, c in zip(b.g.tolist(), b.task.to_pylist(), b.n.tolist(),
                                     b.c.tolist(), strict=True):
                yield (b.groups[g], task), (n, c)

    def __iter__(self) -> Iterator[tuple[GroupKey, str]]:
        return (key for key, _ in self.items())

    def group_keys(self) -> set[GroupKey]:
        return set(self.rows).union(*(b.groups for b in self.blocks))

    def add_block(self, block: Block) -> None:
        """Add rows in bulk (summed with any equal key when the Counts are made)."""
        if len(block.n):
            self.blocks.append(block)

    def merge(self, other: Tally, label: GroupKey = ()) -> None:
        """Add every row of ``other``, its group prefixed with ``label``."""
        for group, rows in other.rows.items():
            for task, i in rows.items():
                self.add(label + group, task, other.n[i], other.c[i])
        self.blocks += [b._replace(groups=tuple(label + g for g in b.groups))
                        for b in other.blocks]

    def relabel(self, old: GroupKey, new: GroupKey) -> None:
        """Move the rows of group ``old`` into group ``new`` (summed with its rows)."""
        for task, i in self.rows.pop(old).items():
            self.add(new, task, self.n[i], self.c[i])
            self.n[i] = self.c[i] = 0

    def _flush(self) -> None:
        """The rows become a Block; the blocks are summed into one when they outgrow what the
        last sum left (their rows stay about those of the distinct keys)."""
        import numpy as np
        self.blocks.append(_dict_block(self))
        self.rows, self.n, self.c = {}, array("q"), array("q")
        if sum(len(b.n) for b in self.blocks) > 4 * max(self.merged, _FLUSH):
            b = _merged_block(self.blocks, sorted(self.group_keys(), key=_group_key))
            at, self.merged = b.order, len(b.order)  # the rows that hold the sums, in order
            g = np.broadcast_to(np.int64(0), (len(at),)) if b.g is None else b.g[at]
            self.blocks = [Block(b.groups, g, _take(b.task, at), b.n[at], b.c[at],
                                 np.arange(len(at), dtype=at.dtype))]

    def find(self, group: GroupKey, task: str) -> int | None:
        """The row number of (group, task), or None."""
        return self.rows.get(group, {}).get(task)

    def add(self, group: GroupKey, task: str, n: int, c: int) -> int:
        """Add to the row of (group, task); return its row number."""
        rows = self.rows.get(group) or self.rows.setdefault(group, {})
        i = rows.get(task)
        try:
            if i is None:
                i = rows[task] = len(self.n)
                self.n.append(n)
                self.c.append(c)
                if self.compact and i + 1 >= _FLUSH:
                    self._flush()
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
    """A number an archive stores about itself, as a fraction (fields: docs/api.md).

    >>> StoredMetric((), "pass@k", 1, 0.5, "r.json: $.pass@1", "percent").value
    0.5
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


@dataclass(frozen=True, eq=False)
class Counts:
    """Per-(group, task) sample counts read from result archives: parallel read-only arrays
    ``group``, ``task``, ``n``, ``c``, sorted by group, then by task in natural order
    ("HumanEval/2" before "HumanEval/10"); the attributes are described in docs/api.md.

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

    @classmethod
    def from_rows(cls, rows: Iterable[tuple], *, metric: str = "pass@k",
                  stored: Iterable[StoredMetric] = (), skipped: Skipped | None = None,
                  files: Iterable[str] = ()) -> Counts:
        """Build from rows ``(task, n, c)`` or ``(group, task, n, c)`` (a group: (field, value)
        pairs or a dict); equal keys are summed."""
        acc = Tally()
        for row in rows:
            if len(row) not in (3, 4):
                raise ValueError(f"row must be (task, n, c) or (group, task, n, c), got {row!r}")
            group, task, n, c = row if len(row) == 4 else ((), *row)
            group = tuple(group.items()) if isinstance(group, dict) else tuple(group)
            acc.add(group, str(task), int(n), int(c))
        return cls._from_acc(acc, metric=metric, stored=tuple(stored), skipped=skipped,
                             files=tuple(files))

    @classmethod
    def _from_acc(cls, acc: Tally, *, metric: str, stored: tuple[StoredMetric, ...] = (),
                  skipped: Skipped | None = None, files: tuple[str, ...] = (),
                  group_metric: dict | None = None) -> Counts:
        """The Counts of ``acc`` (its blocks consumed); ``group_metric``: group -> metric, else
        ``metric`` (``"mixed"`` when the groups differ)."""
        import numpy as np  # here, so that an error before any reading never loads it
        if metric not in ("pass@k", "pass^k"):
            raise ValueError(f"metric must be 'pass@k' or 'pass^k', got {metric!r}")
        big = bool(acc.blocks) or (len(acc.n) > _BIG and find_spec("pyarrow") is not None)
        groups, group, task, n, c = _sorted_blocks(acc) if big else _sorted_rows(acc)
        if (bad := np.flatnonzero((n >= MAX_COUNT) | (n < 0))).size:
            raise ValueError(_too_many(groups[group[bad[0]]], str(task[bad[0]])))
        for a in (group, task, n, c):
            a.flags.writeable = False
        per = tuple(group_metric.get(g, metric) for g in groups) if group_metric else ()
        mixed = len(set(per)) > 1
        return cls(group=group, groups=tuple(groups), task=task, n=n, c=c,
                   metric="mixed" if mixed else per[0] if per else metric, stored=stored,
                   skipped=skipped if skipped is not None else Skipped(), files=files,
                   group_metrics=per if mixed else ())

    def __len__(self) -> int:
        return int(self.task.shape[0])

    def __repr__(self) -> str:
        return (f"Counts({len(self)} rows, {len(self.groups)} group(s), {self.samples} samples, "
                f"metric={self.metric!r}, stored={len(self.stored)}, skipped={self.skipped.count})")

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
        return [{**dict(self.groups[g]), "task_id": str(t), "n": int(n), "c": int(c)}
                for g, t, n, c in zip(self.group.tolist(), self.task, self.n.tolist(),
                                      self.c.tolist(), strict=True)]

    def merge(self, *others: Counts) -> Counts:
        """Sum n and c per (group, task) with ``others``: the exact merge of partial reads (a
        TypeError for a non-Counts, a ValueError for pass@k and pass^k in one group)."""
        return merge_counts([self, *others])


def _sorted_rows(acc: Tally) -> tuple:
    """(groups, group, task, n, c) of the dict rows of ``acc``, sorted in Python."""
    import numpy as np
    groups = sorted(acc.rows, key=_group_key)
    tasks = [_natural_sorted(acc.rows[g]) for g in groups]
    order = np.fromiter((acc.rows[g][t] for g, ts in zip(groups, tasks, strict=True)
                         for t in ts), np.int64, sum(map(len, tasks)))
    group = np.repeat(np.arange(len(groups), dtype=np.int64), [len(ts) for ts in tasks])
    task = np.array([t for ts in tasks for t in ts], _str_dtype())
    n, c = (np.frombuffer(x, np.int64)[order] if len(x) else order.copy() for x in (acc.n, acc.c))
    return groups, group, task, n, c


def _sorted_blocks(acc: Tally) -> tuple:
    """(groups, group, task, n, c) of ``acc`` with blocks (consumed), sorted by pyarrow."""
    blocks, acc.blocks = acc.blocks + ([_dict_block(acc)] if acc.rows else []), []
    groups = sorted(set().union(*(b.groups for b in blocks)), key=_group_key)
    if len(blocks) > 1 or blocks[0].order is None or list(blocks[0].groups) != groups:
        blocks = [_merged_block(blocks, groups)]
    return groups, *_taken(blocks)


def _merged_block(blocks: list[Block], groups: list[GroupKey]) -> Block:
    """One ordered Block of ``blocks`` (consumed), equal keys summed as neighbours in order."""
    import numpy as np
    import pyarrow as pa
    rank = {g: i for i, g in enumerate(groups)}
    g = np.concatenate([np.array([rank[x] for x in b.groups], np.int64)[b.g]
                        for b in blocks]) if len(groups) > 1 else None  # None: one group
    chunks = [c for b in blocks for c in getattr(b.task, "chunks", [b.task])]
    kind = chunks[0].type if len({c.type for c in chunks}) == 1 else pa.large_string()
    t = pa.chunked_array([c.cast(kind) for c in chunks], kind)
    n, c = (np.concatenate([getattr(b, x) for b in blocks]).astype(np.int64, copy=False)
            for x in "nc")
    blocks.clear()
    del chunks
    order = natural_order(g, t)
    starts = run_starts(order, g, t)
    if starts is not None:
        sums = [np.add.reduceat(x[order], starts) for x in (n, c)]
        order = order[starts]
        n, c = np.zeros(len(n), np.int64), np.zeros(len(n), np.int64)
        n[order], c[order] = sums
    return Block(tuple(groups), g, t, n, c, order)


def merge_counts(parts: Iterable[Counts]) -> Counts:
    """Merge counts from partial reads: n and c are summed per (group, task), whatever the order
    of ``parts`` (at least one); stored metrics, skipped records and files are concatenated.

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
    group_metric: dict = {}  # group -> metric; a group of two metrics cannot be pooled
    for p in parts:
        for i, g in enumerate(p.groups):
            if (m := group_metric.setdefault(g, p.metric_of(i))) != p.metric_of(i):
                raise ValueError(
                    f"cannot merge counts of different metrics {sorted({m, p.metric_of(i)})} "
                    f"in one group {dict(g)}: pass@k and pass^k archives must be scored "
                    "separately")
    acc = Tally()
    for p in parts:
        for g, t, n, c in zip(p.group.tolist(), p.task.tolist(), p.n.tolist(), p.c.tolist(),
                              strict=True):
            acc.add(p.groups[g], t, n, c)
    return Counts._from_acc(acc, metric=next(iter(group_metric.values()), parts[0].metric),
                            stored=tuple(s for p in parts for s in p.stored),
                            skipped=sum((p.skipped for p in parts), Skipped()),
                            files=tuple(f for p in parts for f in p.files),
                            group_metric=group_metric)
