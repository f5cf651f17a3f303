"""Output helpers of the command line: tables, JSON, CSV, Markdown, atomic writes, a progress bar.

Nothing here computes a statistic: records arrive as plain dicts built from the library's results.

>>> rows = [{"group": {"model": "a"}, "k": 1, "value": 0.25}, {"group": {"model": "bb"}, "k": 10,
...         "value": None}]
>>> print(render(rows, "table"), end="")
model   k   value
a       1  0.2500
bb     10       -
>>> print(render(rows, "csv"), end="")
model,k,value
a,1,0.25
bb,10,
>>> print(render(rows, "markdown"), end="")
| model | k | value |
|:--|--:|--:|
| a | 1 | 0.2500 |
| bb | 10 | - |
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import os
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, TextIO

FORMATS = ("table", "json", "csv", "markdown")

#: Fields shown with fixed decimals in tables (and scaled by --percent before they arrive here).
_DECIMALS = 4


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def flatten(record: Mapping[str, Any]) -> dict[str, Any]:
    """One flat row: the ``group`` mapping's fields first, then the other fields in order."""
    row: dict[str, Any] = {}
    group = record.get("group")
    if isinstance(group, Mapping):
        for key, value in group.items():
            row[str(key)] = value
    for key, value in record.items():
        if key == "group":
            continue
        if key in row:  # a group field named like a result field: keep both
            key = f"{key}_"
        row[key] = value
    return row


def _columns(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    columns: dict[str, None] = {}
    for row in rows:
        for key in row:
            columns.setdefault(key, None)
    return list(columns)


def _cell(value: Any, decimals: int = _DECIMALS) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        if value.is_integer() and abs(value) >= 10**6:
            return f"{int(value)}"
        if value != 0 and abs(value) < 10.0**-decimals:
            return f"{value:.2e}"
        return f"{value:.{decimals}f}"
    if isinstance(value, (list, tuple)):
        return ",".join(_cell(v, decimals) for v in value)
    return str(value)


def _table_rows(
    records: Sequence[Mapping[str, Any]], decimals: int = _DECIMALS
) -> tuple[list[str], list[list[str]], list[bool]]:
    rows = [flatten(r) for r in records]
    columns = _columns(rows)
    cells = [[_cell(row.get(col), decimals) for col in columns] for row in rows]
    numeric = [
        all(_is_number(row.get(col)) or row.get(col) is None for row in rows)
        and any(_is_number(row.get(col)) for row in rows)
        for col in columns
    ]
    return columns, cells, numeric


def render_table(records: Sequence[Mapping[str, Any]], decimals: int = _DECIMALS) -> str:
    """An aligned plain-text table: text columns left-aligned, numeric columns right-aligned."""
    if not records:
        return "(no results)\n"
    columns, cells, numeric = _table_rows(records, decimals)
    widths = [max(len(col), *(len(row[i]) for row in cells)) for i, col in enumerate(columns)]

    def line(values: Sequence[str]) -> str:
        parts = [
            v.rjust(w) if num else v.ljust(w)
            for v, w, num in zip(values, widths, numeric, strict=True)
        ]
        return "  ".join(parts).rstrip()

    return "\n".join([line(columns), *(line(row) for row in cells)]) + "\n"


def render_markdown(records: Sequence[Mapping[str, Any]], decimals: int = _DECIMALS) -> str:
    """A GitHub-flavoured Markdown table."""
    if not records:
        return "(no results)\n"
    columns, cells, numeric = _table_rows(records, decimals)

    def esc(text: str) -> str:
        return text.replace("|", "\\|")

    lines = [
        "| " + " | ".join(esc(c) for c in columns) + " |",
        "|" + "|".join("--:" if num else ":--" for num in numeric) + "|",
    ]
    lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in cells]
    return "\n".join(lines) + "\n"


def _csv_value(value: Any) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return ";".join(str(v) for v in value)
    return value


def render_csv(records: Sequence[Mapping[str, Any]]) -> str:
    """CSV with a header; floats at full precision, missing values empty."""
    rows = [flatten(r) for r in records]
    columns = _columns(rows)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_csv_value(row.get(col)) for col in columns])
    return buf.getvalue()


def jsonable(value: Any) -> Any:
    """Plain JSON types: NaN becomes null, numpy scalars become Python numbers, tuples lists."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):  # numpy scalar or array
        return jsonable(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def render_json(records: Sequence[Mapping[str, Any]]) -> str:
    """A JSON list of records (strict JSON: NaN is written as null)."""
    return json.dumps(jsonable(list(records)), indent=2, allow_nan=False) + "\n"


def render(records: Sequence[Mapping[str, Any]], fmt: str, *, decimals: int = _DECIMALS) -> str:
    """Render ``records`` in one of :data:`FORMATS` (``decimals`` for table and markdown)."""
    if fmt == "table":
        return render_table(records, decimals)
    if fmt == "json":
        return render_json(records)
    if fmt == "csv":
        return render_csv(records)
    if fmt == "markdown":
        return render_markdown(records, decimals)
    raise ValueError(f"unknown output format {fmt!r}; choose one of {', '.join(FORMATS)}")


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[str]:
    """Yield a temporary path next to ``path``; move it onto ``path`` only if the block succeeds.

    A failed block leaves ``path`` as it was (absent, or with its old content).
    """
    target = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(target))
    base = os.path.basename(target)
    suffix = os.path.splitext(base)[1]
    fd, tmp = tempfile.mkstemp(prefix=f".{base}.", suffix=f".tmp{suffix}", dir=directory)
    os.close(fd)
    try:
        yield tmp
        os.chmod(tmp, _mode_for(target))
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _mode_for(target: str) -> int:
    """The permissions a new file gets (mkstemp's are 0o600): the old file's, or 0o666 - umask."""
    try:
        return os.stat(target).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_text(
    text: str, path: str | os.PathLike[str] | None, stdout: TextIO | None = None
) -> None:
    """Write ``text`` to ``path`` atomically, or to standard output when ``path`` is None."""
    if path is None or os.fspath(path) == "-":
        (stdout or sys.stdout).write(text)
        return
    with atomic_path(path) as tmp:
        with open(tmp, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())


class Progress:
    """A progress bar on stderr, drawn only when stderr is a terminal and after ``delay`` seconds.

    Call it with ``(done, total)``; ``total`` may be None when unknown. :meth:`close` clears
    the line.
    """

    #: seconds before the bar appears: short reads print nothing
    DELAY = 1.0

    def __init__(
        self, stream: TextIO | None = None, *, enabled: bool = True, delay: float | None = None,
        units: str | None = None,
    ) -> None:
        self.units = units  # counted units (tasks) rather than bytes
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.enabled = enabled and bool(isatty and isatty())
        self.delay = self.DELAY if delay is None else delay
        self.start = time.monotonic()
        self.drawn = False
        self._last = 0.0

    def __call__(self, done: float, total: float | None = None, *_: Any, **__: Any) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.start < self.delay or now - self._last < 0.1:
            return
        self._last = now
        elapsed = now - self.start
        if total:
            frac = min(max(done / total, 0.0), 1.0)
            bar = "#" * int(frac * 30)
            text = f"\rreading [{bar:<30}] {frac:6.1%}  {elapsed:5.1f} s"
            if self.units:
                text += f"  {done:.0f}/{total:.0f} {self.units}"
        else:
            text = f"\rreading {_human(done)}  {elapsed:5.1f} s"
        self.stream.write(text)
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\r" + " " * 80 + "\r")
            self.stream.flush()
            self.drawn = False


def _human(amount: float) -> str:
    for unit in ("", "k", "M", "G", "T"):
        if abs(amount) < 1000:
            return f"{amount:.0f}{unit}" if unit == "" else f"{amount:.1f}{unit}"
        amount /= 1000
    return f"{amount:.1f}P"
