"""Detection of a file's format from its name and content, by the registry's probes."""

from __future__ import annotations

import os

from passatk.archives.context import BadRecord, Context, decode_json
from passatk.archives.errors import ArchiveError
from passatk.archives.harnesses import tables
from passatk.archives.harnesses.lookup import canonical_format, probing_order, specs
from passatk.archives.harnesses.registry import FormatInfo
from passatk.archives.io.documents import load_json_document
from passatk.archives.io.opening import (
    PARQUET_MAGIC,
    ZIP_MAGIC,
    is_regular,
    logical_name,
    read_head,
)
from passatk.archives.io.views import shape
from passatk.errors import Message, Option

__all__ = [
    "FormatInfo", "UnknownDocument", "canonical_format", "detect", "detect_format",
    "document_format", "formats",
]


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


def _first_line(head: bytes) -> tuple[int, bytes] | None:
    for i, line in enumerate(head.split(b"\n"), start=1):
        if line.strip():
            return i, line
    return None


def _line_format(record: dict, ctx: Context, file: str) -> str | None:
    for spec in probing_order("lines"):
        if spec.probe(record, file):
            return spec.name
    try:
        return tables.columns(list(record), None, ctx, file, strict=False)["kind"]
    except ArchiveError:
        return None


class UnknownDocument(ArchiveError):
    """A JSON document no reader recognizes (a summary, a config); ``doc`` is its content.

    A directory walk or a glob skips such files with a note; a file named explicitly raises.
    """

    def __init__(self, file: str, what: str, doc: object, line: int | None = None) -> None:
        super().__init__(file, what, line=line)
        self.doc = doc


def key_list(keys: list, shown: int = 10) -> str:
    """``['a', 'b']``, or ``['a', 'b'] and 3 more``: at most ``shown`` sorted keys.

    >>> key_list(list("abcdefghijkl"), 3)
    "['a', 'b', 'c'] and 9 more"
    """
    return tables.name_list(keys, shown, sort=True)


def _top(doc: object) -> str:
    """A document's top level in words: its keys, or its JSON shape (never a class name)."""
    return key_list(list(doc)) if isinstance(doc, dict) else shape(doc)


def document_format(file: str, doc: object) -> str:
    """The format of a parsed JSON document; UnknownDocument when no reader recognizes it."""
    for spec in probing_order("document"):
        if spec.probe(doc, file):
            return spec.name
    for spec in probing_order():  # a harness's aggregate-only file: what to read instead
        what = spec.summary(file, doc) if spec.summary is not None else None
        if what is not None:
            raise UnknownDocument(file, what, doc)
    raise UnknownDocument(file, Message("cannot detect the format of this JSON document "
                                  f"(top level: {_top(doc)}); pass ", Option("format"),
                                  " (see passatk formats)"), doc)


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


def _as_lines(name: str, head: bytes, start: bytes) -> bool:
    """JSON Lines by name (.jsonl, .ndjson), or an unnamed file whose first line is an object."""
    if name.endswith((".jsonl", ".ndjson")):
        return True
    if name.endswith(".json") or start != b"{":
        return False
    first = _first_line(head)
    try:
        return first is not None and isinstance(decode_json(first[1]), dict)
    except BadRecord:
        return False


def _one_line_document(file: str, record: dict) -> bool:
    """Whether the first line of an unnamed file (standard input, a pipe) is a whole JSON
    document of a known format (or a harness's summary): EvalPlus and CRUXEval write theirs
    on one line."""
    if logical_name(file).endswith((".jsonl", ".ndjson")):
        return False
    return any(spec.probe(record, file) for spec in probing_order("document")) or any(
        spec.summary(file, record) is not None for spec in specs() if spec.summary is not None)


class UnknownLines(UnknownDocument):
    """JSON Lines no reader recognizes: a walk or a glob skips it with a note, as it skips an
    unknown JSON document; a file named explicitly raises."""


def _lines_format(file: str, head: bytes, ctx: Context) -> str | None:
    """The format of a JSON Lines file from its first record; None when that record is a
    whole one-line JSON document (see _one_line_document)."""
    lineno, line = _first_line(head)
    try:
        record = decode_json(line)
    except BadRecord as e:
        hint = document_hint(file, head)
        if hint is not None:
            raise ArchiveError(file, hint) from None
        raise ArchiveError(file, e.what, line=lineno) from None
    fmt = _line_format(record, ctx, file) if isinstance(record, dict) else None
    if fmt is None:
        if isinstance(record, dict) and _one_line_document(file, record):
            return None
        what = (f"with keys {key_list(list(record))}" if isinstance(record, dict)
                else f"whose first line is {shape(record)}")
        error = UnknownLines(file, Message(f"cannot detect the format of JSON Lines {what}; "
                                           "pass ", Option("format"),
                                           " (see passatk formats)"), None, line=lineno)
        raise error
    return fmt


def document_hint(file: str, head: bytes | None = None) -> str | None:
    """For a whole (pretty-printed) JSON document given as JSON Lines: what to do instead.

    None when the first line is a JSON value of its own, or the file is no JSON document.
    """
    if head is None and not is_regular(file):
        return None  # a pipe or device is read once, by the reader
    head = read_head(file, 1 << 16) if head is None else head
    first = _first_line(head)
    if first is None or not first[1].rstrip().endswith((b"{", b"[", b",")):
        return None  # not the opening line of an indented document: no whole-file parse
    try:
        decode_json(first[1])
        return None
    except BadRecord:
        pass
    try:
        doc = load_json_document(file)
    except ArchiveError:
        return None
    try:
        fmt = document_format(file, doc)
    except UnknownDocument:
        keys = _top(doc)
        if logical_name(file).endswith(".json"):
            return ("this is a JSON document, not JSON Lines, and no reader recognizes it "
                    f"(top level: {keys})")
        return ("this is a JSON document, not JSON Lines; did you mean to name it .json? "
                f"(top level: {keys})")
    return Message("this is a JSON document, not JSON Lines; did you mean ",
                   Option("format", fmt), "?")


def _zip_format(file: str, head: bytes) -> str:
    for spec in probing_order("zip"):
        if spec.probe(head, file):
            return spec.name
    raise ArchiveError(file, Message("cannot detect the format of this zip archive (no reader "
                                     "knows its first member); pass ", Option("format"),
                                     " (see passatk formats)"))


def detect(file: str, ctx: Context | None = None) -> tuple[str, object]:
    """Detect the format of one file: ``(name, parsed JSON document or None)``.

    Raises
    ------
    ArchiveError
        For an empty file or a format that cannot be detected.
    """
    from passatk.archives.options import Options

    ctx = ctx or Context(Options())
    name = logical_name(file)
    head = read_head(file, 1 << 16)
    if not head.strip():
        raise ArchiveError(file, "empty file (no records)")
    if head[:4] == PARQUET_MAGIC or name.endswith((".csv", ".tsv", ".parquet", ".pq")):
        kind = tables.peek_kind(file, ctx)
        if kind is None:
            raise ArchiveError(
                file, Message("cannot detect the format: the table has neither n and c columns "
                              "nor a pass flag or reward column; map columns (task=, n=, c=, "
                              "passed=, reward=) or pass ", Option("format"))
            )
        return kind, None
    if head[:4] == ZIP_MAGIC:
        return _zip_format(file, head), None
    start = head.lstrip()[:1]
    if start in (b"{", b"["):
        fmt = _lines_format(file, head, ctx) if _as_lines(name, head, start) else None
        if fmt is not None:
            return fmt, None
        doc = load_json_document(file)
        return document_format(file, doc), doc
    kind = tables.peek_kind(file, ctx)
    if kind is not None:
        return kind, None
    raise ArchiveError(file, Message("cannot detect the format (not JSON, JSON Lines, CSV or "
                                     "Parquet of a known kind); pass ", Option("format"),
                                     " (see passatk formats)"))
