"""The options of a read as one object (:class:`Options`), checked once by :func:`make_options`."""

from __future__ import annotations

import datetime as _dt
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from passatk.archives.harnesses._patterns import DATE
from passatk.archives.io.paths import is_path_spec, path_group_value
from passatk.errors import HintedError, Option

__all__ = ["ALLOW_DUPLICATES", "Options", "make_options"]

#: read_counts' ``merge`` that pools archives even when one repeats what others hold
ALLOW_DUPLICATES = "allow-duplicates"


@dataclass(frozen=True)
class Options:
    """Everything a read needs besides its files, as one object (validated by read_counts):
    the reader options, the forced ``format``, ``merge``, the files ``named`` explicitly and
    the fsspec ``storage`` options. It travels whole to every part of a read, on any engine."""

    by: tuple[str, ...] = ()
    task: str | None = None
    passed: str | None = None
    reward: str | None = None
    threshold: float | None = None
    n: str | None = None
    c: str | None = None
    skip_bad: bool = False
    since: str | None = None
    until: str | None = None
    difficulty: frozenset[str] | None = None
    format: str | None = None
    merge: bool | str = False
    named: frozenset[str] = frozenset()
    storage: Any = None  # a dict of fsspec options (see io.remote.storage_options)

    @property
    def record_by(self) -> tuple[str, ...]:
        return tuple(b for b in self.by if not is_path_spec(b))

    @property
    def filtering(self) -> bool:
        """Whether a LiveCodeBench filter (since, until, difficulty) is set."""
        return not (self.since is None and self.until is None and self.difficulty is None)

    def is_named(self, file: str) -> bool:
        """Whether ``file`` was named explicitly (not found by a walk or a glob)."""
        return os.path.normpath(file) in self.named


_DIFFICULTIES = ("easy", "medium", "hard")


def _column(value: object, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise TypeError(f"{name} must be a non-empty str (a column name), got {value!r}")
    return value


def _date(value: object, name: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, _dt.date):
        return value.isoformat()[:10]
    if not isinstance(value, str):
        raise TypeError(f"filters[{name!r}] must be a YYYY-MM-DD str or a date, got {value!r}")
    if not DATE.fullmatch(value):
        raise HintedError(Option("filters", key=name), f" must be a date YYYY-MM-DD, got {value!r}")
    return value


def _by_fields(by) -> tuple:
    """``by`` as a tuple of distinct, non-empty field names (path specs checked)."""
    if isinstance(by, str):
        by = (by,)
    try:
        by = tuple(by)
    except TypeError:
        raise TypeError(f"by must be a sequence of field names, got {by!r}") from None
    for b in by:
        if not isinstance(b, str) or not b:
            raise TypeError(f"by must hold non-empty str field names, got {b!r}")
        if is_path_spec(b):
            path_group_value(b, os.path.join("a", "b", "c"))  # validates the spec's form
    if len(set(by)) != len(by):
        raise ValueError(f"by must not repeat a field, got {list(by)}")
    return by


def _threshold(threshold) -> float | None:
    """``threshold`` checked to be a finite number, as a float (None stays None)."""
    if threshold is None:
        return None
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        raise TypeError(f"threshold must be a number, got {threshold!r}")
    if not math.isfinite(threshold):
        raise ValueError(f"threshold must be finite, got {threshold!r}")
    return float(threshold)


def _difficulty(d) -> frozenset | None:
    """The ``difficulty`` filter as a lower-case frozenset (None or empty: no filter)."""
    if d is None or (isinstance(d, (list, tuple, set, frozenset)) and not d):
        return None
    items = (d,) if isinstance(d, str) else tuple(d)
    for x in items:
        if not isinstance(x, str) or x.lower() not in _DIFFICULTIES:
            raise HintedError(Option("filters", key="difficulty"),
                              f" must be among {_DIFFICULTIES}, got {x!r}")
    return frozenset(x.lower() for x in items)


def _filters(filters) -> tuple:
    """``filters`` checked, as (since, until, difficulty)."""
    if filters is None:
        return None, None, None
    if not isinstance(filters, Mapping):
        raise TypeError(f"filters must be a mapping, got {type(filters).__name__}")
    unknown = set(filters) - {"since", "until", "difficulty"}
    if unknown:
        raise ValueError(f"filters: unknown key(s) {sorted(unknown)}; known: since, until, "
                         "difficulty")
    since = _date(filters.get("since"), "since")
    until = _date(filters.get("until"), "until")
    if since and until and since > until:
        raise HintedError(Option("filters", key="since"), f" {since} is after ",
                          Option("filters", key="until"), f" {until}")
    return since, until, _difficulty(filters.get("difficulty"))


def _merge(merge: object) -> bool | str:
    if isinstance(merge, bool) or merge == ALLOW_DUPLICATES:
        return merge  # type: ignore[return-value]
    if not isinstance(merge, str):
        raise TypeError(f"merge must be a bool or {ALLOW_DUPLICATES!r}, got {merge!r}")
    raise ValueError(f"merge must be True, False or {ALLOW_DUPLICATES!r}, got {merge!r}")


def make_options(*, format: str | None = None, by: object = (), task: object = None,
                 passed: object = None, reward: object = None, threshold: object = None,
                 n: object = None, c: object = None, skip_bad: object = False,
                 filters: object = None, merge: object = False) -> Options:
    """The :class:`Options` of read_counts' arguments, each checked (TypeError, ValueError);
    ``format`` is the canonical name (the lookup is the pipeline's)."""
    if not isinstance(skip_bad, bool):
        raise TypeError(f"skip_bad must be a bool, got {skip_bad!r}")
    since, until, difficulty = _filters(filters)
    columns = {name: _column(value, name) for name, value in
               (("task", task), ("passed", passed), ("reward", reward), ("n", n), ("c", c))}
    return Options(
        by=_by_fields(by), threshold=_threshold(threshold), skip_bad=skip_bad, since=since,
        until=until, difficulty=difficulty, **columns,
        format=format, merge=_merge(merge))
