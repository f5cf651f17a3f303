"""human-eval ``*_results.jsonl``: one JSON object per sample.

Each block of whole lines (``io.lines``) is decoded at once by msgspec into a view of the
three fields the reader uses (the completion is skipped unread), and the block's pass flags go
through the one converter (``_flags.all_flags``). A block that msgspec or the converter
refuses is read line by line by ``json`` (``parse_json_line``), which names each bad line.
With group fields from the records (``by=["model"]``) each block is decoded as JSON objects.
Measured in docs/benchmarks.md ("Issue 19: JSON Lines").
"""

from __future__ import annotations

import json
from collections import Counter
from functools import lru_cache
from itertools import compress
from operator import attrgetter
from typing import Any

from passatk.archives.context import (
    BadRecord,
    Context,
    block_lines,
    group_from,
    line_blocks,
    number_records,
    parse_json_line,
    path_groups,
    require,
    task_id,
)
from passatk.archives.errors import ArchiveError
from passatk.archives.harnesses import _hints as hints
from passatk.archives.harnesses._flags import Flag, all_flags, pass_flag
from passatk.archives.harnesses._writers import WriteOptions, atomic_stream
from passatk.archives.harnesses.registry import FormatInfo, FormatSpec, register
from passatk.archives.io.opening import logical_name

_TASK, _PASSED = attrgetter("task_id"), attrgetter("passed")


@lru_cache(maxsize=2)
def _decoder(texts: bool):
    """msgspec's decoder of the view: the fields read, of the types a sample may hold; with
    ``texts``, the error text too (compared while every failed sample's is the same)."""
    import msgspec

    fields = [("task_id", str | int), ("passed", Flag)]
    return msgspec.json.Decoder(msgspec.defstruct(
        "View", fields + [("result", Any, None)] * texts, gc=False))


class _Sink:
    """The counts of one file, its skips and its failure texts."""

    def __init__(self, file: str, ctx: Context) -> None:
        self.file, self.ctx, self.opts = file, ctx, ctx.options
        self.pathvals = path_groups(self.opts.by, file)
        self.group = None if self.opts.record_by else tuple(
            (b, self.pathvals[b]) for b in self.opts.by)
        self.records = 0
        self.failures = hints.failures(ctx, file)

    def block(self, lineno: int, block: bytes) -> None:
        """The non-blank lines of ``block``, which follows line ``lineno``."""
        from passatk.archives.io.lines import decode, objects

        if self.group is not None:
            views = decode(_decoder(self.failures.same), block)
            if views is not None and self.views(views):
                return
        else:
            records = objects(block)
            if records is not None:
                for n, obj in number_records(lineno, block, records):
                    self.record(n, obj)
                return
        for n, line in block_lines(self.file, lineno, block):  # json, line by line
            try:
                obj = parse_json_line(self.file, n, line)
            except BadRecord as e:
                obj = e
            self.record(n, obj)

    def views(self, views: list) -> bool:
        """Count a block's views, or False (nothing counted) when the reader refuses one."""
        tasks, passed = list(map(_TASK, views)), list(map(_PASSED, views))
        if not all_flags(passed):
            return False
        n, c = Counter(tasks), Counter(compress(tasks, passed))
        try:
            ids = [t if type(t) is str else task_id(t) for t in n]
        except BadRecord:
            return False
        for t, key in zip(n, ids, strict=True):
            self.ctx.add(self.group, key, n[t], c[t])
        texts = ([v.result for v in compress(views, (not p for p in passed))]
                 if self.failures.same else [None] * (len(passed) - sum(c.values())))
        self.failures.add_all(len(passed), texts)  # once the texts differ, none is looked at
        self.records += len(views)
        return True

    def record(self, lineno: int, obj: dict | BadRecord) -> None:
        try:
            if isinstance(obj, BadRecord):
                raise obj
            task = task_id(require(obj, "task_id"))
            passed = pass_flag(require(obj, "passed"), 'field "passed"')
            group = (group_from(self.opts.by, self.pathvals, obj) if self.group is None
                     else self.group)
        except BadRecord as e:
            self.ctx.bad(self.file, e.what, line=lineno)
            return
        self.failures.add(passed, obj.get("result"))
        self.ctx.add(group, task, 1, int(passed))
        self.records += 1


def read(file: str, ctx: Context) -> None:
    """Add the counts of one human-eval results file to ``ctx``."""
    ctx.set_metric("pass@k", file)
    sink = _Sink(file, ctx)
    skips_before = ctx.skip_count
    for lineno, block in line_blocks(file, ctx):
        sink.block(lineno, block)
    if sink.records == 0 and ctx.skip_count == skips_before:
        raise ArchiveError(file, "empty file (no records)")


def _default_completion(task: int, sample: int) -> str:
    return f"    return solution_{task}_{sample}()\n"


def write(path: str, tasks: list, flags: list, opts: WriteOptions) -> list[str]:
    completion = opts.completion or _default_completion
    with atomic_stream(path) as f:
        for i, (t, p) in enumerate(zip(tasks, flags, strict=True)):
            f.write(b"".join(json.dumps({"task_id": t, "completion": completion(i, j),
                                         "result": "passed" if x else "failed: ",
                                         "passed": x}).encode() + b"\n"
                             for j, x in enumerate(p)))
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
