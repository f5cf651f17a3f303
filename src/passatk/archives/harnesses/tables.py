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
    PARQUET_MAGIC,
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
PARQUET_BATCH = 65536  # rows per Parquet batch of the stdlib rows
#: the private switch: False reads CSV as when pyarrow is not installed (tests, benchmarks)
ARROW = True
_MEMO_ROWS = 1 << 16  # distinct per-sample rows whose result is kept (about 200 bytes each)
_MISSING = object()


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
    """The stdlib reader: ``(1, {"__header__": names})``, then ``(line, row)`` per row."""
    delimiter = "\t" if logical_name(file).endswith(".tsv") else ","
    with ctx.open(file) as f:
        reader = csv.reader(_text_lines(f.stream, file), delimiter=delimiter, strict=True)
        header = _csv_header(reader, file)
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


def _csv_header(reader, file: str) -> list[str]:
    """The column names: the first row, names stripped, a byte order mark dropped, none
    repeated."""
    try:
        header = next(reader, None)
    except (csv.Error, UnicodeDecodeError) as e:
        raise ArchiveError(file, f"malformed CSV: {e}", line=1) from None
    if header is None or not any(h.strip() for h in header):
        raise ArchiveError(file, "empty file (no header row)")
    header = [h.strip() for h in header]
    header[0] = header[0].removeprefix("\ufeff")
    dupes = {h for h in header if header.count(h) > 1}
    if dupes:
        raise ArchiveError(file, f"header repeats column(s) {sorted(dupes)}", line=1)
    return header


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
    found = {"n": _pick(o.n, ("n",), have), "c": _pick(o.c, ("c",), have),
             "passed": _pick(o.passed, PASSED_COLUMNS, have),
             "reward": _pick(o.reward, REWARD_COLUMNS, have)}
    kind = kind or _kind(o, found, names, file)
    if task is None:
        raise ArchiveError(
            file, Message(f"no task column: none of {list(TASK_COLUMNS)} in {name_list(names)}; "
                          "map it with ", Option("task"))
        )
    if kind == "counts":
        return {"kind": kind, "task": task, "n": found["n"] or "n", "c": found["c"] or "c"}
    passed = None if o.passed is None and o.reward is not None else found["passed"]
    if passed is None:
        _check_reward(o, found["reward"], names, file, strict)
    return {"kind": kind, "task": task, "passed": passed,
            "reward": found["reward"] if passed is None else None}


def _pick(explicit: str | None, candidates: tuple[str, ...], have: set[str]) -> str | None:
    if explicit is not None:
        return explicit
    return next((c for c in candidates if c in have), None)


def _kind(o, found: dict, names: list[str], file: str) -> str:
    if o.n or o.c or (found["n"] and found["c"]):
        return "counts"
    if o.passed or o.reward or found["passed"] or found["reward"]:
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

    ``kind=None`` decides from the columns. Returns the kind read. CSV and Parquet are read
    by pyarrow (:mod:`passatk.archives.io.tables`); the stdlib rows below read them when
    pyarrow is missing, from a pipe, or again to name the row that breaks a rule.
    """
    box = container(file)
    if box == "jsonl":
        return _read_jsonl(file, ctx, kind)
    rows = _parquet_rows(file, ctx, None) if box == "parquet" else _csv_rows(file, ctx)
    header = next(rows)[1]["__header__"]
    spec = columns(header, kind, ctx, file)
    wanted = _needed(spec, ctx)
    _missing(file, header, wanted, 1 if box == "csv" else None)
    if _by_arrow(file, ctx, spec, header, box):
        rows.close()
        return spec["kind"]
    if box == "parquet":
        rows = _parquet_rows(file, ctx, wanted + _layout_columns(header, wanted))
    elif not is_stream(file):  # read again from the start: the pyarrow reader tried
        rows.close()
        rows = _csv_rows(file, ctx)
        next(rows)
    try:
        _accumulate(file, ctx, spec, rows, box == "csv", header)
    finally:  # the file is closed now, also when a bad row stops the read
        rows.close()
    return spec["kind"]


def _by_arrow(file: str, ctx: Context, spec: dict, header: list[str], box: str) -> bool:
    """Whether the pyarrow reader read the table (not when pyarrow is missing or switched
    off, for a pipe, which could not be read again, or a header with a newline in a name)."""
    if not ARROW or is_stream(file) or any("\n" in h or "\r" in h for h in header):
        return False
    try:
        from passatk.archives.io import tables as arrow
    except ImportError:
        return False
    return arrow.read(file, ctx, spec, header, box)


def _needed(spec: dict, ctx: Context) -> list[str]:
    """The columns a table must have: task, counts or flag, and the record ``by`` fields."""
    return [spec["task"], *(v for k, v in spec.items() if k in ("n", "c", "passed", "reward")
                            and v is not None), *ctx.options.record_by]


def _missing(file: str, header: list[str], wanted: list[str], line: int | None) -> None:
    for col in wanted:
        if col not in header:
            raise ArchiveError(file, f'missing column "{col}" (columns: {name_list(header)})',
                               line=line)


def _read_jsonl(file: str, ctx: Context, kind: str | None) -> str:
    """A JSON Lines table: its columns are the union over the records, checked as they grow
    (:class:`_Columns`), and the groups made alike (:func:`union_groups`)."""
    source = json_records(file, ctx)
    try:
        first = next(source, None)
        if first is None:
            raise ArchiveError(file, "empty file (no records)")
        if isinstance(first[1], BadRecord) and not ctx.options.skip_bad:
            raise ArchiveError(file, first[1].what, line=first[0])
        names = list(first[1]) if isinstance(first[1], dict) else []
        if ctx.first_names is not None:  # a byte range: the file's first record decides
            names = ctx.first_names
        spec = columns(names, kind, ctx, file)
        cols = _Columns(names, kind, ctx, file, spec)
        rows = ((lineno, cols.see(lineno, row)) for lineno, row in
                itertools.chain((first,), source))
        _accumulate(file, ctx, spec, rows, False, None)
    finally:
        source.close()
    union_groups(ctx.acc, ctx.options.by)
    return spec["kind"]


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

    def see(self, lineno: int, row: object) -> object:
        if not isinstance(row, dict) or row.keys() <= self.names.keys():
            return row
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
        return row


def _accumulate(file: str, ctx: Context, spec: dict, rows: Iterator, strings: bool,
                names: list[str] | None) -> None:
    """Judge and add each row in turn (``names`` None: a JSON Lines table)."""
    o = ctx.options
    pathvals = path_groups(o.by, file)
    layout = _Layout([] if spec["kind"] == "counts" else names, o.by)
    first_line = array("q")  # per row number of a count table: the line that added it, or 0
    records, skips_before = 0, ctx.skip_count
    memo = _Memo(spec, o.record_by, layout, strings)
    for lineno, row in rows:
        key, hit = memo.get(row)
        if hit is not None:
            hit[4] += 1
            records += 1
            continue
        try:
            if isinstance(row, BadRecord):
                raise row
            task = _task(_column(row, spec["task"]), spec["task"])
            group = group_from(o.by, pathvals, row, layout.extra(row), what="row")
            if spec["kind"] == "counts":
                n, c = _count_row(row, spec, strings, task)
                _check_duplicate(ctx.acc.find(group, task), first_line, group, task)
            else:
                n, c = _sample_row(row, spec, strings, o.threshold)
        except BadRecord as e:
            ctx.bad(file, e.what, line=lineno)
            continue
        layout.check(file, lineno, task, row)
        records += 1
        if memo.keep(key, [group, task, n, c, 1]):
            continue
        memo.flush(ctx)  # the rows reach the Tally in their order
        i = ctx.add(group, task, n, c)
        if spec["kind"] == "counts":
            first_line.extend([0] * (i + 1 - len(first_line)))
            first_line[i] = lineno
    memo.flush(ctx)
    ctx.layout_seen = ctx.layout_seen or layout.seen
    if records == 0 and ctx.skip_count == skips_before:
        raise ArchiveError(file, "empty file (no records)")


class _Memo:
    """What a per-sample row adds, kept per distinct combination of the fields it is judged
    by (with their types: ``1`` is not ``True``; a missing field is not null) with how many
    rows gave it, so that a repeated row is not judged again; the sums are added before any
    row that is not kept, and at the end.
    Rows that were bad are judged each time (their message shows the value), and so are
    count-table rows (each must be the only one of its key)."""

    def __init__(self, spec: dict, record_by: tuple, layout: _Layout, strings: bool) -> None:
        self.on = spec["kind"] == "samples"
        self.fields = [spec["task"], spec.get("passed") or spec.get("reward"), *record_by,
                       *layout.auto, *layout.watch]
        self.strings, self.seen = strings, {}

    def get(self, row: object) -> tuple:
        if not self.on or not isinstance(row, dict):
            return None, None
        key = tuple(row.get(f, _MISSING) for f in self.fields)
        if not self.strings:
            key = (key, tuple(map(type, key)))
        try:
            return key, self.seen.get(key)
        except TypeError:  # an unhashable value (a list of samples)
            return None, None

    def keep(self, key: object, added: list) -> bool:
        if key is None or len(self.seen) >= _MEMO_ROWS:
            return False
        self.seen[key] = added
        return True

    def flush(self, ctx: Context) -> None:
        for group, task, n, c, times in self.seen.values():
            ctx.add(group, task, n * times, c * times)
        self.seen.clear()


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
