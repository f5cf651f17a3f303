"""The pyarrow fast path of :mod:`.tables`: CSV/TSV and Parquet tables read in batches.

Each batch (a Parquet record batch; a CSV piece of about 16 MiB cut where a row ends, parsed
on all cores) is checked with ``pyarrow.compute``. Per-sample tables are summed per (group,
task) with ``Table.group_by`` (Parquet keys and sample values are read as the dictionaries
Parquet stores, so the sums run on integer indices), and each distinct text value is judged
once; the partial sums are merged as they grow, so memory follows the batch size and the
number of keys, not the file. A count table's rows are kept per batch as Arrow arrays
(a repeated key falls back). Both reach the context as one sorted ``Block``: the task ids stay
Arrow strings, never a Python str each. Nothing is added to the context until the whole file
has passed.

The stdlib path (``tables._csv_rows``/``_parquet_rows`` and ``_accumulate``) stays the
reference. Its rules, and how this path keeps each, are:

* header: the first CSV row, names stripped, BOM dropped, none repeated; the required
  columns present (checked by the stdlib code before this path starts). This path also
  needs the header to be that one line.
* CSV syntax: ``csv.reader(strict=True)`` over lines of at most the record cap, decoded as
  UTF-8: ``_Checked`` (numpy, no numba: reading a CSV loads no kernel) refuses the quotes
  and carriage returns the two parsers read apart;
  every column is read as text, so Arrow validates the UTF-8 of every field; fields over
  ``csv.field_size_limit()``, lines over the cap and rows with another number of fields
  (an Arrow error) fall back. Blank rows, skipped by the stdlib path, have a blank task.
* task: a non-blank string, kept as it is, or an integer in decimal (``_tasks``, on the
  distinct ids); no null.
* group fields (``by``, lm-eval's ``filter``): scalars; a float column without NaN or -0.0
  (which a dict would not group as Arrow does).
* count tables: n and c integers (CSV: ``[+-]?[0-9]{1,19}`` between spaces or tabs; Parquet:
  integer types), below 2**53, n >= 1, 0 <= c <= n, one row per (group, task).
* per-sample tables: a pass flag (bool, 0/1 numbers, their text spellings as ``tables._flag``
  reads them), with a threshold a number compared with it, or a finite reward; a list column
  (Parquet) is that many samples, never empty, no null.
* run columns (``tables.RUN_COLUMNS``): one value per task.
* at least one record.

Whatever fails one of these raises ``Fallback``: the stdlib path reads the whole file again
and gives the same counts, or locates the error as ``file:line: what`` (and with
``skip_bad`` skips exactly what it skips). Pipes are left to the stdlib path, which could not
read them a second time, and so are CSV files under ``tables._ARROW_MIN_BYTES`` (importing
pyarrow, and the pandas its first use loads, costs more than reading them).
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from passatk.archives.context import BadRecord, Context, group_from, path_groups
from passatk.archives.counts import Block, _group_key, natural_order, take
from passatk.archives.errors import ArchiveError
from passatk.archives.harnesses._table_rules import MAX_COUNT, _flag, _Layout, _reward
from passatk.archives.io.opening import (
    UTF8_BOM,
    logical_name,
    max_record_bytes,
    open_raw,
    read_into,
)
from passatk.archives.io.remote import is_url

#: the private switch: False sends every table to the stdlib path (tests, benchmarks)
FAST = True
CSV_PIECE = 16 << 20  # bytes of CSV parsed at a time, on all cores
CSV_BLOCK = 1 << 20  # bytes per Arrow block of a piece
PARQUET_BATCH = 1 << 18  # rows per Parquet batch
_MERGE_ROWS = 1 << 20  # rows of partial sums kept before they are merged
_SUMS = ("n", "c")  # summed per key: samples, passed
_TEXTS = 1024  # distinct spellings of pass flags judged before the file falls back
#: decimal numbers whose text pyarrow and float() read alike (correctly rounded)
_NUMBER = r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$"
_INTEGER = r"^[ \t]*[+-]?[0-9]{1,19}[ \t]*$"
_FLAG_TEXT = {"1": True, "1.0": True, "0": False, "0.0": False}


class Fallback(Exception):
    """This file is read by the stdlib path (see the module docstring)."""


# ------------------------------------------------------------------ entry points
def read_csv(file: str, ctx: Context, spec: dict, header: list[str]) -> bool:
    """Add a CSV/TSV table to ``ctx``; False (nothing added) when the stdlib path must read it."""
    delimiter = "\t" if logical_name(file).endswith(".tsv") else ","
    plan = _Plan(spec, header, ctx, file, strings=True)
    limit = csv.field_size_limit()
    try:
        with ctx.open(file) as f:
            _header_line(f.stream.readline(max_record_bytes() + 1), delimiter.encode())
            checked = _Checked(delimiter.encode())
            for piece, newlines in _pieces(f.stream, checked):
                table = _parse(piece, newlines, len(header), delimiter)
                if any(_longest_field(col) > limit for col in table.columns):
                    raise Fallback  # the csv module refuses such a field
                plan.add(dict(zip(header, table.columns, strict=True)))
                ctx.report(f.raw_position())
        plan.commit(ctx)
    except (Fallback, pa.ArrowException, ArchiveError, BadRecord):
        return False  # an unreadable stream too: the stdlib path reports it in its place
    return True


def read_parquet(file: str, ctx: Context, spec: dict, header: list[str]) -> bool:
    """Add a Parquet table to ``ctx``; False (nothing added) when the stdlib path must read it."""
    import pyarrow.parquet as pq

    plan = _Plan(spec, header, ctx, file, strings=False)
    try:
        pf = pq.ParquetFile(open_raw(file) if is_url(file) else file)
        schema = pf.schema_arrow
        text = [c for c in plan.coded if _is_text(schema.field(c).type)]
        if text:  # read as the dictionaries Parquet stores: no string per row
            pf = pq.ParquetFile(open_raw(file) if is_url(file) else file, read_dictionary=text)
        for batch in pf.iter_batches(batch_size=PARQUET_BATCH, columns=plan.columns):
            plan.add({name: batch.column(name) for name in plan.columns})
            ctx.report(0)
        plan.commit(ctx)
    except (Fallback, pa.ArrowException, ArchiveError, BadRecord):
        return False
    return True


# ------------------------------------------------------------------ CSV bytes
def _pieces(stream: Any, checked: _Checked) -> Iterator[tuple[memoryview, bool]]:
    """The rows after the header, checked, in pieces of about CSV_PIECE bytes that end where a
    row ends (a newline outside quotes), so that each piece parses on all cores on its own;
    with each, whether a newline may be inside a quoted field of it.

    The pieces are read into one buffer, reused (Arrow copies the fields it parses): a fresh
    16 MiB per read cost more in page faults than the read itself."""
    cap = max_record_bytes()
    buf = bytearray(CSV_PIECE)
    have = 0  # bytes at the start of buf: a row begun in the last piece
    while True:
        with memoryview(buf) as whole, whole[have:] as free:
            got = _fill(stream, free)
        end = have + got
        base = checked.fed - have  # the file offset of buf[0]
        checked.feed(buf, have, end)
        if checked.bad:
            raise Fallback
        if not got:
            if have:
                yield memoryview(buf)[:have], checked.quoted_newline >= base
            return
        cut = checked.row_end(buf, end)
        if cut:
            piece = memoryview(buf)[:cut]
            if cut > cap and _longest_line(piece) > cap:
                raise Fallback  # the stdlib path says which line is over the record cap
            yield piece, checked.quoted_newline >= base
            del piece
            buf[:end - cut] = buf[cut:end]
            have = end - cut
        elif end > max(cap, CSV_PIECE):
            raise Fallback
        else:
            if end == len(buf):  # no row ends in buf: a larger one (a piece may be in use)
                buf = buf[:end] + bytearray(len(buf))
            have = end


def _fill(stream: Any, view: memoryview) -> int:
    """Read into ``view`` until it is full or the stream ends; how many bytes."""
    got = 0
    while got < len(view):
        with view[got:] as rest:
            step = read_into(stream, rest)
        if not step:
            break
        got += step
    return got


def _longest_field(column: pa.ChunkedArray) -> int:
    longest = pc.max(pc.binary_length(column)).as_py() if column.num_chunks else None
    return longest or 0


def _longest_line(data: memoryview) -> int:
    """The length of the longest line of ``data`` (lines end with a newline, kept)."""
    ends = np.flatnonzero(np.frombuffer(data, np.uint8) == 10) + 1
    return int(np.diff(ends, prepend=0).max(initial=len(data) - (ends[-1] if len(ends) else 0)))


def _parse(piece: memoryview, newlines: bool, columns: int, delimiter: str) -> pa.Table:
    """Every field of the rows of ``piece`` as text (not dictionary-encoded: in Arrow's CSV
    reader that costs more than it saves, measured). ``newlines``: a newline may be inside a
    quoted field."""
    if piece[:3] == UTF8_BOM:
        raise Fallback  # Arrow drops a byte order mark at the start; the csv module keeps it
    names = [f"f{i}" for i in range(columns)]
    types = dict.fromkeys(names, pa.string())
    # without newlines inside quoted fields, Arrow's faster chunker (which cuts blocks at
    # every newline) reads the same rows (0.028 s against 0.044 s for the bench's 1M rows)
    options = {"parse_options": pacsv.ParseOptions(delimiter=delimiter,
                                                   newlines_in_values=newlines),
               "convert_options": pacsv.ConvertOptions(
                   column_types=types, strings_can_be_null=False,
                   quoted_strings_can_be_null=False)}
    try:
        return pacsv.read_csv(pa.py_buffer(piece), read_options=pacsv.ReadOptions(
            column_names=names, block_size=CSV_BLOCK), memory_pool=_parse_pool(), **options)
    except pa.ArrowInvalid:
        if len(piece) < CSV_BLOCK:
            raise
    # a row longer than a block: the piece as one block
    return pacsv.read_csv(pa.py_buffer(piece), read_options=pacsv.ReadOptions(
        column_names=names, block_size=len(piece) + 1, use_threads=False),
        memory_pool=_parse_pool(), **options)


_POOL: list = []


def _parse_pool() -> pa.MemoryPool:
    """The pool CSV pieces are parsed into: Arrow's jemalloc pool, returning freed pages at
    once (``decay_ms=0``), where pyarrow has one. The default mimalloc pool keeps the pages of
    every parsing thread: 637 MB against 613 MB for 10M distinct task ids (docs/benchmarks.md,
    issue 19). Only this reader uses that pool, so the decay setting changes nothing else."""
    if not _POOL:
        try:
            pool = pa.jemalloc_memory_pool()
            pa.jemalloc_set_decay_ms(0)
        except (NotImplementedError, pa.ArrowException):
            pool = pa.default_memory_pool()
        _POOL.append(pool)
    return _POOL[0]


def _header_line(line: bytes, delimiter: bytes) -> None:
    """The header must be this one line (no field of it runs on), quoted as Arrow reads it."""
    head = _Checked(delimiter)
    line = line.removeprefix(UTF8_BOM)
    head.feed(line, 0, len(line))
    head.feed(line, 0, 0)
    if head.bad or not line.endswith(b"\n"):
        raise Fallback


def _all_in(values: np.ndarray, chars: bytes) -> bool:
    """Whether every byte of ``values`` is one of ``chars`` (a few compares cost less than a
    lookup table's gather)."""
    hit = values == chars[0]
    for ch in chars[1:]:
        hit |= values == ch
    return bool(hit.all())


class _Checked:
    """Checks the rows of a CSV file, fed in order, for what the csv module (strict) and Arrow
    read differently: a quote that does not open a field (``a"b``), a closing quote followed
    by anything but a delimiter, newline or quote (``"a"b``), a quoted field left open at the
    end, a bare carriage return. Any of them sets ``bad``; the reader then falls back.

    Quotes are judged by parity: in a file that passes, a quote opens a field when an even
    number of quotes precede it, and ``""`` inside a field is a closing and an opening quote.
    ``quoted_newline`` is the file offset of the last newline fed that may be inside a quoted
    field (-1: none; any chunk with a quote counts as one that may hold such a newline).
    """

    def __init__(self, delimiter: bytes) -> None:
        self._ok_before = delimiter + b'\n"'
        self._ok_after = delimiter + b'\n\r"'
        self.quotes = 0  # quotes fed so far
        self.fed = 0  # bytes fed so far
        self.quoted_newline = -1
        self._prev = 10  # the byte before the next chunk (the header's newline)
        self._check_next = False  # the last chunk ended with a closing quote
        self.bad = False

    def feed(self, data: bytes | bytearray, start: int, end: int) -> None:
        """Check the next bytes, ``data[start:end]``; an empty range at the end."""
        if start == end:
            self.bad |= self.quotes % 2 == 1 or self._prev == 13
            return
        if self._prev == 13 or data.find(b"\r", start, end) >= 0:
            self.bad |= self._bare_cr(data, start, end)
        if self._check_next or data.find(b'"', start, end) >= 0:
            self._check_quotes(np.frombuffer(data, np.uint8, end - start, start))
            self.quoted_newline = self.fed + end - start - 1
        elif self.quotes % 2 == 1:  # no quote here, all of it inside a quoted field
            at = data.rfind(b"\n", start, end)
            if at >= 0:
                self.quoted_newline = self.fed + at - start
        self._prev = data[end - 1]
        self.fed += end - start

    def _bare_cr(self, data: bytes | bytearray, start: int, end: int) -> bool:
        """A carriage return not followed by a newline: the csv module and Arrow split it
        apart (one that ends the range is judged with the next byte)."""
        bare = data.count(b"\r", start, end) - data.count(b"\r\n", start, end)
        bare += (self._prev == 13 and data[start] != 10) - (data[end - 1] == 13)
        return bare > 0

    def row_end(self, data: bytes | bytearray, stop: int) -> int:
        """One past the last newline of ``data[:stop]`` (the bytes fed last, possibly with
        some fed before) that is outside quotes, or 0."""
        end = data.rfind(b"\n", 0, stop)
        if end < 0 or (self.quotes - data.count(b'"', end, stop)) % 2 == 0:
            return end + 1
        buf = np.frombuffer(data, np.uint8, stop)  # inside a quoted field: every newline's parity
        newlines, quotes = np.flatnonzero(buf == 10), np.flatnonzero(buf == 34)
        outside = newlines[(self.quotes - len(quotes) + np.searchsorted(quotes, newlines)) % 2 == 0]
        return int(outside[-1]) + 1 if len(outside) else 0

    def _check_quotes(self, buf: np.ndarray) -> None:
        if self._check_next and buf[0] not in self._ok_after:
            self.bad = True
        q = np.flatnonzero(buf == 34)
        first = self.quotes % 2  # the first quote here opens a field when an even count precede
        opening, closing = q[first::2], q[1 - first::2]
        if len(opening) and opening[0] == 0:
            self.bad |= self._prev not in self._ok_before
            opening = opening[1:]
        self._check_next = bool(len(closing) and closing[-1] == len(buf) - 1)
        if self._check_next:
            closing = closing[:-1]
        if not (_all_in(buf[opening - 1], self._ok_before)
                and _all_in(buf[closing + 1], self._ok_after)):
            self.bad = True
        self.quotes += len(q)


# ------------------------------------------------------------------ columns
def _whole(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    """One contiguous array of the values of a column (a dictionary-encoded one decoded)."""
    if pa.types.is_dictionary(arr.type):
        arr = pc.cast(arr, arr.type.value_type)
    return arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr


def _is_text(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def _split(arr: pa.Array | pa.ChunkedArray) -> tuple[Any, pa.Array | None]:
    """A dictionary-encoded column (a Parquet batch's) as (indices, dictionary), any other as
    (column, None)."""
    if not pa.types.is_dictionary(arr.type):
        return arr, None
    return arr.indices, arr.dictionary


def _decode(table: pa.Table, values: dict[str, pa.Array | None]) -> pa.Table:
    """Dictionary indices in the key columns of ``table`` replaced by their values."""
    for name, dictionary in values.items():
        if dictionary is not None:
            i = table.schema.get_field_index(name)
            table = table.set_column(i, name, pc.take(dictionary, table.column(i)))
    return table


def _task_array(arr: pa.Array) -> tuple[Any, pa.Array | None]:
    """Task ids (``_split``): strings (kept as they are) or integers; ``_tasks`` checks the
    distinct ones."""
    codes, values = _split(arr)
    t = (values if values is not None else codes).type
    if codes.null_count or not (_is_text(t) or pa.types.is_integer(t)):
        raise Fallback
    return codes, values


def _tasks(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """The task ids of a file as text: integers in decimal, no blank string (``str.strip``
    judges the few ids without a printable ASCII character)."""
    if pa.types.is_integer(column.type):
        return pc.cast(column, pa.string())
    rare = column.filter(pc.invert(pc.match_substring_regex(column, "[!-~]")))
    if any(not t.strip() for t in rare.to_pylist()):
        raise Fallback
    return column


def _narrow(pieces: list[np.ndarray]) -> np.ndarray:
    """One array of the pieces (emptied), in the smallest unsigned type that holds them
    when none is negative (counts of 10 take a byte a row, not eight)."""
    out = np.concatenate(pieces) if len(pieces) > 1 else pieces[0]
    pieces.clear()
    if len(out) and out.min() >= 0:
        out = out.astype(np.min_scalar_type(out.max()), copy=False)
    return out


def _ordered(groups: list[tuple], g: np.ndarray, tasks: pa.ChunkedArray, n: np.ndarray,
             c: np.ndarray, unique: bool = False) -> Block:
    """The rows as a Block with the order Counts sorts them in; ``unique``: a (group, task)
    twice falls back (a count table holds one row per key)."""
    rank = sorted(range(len(groups)), key=lambda i: _group_key(groups[i]))
    if len(groups) > 1:
        where = np.empty(len(groups), np.int32)
        where[rank] = np.arange(len(groups))
        g = where[g]
    order = natural_order(g if len(groups) > 1 else None, tasks)
    if unique:
        for s in range(0, len(order) - 1, 1 << 20):
            at = order[s:s + (1 << 20) + 1]
            t = take(tasks, at)
            same = pc.equal(t.slice(1), t.slice(0, len(t) - 1)).to_numpy(zero_copy_only=False)
            if (same & (g[at[1:]] == g[at[:-1]])).any():
                raise Fallback  # a duplicate row: the stdlib path names its lines
    return Block(tuple(groups[i] for i in rank), g, tasks, n, c, order)


def _key_array(arr: pa.Array) -> tuple[Any, pa.Array | None]:
    """A group or run column (``_split``): scalars whose Python values group as ``to_pylist``
    gives them."""
    codes, values = _split(arr)
    plain = values if values is not None else codes
    t = plain.type
    if pa.types.is_floating(t):
        x = _whole(plain).fill_null(1.0).to_numpy(zero_copy_only=False)
        if np.isnan(x).any() or (np.signbit(x) & (x == 0)).any():
            raise Fallback  # NaN is never equal to itself; -0.0 equals 0.0 in a dict
        return codes, values
    if _is_text(t) or pa.types.is_integer(t) or pa.types.is_boolean(t) or pa.types.is_null(t):
        return codes, values
    raise Fallback


def _int_array(arr: pa.Array, strings: bool) -> np.ndarray:
    """Counts (column n or c) as int64; only values the stdlib path reads alike."""
    arr = _whole(arr)
    if arr.null_count:
        raise Fallback
    if strings and _is_text(arr.type):
        if not pc.all(pc.match_substring_regex(arr, _INTEGER)).as_py():
            raise Fallback
        arr = pc.utf8_ltrim(pc.utf8_trim(arr, " \t"), "+")
    elif not pa.types.is_integer(arr.type):
        raise Fallback
    x = pc.cast(arr, pa.int64()).to_numpy(zero_copy_only=False)
    if (np.abs(x) >= MAX_COUNT).any():
        raise Fallback
    return x


# ------------------------------------------------------------------ the plan
class _Plan:
    """The columns a table is read from, the per-batch checks, and the partial sums."""

    def __init__(self, spec: dict, names: list[str], ctx: Context, file: str,
                 strings: bool) -> None:
        o = ctx.options
        self.ctx, self.strings, self.threshold = ctx, strings, o.threshold
        self.counts = spec["kind"] == "counts"
        self.task = spec["task"]
        self.passed = None if self.counts else spec["passed"]
        self.value = self.passed if self.passed is not None else spec.get("reward")
        layout = _Layout([] if self.counts else names, o.by)
        self.auto, self.watch = layout.auto, layout.watch
        self.groups = list(dict.fromkeys((*o.record_by, *self.auto)))
        used = [self.task, *self.groups, *self.watch]
        used += [spec["n"], spec["c"]] if self.counts else [self.value]
        self.columns = list(dict.fromkeys(used))
        #: Parquet columns read dictionary-encoded: the keys and the sample values (not the
        #: task ids of a count table, which are distinct)
        self.coded = self.groups if self.counts else self.columns
        self.pathvals = path_groups(o.by, file)
        self.by = o.by
        self.keys = ["t", *(f"g{i}" for i in range(len(self.groups)))]
        self.spec = spec
        #: a count table's rows per batch: (group number, task, n, c)
        self.rows: list[tuple] = []
        self.file_groups: dict[tuple, int] = {}  # group key -> its number in this file
        self.made: dict[tuple, tuple] = {}  # group values -> group key (group_from)
        self.parts: list[pa.Table] = []
        self.pairs: list[list[pa.Table]] = [[] for _ in self.watch]
        self.kept = 0
        self.merged = 0
        #: CSV pass flags without a threshold: the rows are counted per (group, task, text),
        #: and each distinct text is judged once (``judged``), cheaper than encoding them
        self.by_text = strings and self.passed is not None and self.threshold is None
        self.sum_keys, self.sum_cols = ([*self.keys, "v"], ("n",)) if self.by_text else (
            self.keys, _SUMS)
        self.judged: dict[str, bool] = {}

    def add(self, cols: dict[str, pa.Array]) -> None:
        """Check one batch and add its sums per (group, task)."""
        if not len(cols[self.task]):
            return
        task, names = _task_array(cols[self.task])
        data, values = {"t": task}, {"t": names}
        for i, g in enumerate(self.groups):
            data[f"g{i}"], values[f"g{i}"] = _key_array(cols[g])
        if self.counts:
            n = _int_array(cols[self.spec["n"]], self.strings)
            c = _int_array(cols[self.spec["c"]], self.strings)
            if (n < 1).any() or (c < 0).any() or (c > n).any():
                raise Fallback
            return self._count_rows(_decode(pa.table({**data, "n": n, "c": c}), values))
        if self.by_text:
            part = _counted(pa.table({**data, "v": cols[self.value]}), self.sum_keys)
            self._judge_texts(part.column("v"))
        else:
            n, c = self._samples(cols[self.value])
            part = _sums(pa.table({**data, "n": n, "c": c}), self.keys, _SUMS)
        self._keep(_decode(part, values))
        for i, w in enumerate(self.watch):
            codes, seen = _key_array(cols[w])
            pairs = _distinct(pa.table({"t": task, "w": codes}))
            self.pairs[i].append(_decode(pairs, {"t": names, "w": seen}))

    def _count_rows(self, table: pa.Table) -> None:
        """Keep the rows of a count table (one row per key, checked at the commit)."""
        index, groups = self._groups(table)
        ids = np.array([self.file_groups.setdefault(g, len(self.file_groups)) for g in groups],
                       np.int64)
        self.rows.append((_narrow([ids[index]]), table.column("t"),
                          _narrow([table.column("n").to_numpy()]),
                          _narrow([table.column("c").to_numpy()])))
        del table
        _release()

    def _keep(self, part: pa.Table) -> None:
        _release()
        self.parts.append(part)
        self.kept += part.num_rows
        if self.kept > max(4 * self.merged, _MERGE_ROWS):
            self.parts = [_sums(pa.concat_tables(self.parts), self.sum_keys, self.sum_cols)]
            self.kept = self.merged = self.parts[0].num_rows
            self.pairs = [[_distinct(pa.concat_tables(p))] if p else [] for p in self.pairs]

    # -------------------------------------------------------------- samples
    def _judge_texts(self, texts: pa.ChunkedArray) -> None:
        for text in pc.unique(texts).to_pylist():
            if text not in self.judged:
                if len(self.judged) >= _TEXTS:
                    raise Fallback  # spellings beyond any real file's: the stdlib path
                self.judged[text] = self._judge(text)

    def _by_task(self, table: pa.Table) -> pa.Table:
        """Sums per (group, task) of a table counted per (group, task, flag text)."""
        flags = np.array([self.judged[v] for v in table.column("v").to_pylist()], bool)
        n = table.column("n").to_numpy()
        data = {k: table.column(k) for k in self.keys}
        return _sums(pa.table({**data, "n": n, "c": np.where(flags, n, 0)}), self.keys, _SUMS)

    def _samples(self, arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
        """(n, c) per row: one sample, or a list of them."""
        codes, values = _split(arr)
        if values is not None:  # each distinct value judged once
            if codes.null_count:
                raise Fallback
            flags = self._flags(_whole(values))[_whole(codes).to_numpy(zero_copy_only=False)]
            return np.ones(len(flags), np.int64), flags.astype(np.int64)
        arr = _whole(arr)
        if not (pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type)):
            flags = self._flags(arr)
            return np.ones(len(flags), np.int64), flags.astype(np.int64)
        if self.strings or arr.null_count:
            raise Fallback
        offsets = arr.offsets.to_numpy().astype(np.int64)
        n = np.diff(offsets)
        if (n == 0).any():
            raise Fallback  # an empty list of samples
        flags = self._flags(_whole(arr.values.slice(offsets[0], offsets[-1] - offsets[0])))
        total = np.concatenate(([0], np.cumsum(flags, dtype=np.int64)))
        offsets -= offsets[0]
        return n, total[offsets[1:]] - total[offsets[:-1]]

    def _flags(self, arr: pa.Array) -> np.ndarray:
        """Whether each sample passes, as ``tables._sample_row`` decides."""
        t, thr = arr.type, self.threshold
        if arr.null_count:
            raise Fallback
        if pa.types.is_boolean(t) and self.passed is not None:
            return arr.to_numpy(zero_copy_only=False)
        if pa.types.is_integer(t) or pa.types.is_floating(t):
            x = arr.to_numpy(zero_copy_only=False)
            if thr is None:
                if not ((x == 0) | (x == 1)).all():
                    raise Fallback
                return x == 1
            x = x.astype(np.float64)
            if not np.isfinite(x).all():
                raise Fallback
            return x >= thr
        if _is_text(t):
            return self._text_flags(arr)
        raise Fallback

    def _text_flags(self, arr: pa.Array) -> np.ndarray:
        """Text samples: plain decimals compared in bulk, every other spelling once in Python."""
        out = np.zeros(len(arr), bool)
        rest = np.ones(len(arr), bool)
        thr = self.threshold
        if thr is not None and (self.strings or self.passed is not None):
            number = pc.match_substring_regex(arr, _NUMBER).to_numpy(zero_copy_only=False)
            if number.any():
                text = arr.filter(number)
                x = pc.cast(text, pa.float64()).to_numpy(zero_copy_only=False)
                if not np.isfinite(x).all():
                    raise Fallback
                passes = x >= thr
                if self.passed is not None:  # "1", "0", "1.0", "0.0" are flags first
                    flag = pc.is_in(text, pa.array(list(_FLAG_TEXT))).to_numpy(
                        zero_copy_only=False)
                    passes[flag] = pc.is_in(text, pa.array(["1", "1.0"])).to_numpy(
                        zero_copy_only=False)[flag]
                out[number] = passes
                rest = ~number
        if rest.any():
            text = (arr if rest.all() else arr.filter(rest)).dictionary_encode()
            judged = np.array([self._judge(v) for v in text.dictionary.to_pylist()], bool)
            out[rest] = judged[text.indices.to_numpy(zero_copy_only=False)]
        return out

    def _judge(self, value: object) -> bool:
        try:
            if self.passed is not None:
                return _flag(value, self.passed, self.threshold)
            return _reward(value, self.value, self.strings) >= self.threshold
        except BadRecord:
            raise Fallback from None

    # -------------------------------------------------------------- commit
    def commit(self, ctx: Context) -> None:
        """Check what needs the whole file, then add the sums to ``ctx``."""
        if self.counts:
            if not self.rows:
                raise Fallback  # no rows: the stdlib path says how the file is empty
            tasks = _tasks(pa.chunked_array([r[1] for r in self.rows]))
            g, n, c = ([r[i] for r in self.rows] for i in (0, 2, 3))
            self.rows = []
            g, n, c = _narrow(g), _narrow(n), _narrow(c)
            ctx.acc.add_block(_ordered(list(self.file_groups), g, tasks, n, c, unique=True))
            return
        if not self.parts:
            raise Fallback  # no rows: the stdlib path says how the file is empty
        table = _sums(pa.concat_tables(self.parts), self.sum_keys, self.sum_cols)
        if self.by_text:
            table = self._by_task(table)
        self.parts = []
        _release()
        for pairs in self.pairs:
            per_task = pc.value_counts(_distinct(pa.concat_tables(pairs)).column("t"))
            if pc.max(per_task.field("counts")).as_py() > 1:
                raise Fallback  # rows of a task differ in a run column
        tasks = _tasks(table.column("t"))
        index, groups = self._groups(table)
        n, c = (table.column(k).to_numpy() for k in ("n", "c"))
        del table
        _release()
        ctx.acc.add_block(_ordered(groups, index, tasks, n, c))

    def _groups(self, table: pa.Table) -> tuple[np.ndarray, list[tuple]]:
        """Per row the index of its group in a list of group keys (``group_from``, once per
        distinct combination of group values)."""
        code, radix, columns = np.zeros(table.num_rows, np.int64), 1, []
        for k in self.keys[1:]:
            enc = pc.dictionary_encode(table.column(k).combine_chunks(), null_encoding="encode")
            code += enc.indices.to_numpy(zero_copy_only=False).astype(np.int64) * radix
            columns.append((radix, enc.dictionary.to_pylist()))
            radix *= max(len(enc.dictionary), 1)
            if radix > 1 << 62:
                raise Fallback  # too many combinations to number (not met in practice)
        distinct, index = np.unique(code, return_inverse=True)
        groups = []
        for number in distinct.tolist():
            values = tuple(values[number // r % len(values)] for r, values in columns)
            group = self.made.get(values)
            if group is None:
                record = dict(zip(self.groups, values, strict=True))
                extra = tuple((a, record[a]) for a in self.auto)
                group = self.made[values] = group_from(self.by, self.pathvals, record, extra,
                                                       what="row")
            groups.append(group)
        return index, groups


def _release() -> None:
    """Give the memory Arrow freed back to the system: the peak is what the batches need."""
    pa.default_memory_pool().release_unused()


def _sums(table: pa.Table, keys: list[str], columns: tuple[str, ...]) -> pa.Table:
    out = table.group_by(keys).aggregate([(c, "sum") for c in columns])
    return pa.table({**{k: out.column(k) for k in keys},
                     **{c: out.column(f"{c}_sum") for c in columns}})


def _counted(table: pa.Table, keys: list[str]) -> pa.Table:
    """The rows of ``table`` counted per ``keys`` (as column n)."""
    out = table.group_by(keys).aggregate([(keys[-1], "count")])
    return pa.table({**{k: out.column(k) for k in keys}, "n": out.column(f"{keys[-1]}_count")})


def _distinct(table: pa.Table) -> pa.Table:
    return table.group_by(["t", "w"], use_threads=False).aggregate([])
