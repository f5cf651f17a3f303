"""Count and per-sample CSV/TSV and Parquet tables read by pyarrow in batches, checked by
``pyarrow.compute``, summed per (group, task) into one ``Block``. Whatever breaks a rule raises
:class:`Locate` and adds nothing: the row reader (``harnesses.tables``) names the bad row."""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from passatk.archives.context import BadRecord, Context, group_from, path_groups
from passatk.archives.counts import (
    Block,
    _group_key,
    _take,
    natural_order,
    release_memory,
    run_starts,
)
from passatk.archives.errors import ArchiveError
from passatk.archives.harnesses._table_rules import MAX_COUNT, _flag, _plan, _reward
from passatk.archives.io.opening import Mapped, logical_name, mapped, open_raw
from passatk.archives.io.remote import is_url

CSV_BLOCK = 1 << 20  # bytes of CSV per Arrow block (parsed ahead on other threads)
CSV_WHOLE = 32 << 20  # bytes of CSV parsed at once, by every thread (docs/benchmarks.md)
_STEP = 16 << 20  # bytes of batches checked and summed at a time
PARQUET_BATCH = 1 << 18  # rows per Parquet batch
_MERGE_ROWS = 1 << 20  # rows of partial sums kept before they are merged
_HASHED_ROWS = 1 << 18  # rows past which keys mostly distinct are summed by a sort
_NEIGHBOURS = 1 << 18  # sorted rows compared at a time
_LINE_END = re.compile(rb"[\r\n]")
_INTEGER = r"^[ \t]*[+-]?[0-9]{1,19}[ \t]*$"
_TRUE = ["true", "True", "TRUE", "1", "1.0"]
_FALSE = ["false", "False", "FALSE", "0", "0.0"]
_KINDS = (("text", pa.types.is_string), ("text", pa.types.is_large_string),
          ("int", pa.types.is_integer), ("float", pa.types.is_floating),
          ("bool", pa.types.is_boolean), ("null", pa.types.is_null))

class Locate(Exception):
    """A rule is broken somewhere in this table: the row reader names the row."""

def read(file: str, ctx: Context, spec: dict, header: list[str], pf) -> bool:
    """Add a CSV/TSV table (``pf`` None) or the ``pyarrow.parquet.ParquetFile`` ``pf`` to
    ``ctx``; False (nothing added) when a rule is broken."""
    try:
        for retry in (False, True) if pf is None else (None,):
            plan = _Plan(spec, header, ctx, file, strings=pf is None)
            try:  # CSV first with flags as Arrow's bool (else an error), streamed by Arrow's
                # faster chunker (a quoted newline at a block's end is an error)
                for table in (_parquet_tables(file, pf, plan) if retry is None else
                              _csv_tables(file, ctx, header, plan, retry)):
                    plan.add(table)
                break
            except pa.ArrowInvalid:
                if retry is not False:
                    raise
        ctx.acc.add_block(plan.block())
    except (Locate, BadRecord, ArchiveError, pa.ArrowException):
        return False  # an unreadable stream too: the row reader meets it in its place
    return True

def _csv_tables(file: str, ctx: Context, header: list[str], plan: _Plan, retry: bool):
    """The columns read, as text (a flag column first as Arrow's bool). A file of at most
    ``CSV_WHOLE`` bytes is one table parsed on all of Arrow's threads, quoted newlines allowed
    when a quote follows its header: that reader cuts a quoted newline at a block's end
    silently, not with an error. A longer one is streamed, in tables of ``_STEP`` bytes."""
    types = dict.fromkeys(plan.columns, pa.string())
    if not retry and plan.passed is not None and plan.threshold is None:
        types[plan.passed] = pa.bool_()
    with ctx.open(file) as f:
        head = _head(f)
        whole, end = len(head) <= CSV_WHOLE, _LINE_END.search(head)
        end = end.start() if end else len(head)  # no line end in a name (harnesses.tables)
        quoted = whole and head.find(b'"', end) >= 0
        options = dict(
            read_options=pacsv.ReadOptions(column_names=header, skip_rows=1,
                                           block_size=CSV_BLOCK),
            parse_options=pacsv.ParseOptions(
                delimiter="\t" if logical_name(file).endswith(".tsv") else ",",
                newlines_in_values=retry or quoted),
            convert_options=pacsv.ConvertOptions(
                include_columns=plan.columns, column_types=types, null_values=[],  # no nulls
                true_values=_TRUE, false_values=_FALSE),  # streamed: freed pages go back
            memory_pool=None if whole else pa.system_memory_pool())  # (10M ids: 100 MB)
        if whole:  # a valid file has an even number of quotes (counted when past its header)
            odd = (head[:] if quoted else head[:end]).count(b'"') % 2
            table = pacsv.read_csv(pa.py_buffer(head), **options)
            del head  # its 32 MiB go
            yield table
        else:
            stream = _Quotes(f.stream, head)
            del head
            with pacsv.open_csv(pa.PythonFile(stream, mode="r"), **options) as reader:
                for table in _steps(reader, _STEP):
                    yield table
                    if ctx.progress is not None:  # tell() waits for Arrow's read-ahead
                        ctx.report(f.raw_position())
            odd = stream.quotes % 2
        if odd:
            raise Locate  # a quoted field left open: Arrow reads it to the end of the file

def _head(f) -> bytes | Mapped:
    """The first ``CSV_WHOLE + 1`` bytes; an uncompressed local file of at most ``CSV_WHOLE``
    bytes mapped whole (a read costs 4x the CPU)."""
    head = mapped(f, CSV_WHOLE)
    return f.stream.read(CSV_WHOLE + 1) if head is None else head

def _steps(batches, step: int):
    """The batches in tables of at least ``step`` bytes (the last one fewer)."""
    held: list[pa.RecordBatch] = []
    for batch in batches:
        held.append(batch)
        if sum(b.nbytes for b in held) >= step:
            yield pa.Table.from_batches(held)
            held = []
            release_memory()  # the step's temporaries
    if held:
        yield pa.Table.from_batches(held)

class _Quotes:
    """The stream Arrow reads, after its ``head`` read already, its quotes counted (a valid
    file has an even number)."""

    closed = False

    def __init__(self, stream, head: bytes) -> None:
        self.stream, self.quotes, self.rest = stream, head.count(b'"'), memoryview(head)

    def read(self, size: int = -1) -> bytes:
        out = bytes(self.rest[:size] if size >= 0 else self.rest)
        self.rest = self.rest[len(out):] or memoryview(b"")  # the head goes once read
        if size < 0 or len(out) < size:  # no short read: Arrow takes it for a block's end
            data = self.stream.read(size - len(out) if size >= 0 else -1)
            self.quotes += data.count(b'"')
            out += data
        return out

def _parquet_tables(file: str, pf, plan: _Plan):
    """Text columns as the dictionaries Parquet stores (3x faster than a string per row)."""
    import pyarrow.parquet as pq

    text = [c for c in plan.coded if _kind(pf.schema_arrow.field(c).type) == "text"]
    if text:
        pf = pq.ParquetFile(open_raw(file) if is_url(file) else file, read_dictionary=text)
    yield from _steps(pf.iter_batches(batch_size=PARQUET_BATCH, columns=plan.columns), 0)

def _plain(arr: pa.ChunkedArray) -> pa.ChunkedArray:
    return pc.cast(arr, arr.type.value_type) if pa.types.is_dictionary(arr.type) else arr

def _kind(t: pa.DataType) -> str | None:
    """``"text"`` (a dictionary of text too), ``"int"``, ``"float"``, ``"bool"``, ``"null"``."""
    if pa.types.is_dictionary(t):
        return "text" if _kind(t.value_type) == "text" else None
    return next((kind for kind, test in _KINDS if test(t)), None)

def _decoded(table: pa.Table) -> pa.Table:
    return pa.table({name: _plain(table.column(name)) for name in table.column_names})

def _np(arr: pa.Array | pa.ChunkedArray) -> np.ndarray:
    return arr.to_numpy(zero_copy_only=False)

def _check_key(arr: pa.Array) -> pa.Array:
    """A group or run column: scalars that group as their Python values do in a dict."""
    if _kind(arr.type) == "float":
        x = _np(arr.fill_null(1.0))
        if np.isnan(x).any() or (np.signbit(x) & (x == 0)).any():
            raise Locate  # NaN is never equal to itself; -0.0 equals 0.0 in a dict
    elif _kind(arr.type) is None:
        raise Locate
    return arr

def _counts(arr: pa.Array, strings: bool) -> np.ndarray:
    """Column n or c as int64: integers (their text in a CSV) below 2**53."""
    if arr.null_count or (not strings and not pa.types.is_integer(arr.type)):
        raise Locate
    if strings:
        if not pc.all(pc.match_substring_regex(arr, _INTEGER)).as_py():
            raise Locate
        arr = pc.utf8_ltrim(pc.utf8_trim(arr, " \t"), "+")
    x = _np(pc.cast(arr, pa.int64()))
    if (np.abs(x) >= MAX_COUNT).any():
        raise Locate
    return x.astype(np.int32) if x.size and -1 << 31 <= x.min() and x.max() < 1 << 31 else x

def _sums(table: pa.Table, keys: list[str], count: bool = False) -> pa.Table:
    """Per key the sums of columns n and c (``count``: n is the number of rows)."""
    if table.num_rows > _HASHED_ROWS and _mostly_distinct(table, keys):
        return _sorted_sums(table, keys, count)
    out = table.group_by(keys).aggregate([([], "count_all") if count else ("n", "sum"),
                                          ("c", "sum")])
    return pa.table({**{k: out.column(k) for k in keys}, "n": out.column(
        "count_all" if count else "n_sum"), "c": pc.cast(out.column("c_sum"), pa.int64())})

def _mostly_distinct(table: pa.Table, keys: list[str]) -> bool:
    head = table.slice(0, 1 << 14)
    return head.group_by(keys).aggregate([]).num_rows > head.num_rows // 2

def _sorted_sums(table: pa.Table, keys: list[str], count: bool) -> pa.Table:
    """:func:`_sums` by a sort and sums of equal neighbours: Arrow's hash aggregation holds
    about 240 bytes a key (10M distinct ids: 2.4 GB), the sort about 15."""
    t = table.column("t")
    if keys == ["t"] and _kind(t.type) == "text":  # the natural sort: no key string per id
        order = natural_order(None, t).astype(np.int64)
    else:
        order = pc.sort_indices(table, [(k, "ascending") for k in keys]).to_numpy().astype(
            np.int64)
    same = np.ones(len(order) - 1, bool)
    for k in keys:
        same &= _equal_neighbours(table.column(k), order)
    starts = np.flatnonzero(np.concatenate(([True], ~same)))
    n = (np.diff(np.append(starts, len(order))) if count
         else np.add.reduceat(_np(table.column("n")).astype(np.int64)[order], starts))
    c = np.add.reduceat(_np(table.column("c")).astype(np.int64)[order], starts)
    first = order[starts]
    return pa.table({**{k: _take(table.column(k), first) for k in keys}, "n": n, "c": c})

def _equal_neighbours(column: pa.ChunkedArray, order: np.ndarray) -> np.ndarray:
    """Whether each row sorted by ``order`` equals the next (two nulls are equal)."""
    out = []
    for s in range(0, len(order) - 1, _NEIGHBOURS):
        k = _take(column, order[s:s + _NEIGHBOURS + 1])
        a, b = k.slice(0, len(k) - 1), k.slice(1)
        same = pc.or_(pc.fill_null(pc.equal(a, b), False), pc.and_(pc.is_null(a), pc.is_null(b)))
        out.append(_np(same).astype(bool))
    return np.concatenate(out) if out else np.ones(0, bool)

def _most(table: pa.Table, keys: list[str]) -> int:
    return pc.max(table.group_by(keys).aggregate([([], "count_all")])
                  .column("count_all")).as_py()

class _Plan:
    """The columns read, the checks of each batch, and the partial sums per run key."""

    def __init__(self, spec: dict, names: list[str], ctx: Context, file: str,
                 strings: bool) -> None:
        o = ctx.options
        self.strings, self.threshold, self.by, self.spec = strings, o.threshold, o.by, spec
        self.counts = spec["kind"] == "counts"
        self.task, self.passed = spec["task"], None if self.counts else spec["passed"]
        self.value = self.passed if self.passed is not None else spec.get("reward")
        layout, self.columns = _plan(spec, o.by, o.record_by, names)
        self.auto, self.watch = layout.auto, layout.watch
        self.groups = list(dict.fromkeys((*o.record_by, *self.auto)))
        #: read dictionary-encoded from Parquet: not the task ids of a count table (distinct)
        self.coded = self.groups if self.counts else self.columns
        self.pathvals = path_groups(o.by, file)
        self.keys = ["t", *(f"g{i}" for i in range(len(self.groups)))]
        self.runs = [*self.keys, *(f"w{i}" for i in range(len(self.watch)))]
        self.parts: list[pa.Table] = []
        self.kept = self.merged = 0

    def add(self, table: pa.Table) -> None:
        task = table.column(self.task)
        if not table.num_rows:
            return
        if task.null_count or _kind(task.type) not in ("text", "int"):
            raise Locate
        data = {"t": task, **{k: _check_key(table.column(c)) for k, c in
                              zip(self.runs[1:], [*self.groups, *self.watch], strict=True)}}
        if self.counts:
            n, c = (_counts(table.column(self.spec[k]), self.strings) for k in ("n", "c"))
            if (n < 1).any() or (c < 0).any() or (c > n).any():
                raise Locate
            self.parts.append(_decoded(pa.table({**data, "n": n, "c": c})))
            return
        value = table.column(self.value)
        lists = pa.types.is_list(value.type) or pa.types.is_large_list(value.type)
        self.parts.append(_decoded(self._lists(data, value) if lists else _sums(pa.table(
            {**data, "c": self._judge(_plain(value))}), self.runs, True)))  # n: the rows
        self.kept += self.parts[-1].num_rows
        if self.kept > max(4 * self.merged, _MERGE_ROWS):
            self.parts = [_sums(pa.concat_tables(self.parts), self.runs)]
            self.kept = self.merged = self.parts[0].num_rows

    def _lists(self, data: dict, arr: pa.Array) -> pa.Table:
        """n, c per row of a list column (Parquet): that many samples, never empty."""
        if arr.null_count:
            raise Locate
        arr = arr.combine_chunks()
        n = _np(pc.list_value_length(arr)).astype(np.int64)
        if (n == 0).any():
            raise Locate  # an empty list of samples
        flags = self._judge(_plain(pc.list_flatten(arr)))
        c = np.bincount(_np(pc.list_parent_indices(arr)), np.asarray(flags), len(arr)).astype(
            np.int64)
        return pa.table({**data, "n": n, "c": c})

    def _judge(self, arr: pa.Array) -> np.ndarray | pa.ChunkedArray:
        """Whether each sample passes (as ``_table_rules`` says; each distinct text once)."""
        kind = _kind(arr.type)
        if arr.null_count or kind in (None, "null"):
            raise Locate
        if kind == "bool" and self.passed is not None:
            return arr
        if kind in ("int", "float"):
            x, thr = _np(arr).astype(np.float64), self.threshold
            if not np.isfinite(x).all() or (thr is None and not ((x == 0) | (x == 1)).all()):
                raise Locate
            return x == 1 if thr is None else x >= thr
        distinct = pc.unique(arr)
        try:
            judged = np.array([_flag(v, self.passed, self.threshold) if self.passed is not None
                               else _reward(v, self.value, self.strings) >= self.threshold
                               for v in distinct.to_pylist()], bool)
        except BadRecord:
            raise Locate from None
        return judged[_np(pc.index_in(arr, distinct))]  # no nulls (refused above)

    def block(self) -> Block:
        """The sums per (group, task) of the whole file, checked, as one Block."""
        table = self._summed()
        tasks = _tasks(table.column("t"))
        g, groups = self._groups(table)
        n, c = (table.column(k).chunks for k in ("n", "c"))
        del table
        n, c = _joined(n), _joined(c)
        rank = sorted(range(len(groups)), key=lambda i: _group_key(groups[i]))
        one = len(groups) == 1
        g = g if one else np.argsort(rank)[g]  # the inverse of the ranking
        order = natural_order(None if one else g, tasks)
        if self.counts and len(self.runs) == len(self.keys) and \
                run_starts(order, None if one else g, tasks) is not None:
            raise Locate  # a (group, task) twice: equal rows are neighbours in the natural order
        return Block(tuple(groups[i] for i in rank), g, tasks, n, c, order)

    def _summed(self) -> pa.Table:
        """The rows of the whole file, summed per (group, task) and run columns checked."""
        if not self.parts:
            raise Locate  # no rows: the row reader says how the file is empty
        table = pa.concat_tables(self.parts)
        self.parts, watched = [], len(self.runs) > len(self.keys)
        if self.counts and watched and _most(table, self.keys) > 1:
            raise Locate  # a (group, task) twice: the row reader names both lines
        table = table if self.counts else _sums(table, self.runs)
        for w in self.runs[len(self.keys):]:
            if _most(table.group_by(["t", w]).aggregate([]), ["t"]) > 1:
                raise Locate  # rows of a task differ in a run column
        return _sums(table, self.keys) if watched else table

    def _groups(self, table: pa.Table) -> tuple[np.ndarray, list[tuple]]:
        """Per row the index of its group key (``group_from`` once per combination)."""
        if len(self.keys) == 1:  # one group: no array of zeros (a read of 10M tasks)
            return np.broadcast_to(np.int64(0), (table.num_rows,)), [
                group_from(self.by, self.pathvals, {}, (), what="row")]
        rows = table.select(self.keys[1:]).append_column("i", pa.array(np.arange(len(table))))
        found = rows.group_by(self.keys[1:]).aggregate([("i", "list")])
        index, groups = found.column("i_list").combine_chunks(), []
        g = np.empty(len(table), np.int64)
        g[_np(pc.list_flatten(index))] = _np(pc.list_parent_indices(index))
        for values in zip(*(found.column(k).to_pylist() for k in self.keys[1:]), strict=True):
            record = dict(zip(self.groups, values, strict=True))
            extra = tuple((a, record[a]) for a in self.auto)
            groups.append(group_from(self.by, self.pathvals, record, extra, what="row"))
        return g, groups

def _joined(chunks: list[pa.Array]) -> np.ndarray:
    """One array of ``chunks`` (int32 if all are: counts read from a CSV, half the memory until
    Counts), each freed once copied (no second copy of a column)."""
    small = all(pa.types.is_int32(c.type) for c in chunks)
    out, at = np.empty(sum(map(len, chunks)), np.int32 if small else np.int64), 0
    while chunks:
        x = _np(chunks.pop(0))
        out[at:at + len(x)], at = x, at + len(x)
        del x
        if chunks and not len(chunks) % 16:
            release_memory()
    return out

def _tasks(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """The task ids as text, none blank (``str.strip`` judges those with no ASCII [!-~])."""
    if pa.types.is_integer(column.type):
        return pc.cast(column, pa.string())
    rare = column.filter(pc.invert(pc.match_substring_regex(column, "[!-~]")))
    if any(not t.strip() for t in rare.to_pylist()):
        raise Locate
    return column
