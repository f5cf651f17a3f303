"""The reading context shared by all readers, and their helpers: groups, JSON values, lines."""

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
from passatk.archives.io import opening
from passatk.archives.io.lines import blocks, newlines
from passatk.archives.io.paths import is_path_spec, path_group_value
from passatk.archives.options import Options


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
    first_names: list[str] | None = None  # a JSON Lines table's range: its first record's
    layout_seen: bool = False  # a JSON Lines table row held a group or run column
    opener: Callable[[str], Any] | None = None  # a byte range's (pipeline._read_range)

    def open(self, file: str) -> Any:
        return opening.open_binary(file) if self.opener is None else self.opener(file)

    def add(self, group: GroupKey, task: str, n: int, c: int) -> int:
        return self.acc.add(group, task, n, c)

    def set_metric(self, metric: str, file: str) -> None:
        if self.metric is None:
            self.metric, self.metric_file = metric, file
        elif self.metric != metric:
            raise ArchiveError(file, f"holds {metric} data, but {self.metric_file} holds "
                               f"{self.metric} data; score them separately")

    def bad(self, file: str, what: str, *, line: int | None = None,
            path: tuple | None = None) -> None:
        """Raise ArchiveError, or record the skip when skip_bad is set."""
        if not self.options.skip_bad:
            raise ArchiveError(file, what, line=line, path=path)
        self.skip_count += 1
        if len(self.skip_records) < MAX_SKIPPED_KEPT:
            self.skip_records.append(SkippedRecord(location(file, line, path), str(what)))

    @property
    def skipped(self) -> Skipped:
        return Skipped(self.skip_count, tuple(self.skip_records))

    def report(self, file_done: int) -> None:
        if self.progress is not None:
            self.progress(min(self.done_bytes + file_done, self.total_bytes), self.total_bytes)


class BadRecord(Exception):
    """One bad record, raised inside a reader; its caller turns it into ctx.bad()."""

    def __init__(self, what: str, path: tuple | None = None, line: int | None = None) -> None:
        super().__init__(what)
        self.what, self.path, self.line = what, path, line


def path_groups(by: tuple[str, ...], file: str) -> dict[str, str]:
    return {b: path_group_value(b, file) for b in by if is_path_spec(b)}


def group_from(by: tuple[str, ...], pathvals: dict[str, str], record: dict | None,
               extra: tuple[tuple[str, object], ...] = (), what: str = "record") -> GroupKey:
    """Group key: the ``by`` fields in order (path specs or record fields), then ``extra``."""
    given = {**dict(extra), **pathvals}
    out = []
    for b in by:
        if b in given:
            out.append((b, given[b]))
        elif record is None or b not in record:
            raise BadRecord(f'missing group field "{b}" in the {what}')
        elif (v := record[b]) is None or isinstance(v, (str, int, float, bool)):
            out.append((b, v))
        else:
            raise BadRecord(f'group field "{b}" must be a scalar, got {show(v)}')
    return (*out, *((k, v) for k, v in extra if k not in by))


_DECODER = json.JSONDecoder()


def decode_json(data: bytes | bytearray | str, bom: bool = True) -> object:
    """``json.loads`` (a BOM dropped, a key given twice keeps its last value); fails: BadRecord."""
    try:
        if not isinstance(data, str):
            data = bytes(data).removeprefix(opening.UTF8_BOM if bom else b"").decode("utf-8")
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
    paths = (os.path.join(folder, name + suffix) for suffix in ("", *opening.COMPRESSED_SUFFIXES))
    return next((p for p in paths if opening.is_file(p)), None)  # a local file or a URL (fsspec)


def load_sidecar(path: str) -> object:
    """A small JSON file beside an archive, parsed whole (up to the record cap)."""
    try:
        return decode_json(opening.read_all(path, opening.max_record_bytes()))
    except BadRecord as e:
        raise ArchiveError(path, e.what, line=e.line) from None


def line_blocks(file: str, ctx: Context) -> Iterator[tuple[int, bytes]]:
    """(lines before it, block of whole lines) for ``file``."""
    with ctx.open(file) as f:
        yield from blocks(f.stream, file, lambda: ctx.report(f.raw_position()))


def block_lines(file: str, lineno: int, block: bytes) -> Iterator[tuple[int, bytes]]:
    """(line number, line) for the non-blank lines of ``block``, which follows line
    ``lineno``; a line longer than the record cap is an ArchiveError."""
    cap = opening.max_record_bytes()
    for n, line in enumerate(block.split(b"\n"), lineno + 1):
        if len(line) > cap:
            raise opening.too_long(file, n, cap)
        if line.strip():
            yield n, line


def iter_lines(file: str, ctx: Context) -> Iterator[tuple[int, bytes]]:
    """(line number, line) for the non-blank lines of ``file``."""
    for lineno, block in line_blocks(file, ctx):
        yield from block_lines(file, lineno, block)


def number_records(lineno: int, piece: bytes, records: list) -> Iterator[tuple[int, object]]:
    """(line number, record) for the records of the non-blank lines of ``piece``."""
    if newlines(piece) + (not piece.endswith(b"\n")) == len(records):
        return enumerate(records, lineno + 1)
    # blank lines (the lines msgspec skips are blank for bytes.strip too): number the others
    numbers = [n for n, line in enumerate(piece.split(b"\n"), lineno + 1) if line.strip()]
    return zip(numbers, records, strict=True)


def parse_json_line(file: str, lineno: int, line: bytes) -> dict:
    """One JSON Lines record, a JSON object; BadRecord when it is not."""
    if not isinstance(obj := decode_json(line), dict):
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
    except OverflowError:  # an integer past the largest float
        x = math.inf
    if not math.isfinite(x):
        raise BadRecord(f'field "{name}" must be a finite number, got {show(value)}')
    return x


def doc_scalar_record(doc: object) -> dict:
    """Top-level scalar fields of a JSON document, usable as group fields."""
    items = doc.items() if isinstance(doc, dict) else ()
    return {k: v for k, v in items if v is None or isinstance(v, (str, int, float, bool))}


def document_group(file: str, ctx: Context, doc: object) -> GroupKey:
    """The group of a whole-document archive: path parts and its top-level scalar fields."""
    by = ctx.options.by
    try:
        return group_from(by, path_groups(by, file), doc_scalar_record(doc), (), "document")
    except BadRecord as e:
        raise ArchiveError(file, e.what, path=()) from None
