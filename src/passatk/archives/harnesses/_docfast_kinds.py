"""The fast pass's summaries (see ``_docfast``) for LiveCodeBench, OpenCompass, CRUXEval,
code_eval and MultiPL-E documents.

Each summary decodes one member of the per-task container with a typed :class:`msgspec.Struct`
of only the fields its reader uses, checks it as the reader would, and keeps what the reader
needs (counts, the values its options act on, stored numbers, failure texts); a member the
reader would skip or refuse raises :class:`Unproved`, so the exact path reads the file and
reports it. ``expected`` counts the quoted field names the decoded members account for (once
per key present, once per decoded string value equal to a name), for the duplicate-key proof.
What depends on the read's options (LiveCodeBench's filters, ``--by`` record fields) is applied
by the reader: a read with record fields in ``by`` takes the exact loop.
"""

from __future__ import annotations

from typing import Any

import msgspec

from passatk.archives.context import BadRecord, task_id
from passatk.archives.harnesses._flags import is_flag
from passatk.archives.harnesses._hints import FailureText
from passatk.archives.io.docbuffer import Summary, Unproved
from passatk.archives.io.jsondoc import STREAM_KEYS

__all__ = ["pick"]

_UNSET = msgspec.UNSET
_Unset = msgspec.UnsetType
_Flag = bool | int | float
_Scalar = str | bool | int | float | None  # no Raw: it would pin the buffer it came from
_SHORT = 256  # the longest raw value kept per problem for a filter (its error shows it)


class _Problem(msgspec.Struct):
    question_id: str | int | _Unset = _UNSET
    graded_list: list[_Flag] | _Unset = _UNSET
    contest_date: str | _Unset | None = _UNSET
    difficulty: str | _Unset | None = _UNSET
    metadata: list[str] | _Unset | None = _UNSET
    pass1: _Scalar | _Unset = msgspec.field(default=_UNSET, name="pass@1")


class _Detail(msgspec.Struct):
    task_id: str | int | _Unset = _UNSET
    passed: _Flag | _Unset = _UNSET
    result: str | _Unset | None = _UNSET

    def __post_init__(self) -> None:
        _DECODED[0] += 1  # a count of the details decoded, equal keys included (see decoded)


_DECODED = [0]


class _CodeEvalResult(msgspec.Struct):
    task_id: _Scalar | _Unset = _UNSET
    passed: _Flag | _Unset = _UNSET
    result: str | _Unset | None = _UNSET


class _MultiPLEResult(msgspec.Struct):
    status: str | _Unset = _UNSET
    exit_code: int | _Unset | None = _UNSET
    stderr: str | _Unset | None = _UNSET


def _id(value: object, name: str) -> str:
    try:
        return task_id(value, name)
    except BadRecord:
        raise Unproved from None


def _passes(flags: list | msgspec.UnsetType) -> int:
    """How many of ``flags`` (bools and numbers, as decoded) pass; Unproved unless each is a
    pass flag (a value equal to 1 or 0: ``True == 1 == 1.0``, as ``is_flag`` has it)."""
    if flags is _UNSET or not flags:
        raise Unproved  # the exact path skips or refuses these
    c = flags.count(True)
    if c + flags.count(False) != len(flags):
        raise Unproved
    return c


class _Named(Summary):
    """A summary whose members hold the field names ``NAMES`` (counted for the proof)."""

    NAMES: tuple[str, ...] = ()

    def __init__(self) -> None:
        super().__init__()
        self.needles = {n: f'"{n}"'.encode() for n in self.NAMES}
        self.attrs = tuple((_ATTR.get(n, n), needle) for n, needle in self.needles.items())
        self.expected = dict.fromkeys(self.needles.values(), 0)

    def fields(self, member: msgspec.Struct) -> None:
        """Count the names of the fields ``member`` holds."""
        expected = self.expected
        for attr, needle in self.attrs:
            if getattr(member, attr) is not _UNSET:
                expected[needle] += 1

    def values(self, *values: object) -> None:
        """Count the decoded string values that spell a field name."""
        for v in values:
            if type(v) is str:
                needle = self.needles.get(v)
                if needle is not None:
                    self.expected[needle] += 1


_ATTR = {"pass@1": "pass1"}


class LiveCodeBench(_Named):
    """Per problem: (index, task, n, c, contest_date, difficulty, stored pass@1, failures)."""

    kind = "livecodebench"
    schema = _Problem
    pieces = True
    NAMES = ("question_id", "graded_list", "contest_date", "difficulty", "metadata", "pass@1")

    def add(self, index: int, p: _Problem) -> None:
        from passatk.archives.harnesses.livecodebench import _error

        if p.question_id is _UNSET:
            raise Unproved
        graded = p.graded_list
        c = _passes(graded)
        task = _id(p.question_id, "question_id")
        meta = p.metadata if isinstance(p.metadata, list) else []
        failures = FailureText()
        for j, g in enumerate(graded):
            passed = g == 1
            failures.add(passed, None if passed or not failures.same
                         else _error(meta[j] if j < len(meta) else None))
        if not failures.same:
            failures.text = failures.raw = None  # only ``same`` matters now: keep no text
        stored = p.pass1
        if not (isinstance(stored, (int, float)) and not isinstance(stored, bool)):
            stored = None
        self.rows.append((index, task, len(graded), c,  # type: ignore[arg-type]
                          _short(p.contest_date), _short(p.difficulty), stored, failures))
        self.fields(p)
        self.values(p.question_id, p.contest_date, p.difficulty, p.pass1, *meta)


def _short(value: str | msgspec.UnsetType | None) -> str | None:
    """A filter field's value as the reader gets it (None when missing)."""
    if value is _UNSET:
        return None
    if value is not None and len(value) > _SHORT:
        raise Unproved  # not kept per problem: the exact path reads this file
    return value


class OpenCompass(_Named):
    """Per task (n, c) in the order first seen; the failure texts of the details."""

    kind = "opencompass"
    schema = _Detail
    pieces = True
    NAMES = ("task_id", "passed", "result")

    def __init__(self) -> None:
        super().__init__()
        self.tasks: dict[str, list[int]] = {}
        self.failures = FailureText()

    def decoded(self) -> int:
        return _DECODED[0]

    def add(self, key: object, d: _Detail) -> None:
        if d.task_id is _UNSET or d.passed is _UNSET or not is_flag(d.passed):
            raise Unproved
        task = _id(d.task_id, "task_id")
        passed = d.passed == 1
        row = self.tasks.get(task)
        if row is None:
            row = self.tasks[task] = [0, 0]
        row[0] += 1
        row[1] += passed
        self.failures.add(passed, None if d.result is _UNSET else d.result)
        self.fields(d)
        self.values(d.task_id, d.result)


class CRUXEval(Summary):
    """Per task (n, c); no field names are read (a task's value is its list of flags)."""

    kind = "cruxeval"
    schema = list[_Flag]
    pieces = True

    def piece_members(self, data: bytearray, start: int, end: int, before: int) -> int:
        """The keys are the piece's only strings (its values decoded as flags): without a
        backslash, two quotes each."""
        if data.find(b"\\", start, end) >= 0:
            return -1
        quotes = data.count(b'"', start, end)
        return -1 if quotes % 2 else quotes // 2

    def add(self, task: str, flags: list) -> None:
        self.rows.append((task, len(flags), _passes(flags), 0))


class CodeEval(_Named):
    """Per task (n, c); the failure texts of the samples."""

    kind = "code-eval"
    schema = list[tuple[Any, _CodeEvalResult]]
    NAMES = ("task_id", "passed", "result")
    _GUARD = STREAM_KEYS | {"name"}  # keys other probes read: leave such a document exact

    def __init__(self) -> None:
        super().__init__()
        self.failures = FailureText()

    def add(self, task: str, items: list) -> None:
        if not items or task in self._GUARD:
            raise Unproved
        c = 0
        for _, r in items:
            if r.passed is _UNSET or not is_flag(r.passed):
                raise Unproved
            if r.task_id is not _UNSET and r.task_id != task and str(r.task_id) != task:
                raise Unproved
            passed = r.passed == 1
            c += passed
            self.failures.add(passed, None if r.result is _UNSET else r.result)
            self.fields(r)
            self.values(r.task_id, r.result)
        self.rows.append((task, len(items), c, 0))


class MultiPLE(_Named):
    """One problem's samples: n, c and the failure texts."""

    kind = "multipl-e"
    schema = _MultiPLEResult
    pieces = True
    NAMES = ("status", "exit_code", "stderr")

    def __init__(self) -> None:
        super().__init__()
        self.n = self.c = 0
        self.failures = FailureText()

    def add(self, index: int, r: _MultiPLEResult) -> None:
        if r.status is _UNSET:
            raise Unproved
        passed = r.status == "OK" and r.exit_code == 0
        self.n += 1
        self.c += passed
        self.failures.add(passed, None if r.stderr is _UNSET else r.stderr)
        self.fields(r)
        self.values(r.status, r.stderr)


def _any(first: object) -> bool:
    return True


def _dict_with(*names: str) -> Any:
    return lambda first: isinstance(first, dict) and all(n in first for n in names)


#: (container key, "{" or "["): (the summary, whether the container's first value fits it);
#: key None is the top level (a list of problems, or code_eval's dict of tasks)
_KINDS: dict[tuple[str | None, int], tuple[type, Any]] = {
    ("details", 123): (OpenCompass, _dict_with("task_id", "passed")),
    ("details", 91): (OpenCompass, _dict_with("task_id", "passed")),
    ("raw_scored_generations", 123): (CRUXEval, lambda first: isinstance(first, list)),
    ("results", 91): (MultiPLE, lambda first: isinstance(first, dict)),
    (None, 91): (LiveCodeBench, _dict_with("graded_list")),
    (None, 123): (CodeEval, _any),
}


def pick(key: str | None, opener: int) -> Any:
    """The summary picker for the container under ``key`` opened by ``opener``; None when
    the fast pass has no summary for it."""
    kind = _KINDS.get((key, opener))
    if kind is None:
        return None
    summary, fits = kind

    def picked(first: object) -> Summary:
        if not fits(first):
            raise Unproved
        return summary()

    return picked
