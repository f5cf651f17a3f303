"""The options of a read as one frozen object, checked once by make_options."""

import datetime as _dt
import itertools
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from passatk._show import show
from passatk.archives.harnesses._patterns import DATE
from passatk.archives.io.paths import is_path_spec, path_group_value
from passatk.errors import HintedError, Option

ALLOW_DUPLICATES = "allow-duplicates"  # merge: pool archives even when one repeats others
_DIFFICULTIES = ("easy", "medium", "hard")
_MAX_BY = 64  # group fields one read may name


@dataclass(frozen=True)
class Options:
    """All a read needs but its files, to every part on any engine: the reader options, the
    files ``named`` explicitly, the fsspec ``storage`` options (io.remote.storage_options)."""
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
    strict_json: bool = False
    format: str | None = None
    merge: bool | str = False
    named: frozenset[str] = frozenset()
    storage: Any = None

    @property
    def record_by(self) -> tuple[str, ...]:
        return tuple(b for b in self.by if not is_path_spec(b))


def _date(value: object, name: str) -> str | None:
    if value is None or isinstance(value, _dt.date):
        return value and value.isoformat()[:10]
    if not isinstance(value, str):
        raise TypeError(f"filters[{name!r}] must be a YYYY-MM-DD str or a date, got {value!r}")
    if not DATE.fullmatch(value):
        raise HintedError(Option("filters", key=name), f" must be a date YYYY-MM-DD, got {value!r}")
    return value


def _by_fields(by) -> tuple:
    by = (by,) if isinstance(by, str) else by
    try:
        if isinstance(by, bytes) or not hasattr(by, "__iter__"):
            raise TypeError
        by = tuple(itertools.islice(by, _MAX_BY + 1))  # range(2**62) is never built
    except TypeError:  # a 0-d array too
        raise TypeError(f"by must be a sequence of field names, got {show(by)}") from None
    if len(by) > _MAX_BY:
        raise ValueError(f"by must name at most {_MAX_BY} fields, got more")
    for b in by:
        if not isinstance(b, str) or not b:
            raise TypeError(f"by must hold non-empty str field names, got {show(b)}")
        if is_path_spec(b):
            path_group_value(b, os.path.join("a", "b", "c"))  # validates the spec's form
    if len(set(by)) != len(by):
        raise ValueError(f"by must not repeat a field, got {list(by)}")
    return by


def _difficulty(d) -> frozenset | None:
    if d is None or (isinstance(d, (list, tuple, set, frozenset)) and not d):
        return None
    items = (d,) if isinstance(d, str) else tuple(d)
    for x in items:
        if not isinstance(x, str) or x.lower() not in _DIFFICULTIES:
            raise HintedError(Option("filters", key="difficulty"),
                              f" must be among {_DIFFICULTIES}, got {x!r}")
    return frozenset(x.lower() for x in items)


def _filters(filters) -> tuple:
    if filters is None:
        return None, None, None
    if not isinstance(filters, Mapping):
        raise TypeError(f"filters must be a mapping, got {type(filters).__name__}")
    if unknown := set(filters) - {"since", "until", "difficulty"}:
        raise ValueError(f"filters: unknown key(s) {sorted(unknown)}; known: since, until, "
                         "difficulty")
    since, until = _date(filters.get("since"), "since"), _date(filters.get("until"), "until")
    if since and until and since > until:
        raise HintedError(Option("filters", key="since"), f" {since} is after ",
                          Option("filters", key="until"), f" {until}")
    return since, until, _difficulty(filters.get("difficulty"))


def make_options(*, format: str | None = None, by: object = (), threshold: object = None,
                 skip_bad: object = False, filters: object = None, merge: object = False,
                 strict_json: object = False, **columns: object) -> Options:
    """read_counts' arguments checked; ``columns``: task, passed, reward, n, c; format canonical."""
    for name, flag in (("skip_bad", skip_bad), ("strict_json", strict_json)):
        if not isinstance(flag, bool):
            raise TypeError(f"{name} must be a bool, got {show(flag)}")
    since, until, difficulty = _filters(filters)
    for name, value in columns.items():
        if value is not None and (not isinstance(value, str) or not value):
            raise TypeError(f"{name} must be a non-empty str (a column name), got {value!r}")
    by = _by_fields(by)
    if threshold is not None and (isinstance(threshold, bool)
                                  or not isinstance(threshold, (int, float))):
        raise TypeError(f"threshold must be a number, got {threshold!r}")
    if threshold is not None and not math.isfinite(threshold):
        raise ValueError(f"threshold must be finite, got {threshold!r}")
    return Options(by=by, threshold=None if threshold is None else float(threshold),
                   skip_bad=skip_bad, since=since, until=until, difficulty=difficulty,
                   **columns, strict_json=strict_json, format=format, merge=_merge(merge))


def _merge(merge: object) -> bool | str:
    if isinstance(merge, bool) or (isinstance(merge, str) and merge == ALLOW_DUPLICATES):
        return merge  # type: ignore[return-value]
    if not isinstance(merge, str):  # an array's == would broadcast
        raise TypeError(f"merge must be a bool or {ALLOW_DUPLICATES!r}, got {show(merge)}")
    raise ValueError(f"merge must be True, False or {ALLOW_DUPLICATES!r}, got {show(merge)}")
