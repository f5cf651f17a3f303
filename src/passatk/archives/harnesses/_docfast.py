"""Whole JSON documents at msgspec speed: one pass, bounded memory, used only when proved.

:func:`fast_load` reads a document once, in 1 MiB blocks, and walks its top level and the
per-task container (EvalPlus v1/v2/v3 and BigCodeBench ``$.eval``, a tau-bench or
LiveCodeBench list, OpenCompass ``$.details``, CRUXEval ``$.raw_scored_generations``,
MultiPL-E ``$.results``, code_eval's top level) member by member. The end of a member is
found by msgspec itself: decoding the bytes from the member's first byte stops at the byte
after it (``trailing characters (byte N)``), so a string or a nested value is never cut, and a
malformed document is never read as a different valid one.
Each member is decoded with a typed :class:`msgspec.Struct` of only the fields the reader uses
and folded into a summary (per task ``n`` and ``c``). tau-bench trials, small and many, are
decoded many at a time: the buffer is cut at the last occurrence of the separator learned from
the first two trials, and a cut that decodes is a true boundary (see :class:`_Batch`); so
are the small members of OpenCompass, CRUXEval, MultiPL-E and LiveCodeBench (``_docpieces``).
Memory is a block plus the largest member (at most the record-length cap), never the document.

What msgspec cannot tell, the walk proves: duplicate task keys (a set of keys), duplicate
fields (:func:`_decode.needles_occur`: each field name read occurs in the bytes as often as the
decoded records account for; a tau-bench trial that fails it is walked field by field), UTF-8
(the exact path decodes every byte). What the readers see besides the summary (the top level,
the first task or trial) is decoded by the exact decoder. Anything else (a value outside a
schema, a record the exact path would skip or refuse, a document of another shape) raises
:class:`Unproved`, and the caller reads the file on the exact path (``_jsondoc``), which gives
today's located errors and ``skip_bad``; nothing from the failed attempt is kept.

Fields a reader does not use are checked for syntax by msgspec, not for duplicate keys inside
them, nor for integers of more than 4300 digits (the stdlib refuses both); so are the top-level
members in :data:`UNREAD`. The summaries of LiveCodeBench, OpenCompass, CRUXEval, code_eval
and MultiPL-E are in ``_docfast_kinds``; a code_eval document's top level is its container.
"""

from __future__ import annotations

import math
import re
from typing import Any, Literal

import msgspec

from passatk.archives.context import (
    BadRecord,
    decode_json,
    finite_number,
    int_text,
    require,
    task_id,
)
from passatk.archives.errors import ArchiveError
from passatk.archives.harnesses._hints import FailureText
from passatk.archives.harnesses.taubench import SUCCESS_TOLERANCE
from passatk.archives.io.docbuffer import Summary, Unproved, _Buffer
from passatk.archives.io.jsondoc import (
    STREAM_KEYS,
    StreamedDict,
    StreamedList,
    decode_member,
    split_document,
)
from passatk.archives.io.lines import decoder, needles_occur
from passatk.archives.io.opening import UTF8_BOM, open_binary

__all__ = ["BLOCK", "Summary", "Unproved", "fast_load"]

BLOCK = 1 << 20  # small enough that the passes over a block (walk, decode, counts) hit the cache
_HEAD = 1 << 16
_PLAIN_KEY = re.compile(rb'"([^"\\\x00-\x1f]*)"[ \t\r\n]*:')
_NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?\Z")
_KEYS: dict[bytes, str] = {}  # the keys seen, decoded (trial fields repeat in every trial)
_UNSET = msgspec.UNSET
#: top-level members that no reader or probe reads, often most of the document (CRUXEval)
UNREAD = frozenset({"raw_generations"})
_Status = Literal["pass", "fail", "timeout"]


class _EvalPlusSample(msgspec.Struct):
    task_id: str | msgspec.UnsetType = _UNSET
    base_status: _Status | msgspec.UnsetType | None = _UNSET
    plus_status: _Status | msgspec.UnsetType | None = _UNSET


_V1Status = Literal["success", "failed", "timed out"] | None


class _EvalPlusV1Task(msgspec.Struct):
    base: list[tuple[_V1Status, Any]] | msgspec.UnsetType = _UNSET
    plus: list[tuple[_V1Status, Any]] | msgspec.UnsetType = _UNSET
    nfiles: Any = _UNSET
    files: Any = _UNSET


class _Details(msgspec.Struct):
    ALL: Any = _UNSET


class _BigCodeBenchSample(msgspec.Struct):
    status: _Status | msgspec.UnsetType = _UNSET
    details: _Details | msgspec.UnsetType | None = _UNSET


class _RewardInfo(msgspec.Struct):
    reward: msgspec.Raw | msgspec.UnsetType = _UNSET


class _Info(msgspec.Struct):
    reward_info: _RewardInfo | msgspec.UnsetType | None = _UNSET


class _Trial(msgspec.Struct):
    task_id: msgspec.Raw | msgspec.UnsetType = _UNSET
    reward: msgspec.Raw | msgspec.UnsetType = _UNSET
    info: _Info | msgspec.UnsetType | None = _UNSET


class _EvalPlus(Summary):
    """EvalPlus v2/v3: per task (n, base c, plus c); whether any plus status is set."""

    kind = "evalplus"
    schema = list[_EvalPlusSample]

    def __init__(self) -> None:
        super().__init__()
        self.has_plus = False
        self.expected = {b'"base_status"': 0, b'"plus_status"': 0, b'"task_id"': 0}

    def add(self, task: str, samples: list) -> None:
        n = len(samples)
        base = [s.base_status for s in samples]
        plus = [s.plus_status for s in samples]
        ids = [s.task_id for s in samples]
        unset_plus, unset_ids = plus.count(_UNSET), ids.count(_UNSET)
        if not n or _UNSET in base or ids.count(task) + unset_ids != n:
            raise Unproved  # the exact path skips or refuses these
        cb = base.count("pass")
        cp = sum(1 for b, p in zip(base, plus, strict=True) if b == "pass" and p == "pass")
        self.has_plus = self.has_plus or plus.count(None) + unset_plus < n
        self.rows.append((task, n, cb, cp))
        self.count(b'"base_status"', n)
        self.count(b'"plus_status"', n - unset_plus)
        self.count(b'"task_id"', n - unset_ids)


class _EvalPlusV1(Summary):
    """EvalPlus v1: per task (n, base c, plus c or None when plus does not match base)."""

    kind = "evalplus-v1"
    schema = _EvalPlusV1Task

    def __init__(self) -> None:
        super().__init__()
        self.has_plus = False
        self.expected = {b'"base"': 0, b'"plus"': 0, b'"nfiles"': 0, b'"files"': 0}

    def add(self, task: str, entry: _EvalPlusV1Task) -> None:
        base = entry.base
        plus = [] if entry.plus is _UNSET else entry.plus
        if base is _UNSET or not base:
            raise Unproved  # the exact path skips or refuses these
        n = len(base)
        nfiles, files = entry.nfiles, entry.files
        if (nfiles is not _UNSET and nfiles != n) or (
                files is not _UNSET and (not isinstance(files, list) or len(files) != n)):
            raise Unproved
        cb = sum(r[0] == "success" for r in base)
        cp = sum(b[0] == "success" and p[0] == "success" for b, p in zip(
            base, plus, strict=True)) if len(plus) == n else None
        self.has_plus = self.has_plus or bool(plus)
        self.rows.append((task, n, cb, cp))  # type: ignore[arg-type]
        for name, value in ((b'"base"', base), (b'"plus"', entry.plus),
                            (b'"nfiles"', nfiles), (b'"files"', files)):
            self.count(name, value is not _UNSET)

    def finish(self) -> None:
        if self.has_plus and any(cp is None for *_, cp in self.rows):
            raise Unproved  # a task whose plus does not match base: the exact path's record


class _BigCodeBench(Summary):
    """BigCodeBench: per task (n, c), and the harness error texts of the failed samples."""

    kind = "bigcodebench"
    schema = list[_BigCodeBenchSample]

    def __init__(self) -> None:
        super().__init__()
        self.failures = FailureText()
        self.expected = {b'"status"': 0, b'"details"': 0, b'"ALL"': 0}

    def add(self, task: str, samples: list) -> None:
        n = len(samples)
        status = [s.status for s in samples]
        if not n or _UNSET in status:
            raise Unproved  # the exact path skips or refuses these
        details = [s.details for s in samples]
        texts = [d.ALL if isinstance(d, _Details) else _UNSET for d in details]
        self.count(b'"status"', n)
        self.count(b'"details"', n - details.count(_UNSET))
        self.count(b'"ALL"', n - texts.count(_UNSET) + texts.count("ALL"))
        self.failures.add_all(n, [None if t is _UNSET else t
                                  for t, st in zip(texts, status, strict=True) if st != "pass"])
        self.rows.append((task, n, status.count("pass"), 0))


class _TauBench(Summary):
    """tau-bench: per task (n, c) in the order tasks are first seen."""

    kind = "tau-bench"

    def __init__(self) -> None:
        super().__init__()
        self.tasks: dict[str, list[int]] = {}
        self.known: dict[tuple, tuple[str, bool]] = {}  # raw (task_id, reward): (task, success)

    def add_raw(self, tid: bytes | None, reward: bytes | None) -> None:
        """Count a trial from the raw bytes of its fields (None: missing); the same bytes
        give the same values, so each pair is converted once."""
        hit = self.known.get((tid, reward))
        if hit is None:
            fields = {k: _scalar(v) for k, v in (("task_id", tid), ("reward", reward))
                      if v is not None}
            hit = self._checked(fields)
            if len(self.known) < 1 << 13:
                self.known[tid, reward] = hit
        row = self.tasks.get(hit[0])
        if row is None:
            row = self.tasks[hit[0]] = [0, 0]
        row[0] += 1
        row[1] += hit[1]

    def add(self, trial: dict) -> None:
        task, success = self._checked(trial)
        row = self.tasks.get(task)
        if row is None:
            row = self.tasks[task] = [0, 0]
        row[0] += 1
        row[1] += success

    def _checked(self, trial: dict) -> tuple[str, bool]:
        """(task, success) as the reader finds them; Unproved where it would skip or refuse."""
        task, reward = trial.get("task_id"), trial.get("reward")
        if type(task) is int:
            try:
                task = int_text(task, "task_id")  # as task_id() writes an integer id
            except BadRecord:
                raise Unproved from None
        if not (type(task) is str and type(reward) is float and math.isfinite(reward)):
            try:  # the reader's own checks, for everything but the common case
                task = task_id(require(trial, "task_id"))
                reward = finite_number(require(trial, "reward"), "reward")
            except BadRecord:
                raise Unproved from None
        return task, abs(reward - 1.0) <= SUCCESS_TOLERANCE


def _key(buf: _Buffer, pos: int) -> tuple[str, int]:
    """The object key at ``pos`` and the position after its colon (a key without escapes or
    control characters is its UTF-8 bytes; any other goes through the exact decoder)."""
    m = _PLAIN_KEY.match(buf.data, pos, buf.n)
    if m is not None:
        raw = m.group(1)
        key = _KEYS.get(raw)
        if key is None:
            try:
                key = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise Unproved from None
            if len(_KEYS) < 4096:
                _KEYS[raw] = key
        return key, m.end()
    if buf.data[pos] != 34:
        raise Unproved
    colon = buf.end(pos)
    if buf.data[colon] != 58:
        raise Unproved
    try:
        key = decode_json(bytes(buf.data[pos:colon]))
    except BadRecord:
        raise Unproved from None
    return key, colon + 1


def _within_cap(buf: _Buffer, start: int, end: int) -> None:
    """A member longer than the cap is the exact path's error (with its line)."""
    if end - start > buf.cap:
        raise Unproved


def _exact(buf: _Buffer, pos: int, end: int) -> object:
    try:
        return decode_json(bytes(buf.data[pos:end]))
    except BadRecord:
        raise Unproved from None


def _unread(buf: _Buffer, pos: int, end: int) -> object:
    """A top-level value no reader reads (:data:`UNREAD`), decoded by msgspec: its syntax and
    UTF-8 checked, not its duplicate keys."""
    with memoryview(buf.data) as whole, whole[pos:end] as view:
        try:
            return msgspec.json.decode(view)
        except msgspec.DecodeError:
            raise Unproved from None


def _pick(first: object) -> Summary:
    """The summary for a container whose first value is ``first`` (exactly decoded)."""
    if isinstance(first, dict) and "base" in first:
        return _EvalPlusV1()
    if isinstance(first, list) and first and isinstance(first[0], dict):
        if "base_status" in first[0]:
            return _EvalPlus()
        if "status" in first[0]:
            return _BigCodeBench()
    raise Unproved


def _member(buf: _Buffer, summary: Summary, key: object, value: int, sep: int) -> None:
    """Decode the member value ``data[value:sep]`` with the summary's schema and add it."""
    with memoryview(buf.data) as whole, whole[value:sep] as view:
        try:
            decoded = decoder(summary.schema).decode(view)  # type: ignore[attr-defined]
        except (msgspec.DecodeError, ValueError):
            raise Unproved from None
    summary.add(key, decoded)  # type: ignore[attr-defined]


def _checked_block(buf: _Buffer, summary: Summary, start: int, sep: int, closer: int) -> bool:
    """At the end of the container or of a block: check ``[start, sep)`` and forget it (the
    byte after the member, ``sep``, is then at 0); whether it did."""
    if buf.data[sep] == closer or sep - start >= buf.block:
        buf.check_text(start, sep, summary.expected)
        summary.expected = dict.fromkeys(summary.expected, 0)
        buf.drop(sep)
        return True
    return False


def _dict_container(buf: _Buffer, pos: int, holder: dict, pick) -> tuple[Summary, int]:
    """Walk the object at ``pos`` (``$.eval``, or the top level), member by member (or
    many at a time, ``_docpieces``); return its summary (``pick(first value)``) and the
    byte after its ``}``."""
    mstart = pos + 1  # where the member starts, blanks included
    pos = buf.skip(mstart)
    summary: Summary | None = None
    pieces: Any = None  # a _docpieces.Pieces after the first member, when it applies
    seen: set[str] = set()
    start = pos  # the first byte not yet checked
    while True:
        if pieces is not None and pieces.until < pos:
            pos = pieces.read(buf, pos, seen)
        key, after = _key(buf, pos)
        value = buf.skip(after)
        sep = buf.end(value)
        _within_cap(buf, mstart, sep)
        if key in seen:
            raise Unproved
        seen.add(key)
        if summary is None:
            first = _exact(buf, value, sep)
            summary = pick(first)
            dict.__setitem__(holder, key, first)
            pieces = _pieces(summary, buf, sep, True)
        _member(buf, summary, key, value, sep)
        sep, start, closed = _after_member(buf, summary, pieces, start, sep, 125)
        if closed:
            summary.finish()
            return summary, sep + 1
        mstart = sep + 1
        pos = buf.skip(mstart)


def _list_container(buf: _Buffer, pos: int, holder: list, pick) -> tuple[Summary, int]:
    """:func:`_dict_container` for the array at ``pos``: members are added by index."""
    mstart = pos + 1
    pos = start = buf.skip(mstart)
    if buf.data[pos] == 93:
        raise Unproved  # an empty list: the exact path's error
    summary: Summary | None = None
    pieces: Any = None
    index = 0
    while True:
        if pieces is not None and pieces.until < pos:
            pos = pieces.read(buf, pos, index)
            index = pieces.index
        sep = buf.end(pos)
        _within_cap(buf, mstart, sep)
        if summary is None:
            first = _exact(buf, pos, sep)
            summary = pick(first)
            list.append(holder, first)
            pieces = _pieces(summary, buf, sep, False)
        _member(buf, summary, index, pos, sep)
        index += 1
        sep, start, closed = _after_member(buf, summary, pieces, start, sep, 93)
        if closed:
            summary.finish()
            return summary, sep + 1
        mstart = sep + 1
        pos = buf.skip(mstart)


def _after_member(buf: _Buffer, summary: Summary, pieces: Any, start: int, sep: int,
                  closer: int) -> tuple[int, int, bool]:
    """After a member that ends at ``sep``: the separator checked (``,`` or ``closer``), the
    block proved once it is full (positions then restart at 0); ``(sep, start, closed)``."""
    if buf.data[sep] not in (44, closer):
        raise Unproved
    if _checked_block(buf, summary, start, sep, closer):
        if pieces is not None:
            pieces.until -= sep
        sep = start = 0
    return sep, start, buf.data[sep] == closer


def _pieces(summary: Summary, buf: _Buffer, sep: int, keyed: bool) -> Any:
    if not summary.pieces:
        return None
    from passatk.archives.harnesses._docpieces import Pieces

    return Pieces.learned(summary, buf, sep, keyed)


def _pick_eval(first: object) -> Summary:
    return _pick(first)


def _picker(key: str | None, opener: int):
    """The summary picker for a container (None: the fast pass has none for it)."""
    if key == "eval" and opener == 123:
        return _pick_eval
    from passatk.archives.harnesses._docfast_kinds import pick

    return pick(key, opener)


def _code_eval(buf: _Buffer, pos: int) -> bool:
    """Whether the object at ``pos`` is code_eval's dict of tasks: its first value a list of
    ``[completion_id, {"passed": ...}]`` pairs (that value is exactly decoded to tell)."""
    from passatk.archives.harnesses.code_eval import _pair

    first = buf.skip(pos + 1)
    if buf.data[first] != 34:
        return False
    key, after = _key(buf, first)
    value = buf.skip(after)
    if key in STREAM_KEYS or buf.data[value] != 91:
        return False
    sep = buf.end(value)
    _within_cap(buf, first, sep)
    items = _exact(buf, value, sep)
    return isinstance(items, list) and bool(items) and _pair(items[0])


def _load_object(buf: _Buffer, pos: int, file: str) -> dict:
    if _code_eval(buf, pos):  # the top level is the per-task container
        tasks = FastDict(file, ())
        tasks.summary, sep = _dict_container(buf, pos, tasks, _picker(None, 123))
        buf.drop(sep)
        return tasks
    top: dict = {}
    budget = buf.cap
    buf.drop(pos + 1)
    pos = buf.skip(0)
    while True:
        key, after = _key(buf, pos)
        value = buf.skip(after)
        if key in top:
            raise Unproved
        if key in STREAM_KEYS:  # a container the exact skeleton streams: read it so too
            top[key], sep = _container(buf, value, file, key)
            sep = buf.skip(sep)
        else:
            sep = buf.end(value)
            _within_cap(buf, 0, sep)
            budget -= sep
            if budget < 0:
                raise Unproved
            top[key] = (_unread if key in UNREAD else _exact)(buf, value, sep)
        if buf.data[sep] == 125:
            if not any(isinstance(v, (FastDict, FastList)) for v in top.values()):
                raise Unproved
            buf.drop(sep + 1)
            return top
        if buf.data[sep] != 44:
            raise Unproved
        buf.drop(sep + 1)
        pos = buf.skip(0)


def _container(buf: _Buffer, value: int, file: str, key: str):
    """The container under the top-level ``key`` at ``value``, walked; and the byte after."""
    opener = buf.data[value]
    pick = _picker(key, opener) if opener in b"{[" else None
    if pick is None:
        raise Unproved
    if opener == 123:
        container: Any = FastDict(file, (key,))
        container.summary, sep = _dict_container(buf, value, container, pick)
    else:
        container = FastList(file, (key,))
        container.summary, sep = _list_container(buf, value, container, pick)
    return container, sep


def _trial(buf: _Buffer, pos: int, summary: _TauBench) -> int:
    """Read one tau-bench trial; return the position of the byte after it.

    One typed decode when the trial's field names prove it (each ``"task_id"`` and
    ``"reward"`` in its bytes accounted for, the one under ``info.reward_info`` included);
    else its fields are walked one by one (a nested field of the same name is no duplicate).
    """
    if buf.data[pos] != 123:
        raise Unproved
    sep = buf.end(pos)
    with memoryview(buf.data) as whole, whole[pos:sep] as view:
        fields, nested = _typed_trial(view)  # no Raw of the buffer outlives the call
    if fields is None or not needles_occur(buf.data, {
            b'"task_id"': ("task_id" in fields) + (fields.get("task_id") == b'"task_id"'),
            b'"reward"': len(fields) - ("task_id" in fields) + nested
            + (fields.get("task_id") == b'"reward"')}, pos, sep):
        return _walk_trial(buf, pos, summary)
    summary.add_raw(fields.get("task_id"), fields.get("reward"))
    return sep


def _typed_trial(view: memoryview) -> tuple[dict[str, bytes] | None, bool]:
    """The raw ``task_id`` and ``reward`` of a trial, and whether ``info.reward_info`` holds
    a ``reward``; None when the trial is of another shape."""
    try:
        t = decoder(_Trial).decode(view)
    except msgspec.ValidationError:
        return None, False
    except msgspec.DecodeError:
        raise Unproved from None
    fields = {k: bytes(getattr(t, k)) for k in ("task_id", "reward")
              if getattr(t, k) is not _UNSET}
    info = t.info.reward_info if isinstance(t.info, _Info) else None
    return fields, isinstance(info, _RewardInfo) and info.reward is not _UNSET


def _scalar(raw: bytes) -> object:
    """A JSON value (syntax checked by msgspec) as ``json.loads`` gives it: a string without
    escapes or a number is converted as the stdlib converts it, anything else decoded by it."""
    if raw[:1] == b'"' and b"\\" not in raw:
        try:
            return raw[1:-1].decode("utf-8")
        except UnicodeDecodeError:
            raise Unproved from None
    if len(raw) < 40 and _NUMBER.match(raw):
        return int(raw) if raw.isdigit() or raw[1:].isdigit() else float(raw)
    try:
        return decode_json(raw)
    except BadRecord:
        raise Unproved from None


def _walk_trial(buf: _Buffer, pos: int, summary: _TauBench) -> int:
    """Walk one tau-bench trial, field by field; return the position of the byte after it."""
    fields: dict[str, object] = {}
    seen: set[str] = set()
    pos = buf.skip(pos + 1)
    if buf.data[pos] == 125:
        raise Unproved
    while True:
        key, after = _key(buf, pos)
        value = buf.skip(after)
        sep = buf.end(value)
        if key in seen:
            raise Unproved
        seen.add(key)
        if key in ("task_id", "reward"):
            fields[key] = _exact(buf, value, sep)
        if buf.data[sep] == 125:
            summary.add(fields)
            return sep + 1
        if buf.data[sep] != 44:
            raise Unproved
        pos = buf.skip(sep + 1)


def _load_list(buf: _Buffer, pos: int, file: str) -> list:
    first = buf.skip(pos + 1)
    if buf.data[first] == 123:
        sep = buf.end(first)
        _within_cap(buf, first, sep)
        problem = _exact(buf, first, sep)
        if isinstance(problem, dict) and "graded_list" in problem:  # LiveCodeBench
            top = FastList(file, ())
            top.summary, sep = _list_container(buf, pos, top, _picker(None, 91))
            buf.drop(sep)
            return top
    return _load_trials(buf, pos, file)


def _load_trials(buf: _Buffer, pos: int, file: str) -> list:
    summary = _TauBench()
    top = FastList(file, ())
    top.summary = summary
    mstart = pos + 1
    pos = buf.skip(mstart)
    start = pos
    batch = _Batch()
    while True:
        if batch.until < pos:  # trials up to the last separator in the buffer, at once
            pos = batch.read(buf, pos, summary)
        end = _trial(buf, pos, summary)
        _within_cap(buf, mstart, end)
        if not len(top):
            first = _exact(buf, pos, end)
            if not (isinstance(first, dict) and "reward" in first and "task_id" in first):
                raise Unproved
            list.append(top, first)
            batch.learn(buf, end)
        sep = buf.skip(end)
        if buf.data[sep] not in b",]":
            raise Unproved
        if buf.data[sep] == 93 or sep - start >= buf.block:
            buf.check_text(start, sep, None)
            buf.drop(sep)
            batch.until -= sep
            sep = start = 0
        if buf.data[sep] == 93:
            buf.drop(sep + 1)
            return top
        mstart = sep + 1
        pos = buf.skip(mstart)


class _Batch:
    """Many tau-bench trials in one typed decode: the bytes between the first two trials
    (``},\\n  {`` as ``indent=2`` writes them, with the indent of the closing brace) are
    searched for from the end of the buffer; a cut there that decodes is a true boundary (a
    cut inside a string or a nested value leaves the piece unterminated or unbalanced)."""

    TRIES = 4

    def __init__(self) -> None:
        self.sep: bytes | None = None
        self.until = 1 << 62  # no batch before the separator is known, or up to this position

    def learn(self, buf: _Buffer, end: int) -> None:
        """The separator text after the first trial (which ends before ``end``)."""
        close = end - 1
        while close > 0 and buf.data[close] in b" \t\r\n":
            close -= 1
        sep = buf.skip(end)
        nxt = buf.skip(sep + 1) if buf.data[sep] == 44 else -1
        if buf.data[close] != 125 or nxt < 0 or buf.data[nxt] != 123:
            return
        begin = close
        while begin > 0 and buf.data[begin - 1] in b" \t":
            begin -= 1
        if begin > 0 and buf.data[begin - 1] == 10:
            begin -= 1 + (begin > 1 and buf.data[begin - 2] == 13)
        self.sep, self.until = bytes(buf.data[begin:nxt + 1]), -1

    def read(self, buf: _Buffer, pos: int, summary: _TauBench) -> int:
        """Read the trials from ``pos`` up to the last separator that proves; return where
        the next trial starts (``pos`` when none did: those trials go one at a time)."""
        assert self.sep is not None
        limit, close_at = buf.n, self.sep.index(b"}")
        for _ in range(self.TRIES):
            cut = buf.data.rfind(self.sep, pos, limit)
            if cut < 0:
                return pos
            limit = cut + len(self.sep) - 1
            close = cut + close_at
            if close + 1 - pos > buf.cap:
                continue
            try:
                rows, expected = _batch_fields(buf.data, pos, close)
            except msgspec.ValidationError:
                break
            except msgspec.DecodeError:
                continue  # not a boundary: an earlier one
            if not needles_occur(buf.data, expected, pos, close + 1):
                break
            for tid, reward in rows:
                summary.add_raw(tid, reward)
            return cut + len(self.sep) - 1
        else:
            self.until = 1 << 62  # separators that do not cut: one trial at a time from now
            return pos
        self.until = close + 1  # these trials one at a time, then batches again
        return pos


def _batch_fields(data: bytearray, pos: int, close: int) -> tuple[list, dict[bytes, int]]:
    """Decode the trials in ``data[pos:close + 1]`` as one list, in place (the bytes around
    them are ``[`` and ``]`` during the call, a copy would cost more than the decode)."""
    saved = data[pos - 1], data[close + 1]
    data[pos - 1], data[close + 1] = 91, 93
    try:
        with memoryview(data) as whole, whole[pos - 1:close + 2] as view:
            return _fields_of(decoder(list[_Trial]).decode(view))
    finally:
        data[pos - 1], data[close + 1] = saved


def _fields_of(trials: list) -> tuple[list, dict[bytes, int]]:
    """The raw (task_id, reward) of decoded trials (None: missing), and the field-name counts
    they account for."""
    rows, ids, rewards = [], 0, 0
    for t in trials:
        tid = None if t.task_id is _UNSET else bytes(t.task_id)
        reward = None if t.reward is _UNSET else bytes(t.reward)
        info = t.info.reward_info if isinstance(t.info, _Info) else None
        ids += (tid is not None) + (tid == b'"task_id"')
        rewards += (reward is not None) + (tid == b'"reward"') + (
            isinstance(info, _RewardInfo) and info.reward is not _UNSET)
        rows.append((tid, reward))
    return rows, {b'"task_id"': ids, b'"reward"': rewards}


def fast_load(file: str, block: int | None = None) -> object:
    """The skeleton of ``file`` as ``_jsondoc.load_document`` gives it, its per-task container
    carrying a :class:`Summary`, read in one pass; :class:`Unproved` when it cannot be proved.

    Errors in reading the file itself (missing, unreadable, bad compression) are raised as the
    exact path raises them.
    """
    block = block or BLOCK  # tests shrink BLOCK to a few bytes
    with open_binary(file) as f:
        buf = _Buffer(f.stream, block)
        buf.more(0, min(block, _HEAD))  # a pipe that is no document is not read far
        if buf.data.startswith(UTF8_BOM) and buf.n >= 3:
            buf.drop(3)
        pos = buf.skip(0)
        first = buf.data[pos]
        doc = (_load_object if first == 123 else _load_list if first == 91 else None)
        if doc is None:
            raise Unproved
        top = doc(buf, pos, file)
        while True:  # only blanks may follow the document
            if not buf.blank_to_end(0):
                raise Unproved
            buf.n = 0
            try:
                buf.more(0)
            except Unproved:
                if buf.eof:
                    return top
                raise


def _rest(container) -> Any:
    """The members of ``container`` after its first, from the file (exact path)."""
    return (m for m in split_document(container.file) if m.path == container.path
            and m.text is not None and m.index > 0)


class FastDict(StreamedDict):
    """A StreamedDict read by the fast pass: holds its first member and the summary;
    iteration yields the held member, then reads the others from the file."""

    summary: Summary | None = None

    def items(self):  # type: ignore[override]
        (key, value), = dict.items(self)
        yield key, value
        seen = {key}
        for m in _rest(self):
            k, v = decode_member(self.file, m)
            if k in seen:
                raise ArchiveError(self.file, f"duplicate key {k!r} in $.{self.path[0]} (which "
                                   "one counts is ambiguous)", line=m.line)
            seen.add(k)
            yield k, v


class FastList(StreamedList):
    """A StreamedList read by the fast pass (see FastDict)."""

    summary: Summary | None = None

    def __iter__(self):
        yield list.__getitem__(self, 0)
        for m in _rest(self):
            yield decode_member(self.file, m)[1]
