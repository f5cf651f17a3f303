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
import errno
import io
import json
import math
import os
import re
import signal
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import IO, Any, TextIO

FORMATS = ("table", "json", "jsonl", "csv", "markdown")

#: Fields shown with fixed decimals in tables (and scaled by --percent before they arrive here).
_DECIMALS = 4


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def flatten(record: Mapping[str, Any]) -> dict[str, Any]:
    """One flat row: the ``group`` mapping's fields first, then the other fields in order.

    The one rule for every flat output (CSV, tables, ``to_pandas()``): a group field named
    like a result field becomes ``group_<name>``, so ``{"k": 0}`` as a group gives the
    columns ``group_k`` (the label) and ``k`` (the budget).

    >>> flatten({"group": {"model": "a", "k": 0}, "k": 1, "value": 0.5})
    {'model': 'a', 'group_k': 0, 'k': 1, 'value': 0.5}
    """
    row: dict[str, Any] = {}
    group = record.get("group")
    if isinstance(group, Mapping):
        for key, value in group.items():
            key = str(key)
            row[key if key not in record else f"group_{key}"] = value
    for key, value in record.items():
        if key != "group":
            row[key] = value
    return row


def columns(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """The flat columns of ``records``: every group field first (in order of appearance over
    all records, so a group found only in a later file still comes first), then the rest.

    >>> columns([{"group": {"path": "a"}, "k": 1, "note": ""},
    ...          {"group": {"path": "b", "filter": "x"}, "k": 1}])
    ['path', 'filter', 'k', 'note']
    """
    group: dict[str, None] = {}
    other: dict[str, None] = {}
    for record in records:
        fields = record.get("group")
        size = len(fields) if isinstance(fields, Mapping) else 0
        for i, key in enumerate(flatten(record)):
            (group if i < size else other).setdefault(key, None)
    return [*group, *(key for key in other if key not in group)]


#: Significant digits a table keeps of a small number (se 0.00004 is not "0.0000").
_DIGITS = 3


def _float_cell(value: float, decimals: int) -> str:
    """``decimals`` places; a number too small to keep two significant digits there gets
    :data:`_DIGITS` significant digits (more places, or scientific notation).

    >>> [_float_cell(v, 4) for v in (0.8934, 0.01234, 0.00738, 0.000123, 0.0, 0.00004567)]
    ['0.8934', '0.0123', '0.0074', '0.000123', '0.0000', '4.57e-05']
    """
    if math.isnan(value):
        return "-"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value.is_integer() and abs(value) >= 10**6:
        return f"{int(value)}"
    if value == 0:
        return f"{value:.{decimals}f}"
    if abs(value) >= 10.0 ** (1 - decimals):
        return f"{value:.{decimals}f}"
    places = _DIGITS - 1 - math.floor(math.log10(abs(value)))
    if places > decimals + 2:
        return f"{value:.{_DIGITS - 1}e}"
    return f"{value:.{places}f}"


def _cell(value: Any, decimals: int = _DECIMALS) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return _float_cell(value, decimals)
    if isinstance(value, (list, tuple)):
        return ",".join(_cell(v, decimals) for v in value)
    return printable(str(value))


#: C0 and C1 controls, DEL, line/paragraph separators and bidirectional overrides: a label from an
#: archive holding them could recolour the terminal or forge table rows (audit W7/S1).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    r"""``text`` with control characters written as ``\uXXXX``, safe to print in a table.

    >>> print(printable("evil\x1b[31m\nrow"))
    evil\u001b[31m\u000arow
    """
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _table_rows(
    records: Sequence[Mapping[str, Any]], decimals: int = _DECIMALS
) -> tuple[list[str], list[list[str]], list[bool]]:
    rows = [flatten(r) for r in records]
    names = columns(records)
    cells = [[_cell(row.get(col), decimals) for col in names] for row in rows]
    numeric = [
        all(_is_number(row.get(col)) or row.get(col) is None for row in rows)
        and any(_is_number(row.get(col)) for row in rows)
        for col in names
    ]
    return names, cells, numeric


def render_table(records: Sequence[Mapping[str, Any]], decimals: int = _DECIMALS) -> str:
    """An aligned plain-text table: text columns left-aligned, numeric columns right-aligned."""
    if not records:
        return "(no results)\n"
    columns, cells, numeric = _table_rows(records, decimals)
    columns = [printable(col) for col in columns]
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
        "| " + " | ".join(esc(printable(c)) for c in columns) + " |",
        "|" + "|".join("--:" if num else ":--" for num in numeric) + "|",
    ]
    lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in cells]
    return "\n".join(lines) + "\n"


def render_html(records: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None,
                decimals: int = _DECIMALS) -> str:
    """An HTML table (for notebooks' ``_repr_html_``): group columns first, text escaped.

    >>> print(render_html([{"group": {"m": "<a>"}, "k": 1, "value": 0.5}]))
    <table><thead><tr><th>m</th><th>k</th><th>value</th></tr></thead><tbody><tr><td>&lt;a&gt;</td><td>1</td><td>0.5000</td></tr></tbody></table>
    """
    import html

    if columns is not None:
        records = [{"group": r.get("group") or {}, **{c: r.get(c) for c in columns}}
                   for r in records]
    names, cells, _ = _table_rows(records, decimals)
    head = "".join(f"<th>{html.escape(n)}</th>" for n in names)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
                   for row in cells)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _csv_value(value: Any) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return ";".join(str(v) for v in value)
    return value


#: What a spreadsheet takes for the start of a formula (OWASP, "CSV Injection").
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(text: str) -> str:
    """``text`` with a ``'`` in front when a spreadsheet would run it as a formula (OWASP).

    >>> csv_safe("=HYPERLINK(1)"), csv_safe("@SUM(A1)"), csv_safe("-1+2"), csv_safe("model")
    ("'=HYPERLINK(1)", "'@SUM(A1)", "'-1+2", 'model')
    """
    return "'" + text if text.startswith(_FORMULA_START) else text


def render_csv(records: Sequence[Mapping[str, Any]], *, safe: bool = False,
               escape: bool = False) -> str:
    """CSV with a header; floats at full precision, missing values empty.

    Only text cells (labels, names, notes; the header too) change, never a number: ``safe``
    prefixes ``'`` to those a spreadsheet would take for a formula (:func:`csv_safe`), and
    ``escape`` writes control characters as ``\\uXXXX`` (:func:`printable`), for a terminal.

    >>> print(render_csv([{"group": {"m": "=1+1"}, "diff": -0.5}], safe=True), end="")
    m,diff
    '=1+1,-0.5
    """
    rows = [flatten(r) for r in records]
    names = columns(records)

    def text(value: Any) -> Any:
        cell = _csv_value(value)
        if isinstance(value, (str, list, tuple)):  # numbers are never rewritten
            cell = printable(cell) if escape else cell
            cell = csv_safe(cell) if safe else cell
        return cell

    # csv quotes a field holding a character of its line terminator: with "\r\n" a label with
    # a lone CR is quoted too (with "\n" it was not, and the CR split the row); lines end "\n"
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")
    lines = []
    for cells in ([text(name) for name in names], *([text(r.get(c)) for c in names] for r in rows)):
        writer.writerow(cells)
        lines.append(buf.getvalue()[:-2] + "\n")
        buf.seek(0)
        buf.truncate()
    return "".join(lines)


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


def render_json(records: Sequence[Mapping[str, Any]] | Mapping[str, Any]) -> str:
    """JSON of a list of records or of an :func:`envelope` (strict JSON: NaN is null)."""
    data = dict(records) if isinstance(records, Mapping) else list(records)
    return json.dumps(jsonable(data), indent=2, allow_nan=False) + "\n"


#: The version of the JSON envelope (docs/cli.md, "JSON output"): raised on any change that
#: could break a reader (a key removed or renamed, a meaning changed); new keys keep it.
SCHEMA = 1


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("passatk")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0.0.0+unknown"


def envelope(command: str, rows: Sequence[Mapping[str, Any]], *,
             inputs: Sequence[Mapping[str, Any]] = (), seed: int | None = None,
             **fields: Any) -> dict[str, Any]:
    """The one JSON shape of every result: the command line's ``--format json`` and
    ``to_dict()`` of the library's results.

    >>> env = envelope("score", [{"k": 1, "value": 0.5}], seed=0, confidence=0.95)
    >>> list(env)
    ['schema', 'passatk', 'command', 'inputs', 'seed', 'confidence', 'rows']
    >>> env["schema"], env["rows"]
    (1, [{'k': 1, 'value': 0.5}])
    """
    return {"schema": SCHEMA, "passatk": _version(), "command": command,
            "inputs": [dict(i) for i in inputs], "seed": seed, **fields,
            "rows": [dict(r) for r in rows]}


def check_envelope(data: Any, command: str) -> Mapping[str, Any]:
    """``data`` if it is an :func:`envelope` of ``command`` this version reads, else an error."""
    if not isinstance(data, Mapping):
        raise TypeError(f"from_dict needs a dict (the JSON envelope), got {type(data).__name__}")
    for key in ("schema", "command", "rows"):
        if key not in data:
            raise ValueError(f"not a passatk JSON envelope: the key {key!r} is missing")
    if data["schema"] != SCHEMA:
        raise ValueError(f"schema {data['schema']!r} is not one this passatk reads "
                         f"(schema {SCHEMA}); upgrade passatk")
    if data["command"] != command:
        raise ValueError(f"this envelope holds the output of {data['command']!r}, not of "
                         f"{command!r}")
    if data.get("unit", "fraction") != "fraction":
        raise ValueError(f"the values are in {data['unit']} (written with --percent); load the "
                         "output written without --percent")
    return data


def input_record(path: str) -> dict[str, Any]:
    """``{"path", "bytes", "sha256"}`` of one input: size and SHA-256 of a local file, read in
    1 MiB blocks; None for standard input and for URLs (read once, not again to hash).

    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "a.txt")
    >>> with open(p, "w") as fh:
    ...     _ = fh.write("abc")
    >>> r = input_record(p); r["bytes"], r["sha256"][:12]
    (3, 'ba7816bf8f01')
    """
    record: dict[str, Any] = {"path": path, "bytes": None, "sha256": None}
    if path == "-" or "://" in path:
        return record
    import hashlib

    h = hashlib.sha256()
    size = 0
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            h.update(block)
            size += len(block)
    record["bytes"] = size
    record["sha256"] = h.hexdigest()
    return record


def render_jsonl(records: Sequence[Mapping[str, Any]]) -> str:
    """JSON Lines: one record per line (strict JSON: NaN is written as null).

    >>> print(render_jsonl([{"k": 1, "value": 0.5}, {"k": 2, "value": float("nan")}]), end="")
    {"k": 1, "value": 0.5}
    {"k": 2, "value": null}
    """
    return "".join(json.dumps(jsonable(r), allow_nan=False) + "\n" for r in records)


def render(records: Sequence[Mapping[str, Any]], fmt: str, *, decimals: int = _DECIMALS,
           csv_safe: bool = False, escape: bool = False) -> str:
    """Render ``records`` in one of :data:`FORMATS` (``decimals`` for table and markdown;
    ``csv_safe`` and ``escape`` for CSV, see :func:`render_csv`)."""
    if fmt == "table":
        return render_table(records, decimals)
    if fmt == "json":
        return render_json(records)
    if fmt == "jsonl":
        return render_jsonl(records)
    if fmt == "csv":
        return render_csv(records, safe=csv_safe, escape=escape)
    if fmt == "markdown":
        return render_markdown(records, decimals)
    raise ValueError(f"unknown output format {fmt!r}; choose one of {', '.join(FORMATS)}")


def _output_target(path: str | os.PathLike[str]) -> tuple[str, str, bool]:
    """(shown name, file to write, whether to replace it atomically) for an output path.

    A symlink is followed to its final target. Only an absent target or a regular file is
    replaced by rename; a device, FIFO or terminal (``/dev/null``, ``/dev/stdout``) is written
    through, as the shell's ``>`` would.
    """
    shown = os.fspath(path)
    if not isinstance(shown, str) or not shown:
        raise ValueError(f"the output file name must be a non-empty path, got {shown!r}")
    try:
        st = os.stat(shown)
    except FileNotFoundError:
        st = None  # absent, or a dangling symlink: create its target
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, shown) from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        return shown, shown, False
    real = os.path.realpath(shown) if os.path.islink(shown) else shown
    folder = os.path.dirname(os.path.abspath(real))
    if not os.path.isdir(folder):
        where = (f"a symlink to {real!r}, whose directory {folder!r}"
                 if real != shown else f"its directory {os.path.dirname(shown) or '.'!r}")
        raise FileNotFoundError(errno.ENOENT, f"No such file or directory ({where} does not "
                                "exist)", shown)
    return shown, real, True


def _temp_name_parts(target: str) -> tuple[str, str, str]:
    """(directory, prefix, suffix) of our temporary files for ``target``; the pid is in the name."""
    base = os.path.basename(target)
    suffix = os.path.splitext(base)[1][:16]
    return os.path.dirname(os.path.abspath(target)), f".{base[:100]}.", f".tmp{suffix}"


def _remove_stale(folder: str, prefix: str, suffix: str) -> None:
    """Delete temp files of this naming left by a writer that is gone (SIGKILL, power loss)."""
    pattern = re.compile(re.escape(prefix) + r"(\d+)-[a-z0-9_]{8}" + re.escape(suffix))
    with contextlib.suppress(OSError):
        for name in os.listdir(folder):
            match = pattern.fullmatch(name)
            if match and not _alive(int(match.group(1))):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(folder, name))


def _alive(pid: int) -> bool:
    if pid == os.getpid() or os.name != "posix":  # Windows' os.kill would terminate it
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it exists, under another user
        return True
    return True


@contextlib.contextmanager
def _sigterm_exits() -> Iterator[None]:
    """While writing, turn SIGTERM into SystemExit(143) so that the temp file is removed."""
    install = (threading.current_thread() is threading.main_thread()
               and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL)
    if install:
        signal.signal(signal.SIGTERM, _raise_exit)
    try:
        yield
    finally:
        if install:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _raise_exit(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


@contextlib.contextmanager
def _named_errors(shown: str, *internal: str) -> Iterator[None]:
    """Report OSErrors about ``internal`` paths (or about no path) under the name the user gave."""
    try:
        yield
    except OSError as exc:
        if exc.errno is None or (exc.filename is not None and exc.filename not in internal):
            raise
        raise OSError(exc.errno, exc.strerror or os.strerror(exc.errno), shown) from None


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[str]:
    """Yield the path to write ``path``'s new content to; publish it only if the block succeeds.

    For an absent or regular file (or a symlink to one, which is followed) that is a temporary
    file next to the target, fsynced and renamed onto it: a failed or interrupted block leaves
    the old content, and SIGTERM removes the temp file. Devices, FIFOs and other special files
    are written through. OSErrors name the target as given, never the temporary file.
    """
    shown, real, atomic = _output_target(path)
    if not atomic:
        with _named_errors(shown, real):
            yield real
        return
    folder, prefix, suffix = _temp_name_parts(real)
    _remove_stale(folder, prefix, suffix)
    tmp = None
    with _sigterm_exits():
        try:
            tmp = _make_temp(shown, folder, prefix, suffix)
            with _named_errors(shown, real, tmp):
                yield tmp
                _publish(tmp, real)
        except BaseException:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            raise


def _make_temp(shown: str, folder: str, prefix: str, suffix: str) -> str:
    try:
        fd, tmp = tempfile.mkstemp(prefix=f"{prefix}{os.getpid()}-", suffix=suffix, dir=folder)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, shown) from None
    os.close(fd)
    return tmp


def _publish(tmp: str, target: str) -> None:
    """fsync the finished temp file, give it the target's permissions, rename it, fsync the dir."""
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.chmod(tmp, _mode_for(target))
    os.replace(tmp, target)
    with contextlib.suppress(OSError):
        dfd = os.open(os.path.dirname(os.path.abspath(target)), os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w", **kwargs: Any) -> Iterator[IO]:
    """:func:`atomic_path` with the file opened: ``open(tmp, mode, **kwargs)``.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "out.txt")
    >>> with atomic_open(path, encoding="utf-8") as fh:
    ...     _ = fh.write("hello")
    >>> with open(path, encoding="utf-8") as fh:
    ...     fh.read()
    'hello'
    """
    with atomic_path(path) as target, open(target, mode, **kwargs) as fh:
        yield fh
        fh.flush()


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
    with atomic_open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)


class Progress:
    """A progress bar on stderr, drawn only when stderr is a terminal and after ``delay`` seconds.

    Call it with ``(done, total)``; ``total`` may be None when unknown. :meth:`close` clears
    the line. ``force`` draws it on any stream too, as a line every few seconds (for logs).

    >>> import io
    >>> out = io.StringIO()
    >>> p = Progress(out, force=True, delay=0, units="tasks")
    >>> p(3, 4)
    >>> out.getvalue().split("  ")[-1]
    '3/4 tasks\\n'
    """

    #: seconds before the bar appears: short reads print nothing
    DELAY = 1.0

    def __init__(
        self, stream: TextIO | None = None, *, enabled: bool = True, delay: float | None = None,
        units: str | None = None, force: bool = False,
    ) -> None:
        self.units = units  # counted units (tasks) rather than bytes
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.tty = bool(isatty and isatty())
        self.enabled = enabled and (self.tty or force)
        self.delay = self.DELAY if delay is None else delay
        self.start = time.monotonic()
        self.drawn = False
        self._last = 0.0

    def __call__(self, done: float, total: float | None = None, *_: Any, **__: Any) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.start < self.delay or now - self._last < (0.1 if self.tty else 5.0):
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
        if not self.tty:  # a log: whole lines
            text = text[1:] + "\n"
        self.stream.write(text)
        self.stream.flush()
        self.drawn = self.tty

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
