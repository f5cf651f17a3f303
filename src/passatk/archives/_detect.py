"""Detection of a file's format from its name and content, by the registry's probes."""

from __future__ import annotations

import os

from ..errors import Message, Option
from . import tables
from ._common import BadRecord, Context, decode_json
from ._document import load_json_document
from ._errors import ArchiveError
from ._registry import FormatInfo, canonical_format, probing_order, specs
from ._sources import PARQUET_MAGIC, is_regular, logical_name, read_head

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

    def __init__(self, file: str, what: str, doc: object) -> None:
        super().__init__(file, what)
        self.doc = doc


def key_list(keys: list, shown: int = 10) -> str:
    """``['a', 'b']``, or ``['a', 'b'] and 3 more``: at most ``shown`` sorted keys.

    >>> key_list(list("abcdefghijkl"), 3)
    "['a', 'b', 'c'] and 9 more"
    """
    return tables.name_list(keys, shown, sort=True)


def document_format(file: str, doc: object) -> str:
    """The format of a parsed JSON document; UnknownDocument when no reader recognizes it."""
    for spec in probing_order("document"):
        if spec.probe(doc, file):
            return spec.name
    for spec in probing_order():  # a harness's aggregate-only file: what to read instead
        what = spec.summary(file, doc) if spec.summary is not None else None
        if what is not None:
            raise UnknownDocument(file, what, doc)
    keys = key_list(list(doc)) if isinstance(doc, dict) else type(doc).__name__
    raise UnknownDocument(file, Message("cannot detect the format of this JSON document "
                                  f"(top level: {keys}); pass ", Option("format"),
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


def _lines_format(file: str, head: bytes, ctx: Context) -> str:
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
        keys = key_list(list(record)) if isinstance(record, dict) else type(record).__name__
        raise ArchiveError(file, Message(f"cannot detect the format of JSON Lines with keys "
                                         f"{keys}; pass ", Option("format"),
                                         " (see passatk formats)"), line=lineno)
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
        keys = key_list(list(doc)) if isinstance(doc, dict) else type(doc).__name__
        if logical_name(file).endswith(".json"):
            return ("this is a JSON document, not JSON Lines, and no reader recognizes it "
                    f"(top level: {keys})")
        return ("this is a JSON document, not JSON Lines; did you mean to name it .json? "
                f"(top level: {keys})")
    return Message("this is a JSON document, not JSON Lines; did you mean ",
                   Option("format", fmt), "?")


def detect(file: str, ctx: Context | None = None) -> tuple[str, object]:
    """Detect the format of one file: ``(name, parsed JSON document or None)``.

    Raises
    ------
    ArchiveError
        For an empty file or a format that cannot be detected.
    """
    from ._common import Options

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
    start = head.lstrip()[:1]
    if start in (b"{", b"["):
        if _as_lines(name, head, start):
            return _lines_format(file, head, ctx), None
        doc = load_json_document(file)
        return document_format(file, doc), doc
    kind = tables.peek_kind(file, ctx)
    if kind is not None:
        return kind, None
    raise ArchiveError(file, Message("cannot detect the format (not JSON, JSON Lines, CSV or "
                                     "Parquet of a known kind); pass ", Option("format"),
                                     " (see passatk formats)"))
