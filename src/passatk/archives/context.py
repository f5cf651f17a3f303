"""The reading context shared by all readers, and JSON helpers."""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from passatk.archives.counts import GroupKey, StoredMetric, Tally
from passatk.archives.errors import (
    MAX_SKIPPED_KEPT,
    ArchiveError,
    Skipped,
    SkippedRecord,
    kind,
    location,
    show,
)
from passatk.archives.io.opening import (
    COMPRESSED_SUFFIXES,
    UTF8_BOM,
    is_file,
    max_record_bytes,
    open_binary,
    read_all,
    too_long,
)
from passatk.archives.io.paths import is_path_spec, path_group_value
from passatk.archives.options import Options

BLOCK = 1 << 23  # 8 MiB binary blocks for line-oriented files


@dataclass
class Context:
    """Accumulates counts, stored numbers and skips over all files of one read."""

    options: Options
    progress: Callable[[int, int], None] | None = None
    total_bytes: int = 0
    done_bytes: int = 0
    acc: Tally = field(default_factory=Tally)
    stored: list[StoredMetric] = field(default_factory=list)
    skip_count: int = 0
    skip_records: list[SkippedRecord] = field(default_factory=list)
    metric: str | None = None
    metric_file: str | None = None
    notes: list[str] = field(default_factory=list)
    sidecars: set[str] = field(default_factory=set)  # files read as stored numbers of another
    failures: dict = field(default_factory=dict)  # archive -> _hints.FailureText
    #: reading a byte range of a JSON Lines table: the columns of the file's first record
    first_names: list[str] | None = None
    #: a JSON Lines table row held a group or run column (its byte ranges cannot stand alone)
    layout_seen: bool = False

    def open(self, file: str) -> Any:
        """Open ``file`` for the line readers (a byte-range reader overrides this)."""
        return open_binary(file)

    # -------------------------------------------------------------- counting
    def add(self, group: GroupKey, task: str, n: int, c: int) -> int:
        return self.acc.add(group, task, n, c)

    def set_metric(self, metric: str, file: str) -> None:
        if self.metric is None:
            self.metric, self.metric_file = metric, file
        elif self.metric != metric:
            raise ArchiveError(
                file,
                f"holds {metric} data, but {self.metric_file} holds {self.metric} data; "
                "score them separately",
            )

    # -------------------------------------------------------------- bad input
    def bad(
        self, file: str, what: str, *, line: int | None = None, path: tuple | None = None
    ) -> None:
        """Raise ArchiveError, or record the skip when skip_bad is set."""
        if not self.options.skip_bad:
            raise ArchiveError(file, what, line=line, path=path)
        self.skip_count += 1
        if len(self.skip_records) < MAX_SKIPPED_KEPT:
            self.skip_records.append(SkippedRecord(location(file, line, path), str(what)))

    @property
    def skipped(self) -> Skipped:
        return Skipped(self.skip_count, tuple(self.skip_records))

    # -------------------------------------------------------------- progress
    def report(self, file_done: int) -> None:
        if self.progress is not None:
            self.progress(min(self.done_bytes + file_done, self.total_bytes), self.total_bytes)


class BadRecord(Exception):
    """Raised inside a reader for one bad record; turned into ctx.bad() by the caller."""

    def __init__(self, what: str, path: tuple | None = None, line: int | None = None) -> None:
        super().__init__(what)
        self.what = what
        self.path = path
        self.line = line


# ------------------------------------------------------------------ groups
def path_groups(by: tuple[str, ...], file: str) -> dict[str, str]:
    return {b: path_group_value(b, file) for b in by if is_path_spec(b)}


def group_from(
    by: tuple[str, ...],
    pathvals: dict[str, str],
    record: dict | None,
    extra: tuple[tuple[str, object], ...] = (),
    what: str = "record",
) -> GroupKey:
    """Group key: the ``by`` fields in order (path specs or record fields), then ``extra``."""
    out = []
    names = set()
    extras = dict(extra)
    for b in by:
        if b in pathvals:
            out.append((b, pathvals[b]))
        elif b in extras:
            out.append((b, extras[b]))
        else:
            if record is None or b not in record:
                raise BadRecord(f'missing group field "{b}" in the {what}')
            v = record[b]
            if not (v is None or isinstance(v, (str, int, float, bool))):
                raise BadRecord(f'group field "{b}" must be a scalar, got {show(v)}')
            out.append((b, v))
        names.add(b)
    out.extend((k, v) for k, v in extra if k not in names)
    return tuple(out)


# ------------------------------------------------------------------ JSON
def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise BadRecord(f"duplicate key {show(dup)} in a JSON object (which one counts is "
                        "ambiguous)")
    return obj


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys)


def decode_json(data: bytes | bytearray | str) -> object:
    """``json.loads`` that refuses duplicate keys; every failure is a BadRecord.

    >>> decode_json(b'{"a": 1}')
    {'a': 1}
    >>> try:
    ...     decode_json(b'{"a": 1, "a": 2}')
    ... except BadRecord as e:
    ...     print(e.what)
    duplicate key 'a' in a JSON object (which one counts is ambiguous)
    """
    try:
        if isinstance(data, (bytes, bytearray)):
            data = bytes(data).removeprefix(UTF8_BOM).decode("utf-8")
        return _DECODER.decode(data)
    except json.JSONDecodeError as e:
        raise BadRecord(f"malformed JSON: {e.msg} (column {e.colno})", line=e.lineno) from None
    except UnicodeDecodeError as e:
        raise BadRecord(f"not UTF-8 text: {e.reason} at byte {e.start}") from None
    except RecursionError:
        raise BadRecord("JSON nested too deeply") from None
    except ValueError as e:  # an integer of more than 4300 digits
        raise BadRecord(f"unreadable JSON value: {e}".split(";")[0]) from None


def find_beside(folder: str, name: str) -> str | None:
    """``folder/name``, or the first of its compressed forms (.gz, .zst) that exists."""
    for suffix in ("", *COMPRESSED_SUFFIXES):
        path = os.path.join(folder, name + suffix)
        if is_file(path):  # a local file or a URL (fsspec)
            return path
    return None


def load_sidecar(path: str) -> object:
    """A small JSON file of stored numbers beside an archive, parsed whole (up to the record
    cap); its errors are ``path:line: ...`` ArchiveErrors."""
    try:
        return decode_json(read_all(path, max_record_bytes()))
    except BadRecord as e:
        raise ArchiveError(path, e.what, line=e.line) from None


def line_blocks(file: str, ctx: Context) -> Iterator[tuple[int, bytes]]:
    """Yield (lines before it, block) for ``file`` read in large binary blocks: each block is
    whole lines ending with a newline, except the file's unfinished last line.

    An unfinished line longer than the record-length cap is an ArchiveError, so memory stays
    near the cap whatever the input (a block's own lines are checked by its reader).
    """
    cap = max_record_bytes()
    with ctx.open(file) as f:
        rest = bytearray()
        lineno = 0
        while block := f.stream.read(BLOCK):
            cut = block.rfind(b"\n")
            if cut < 0:
                rest += block
                if len(rest) > cap:
                    raise too_long(file, lineno + 1, cap)
                continue
            whole = b"".join((rest, memoryview(block)[:cut + 1]))
            rest = bytearray(block[cut + 1:])
            yield lineno, whole
            lineno += newlines(whole)
            ctx.report(f.raw_position())
        if len(rest) > cap:
            raise too_long(file, lineno + 1, cap)
        if rest:
            yield lineno, bytes(rest)


def block_lines(file: str, lineno: int, block: bytes) -> Iterator[tuple[int, bytes]]:
    """(line number, line) for the non-blank lines of ``block``, which follows line
    ``lineno``; a line longer than the record-length cap is an ArchiveError."""
    cap = max_record_bytes()
    for line in block.split(b"\n"):
        lineno += 1
        if len(line) > cap:
            raise too_long(file, lineno, cap)
        if line.strip():
            yield lineno, line


def iter_lines(file: str, ctx: Context) -> Iterator[tuple[int, bytes]]:
    """Yield (line number, line) for non-blank lines, reading in large binary blocks.

    A line longer than the record-length cap is an ArchiveError; an unfinished line is kept
    in one growing buffer, so memory stays near the cap whatever the input.
    """
    for lineno, block in line_blocks(file, ctx):
        yield from block_lines(file, lineno, block)


def json_records(file: str, ctx: Context) -> Iterator[tuple[int, dict | BadRecord]]:
    """Yield (line number, record) for the non-blank lines of a JSON Lines file: the JSON
    object on the line, or the BadRecord that says why there is none.

    Pieces of about 1 MiB are decoded at once by msgspec when ``_decode.objects`` proves them
    (no duplicate key, every line an object); any other piece goes line by line through
    :func:`parse_json_line`, so records, errors and line numbers are those of ``json``.
    """
    for lineno, block in line_blocks(file, ctx):
        for first, piece, count in _pieces(lineno, block):
            yield from piece_records(file, first, piece, count)


DECODE_PIECE = 1 << 20  # bytes decoded by msgspec at once: the records of one piece in memory


def newlines(buf: bytes) -> int:
    """``buf.count(b"\\n")``, several times faster (numpy).

    >>> newlines(b"a\\nb\\n\\n")
    3
    """
    import numpy as np

    return int(np.count_nonzero(np.frombuffer(buf, dtype=np.uint8) == 10))


def _pieces(lineno: int, block: bytes) -> Iterator[tuple[int, bytes, int]]:
    """(lines before it, piece, its newlines) for pieces of whole lines of about
    DECODE_PIECE bytes."""
    start = 0
    while start < len(block):
        end = block.find(b"\n", start + DECODE_PIECE) + 1 or len(block)
        piece = block[start:end]
        count = newlines(piece)
        yield lineno, piece, count
        lineno += count
        start = end


def piece_records(file: str, lineno: int, piece: bytes,
                  count: int) -> Iterator[tuple[int, dict | BadRecord]]:
    """:func:`json_records` for the lines of ``piece`` (``count`` newlines), which follows
    line ``lineno``. (An iterator, not a generator: a decoded piece is an ``enumerate``, one
    generator less per record.)"""
    from passatk.archives.io.lines import objects

    records = objects(piece) if len(piece) <= max_record_bytes() else None
    if records is None:
        return _line_records(file, lineno, piece)
    return number_records(lineno, piece, count, records)


def _line_records(file: str, lineno: int, piece: bytes) -> Iterator[tuple[int, dict | BadRecord]]:
    for n, line in block_lines(file, lineno, piece):
        try:
            yield n, parse_json_line(file, n, line)
        except BadRecord as e:
            yield n, e


def number_records(lineno: int, piece: bytes, count: int,
                   records: list) -> Iterator[tuple[int, object]]:
    """(line number, record) for the records decoded from the non-blank lines of ``piece``,
    which holds ``count`` newlines."""
    if count + (not piece.endswith(b"\n")) == len(records):
        return enumerate(records, lineno + 1)
    # blank lines (the lines msgspec skips are blank for bytes.strip too): number the others
    numbers = [n for n, line in enumerate(piece.split(b"\n"), lineno + 1) if line.strip()]
    return zip(numbers, records, strict=True)


def parse_json_line(file: str, lineno: int, line: bytes) -> dict:
    """Decode one JSON Lines record; it must be an object. Raises BadRecord."""
    obj = decode_json(line)
    if not isinstance(obj, dict):
        raise BadRecord(f"record must be a JSON object, got {kind(obj)}")
    return obj


def require(obj: dict, key: str, what: str = "field") -> object:
    if key not in obj:
        raise BadRecord(f'missing {what} "{key}"', None)
    return obj[key]


def task_id(value: object, name: str = "task_id") -> str:
    """A task id must be a string or an integer (integers are written in decimal)."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return int_text(value, name)
    raise BadRecord(f'field "{name}" must be a string or an integer, got {show(value)}')


def int_text(value: int, name: str) -> str:
    """``str(value)``, or a BadRecord past Python's 4300-digit conversion limit."""
    try:
        return str(value)
    except ValueError:
        raise BadRecord(f'field "{name}" is an integer too long to use as an id (more than '
                        f"{sys.get_int_max_str_digits()} digits)") from None


def finite_number(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BadRecord(f'field "{name}" must be a number, got {show(value)}')
    try:
        x = float(value)
    except OverflowError:
        x = math.inf
    if not math.isfinite(x):
        raise BadRecord(f'field "{name}" must be a finite number, got {show(value)}')
    return x


def doc_scalar_record(doc: object) -> dict:
    """Top-level scalar fields of a JSON document, usable as group fields."""
    if isinstance(doc, dict):
        return {k: v for k, v in doc.items() if v is None or isinstance(v, (str, int, float, bool))}
    return {}


def document_group(file: str, ctx: Context, doc: object) -> GroupKey:
    """The group of a whole-document archive: path parts and its top-level scalar fields."""
    by = ctx.options.by
    try:
        return group_from(by, path_groups(by, file), doc_scalar_record(doc), (), "document")
    except BadRecord as e:
        raise ArchiveError(file, e.what, path=()) from None
