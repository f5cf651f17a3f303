"""Count tables (task, n, c) and per-sample tables (task, a pass flag or a reward) as JSON Lines,
CSV/TSV or Parquet, read row by row; pyarrow reads CSV and Parquet in bulk (``io/tables``)."""

from __future__ import annotations

import codecs
import csv
import itertools
import re
from array import array
from functools import lru_cache
from operator import itemgetter
from typing import Any

import msgspec

from passatk.archives import context
from passatk.archives.context import BadRecord, Context, group_from, int_text, path_groups
from passatk.archives.errors import ArchiveError, show
from passatk.archives.harnesses import _table_rules as rules
from passatk.archives.harnesses._writers import WriteOptions, table_rows
from passatk.archives.harnesses.registry import FormatInfo, FormatSpec, register
from passatk.archives.io import lines, opening
from passatk.archives.io.remote import is_url
from passatk.errors import Message, Option

AUTO_GROUP_COLUMNS, RUN_COLUMNS = rules.AUTO_GROUP_COLUMNS, rules.RUN_COLUMNS
_INTEGER = re.compile(r"[+-]?[0-9]{1,19}\Z")
PARQUET_BATCH = 65536  # rows per Parquet batch of the row reader
#: the private switch: False reads CSV as when pyarrow is not installed (tests, benchmarks)
ARROW = True
_MEMO_ROWS = 1 << 16  # distinct per-sample rows whose result is kept (about 200 bytes each)
_UNSET = msgspec.UNSET  # a column that a row lacks (not null)
_FOUND = {"n": ("n",), "c": ("c",), "passed": rules.PASSED_COLUMNS, "reward": rules.REWARD_COLUMNS}
#: the columns whose presence can change how a table is read
_DECIDING = frozenset((*rules.TASK_COLUMNS, *(c for cs in _FOUND.values() for c in cs)))

def name_list(names: list, shown: int = 12, sort: bool = False) -> str:
    """The first ``shown`` names (in order, or sorted), and how many more there are."""
    names = sorted(map(str, names)) if sort else list(names)
    more = len(names) - shown
    return f"{names[:shown]}" + (f" and {more} more" if more > 0 else "")

def container(file: str) -> str:
    """``"parquet"``, ``"jsonl"`` or ``"csv"``, from magic bytes, extension and first byte."""
    name, head = opening.logical_name(file), opening.read_head(file, 4096)  # a pipe keeps it
    if head[:4] == opening.PARQUET_MAGIC:
        return "parquet"
    if name.endswith((".csv", ".tsv")):
        return "csv"
    jsonl = name.endswith((".jsonl", ".ndjson", ".json")) or head.lstrip()[:1] == b"{"
    return "jsonl" if jsonl else "csv"

def _delimiter(file: str) -> str:
    return "\t" if opening.logical_name(file).endswith(".tsv") else ","

def _csv_rows(file: str, ctx: Context):
    """The header, then ``(line, fields)`` per row that is not blank."""
    with ctx.open(file) as f:
        reader = csv.reader(_text_lines(f.stream, file), delimiter=_delimiter(file), strict=True)
        header = _csv_header(reader, file)
        yield header
        try:
            for count, row in enumerate(reader, 1):
                if any(x.strip() for x in row):
                    yield reader.line_num, row if len(row) == len(header) else BadRecord(
                        f"row has {len(row)} fields, the header has {len(header)}")
                if count % 65536 == 0:
                    ctx.report(f.raw_position())
        except csv.Error as e:
            raise ArchiveError(file, f"malformed CSV: {e}", line=reader.line_num) from None

def _csv_header(reader, file: str) -> list[str]:
    """The first row: names stripped, a byte order mark dropped, none repeated."""
    try:
        header = next(reader, None)
    except csv.Error as e:
        raise ArchiveError(file, f"malformed CSV: {e}", line=1) from None
    if header is None or not any(h.strip() for h in header):
        raise ArchiveError(file, "empty file (no header row)")
    header = [h.strip() for h in header]
    header[0] = header[0].removeprefix("\ufeff")
    dupes = sorted({h for h in header if header.count(h) > 1})
    if dupes:
        raise ArchiveError(file, f"header repeats column(s) {dupes}", line=1)
    return header

def _text_lines(stream, file: str):
    cap = opening.max_record_bytes()
    for lineno, line in enumerate(iter(lambda: stream.readline(cap + 1), b""), 1):
        if len(line) > cap:
            raise opening.too_long(file, lineno, cap)
        try:
            yield line.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ArchiveError(file, f"not UTF-8 text: {e.reason} at byte {e.start}",
                               line=lineno) from None

def _parquet(file: str):
    """The ``pyarrow.parquet.ParquetFile`` of ``file``, its column names checked."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ArchiveError(file, "Parquet file, but the optional package pyarrow is not "
                           "installed (pip install 'passatk[parquet]')") from None
    if opening.is_stream(file):
        raise ArchiveError(file, "is Parquet through a pipe, but Parquet is read from its end: "
                           "save the data to a file")
    try:
        pf = pq.ParquetFile(opening.open_raw(file) if is_url(file) else file)
    except Exception as e:  # pyarrow raises its own error types
        raise ArchiveError(file, f"malformed Parquet: {e}") from None
    names = pf.schema_arrow.names
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:  # pyarrow allows them; a dict of the columns would keep the last
        raise ArchiveError(file, f"repeats column(s) {dupes}")
    return pf

def _parquet_rows(pf, ctx: Context, fields: list[str]):
    row = 0
    for batch in pf.iter_batches(batch_size=PARQUET_BATCH, columns=fields):  # (no repeats)
        values = [batch.column(f).to_pylist() for f in fields]
        yield from enumerate(zip(*values, strict=True), row + 1)
        row += batch.num_rows
        ctx.report(0)

def _jsonl_rows(file: str, ctx: Context, cols: _Columns):
    """Blocks decoded by the typed view, else line by line by ``json``."""
    for lineno, block in context.line_blocks(file, ctx):
        if cols.spec is None:
            cols.peek(lineno, block)
        rows = cols.typed(block)
        if rows is not None:
            yield from context.number_records(lineno, block, rows)
            continue
        for n, line in context.block_lines(file, lineno, block):
            try:
                record = context.parse_json_line(file, n, line)
            except BadRecord as e:
                yield n, e
            else:
                yield n, cols.see(n, record)

def _int(value: object, name: str, strings: bool) -> int:
    if strings and isinstance(value, str) and _INTEGER.match(value.strip()):
        value = int(value.strip())
    if isinstance(value, int) and not isinstance(value, bool):
        if abs(value) >= rules.MAX_COUNT:
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

def columns(
    names: list[str], kind: str | None, ctx: Context, file: str, strict: bool = True
) -> dict:
    """Decide the table kind (counts or samples) and its columns from the column names;
    ``strict=False`` (detection) does not insist on a threshold for a reward column."""
    o, have = ctx.options, set(names)
    task = _pick(o.task, rules.TASK_COLUMNS, have)
    found = {k: _pick(getattr(o, k), candidates, have) for k, candidates in _FOUND.items()}
    kind = kind or _kind(o, found, names, file)
    if task is None:
        raise ArchiveError(file, Message(f"no task column: none of {list(rules.TASK_COLUMNS)} "
                                         f"in {name_list(names)}; map it with ", Option("task")))
    if kind == "counts":
        return {"kind": kind, "task": task, "n": found["n"] or "n", "c": found["c"] or "c"}
    passed = None if o.passed is None and o.reward is not None else found["passed"]
    if passed is None and found["reward"] is None:
        raise ArchiveError(file, Message(
            f"no pass flag column: none of {list(rules.PASSED_COLUMNS)} in {name_list(names)}, "
            "and no reward column; map one with ", Option("passed"), " or ", Option("reward")))
    if passed is None and o.threshold is None and strict:
        raise ArchiveError(file, Message(f'column "{found["reward"]}" holds rewards: give ',
                                         Option("threshold"),
                                         " (a sample passes when reward >= threshold)"))
    return {"kind": kind, "task": task, "passed": passed,
            "reward": found["reward"] if passed is None else None}

def _pick(explicit: str | None, candidates: tuple[str, ...], have: set[str]) -> str | None:
    return explicit if explicit is not None else next((c for c in candidates if c in have), None)

def _kind(o, found: dict, names: list[str], file: str) -> str:
    if o.n or o.c or (found["n"] and found["c"]):
        return "counts"
    if o.passed or o.reward or found["passed"] or found["reward"]:
        return "samples"
    raise ArchiveError(file, Message(
        f"cannot tell the table kind from columns {name_list(names)}: a count table needs "
        "columns n and c, a per-sample table a pass flag (passed) or a reward; map them with ",
        Option("task"), ", ", Option("n"), ", ", Option("c"), ", ", Option("passed"), ", ",
        Option("reward")))

def read(file: str, ctx: Context, kind: str | None = None) -> str:
    """Add a count or per-sample table to ``ctx`` (``kind=None``: as its columns say); return
    the kind. Rows are read here when pyarrow is missing or cannot, or to name a bad row."""
    ctx.acc.compact = False  # rows are found again by number and relabelled (union_groups)
    box = container(file)
    if box == "jsonl":
        return _read_jsonl(file, ctx, kind)
    pf = _parquet(file) if box == "parquet" else None
    raw = _csv_rows(file, ctx) if pf is None else None
    header = next(raw) if pf is None else pf.schema_arrow.names
    try:
        spec = columns(header, kind, ctx, file)
        _missing(file, header, spec, ctx, None if pf is not None else 1)
        if _by_arrow(file, ctx, spec, header, pf):
            return spec["kind"]
        layout, fields = rules._plan(spec, ctx.options.by, ctx.options.record_by, header)
        if pf is not None:
            rows = _parquet_rows(pf, ctx, fields)
        else:  # the rows after the header, as pyarrow read them on a stream of its own
            idx = [header.index(f) for f in fields]
            get = itemgetter(*idx) if len(idx) > 1 else lambda r: (r[idx[0]],)
            rows = ((n, r if isinstance(r, BadRecord) else get(r)) for n, r in raw)
        _accumulate(file, ctx, spec, rows, (layout, fields, pf is None))
    finally:  # the file is closed now, also when a bad row stops the read
        if raw is not None:
            raw.close()
    return spec["kind"]

def _missing(file: str, header: list[str], spec: dict, ctx: Context, line: int | None) -> None:
    for col in [spec["task"], *(spec.get(k) for k in _FOUND), *ctx.options.record_by]:
        if col is not None and col not in header:
            raise ArchiveError(file, f'missing column "{col}" (columns: {name_list(header)})',
                               line=line)

def _by_arrow(file: str, ctx: Context, spec: dict, header: list[str], pf) -> bool:
    """Whether pyarrow read the table (not for a pipe, which could not be read again)."""
    if not ARROW or opening.is_stream(file) or any("\n" in h or "\r" in h for h in header):
        return False
    try:
        from passatk.archives.io import tables as arrow
    except ImportError:
        return False
    return arrow.read(file, ctx, spec, header, pf)

def _read_jsonl(file: str, ctx: Context, kind: str | None) -> str:
    cols = _Columns(file, ctx, kind)
    source = _jsonl_rows(file, ctx, cols)
    try:
        first = next(source, None)
        if first is None:
            raise ArchiveError(file, "empty file (no records)")
        if isinstance(first[1], BadRecord):
            if not ctx.options.skip_bad:
                raise ArchiveError(file, first[1].what, line=first[0])
            cols.start([] if ctx.first_names is None else ctx.first_names)
        _accumulate(file, ctx, cols.spec, itertools.chain((first,), source),
                    (cols.layout, cols.fields, False))
    finally:
        source.close()
    union_groups(ctx.acc, ctx.options.by)
    return cols.spec["kind"]

class _Columns:
    """The columns of a JSON Lines table so far (the union over its records) and its typed view;
    a record bringing a column that changes how the table is read is an error."""

    def __init__(self, file: str, ctx: Context, kind: str | None) -> None:
        self.file, self.ctx, self.kind, self.spec, self.decoder = file, ctx, kind, None, None

    def start(self, names: list[str]) -> None:
        o, self.names = self.ctx.options, set(names)
        self.spec = columns(list(names), self.kind, self.ctx, self.file)
        self.layout, self.fields = rules._plan(self.spec, o.by, o.record_by, None)
        self._view()

    def peek(self, lineno: int, block: bytes) -> None:
        """Start from the byte range's first names, or the first record of ``block``."""
        if self.ctx.first_names is not None:
            return self.start(self.ctx.first_names)
        for n, line in context.block_lines(self.file, lineno, block):
            try:
                self.start(list(context.parse_json_line(self.file, n, line)))
            except BadRecord:
                pass  # the line by line read says why
            return None

    def _view(self) -> None:
        """The columns read, and each deciding column not seen yet as one that no record has
        (msgspec refuses a block with one: it is read line by line)."""
        unseen = _DECIDING - self.names
        self.decoder = None if unseen & set(self.fields) else \
            _decoder(tuple(self.fields), tuple(sorted(unseen)))
        self.cut = itemgetter(slice(0, len(self.fields)))

    def typed(self, block: bytes) -> list[tuple] | None:
        """The rows of a block by the typed view, or None: read it line by line."""
        records = None if self.decoder is None else lines.decode(self.decoder, block)
        return None if records is None else \
            list(map(self.cut, map(msgspec.structs.astuple, records)))

    def see(self, lineno: int, row: dict) -> tuple:
        """A record decoded by ``json``, as a row (started: by ``peek`` or after a bad first
        record); its new columns checked."""
        new = [k for k in row if k in _DECIDING and k not in self.names]
        if new:
            self.names.update(new)
            spec = columns(list(self.names), self.kind, self.ctx, self.file, strict=False)
            changed = [k for k in ("kind", "task", "n", "c", "passed", "reward")
                       if spec.get(k) != self.spec.get(k)]
            if changed:
                k = changed[0]
                raise ArchiveError(
                    self.file, f"this record brings column(s) {name_list(new)}, which earlier "
                    f"records lack: read with them, the {k} would be {show(spec.get(k))}, not "
                    f"{show(self.spec.get(k))}; give every record the same columns, or map "
                    "them explicitly", line=lineno)
            self._view()
        return tuple(row.get(f, _UNSET) for f in self.fields)

@lru_cache(maxsize=64)
def _decoder(fields: tuple[str, ...], unseen: tuple[str, ...]):
    kinds = [Any] * len(fields) + [msgspec.UnsetType] * len(unseen)
    return lines.decoder(msgspec.defstruct(
        "Row", [(f"f{i}", t, _UNSET) for i, t in enumerate(kinds)],
        rename={f"f{i}": name for i, name in enumerate((*fields, *unseen))}, gc=False))

def _accumulate(file: str, ctx: Context, spec: dict, rows, how: tuple) -> None:
    """Judge and add each row (a tuple over ``fields``) in turn. A per-sample row is judged
    once per distinct value of its fields (with their types: ``1`` is not ``True``), its sums
    added in row order; bad rows and count-table rows (each one of its key) every time."""
    layout, fields, strings = how
    o, counts = ctx.options, spec["kind"] == "counts"
    pathvals = path_groups(o.by, file)
    first_line = array("q")  # per row number of a count table: the line that added it, or 0
    records, skips_before, seen = 0, ctx.skip_count, {}
    for lineno, row in rows:
        key, hit = (None, None) if counts else _memo(row, strings, seen)
        if hit is not None:
            hit[4] += 1
            records += 1
            continue
        try:
            if isinstance(row, BadRecord):
                raise row
            record = {f: v for f, v in zip(fields, row, strict=False) if v is not _UNSET}
            task = _task(context.require(record, spec["task"], "column"), spec["task"])
            group = group_from(o.by, pathvals, record, layout.extra(record), what="row")
            if counts:
                n, c = _count_row(record, spec, strings, task)
                _check_duplicate(ctx.acc.find(group, task), first_line, group, task)
            else:
                n, c = _sample_row(record, spec, strings, o.threshold)
        except BadRecord as e:
            ctx.bad(file, e.what, line=lineno)
            continue
        layout.check(file, lineno, task, record)
        records += 1
        if key is not None and len(seen) < _MEMO_ROWS:
            seen[key] = [group, task, n, c, 1]
            continue
        _flush(ctx, seen)  # the rows reach the Tally in their order
        i = ctx.add(group, task, n, c)
        if counts:
            first_line.extend([0] * (i + 1 - len(first_line)))
            first_line[i] = lineno
    _flush(ctx, seen)
    ctx.layout_seen = ctx.layout_seen or layout.seen
    if records == 0 and ctx.skip_count == skips_before:
        raise ArchiveError(file, "empty file (no records)")

def _memo(row: object, strings: bool, seen: dict) -> tuple:
    if isinstance(row, BadRecord):
        return None, None
    key = row if strings else (row, tuple(map(type, row)))
    try:
        return key, seen.get(key)
    except TypeError:  # an unhashable value (a list of samples)
        return None, None

def _flush(ctx: Context, seen: dict) -> None:
    for group, task, n, c, times in seen.values():
        ctx.add(group, task, n * times, c * times)
    seen.clear()

def _count_row(row: dict, spec: dict, strings: bool, task: str) -> tuple[int, int]:
    n, c = (context.require(row, spec[k], "column") for k in ("n", "c"))
    n, c = _int(n, spec["n"], strings), _int(c, spec["c"], strings)
    if n < 1:
        raise BadRecord(f'column "{spec["n"]}" must be >= 1, got {n}')
    if c < 0:
        raise BadRecord(f'column "{spec["c"]}" must be >= 0, got {c}')
    if c > n:
        raise BadRecord(f"c must be <= n, got c={c} > n={n} for task {task!r}")
    return n, c

def _sample_row(row: dict, spec: dict, strings: bool, threshold: float | None) -> tuple[int, int]:
    col = spec["passed"] if spec["passed"] is not None else spec["reward"]
    value = context.require(row, col, "column")
    values = value if isinstance(value, list) else [value]
    if not values:
        raise BadRecord(f'column "{col}" holds an empty list of samples')
    c = 0
    for i, x in enumerate(values):
        try:
            c += rules._flag(x, col, threshold) if spec["passed"] is not None else \
                rules._reward(x, col, strings) >= threshold
        except BadRecord as e:
            where = f" (sample {i} of the list)" if isinstance(value, list) else ""
            raise BadRecord(e.what + where) from None
    return len(values), c

def _check_duplicate(i: int | None, first_line: array, group: tuple, task: str) -> None:
    if i is not None and i < len(first_line) and first_line[i]:
        where = f" in group {dict(group)}" if group else ""
        raise BadRecord(f"duplicate row for task {task!r}{where} (first at line {first_line[i]})")

def union_groups(acc, by: tuple[str, ...]) -> None:
    """Give every group of a JSON Lines table the auto group columns that any of its rows
    brings (null where a row lacks one), in place: the result does not depend on row order."""
    auto = [c for c in AUTO_GROUP_COLUMNS if c not in by]
    present = [c for c in auto if any(c in dict(g) for g in acc.rows)]
    for group in [g for g in acc.rows if present]:
        have = dict(group)
        if not all(c in have for c in present):
            base = tuple((k, v) for k, v in group if k not in auto)
            acc.relabel(group, base + tuple((c, have.get(c)) for c in present))

def peek_kind(file: str, ctx: Context) -> str | None:
    """``"counts"``/``"samples"`` when a table's columns say so, else None (for detection).
    A Parquet file that cannot be opened is an ArchiveError that says so."""
    box = container(file)
    if box == "parquet":
        names = _parquet(file).schema_arrow.names
    elif box == "csv":
        head = opening.read_head(file, 1 << 16)
        text = codecs.getincrementaldecoder("utf-8")(errors="replace").decode(head)
        try:
            row = next(csv.reader(text.splitlines()[:1], delimiter=_delimiter(file)), [])
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
