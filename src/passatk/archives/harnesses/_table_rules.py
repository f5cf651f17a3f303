"""The rules of tables that both table readers (``harnesses.tables``, ``io.tables``) apply."""

from __future__ import annotations

import math

from passatk._limits import MAX_N as MAX_COUNT  # noqa: F401 (exact in a double; both readers)
from passatk.archives.context import BadRecord
from passatk.archives.errors import ArchiveError, show
from passatk.archives.harnesses._flags import pass_flag
from passatk.errors import Message, Option

TASK_COLUMNS = ("task_id", "task", "id")
#: ``is_solved``/``solved``: MapCoder, Reflexion and the harnesses derived from them
PASSED_COLUMNS = ("passed", "pass", "correct", "is_correct", "success", "is_solved", "solved")
REWARD_COLUMNS = ("reward", "rewards")
#: group columns a per-sample table brings itself: lm-eval writes one row per filter
AUTO_GROUP_COLUMNS = ("filter",)
#: columns that name a run variant: rows of one task that disagree in one are several runs
RUN_COLUMNS = ("filter_name", "metric_set", "variant", "subset", "split", "mode")
_TRUE = {"true": True, "1": True, "1.0": True, "false": False, "0": False, "0.0": False}

def _flag(value: object, name: str, threshold: float | None = None) -> bool:
    """A pass flag (see ``_flags``) or its text; with ``threshold`` any number."""
    if isinstance(value, str):
        key = value.strip().lower()
        if key in _TRUE:
            return _TRUE[key]
        if threshold is not None:
            return _reward(value, name, True) >= threshold
    elif threshold is not None and isinstance(value, (int, float)) \
            and not isinstance(value, bool):
        return _reward(value, name, False) >= threshold
    return pass_flag(value, f'column "{name}"', threshold=True)

def _reward(value: object, name: str, strings: bool) -> float:
    if (strings and isinstance(value, str)) or (isinstance(value, (int, float))
                                                 and not isinstance(value, bool)):
        try:
            x = float(value)
        except ValueError:
            raise BadRecord(f'column "{name}" must be a number, got {show(value)}') from None
        except OverflowError:
            x = math.inf
        if math.isfinite(x):
            return x
        raise BadRecord(f'column "{name}" must be finite, got {show(value)}')
    raise BadRecord(f'column "{name}" must be a number, got {show(value)}')

def _plan(spec: dict, by: tuple, record_by: tuple, names: list[str] | None) -> tuple:
    """The layout of a table, and the columns each row is judged by (``names`` None: JSON
    Lines, whose columns are the union over its records)."""
    layout = _Layout([] if spec["kind"] == "counts" else names, by)
    values = [spec["n"], spec["c"]] if spec["kind"] == "counts" else \
        [spec["passed"] if spec["passed"] is not None else spec["reward"]]
    return layout, list(dict.fromkeys([spec["task"], *values, *record_by, *layout.auto,
                                       *layout.watch]))

class _Layout:
    """The group columns a per-sample table brings (``auto``: lm-eval's ``filter``) and those
    naming runs (``watch``); ``names=None`` (JSON Lines): every one, null where a row lacks it."""

    def __init__(self, names: list[str] | None, by: tuple[str, ...]) -> None:
        self.union = names is None
        self.auto = tuple(c for c in AUTO_GROUP_COLUMNS if (self.union or c in names)
                          and c not in by)
        self.watch = tuple(c for c in RUN_COLUMNS if (self.union or c in names) and c not in by)
        self.first: dict[str, tuple] = {}
        self.seen = False  # a row held an auto or watched column

    def extra(self, row: dict) -> tuple:  # a CSV or Parquet row has every column
        return tuple((c, row[c]) for c in self.auto if c in row)

    def check(self, file: str, lineno: int, task: str, row: dict) -> None:
        if self.union and not self.seen:
            self.seen = any(c in row for c in self.auto + self.watch)
        if not self.watch:
            return
        values = tuple(row.get(c) for c in self.watch)
        first = self.first.setdefault(task, (lineno, values))
        for col, a, b in zip(self.watch, first[1], values, strict=True):
            if a != b:
                raise ArchiveError(
                    file, Message(f'rows of task {task!r} differ in column "{col}" ({show(a)} at '
                                  f"line {first[0]}, {show(b)} here): these are separate runs; "
                                  "pass ", Option("by", [col]), " to score each"), line=lineno)
