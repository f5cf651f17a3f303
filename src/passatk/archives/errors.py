"""Errors and the record of skipped input: located one-line messages."""

import copyreg
import json
import re
from dataclasses import asdict, dataclass

from passatk.errors import HintedError, Message

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_KINDS = ((dict, "an object"), ((list, tuple), "a list"), (str, "a string"),
          (bool, "true/false"), ((int, float), "a number"))
#: at most this many skipped places are kept; the count is always exact
MAX_SKIPPED_KEPT = 1000


def show(value: object, limit: int = 60) -> str:
    """A short one-line ``repr`` of an offending value."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def kind(value: object) -> str:
    """A JSON value's shape in words (``an object``, ``true/false``, ...), never a class."""
    return next((word for types, word in _KINDS if isinstance(value, types)), "null")


def json_path(parts: tuple | list) -> str:
    """A JSON path such as ``$.eval["HumanEval/0"][3].base_status``."""
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" if _IDENT.match(p)
                         else f"[{json.dumps(p)}]" for p in parts)


def location(file: str, line: int | None = None, path: tuple | list | None = None) -> str:
    """``file:line``, ``file: $.json.path`` or ``file``."""
    if line is not None:
        return f"{file}:{line}"
    return file if path is None else f"{file}: {json_path(path)}"


class ArchiveError(HintedError):
    """A result archive that cannot be read as it is: a ValueError of one line, ``file:line:
    what`` (line-oriented files; Parquet: the 1-based row), ``file: $.json.path: what`` (JSON
    documents) or ``file: what``; ``file``, ``line``, ``path`` and ``what`` (a
    :class:`passatk.errors.Message`) are attributes.

    Examples
    --------
    >>> str(ArchiveError("a.jsonl", 'field "passed" must be true or false, got 2', line=3))
    'a.jsonl:3: field "passed" must be true or false, got 2'
    """

    def __init__(self, file: str, what: str, *, line: int | None = None,
                 path: tuple | list | None = None) -> None:
        self.file, self.line = str(file), line
        self.path = None if path is None else tuple(path)
        self.what = what if isinstance(what, Message) else Message(" ".join(str(what).split("\n")))
        self.location = location(self.file, line, self.path)
        super().__init__(Message(f"{self.location}: ", *self.what.parts))

    def __reduce__(self) -> tuple:
        # picklable, subclasses too: an error a worker process finds reaches the caller intact
        return copyreg.__newobj__, (type(self), str(self)), self.__dict__


@dataclass(frozen=True)
class SkippedRecord:
    """One skipped record: where it is and why it was skipped."""

    location: str
    reason: str

    def __str__(self) -> str:
        return f"{self.location}: {self.reason}"


@dataclass(frozen=True)
class Skipped:
    """The records skipped with ``skip_bad=True``: how many, and the first 1000 in order."""

    count: int = 0
    records: tuple[SkippedRecord, ...] = ()

    def __bool__(self) -> bool:
        return self.count > 0

    def __add__(self, other: "Skipped") -> "Skipped":
        return Skipped(self.count + other.count, (self.records + other.records)[:MAX_SKIPPED_KEPT])

    def to_dict(self) -> dict:
        """``{"count": ..., "records": [{"location": ..., "reason": ...}]}`` for JSON."""
        return {"count": self.count, "records": [asdict(r) for r in self.records]}


def stored_float(value: float, file: str, path: tuple) -> float:
    """A stored number as a float; an integer too large for one is an ArchiveError at path."""
    try:
        return float(value)
    except OverflowError:
        digits = len(str(abs(value))) if abs(value) < 10**4000 else "over 4000"
        raise ArchiveError(file, f"stored number too large for a float (an integer of {digits} "
                           "digits)", path=path) from None
