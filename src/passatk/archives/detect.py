"""Detection of a file's format from its name and content, by the registry's probes; a JSON
document is parsed once, and what detection parsed goes to the reader."""

from __future__ import annotations

import contextlib
import fnmatch
import os

from passatk.archives.context import BadRecord, Context, decode_json
from passatk.archives.errors import ArchiveError
from passatk.archives.harnesses import tables
from passatk.archives.harnesses.lookup import probing_order, specs
from passatk.archives.harnesses.registry import FormatInfo
from passatk.archives.io import opening
from passatk.archives.io.documents import Typed, load
from passatk.archives.io.views import shape
from passatk.archives.options import Options
from passatk.errors import Message, Option

__all__ = ["FormatInfo", "UnknownDocument", "detect", "detect_format", "document_format",
           "document_hint", "formats", "load_document"]


def formats() -> list[FormatInfo]:
    """The supported archive formats and how each is detected (for ``passatk formats``).

    Examples
    --------
    >>> [f.name for f in formats()][:3]
    ['humaneval', 'evalplus', 'bigcodebench']
    >>> formats()[-3].metric
    'pass^k'
    """
    return [spec.info for spec in specs()]


def detect_format(path: str | os.PathLike) -> str:
    """The format name of one file, detected from its name and content.

    Raises
    ------
    ArchiveError
        For an empty file or a format that cannot be detected.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "counts.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("task_id,n,c\\nHumanEval/0,10,3\\n")
    >>> detect_format(path)
    'counts'
    """
    return detect(os.fspath(path))[0]


class UnknownDocument(ArchiveError):
    """A JSON document no reader recognizes (a summary, a config), its content ``doc``: a walk
    or a glob skips it with a note; a file named explicitly raises."""

    def __init__(self, file: str, what: str, doc: object, line: int | None = None) -> None:
        super().__init__(file, what, line=line)
        self.doc = doc


def _undetected(what: str) -> Message:
    return Message(f"cannot detect the format{what}; pass ", Option("format"),
                   " (see passatk formats)")


def _top(doc: object) -> str:
    """A document's top level in words: its keys, or its JSON shape (never a class name)."""
    return tables.name_list(list(doc), 10, sort=True) if isinstance(doc, dict) else shape(doc)


def _first_line(head: bytes) -> tuple[int, bytes] | None:
    return next(((i, line) for i, line in enumerate(head.split(b"\n"), 1) if line.strip()),
                None)


def _value(line: bytes) -> object:
    """The JSON value of ``line``, or the BadRecord that says why there is none."""
    try:
        return decode_json(line)
    except BadRecord as e:
        return e


def document_format(file: str, doc: object) -> str:
    """The format of a parsed JSON document; UnknownDocument when no reader recognizes it."""
    for spec in probing_order("document"):
        if spec.probe(doc, file):
            return spec.name
    for spec in probing_order():  # a harness's aggregate-only file: what to read instead
        if spec.summary is not None and (what := spec.summary(file, doc)) is not None:
            raise UnknownDocument(file, what, doc)
    raise UnknownDocument(file, _undetected(f" of this JSON document (top level: {_top(doc)})"),
                          doc)


def _lines_format(file: str, head: bytes, ctx: Context) -> str | None:
    """The format of JSON Lines from its first record; None: it is a one-line JSON document."""
    lineno, line = _first_line(head)  # type: ignore[misc]
    if isinstance(record := _value(line), BadRecord):
        if (hint := document_hint(file, head)) is not None:
            raise ArchiveError(file, hint)
        raise ArchiveError(file, record.what, line=lineno)
    if isinstance(record, dict):
        fmt = next((s.name for s in probing_order("lines") if s.probe(record, file)), None)
        if fmt is None:
            with contextlib.suppress(ArchiveError):
                fmt = tables.columns(list(record), None, ctx, file, strict=False)["kind"]
        if fmt is not None:
            return fmt
        if not opening.logical_name(file).endswith((".jsonl", ".ndjson")) and (
                any(s.probe(record, file) for s in probing_order("document")) or any(
                    s.summary(file, record) is not None for s in specs() if s.summary)):
            return None  # a known document or summary on one line (EvalPlus and CRUXEval's)
        what = f"with keys {tables.name_list(list(record), 10, sort=True)}"
    else:
        what = f"whose first line is {shape(record)}"
    raise UnknownDocument(file, _undetected(f" of JSON Lines {what}"), None, line=lineno)


def document_hint(file: str, head: bytes | None = None) -> str | None:
    """For a whole (pretty-printed) JSON document given as JSON Lines: what to do instead;
    None when the first line is a JSON value of its own or the file is no JSON document."""
    if head is None and not opening.is_regular(file):
        return None  # a pipe or device is read once, by the reader
    first = _first_line(opening.read_head(file, 1 << 16) if head is None else head)
    if first is None or not first[1].rstrip().endswith((b"{", b"[", b",")) or not isinstance(
            _value(first[1]), BadRecord):
        return None  # not the opening line of an indented document: no whole-file parse
    try:
        doc = load_document(file)
    except ArchiveError:
        return None
    try:
        fmt = doc.format if isinstance(doc, Typed) else document_format(file, doc)
        return Message("this is a JSON document, not JSON Lines; did you mean ",
                       Option("format", fmt), "?")
    except UnknownDocument:
        named = opening.logical_name(file).endswith(".json")
        return ("this is a JSON document, not JSON Lines" + (
            ", and no reader recognizes it" if named else "; did you mean to name it .json?")
                + f" (top level: {_top(doc)})")


def load_document(file: str, only: str | None = None) -> object:
    """The document of ``file`` (``io/documents.py``), the typed views of the document formats
    tried first, those whose file names match before the others (only ``only``'s if given)."""
    name = opening.logical_name(file)
    found = [s for s in probing_order("document") if s.view is not None
             and (only is None or s.name == only)]
    found.sort(key=lambda s: not any(fnmatch.fnmatch(name, n) for n in s.names))
    return load(file, tuple((s.name, s.view) for s in found))


def detect(file: str, ctx: Context | None = None) -> tuple[str, object]:
    """``(format, the parsed JSON document or None)`` of one file; ArchiveError for an empty
    file or a format that cannot be detected."""
    ctx = ctx or Context(Options())
    head = opening.read_head(file, 1 << 16)
    if not (start := head.lstrip()[:1]):
        raise ArchiveError(file, "empty file (no records)")
    table = head[:4] == opening.PARQUET_MAGIC or opening.logical_name(file).endswith(
        (".csv", ".tsv", ".parquet", ".pq"))
    if head[:4] == opening.ZIP_MAGIC and not table:
        if (fmt := next((s.name for s in probing_order("zip") if s.probe(head, file)),
                        None)) is None:
            raise ArchiveError(file, _undetected(" of this zip archive (no reader knows its "
                                                 "first member)"))
        return fmt, None
    if table or start not in (b"{", b"["):
        if (kind := tables.peek_kind(file, ctx)) is None:
            raise ArchiveError(file, Message(
                "cannot detect the format: the table has neither n and c columns nor a pass "
                "flag or reward column; map columns (task=, n=, c=, passed=, reward=) or pass ",
                Option("format")) if table else _undetected(
                    " (not JSON, JSON Lines, CSV or Parquet of a known kind)"))
        return kind, None
    return _json_format(file, head, ctx)


def _json_format(file: str, head: bytes, ctx: Context) -> tuple[str, object]:
    name = opening.logical_name(file)
    as_lines = name.endswith((".jsonl", ".ndjson")) or (
        not name.endswith(".json") and head.lstrip()[:1] == b"{"
        and isinstance(_value(_first_line(head)[1]), dict))  # type: ignore[index]
    if as_lines and (fmt := _lines_format(file, head, ctx)) is not None:
        return fmt, None
    doc = load_document(file)
    return (doc.format, doc.view) if isinstance(doc, Typed) else (document_format(file, doc), doc)
