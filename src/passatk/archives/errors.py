"""Errors and the record of skipped input."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from passatk.errors import HintedError, Message

__all__ = ["ArchiveError", "Skipped", "SkippedRecord", "json_path", "kind", "show", "stored_float"]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

#: at most this many skipped places are kept; the count is always exact
MAX_SKIPPED_KEPT = 1000


def show(value: object, limit: int = 60) -> str:
    """Return a short one-line ``repr`` of an offending value."""
    text = repr(value)
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text


def kind(value: object) -> str:
    """A JSON value's shape in words, for messages about archive content (never a class).

    >>> [kind(v) for v in ({}, [], "x", 1.5, True, None)]
    ['an object', 'a list', 'a string', 'a number', 'true/false', 'null']
    """
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "true/false"
    return "a number" if isinstance(value, (int, float)) else "null"


def json_path(parts: tuple | list) -> str:
    """Format a JSON path such as ``$.eval["HumanEval/0"][3].base_status``.

    >>> json_path(("eval", "HumanEval/0", 3, "base_status"))
    '$.eval["HumanEval/0"][3].base_status'
    """
    out = ["$"]
    for part in parts:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _IDENT.match(part):
            out.append(f".{part}")
        else:
            out.append(f"[{json.dumps(part)}]")
    return "".join(out)


def location(file: str, line: int | None = None, path: tuple | list | None = None) -> str:
    """Return ``file:line``, ``file: $.json.path`` or ``file``."""
    if line is not None:
        return f"{file}:{line}"
    if path is not None:
        return f"{file}: {json_path(path)}"
    return file


class ArchiveError(HintedError):
    """A result archive that cannot be read as it is.

    The message is exactly one line: ``file:line: what is wrong`` for line-oriented files (JSON
    Lines, CSV; for Parquet the number is the 1-based row), ``file: $.json.path: what is wrong``
    for JSON documents, and ``file: what is wrong`` for problems with the whole file.

    Attributes
    ----------
    file : str
        The file as it was named.
    line : int or None
        1-based line (or Parquet row) number, when the problem has one.
    path : tuple or None
        Keys and indices of the JSON value at fault, for JSON documents.
    what : str
        What is wrong, without the location (a :class:`passatk.errors.Message` when it names an
        option that fixes it; ``options`` and ``render`` then come from
        :class:`passatk.errors.HintedError`).

    Examples
    --------
    >>> err = ArchiveError("a.jsonl", 'field "passed" must be true or false, got \\'yes\\'', line=3)
    >>> str(err)
    'a.jsonl:3: field "passed" must be true or false, got \\'yes\\''
    >>> isinstance(err, ValueError)
    True
    """

    def __init__(
        self,
        file: str,
        what: str,
        *,
        line: int | None = None,
        path: tuple | list | None = None,
    ) -> None:
        self.file = str(file)
        self.line = line
        self.path = None if path is None else tuple(path)
        if not isinstance(what, Message):
            what = Message(" ".join(str(what).split("\n")))
        self.what = what
        self.location = location(self.file, line, self.path)
        super().__init__(Message(f"{self.location}: ", *what.parts))

    def __reduce__(self) -> tuple:
        # picklable (subclasses too), so that an error found by a worker process reaches the
        # caller intact
        return _rebuild_archive_error, (type(self), str(self), self.__dict__)


def _rebuild_archive_error(cls: type, message: str, state: dict) -> ArchiveError:
    err = cls.__new__(cls)
    ValueError.__init__(err, message)
    err.__dict__.update(state)
    return err


@dataclass(frozen=True)
class SkippedRecord:
    """One skipped record: where it is and why it was skipped."""

    location: str
    reason: str

    def __str__(self) -> str:
        return f"{self.location}: {self.reason}"


@dataclass(frozen=True)
class Skipped:
    """The records skipped with ``skip_bad=True``.

    Attributes
    ----------
    count : int
        How many records were skipped (exact).
    records : tuple of SkippedRecord
        Where and why, in reading order; at most the first 1000 are kept.
    """

    count: int = 0
    records: tuple[SkippedRecord, ...] = field(default=())

    def __bool__(self) -> bool:
        return self.count > 0

    def __add__(self, other: Skipped) -> Skipped:
        return Skipped(
            self.count + other.count, (self.records + other.records)[:MAX_SKIPPED_KEPT]
        )

    def to_dict(self) -> dict:
        """Return ``{"count": ..., "records": [{"location": ..., "reason": ...}]}`` for JSON."""
        return {
            "count": self.count,
            "records": [{"location": r.location, "reason": r.reason} for r in self.records],
        }


def stored_float(value: float, file: str, path: tuple) -> float:
    """A number an archive stores about itself as a float; an integer too large for one (a
    500-digit ``pass@1``) is an :class:`ArchiveError` at ``file: $.path``, not an OverflowError.

    >>> stored_float(1, "a.json", ("pass@1",))
    1.0
    >>> stored_float(10**400, "a.json", ("pass@1",))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    passatk.archives.errors.ArchiveError: a.json: $["pass@1"]: stored number too large ...
    """
    try:
        return float(value)
    except OverflowError:
        digits = len(str(abs(value))) if abs(value) < 10**4000 else "over 4000"
        raise ArchiveError(file, f"stored number too large for a float (an integer of {digits} "
                           "digits)", path=path) from None
