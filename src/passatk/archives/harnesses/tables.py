"""Count tables and per-sample tables, as JSON Lines, CSV/TSV or Parquet.

Count table: one row per (group, task) with the task id, n and c. Per-sample table: one row per
sample with the task id and a pass flag (bool, 0/1, 0.0/1.0 or their text; a list of them is
that many samples), or a reward that passes when ``reward >= threshold``. Column names are
mapped with the ``task``, ``passed``, ``reward``, ``threshold``, ``n`` and ``c`` options; by
default the task column is the first of ``task_id``, ``task``, ``id`` that exists.
"""

from __future__ import annotations

import codecs
import csv
import itertools
import operator
import re
from array import array
from collections.abc import Iterator

from passatk.archives.context import (
    BadRecord,
    Context,
    group_from,
    int_text,
    json_records,
    path_groups,
)
from passatk.archives.errors import ArchiveError, show
from passatk.archives.harnesses._table_rules import (
    AUTO_GROUP_COLUMNS,
    MAX_COUNT,
    PASSED_COLUMNS,
    REWARD_COLUMNS,
    RUN_COLUMNS,
    TASK_COLUMNS,
    _flag,
    _Layout,
    _reward,
)
from passatk.archives.harnesses._writers import WriteOptions, table_rows
from passatk.archives.harnesses.registry import FormatInfo, FormatSpec, register
from passatk.archives.io.opening import (
    COMPRESSED_SUFFIXES,
    PARQUET_MAGIC,
    file_size,
    is_stream,
    logical_name,
    max_record_bytes,
    open_raw,
    read_head,
    too_long,
)
from passatk.archives.io.remote import is_url
from passatk.errors import Message, Option

_INTEGER = re.compile(r"[+-]?[0-9]{1,19}\Z")
PARQUET_BATCH = 65536  # rows per Parquet batch
#: CSV smaller than this is read by the stdlib path: importing pyarrow and its first use
#: (which imports pandas) take about 0.3 s, what the stdlib path needs for about 3 MB
_ARROW_MIN_BYTES = 2 << 20
#: Parquet tables of fewer rows stay on the stdlib path too: the fast path's Arrow group-by
#: imports pandas when it is installed (about 0.3 s and 36 MB, once), more than the stdlib
#: path spends on 100,000 rows
_ARROW_MIN_ROWS = 100_000
#: distinct combinations of a per-sample table's fields judged and kept at once (about 200
#: bytes each)
_MEMO_ROWS = 1 << 16


def name_list(names: list, shown: int = 12, sort: bool = False) -> str:
    """The first ``shown`` names (in order, or sorted), and how many more there are.

    >>> name_list(["a", "b", "c"], 2)
    "['a', 'b'] and 1 more"
    """
    names = sorted(map(str, names)) if sort else list(names)
    more = len(names) - shown
    return f"{names[:shown]}" + (f" and {more} more" if more > 0 else "")


def container(file: str) -> str:
    """``"parquet"``, ``"jsonl"`` or ``"csv"``, from magic bytes, extension and first byte."""
    name = logical_name(file)
    head = read_head(file, 4096)  # a pipe keeps its start for the reader (_sources._Pipe)
    if head[:4] == PARQUET_MAGIC:
        return "parquet"
    if name.endswith((".csv", ".tsv")):
        return "csv"
    if name.endswith((".jsonl", ".ndjson", ".json")):
        return "jsonl"
    return "jsonl" if head.lstrip()[:1] == b"{" else "csv"


# ------------------------------------------------------------------ row sources
def _csv_rows(file: str, ctx: Context) -> Iterator[tuple[int, dict]]:
    delimiter = "\t" if logical_name(file).endswith(".tsv") else ","
    with ctx.open(file) as f:
        reader = csv.reader(_text_lines(f.stream, file), delimiter=delimiter, strict=True)
        try:
            header = next(reader, None)
        except (csv.Error, UnicodeDecodeError) as e:
            raise ArchiveError(file, f"malformed CSV: {e}", line=1) from None
        if header is None or not any(h.strip() for h in header):
            raise ArchiveError(file, "empty file (no header row)")
        header = [h.strip() for h in header]
        if header and header[0].startswith("\ufeff"):
            header[0] = header[0][1:]
        dupes = {h for h in header if header.count(h) > 1}
        if dupes:
            raise ArchiveError(file, f"header repeats column(s) {sorted(dupes)}", line=1)
        yield 1, {"__header__": header}
        count = 0
        while True:
            try:
                row = next(reader)
            except StopIteration:
                break
            except (csv.Error, UnicodeDecodeError) as e:
                raise ArchiveError(file, f"malformed CSV: {e}", line=reader.line_num) from None
            count += 1
            if not row or not any(x.strip() for x in row):
                continue
            if len(row) != len(header):
                yield reader.line_num, BadRecord(
                    f"row has {len(row)} fields, the header has {len(header)}"
                )
                continue
            yield reader.line_num, dict(zip(header, row, strict=True))
            if count % 65536 == 0:
                ctx.report(f.raw_position())


def _text_lines(stream, file: str) -> Iterator[str]:
    """The lines of a CSV file as text, each at most the record-length cap long."""
    cap = max_record_bytes()
    lineno = 0
    while line := stream.readline(cap + 1):
        lineno += 1
        if len(line) > cap:
            raise too_long(file, lineno, cap)
        try:
            yield line.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ArchiveError(file, f"not UTF-8 text: {e.reason} at byte {e.start}",
                               line=lineno) from None


def _jsonl_rows(file: str, ctx: Context) -> Iterator[tuple[int, object]]:
    return json_records(file, ctx)  # msgspec where proved, else json line by line


def _parquet_rows(
    file: str, ctx: Context, wanted: list[str] | None
) -> Iterator[tuple[int, object]]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ArchiveError(
            file, "Parquet file, but the optional package pyarrow is not installed "
            "(pip install 'passatk[parquet]')"
        ) from None
    if is_stream(file):
        raise ArchiveError(file, "is Parquet through a pipe, but Parquet is read from its end: "
                           "save the data to a file")
    try:
        pf = pq.ParquetFile(open_raw(file) if is_url(file) else file)
    except Exception as e:  # pyarrow raises its own error types
        raise ArchiveError(file, f"malformed Parquet: {e}") from None
    names = list(pf.schema_arrow.names)
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:  # pyarrow allows them; a dict of the columns would keep the last
        raise ArchiveError(file, f"repeats column(s) {dupes}")
    if wanted is None:
        yield 0, {"__header__": names, "__rows__": pf.metadata.num_rows}
        return
    row = 0
    columns = [w for w in wanted if w in names]
    for batch in pf.iter_batches(batch_size=PARQUET_BATCH, columns=columns):
        cols = {name: batch.column(i).to_pylist() for i, name in enumerate(batch.schema.names)}
        for i in range(batch.num_rows):
            row += 1
            yield row, {name: col[i] for name, col in cols.items()}
        ctx.report(0)


# ------------------------------------------------------------------ values
def _int(value: object, name: str, strings: bool) -> int:
    if strings and isinstance(value, str):
        s = value.strip()
        if _INTEGER.match(s):
            value = int(s)
    if isinstance(value, int) and not isinstance(value, bool):
        if abs(value) >= MAX_COUNT:
            raise BadRecord(f'column "{name}" must be below 2**53 (counts are exact in a '
                            f"double), got {show(value)}")
        return value
    raise BadRecord(f'column "{name}" must be an integer, got {show(value)}')


def _task(value: object, name: str) -> str:
    if isinstance(value, str):
        if not value.strip():
            raise BadRecord(f'column "{name}" is empty')
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return int_text(value, name)
    raise BadRecord(f'column "{name}" must be a string or an integer, got {show(value)}')


# ------------------------------------------------------------------ columns
def columns(
    names: list[str], kind: str | None, ctx: Context, file: str, strict: bool = True
) -> dict:
    """Decide the table kind (counts or samples) and its columns from the column names.

    ``strict=False`` (detection) does not insist on a threshold for a reward column.
    """
    o, have = ctx.options, set(names)
    task = _pick(o.task, TASK_COLUMNS, have)
    ncol = o.n or ("n" if "n" in have else None)
    ccol = o.c or ("c" if "c" in have else None)
    passed = _pick(o.passed, PASSED_COLUMNS, have)
    reward = _pick(o.reward, REWARD_COLUMNS, have)
    if kind is None:
        kind = _kind(o, ncol, ccol, passed, reward, names, file)
    if task is None:
        raise ArchiveError(
            file, Message(f"no task column: none of {list(TASK_COLUMNS)} in {name_list(names)}; "
                          "map it with ", Option("task"))
        )
    if kind == "counts":
        return {"kind": kind, "task": task, "n": ncol or "n", "c": ccol or "c"}
    if o.passed is None and o.reward is not None:
        passed = None
    if passed is None:
        _check_reward(o, reward, names, file, strict)
    return {"kind": kind, "task": task, "passed": passed,
            "reward": reward if passed is None else None}


def _pick(explicit: str | None, candidates: tuple[str, ...], have: set[str]) -> str | None:
    if explicit is not None:
        return explicit
    return next((c for c in candidates if c in have), None)


def _kind(o, ncol, ccol, passed, reward, names: list[str], file: str) -> str:
    if o.n or o.c or (ncol and ccol):
        return "counts"
    if o.passed or o.reward or passed or reward:
        return "samples"
    raise ArchiveError(
        file,
        Message(f"cannot tell the table kind from columns {name_list(names)}: a count "
                "table needs columns n and c, a per-sample table a pass flag (passed) or "
                "a reward; map them with ", Option("task"), ", ", Option("n"), ", ",
                Option("c"), ", ", Option("passed"), ", ", Option("reward")),
    )


def _check_reward(o, reward: str | None, names: list[str], file: str, strict: bool) -> None:
    """A per-sample table without a flag column: a reward column, and (``strict``) a
    threshold."""
    if reward is None:
        raise ArchiveError(
            file, Message(f"no pass flag column: none of {list(PASSED_COLUMNS)} in "
                          f"{name_list(names)}, and no reward column; map one with ",
                          Option("passed"), " or ", Option("reward"))
        )
    if o.threshold is None and strict:
        raise ArchiveError(
            file, Message(f'column "{reward}" holds rewards: give ', Option("threshold"),
                          " (a sample passes when reward >= threshold)")
        )


# ------------------------------------------------------------------ reading
def read(file: str, ctx: Context, kind: str | None = None) -> str:
    """Add one count table (``kind="counts"``) or per-sample table (``"samples"``) to ``ctx``.

    ``kind=None`` decides from the columns. Returns the kind read.
    """
    box = container(file)
    opened = {"parquet": _open_parquet, "csv": _open_csv}.get(box, _open_jsonl)(file, ctx, kind)
    if opened[0] is None:  # the pyarrow reader read it
        return opened[1]["kind"]
    rows, spec, names, source = opened
    try:
        _accumulate(file, ctx, spec, rows, box == "csv", names)
    finally:  # the file is closed now, also when a bad row stops the read
        source.close()
    if names is None:
        union_groups(ctx.acc, ctx.options.by)
    return spec["kind"]


def _needed(spec: dict, ctx: Context) -> list[str]:
    """The columns a table must have: task, counts or flag, and the record ``by`` fields."""
    return [spec["task"], *(v for k, v in spec.items() if k in ("n", "c", "passed", "reward")
                            and v is not None), *ctx.options.record_by]


def _missing(file: str, header: list[str], wanted: list[str], line: int | None) -> None:
    for col in wanted:
        if col not in header:
            raise ArchiveError(file, f'missing column "{col}" (columns: {name_list(header)})',
                               line=line)


def _open_parquet(file: str, ctx: Context, kind: str | None) -> tuple:
    """``(rows, spec, names, source)``, or ``(None, spec)`` when pyarrow read the table."""
    head = next(_parquet_rows(file, ctx, None))[1]
    header = head["__header__"]
    spec = columns(header, kind, ctx, file)
    wanted = _needed(spec, ctx)
    _missing(file, header, wanted, None)
    fast = _fast_path(file, big=head["__rows__"] >= _ARROW_MIN_ROWS)
    if fast is not None and fast.read_parquet(file, ctx, spec, header):
        return None, spec
    rows = _parquet_rows(file, ctx, wanted + _layout_columns(header, wanted))
    return rows, spec, header, rows


def _open_csv(file: str, ctx: Context, kind: str | None) -> tuple:
    """As :func:`_open_parquet`, for CSV/TSV."""
    rows = _csv_rows(file, ctx)
    header = next(rows)[1]["__header__"]
    spec = columns(header, kind, ctx, file)
    _missing(file, header, _needed(spec, ctx), 1)
    fast = _fast_path(file, big=not is_stream(file) and _big_csv(file))
    if fast is not None:
        rows.close()
        if fast.read_csv(file, ctx, spec, header):
            return None, spec
        rows = _csv_rows(file, ctx)
        next(rows)
    return rows, spec, header, rows


def _open_jsonl(file: str, ctx: Context, kind: str | None) -> tuple:
    """As :func:`_open_parquet`, for JSON Lines: its columns are the union over the records
    (``names`` None), checked as they grow (:class:`_Columns`)."""
    source = _jsonl_rows(file, ctx)
    first = next(source, None)
    if first is None:
        raise ArchiveError(file, "empty file (no records)")
    if isinstance(first[1], BadRecord) and not ctx.options.skip_bad:
        raise ArchiveError(file, first[1].what, line=first[0])
    names = list(first[1]) if isinstance(first[1], dict) else []
    if ctx.first_names is not None:  # a byte range: the file's first record decides
        names = ctx.first_names
    spec = columns(names, kind, ctx, file)
    rows = _union_rows(itertools.chain((first,), source), _Columns(names, kind, ctx, file, spec))
    return rows, spec, None, source


def _union_rows(rows: Iterator, cols: _Columns) -> Iterator:
    for lineno, row in rows:
        cols.see(lineno, row)
        yield lineno, row


def _fast_path(file: str, big: bool):
    """The pyarrow fast path (:mod:`._arrow`), or None: a table too small to pay for it
    (``big`` False: a Parquet table under ``_ARROW_MIN_ROWS`` rows, a CSV file under
    ``_ARROW_MIN_BYTES``), pyarrow missing, the path switched off, or a pipe (which the stdlib
    path could not read again after a fallback)."""
    if not big or is_stream(file):
        return None
    try:
        from passatk.archives.io import tables as _arrow
    except ImportError:
        return None
    return _arrow if _arrow.FAST else None


def _big_csv(file: str) -> bool:
    """At least ``_ARROW_MIN_BYTES`` on disk (a compressed file counts 4x its size)."""
    return file_size(file) * (4 if file.endswith(COMPRESSED_SUFFIXES) else 1) >= _ARROW_MIN_BYTES


def _layout_columns(header: list[str], wanted: list[str]) -> list[str]:
    return [c for c in (*AUTO_GROUP_COLUMNS, *RUN_COLUMNS) if c in header and c not in wanted]


def _count_row(row: dict, spec: dict, strings: bool, task: str) -> tuple[int, int]:
    for col in (spec["n"], spec["c"]):
        if col not in row:
            raise BadRecord(f'missing column "{col}"')
    n = _int(row[spec["n"]], spec["n"], strings)
    c = _int(row[spec["c"]], spec["c"], strings)
    if n < 1:
        raise BadRecord(f'column "{spec["n"]}" must be >= 1, got {n}')
    if c < 0:
        raise BadRecord(f'column "{spec["c"]}" must be >= 0, got {c}')
    if c > n:
        raise BadRecord(f"c must be <= n, got c={c} > n={n} for task {task!r}")
    return n, c


def _sample_row(row: dict, spec: dict, strings: bool, threshold: float | None) -> tuple[int, int]:
    """(n, c) of one row: one sample, or a list of per-sample flags (or rewards)."""
    col = spec["passed"] if spec["passed"] is not None else spec["reward"]
    if col not in row:
        raise BadRecord(f'missing column "{col}"')
    value = row[col]
    values = value if isinstance(value, list) else [value]
    if not values:
        raise BadRecord(f'column "{col}" holds an empty list of samples')
    c = 0
    for i, x in enumerate(values):
        try:
            if spec["passed"] is not None:
                c += _flag(x, col, threshold)
            else:
                c += _reward(x, col, strings) >= threshold
        except BadRecord as e:
            where = f" (sample {i} of the list)" if isinstance(value, list) else ""
            raise BadRecord(e.what + where) from None
    return len(values), c


def union_groups(acc, by: tuple[str, ...]) -> None:
    """Give every group of a JSON Lines table the auto group columns that any of its rows
    brings (null where a row lacks one), in place: the result does not depend on row order.

    >>> from passatk.archives.counts import Tally
    >>> t = Tally()
    >>> _ = t.add((), "A", 1, 1), t.add((("filter", "x"),), "A", 1, 0)
    >>> union_groups(t, ())
    >>> list(t.rows)
    [(('filter', 'x'),), (('filter', None),)]
    """
    auto = [c for c in AUTO_GROUP_COLUMNS if c not in by]
    present = [c for c in auto if any(c in dict(g) for g in acc.rows)]
    for group in [g for g in acc.rows if present]:
        have = dict(group)
        if all(c in have for c in present):
            continue
        base = tuple((k, v) for k, v in group if k not in auto)
        acc.relabel(group, base + tuple((c, have.get(c)) for c in present))


class _Columns:
    """The columns of a JSON Lines table so far, the union over its records: a row that brings
    a column which changes how the table is read (a task, flag or count column ranked before
    the one chosen) is an error, whatever the order of the rows."""

    def __init__(self, names: list[str], kind: str | None, ctx: Context, file: str,
                 spec: dict) -> None:
        self.names = dict.fromkeys(names)
        self.kind, self.ctx, self.file, self.spec = kind, ctx, file, spec

    def see(self, lineno: int, row: object) -> None:
        if not isinstance(row, dict) or row.keys() <= self.names.keys():
            return
        new = [k for k in row if k not in self.names]
        self.names.update(dict.fromkeys(new))
        spec = columns(list(self.names), self.kind, self.ctx, self.file, strict=False)
        changed = [k for k in ("kind", "task", "n", "c", "passed", "reward")
                   if spec.get(k) != self.spec.get(k)]
        if changed:
            k = changed[0]
            raise ArchiveError(self.file, f"this record brings column(s) {name_list(new)}, "
                               f"which earlier records lack: read with them, the {k} would "
                               f"be {show(spec.get(k))}, not {show(self.spec.get(k))}; give "
                               "every record the same columns, or map them explicitly",
                               line=lineno)


def _accumulate(file: str, ctx: Context, spec: dict, rows: Iterator, strings: bool,
                names: list[str] | None) -> None:
    if spec["kind"] != "counts":
        _accumulate_samples(file, ctx, spec, rows, strings, names)
        return
    o = ctx.options
    pathvals = path_groups(o.by, file)
    tcol = spec["task"]
    first_line = array("q")  # per row number: the line of this file that added it, or 0
    records = 0
    skips_before = ctx.skip_count
    for lineno, row in rows:
        try:
            if isinstance(row, BadRecord):
                raise row
            task = _task(_column(row, tcol), tcol)
            group = group_from(o.by, pathvals, row, what="row")
            n, c = _count_row(row, spec, strings, task)
            _check_duplicate(ctx.acc.find(group, task), first_line, group, task)
        except BadRecord as e:
            ctx.bad(file, e.what, line=lineno)
            continue
        i = ctx.add(group, task, n, c)
        if i >= len(first_line):
            first_line.frombytes(bytes(8 * (i + 1 - len(first_line))))
        first_line[i] = lineno
        records += 1
    if records == 0 and ctx.skip_count == skips_before:
        raise ArchiveError(file, "empty file (no records)")


class _Judged:
    """What the rows of one combination of the fields read give: (group, task, n, c) and how
    many rows so far, or what is wrong with the row judged (a BadRecord's ``what``)."""

    __slots__ = ("bad", "c", "group", "n", "rows", "task")

    def __init__(self, group=None, task="", n=0, c=0, bad: object = None) -> None:
        self.group, self.task, self.n, self.c, self.rows, self.bad = group, task, n, c, 0, bad


def _accumulate_samples(file: str, ctx: Context, spec: dict, rows: Iterator, strings: bool,
                        names: list[str] | None) -> None:
    """Per-sample rows. Each distinct combination of the fields read (task, pass flag or
    reward, group and run columns, with their types: ``1`` is not ``True``) is judged once,
    and its rows are counted; the sums are added in the order each combination first
    appeared, so the Counts, skips and errors are those of judging every row. At most
    ``_MEMO_ROWS`` combinations are kept: then their sums are added, and when fewer than half
    the rows repeated one (rewards that all differ, one row per task), the rest of the file
    is judged row by row."""
    o = ctx.options
    layout = _Layout(names, o.by)
    judge = _Judge(file, ctx, spec, strings, layout)
    if layout.union:
        fields = operator.itemgetter(spec["task"], judge.value, *judge.read)
        get = lambda row: (*fields(row), *layout.optional(row))  # noqa: E731
    else:
        get = operator.itemgetter(spec["task"], judge.value, *judge.read, *layout.auto,
                                  *layout.watch)
    seen: dict[tuple, _Judged] = {}
    rows = iter(rows)
    records, skips_before, since = 0, ctx.skip_count, 0
    for lineno, row in rows:
        try:
            values = get(row)
            key = values if strings else (values, tuple(map(type, values)))
            judged = seen.get(key)
        except (KeyError, TypeError):  # a field missing, a value unhashable, a BadRecord
            key, judged = object(), None  # kept in order under a key never found again
        if judged is None:
            judged = judge(lineno, row)
            if judged.bad is not None:  # judged again each time: its message shows the value
                ctx.bad(file, judged.bad, line=lineno)  # (-0.0 is 0.0 as a key)
                continue
            if len(seen) >= _MEMO_ROWS:
                _add_judged(ctx, seen)
                if since < 2 * _MEMO_ROWS:
                    seen[key] = judged
                    judged.rows, records = 1, records + 1
                    break  # few repeats: row by row from here
                since = 0
            seen[key] = judged
        judged.rows += 1
        records += 1
        since += 1
    _add_judged(ctx, seen)
    records += row_by_row(judge, ctx, rows)
    ctx.layout_seen = ctx.layout_seen or layout.seen
    if records == 0 and ctx.skip_count == skips_before:
        raise ArchiveError(file, "empty file (no records)")


def row_by_row(judge: _Judge, ctx: Context, rows: Iterator) -> int:
    """Judge and add each row in turn; how many were added. (With every row of a file, the
    plain reference of ``_accumulate_samples``.)"""
    records = 0
    for lineno, row in rows:
        judged = judge(lineno, row)
        if judged.bad is not None:
            ctx.bad(judge.file, judged.bad, line=lineno)
            continue
        ctx.add(judged.group, judged.task, judged.n, judged.c)
        records += 1
    return records


class _Judge:
    """Judges one per-sample row as the stdlib loop judges it (a run column that differs
    within a task raises ArchiveError)."""

    def __init__(self, file: str, ctx: Context, spec: dict, strings: bool,
                 layout: _Layout) -> None:
        self.file, self.spec, self.strings, self.layout = file, spec, strings, layout
        self.by, self.threshold = ctx.options.by, ctx.options.threshold
        self.pathvals = path_groups(self.by, file)
        self.value = spec["passed"] if spec["passed"] is not None else spec["reward"]
        #: the group fields read from the row (not a path's, not one the table brings)
        self.read = [b for b in self.by if b not in self.pathvals and b not in layout.auto]

    def __call__(self, lineno: int, row: object) -> _Judged:
        try:
            if isinstance(row, BadRecord):
                raise row
            task = _task(_column(row, self.spec["task"]), self.spec["task"])
            group = group_from(self.by, self.pathvals, row, self.layout.extra(row),
                               what="row")
            n, c = _sample_row(row, self.spec, self.strings, self.threshold)
        except BadRecord as e:
            return _Judged(bad=e.what)  # not the exception: its traceback holds frames
        self.layout.check(self.file, lineno, task, row)
        return _Judged(group, task, n, c)


def _add_judged(ctx: Context, seen: dict[tuple, _Judged]) -> None:
    for j in seen.values():
        if j.rows:
            ctx.add(j.group, j.task, j.n * j.rows, j.c * j.rows)
    seen.clear()


def _column(row: dict, col: str) -> object:
    if col not in row:
        raise BadRecord(f'missing column "{col}"')
    return row[col]


def _check_duplicate(i: int | None, first_line: array, group: tuple, task: str) -> None:
    """A count table holds one row per (group, task); rows of other files are summed."""
    if i is not None and i < len(first_line) and first_line[i]:
        where = f" in group {dict(group)}" if group else ""
        raise BadRecord(
            f"duplicate row for task {task!r}{where} (first at line {first_line[i]})")


def peek_kind(file: str, ctx: Context) -> str | None:
    """``"counts"``/``"samples"`` when a table's columns say so, else None (for detection).

    A Parquet file that cannot be opened is an ArchiveError that says so.
    """
    box = container(file)
    if box == "parquet":
        names = next(_parquet_rows(file, ctx, None))[1]["__header__"]
    elif box == "csv":
        head = read_head(file, 1 << 16)
        text = codecs.getincrementaldecoder("utf-8")(errors="replace").decode(head)
        first = text.splitlines()[0] if text.strip() else ""
        delim = "\t" if logical_name(file).endswith(".tsv") else ","
        try:
            row = next(csv.reader([first], delimiter=delim)) if first else []
        except csv.Error:
            return None
        names = [h.strip().lstrip("\ufeff") for h in row]
    else:
        return None
    try:
        return columns(names, None, ctx, file, strict=False)["kind"]
    except ArchiveError:
        return None


def read_counts_table(file: str, ctx: Context) -> None:
    read(file, ctx, "counts")


def read_samples_table(file: str, ctx: Context) -> None:
    read(file, ctx, "samples")


def write_counts_table(path: str, tasks: list, flags: list, opts: WriteOptions) -> list[str]:
    return table_rows(path, ["task_id", "n", "c"],
                      [[t, len(p), sum(p)] for t, p in zip(tasks, flags, strict=True)])


def write_samples_table(path: str, tasks: list, flags: list, opts: WriteOptions) -> list[str]:
    rows = [[t, x] for t, p in zip(tasks, flags, strict=True) for x in p]
    return table_rows(path, ["task_id", "passed"], rows)


COUNTS = register(FormatSpec(
    FormatInfo(
        "counts", "any (the interchange format)", "*.jsonl, *.csv, *.tsv, *.parquet",
        "a table with a task column (task_id, task or id) and columns n and c",
        "one row per (group, task); c <= n, no duplicate rows"),
    kind="table", read=read_counts_table, write=write_counts_table,
    aliases=("count-table",), names=("*.csv", "*.tsv", "*.parquet", "*.pq"),
))
SAMPLES = register(FormatSpec(
    FormatInfo(
        "samples", "training logs, custom harnesses", "*.jsonl, *.csv, *.tsv, *.parquet",
        "a table with a task column and a pass flag (passed, pass, correct, is_correct, "
        "success, is_solved, solved) or a reward column (with threshold=)",
        "one row per sample; flag true/1, or reward >= threshold"),
    kind="table", read=read_samples_table, write=write_samples_table,
    aliases=("sample-table", "per-sample"), names=("*.jsonl", "*.ndjson"), byte_ranges=True,
))
