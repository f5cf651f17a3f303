"""The one pass-flag rule, and the readers' loops over typed msgspec views (what a view refuses
is read again by plain checks that name the bad record)."""

from collections.abc import Callable, Iterable
from typing import Any

import msgspec

from passatk.archives import context as cx
from passatk.archives.errors import ArchiveError, show
from passatk.archives.harnesses import _hints as hints
from passatk.archives.io import lines
from passatk.errors import Message, Option

RULE = "a pass flag (true/false, 1/0, 1.0/0.0)"
Flag = bool | int | float  # a flag field of a view; its values are checked by all_flags

def all_flags(values: list) -> bool:
    """Whether every value is a pass flag (1 == 1.0 == True; NaN is none)."""
    return values.count(True) + values.count(False) == len(values)

def is_flag(value: object) -> bool:
    return isinstance(value, bool) or (isinstance(value, (int, float)) and value in (0, 1))

def pass_flag(value: object, name: str = "", threshold: bool = False) -> bool:
    """``value`` as a pass flag, or BadRecord naming ``name`` (``threshold``: the reader takes
    one, so a number that is not a flag is told to give it)."""
    if is_flag(value):
        return value == 1
    what = f"{name + ' ' if name else ''}must be {RULE}, got {show(value)}"
    if threshold and isinstance(value, (int, float)) and not isinstance(value, bool):
        raise cx.BadRecord(Message(f"{what}; give ", Option("threshold"), " to read it as a "
                                   "reward"))
    raise cx.BadRecord(what)

class Lines:
    """A JSON Lines reader: a block decoded by :meth:`view`'s decoder, counted by ``views``
    (False: refused), else record by record through ``count`` (the bad line named)."""

    view: Callable[[], msgspec.json.Decoder | None]
    views: Callable[[list], bool]
    count: Callable[[dict], None]

    def __init__(self, file: str, ctx: cx.Context) -> None:
        self.file, self.ctx, self.opts = file, ctx, ctx.options
        self.pathvals = cx.path_groups(self.opts.by, file)
        self.records, by = 0, self.opts.by  # group: of every line, when no record field is in by
        self.group = None if self.opts.record_by else cx.group_from(by, self.pathvals, None)
        self.groups: dict = {}  # group -> the most samples of a task (by add)

    def add(self, group: tuple, task: str, n: int, c: int) -> None:
        self.groups[group] = max(self.groups.get(group, 0), n)
        self.ctx.add(group, task, n, c)

    def block(self, lineno: int, block: bytes) -> None:
        dec = self.view()
        values = lines.decode(dec or lines.decoder(Any), block)
        if dec is not None and values is not None and self.views(values):
            self.records += len(values)
            return
        records = (cx.number_records(lineno, block, values) if dec is None and values is not None
                   and all(type(v) is dict for v in values)
                   else cx.block_lines(self.file, lineno, block))  # json, line by line
        for n, rec in records:
            try:
                self.count(rec if type(rec) is dict else cx.parse_json_line(self.file, n, rec))
                self.records += 1
            except cx.BadRecord as e:
                self.ctx.bad(self.file, e.what, line=n)

    def read(self) -> None:
        self.ctx.set_metric("pass@k", self.file)
        skips = self.ctx.skip_count
        for lineno, block in cx.line_blocks(self.file, self.ctx):
            self.block(lineno, block)
        if self.records == 0 and self.ctx.skip_count == skips:
            raise ArchiveError(self.file, "empty file (no records)")

def count_tasks(file: str, ctx: cx.Context, group: tuple, archive: str, tasks: Iterable,
                typ: object, row: Callable, check: Callable) -> None:
    """Count each ``(path, task, samples)``: as ``list[typ]``, each ``row(task, sample)`` ->
    (passed, failure text); a list refused goes through ``check`` sample by sample."""
    failures = hints.failures(ctx, archive)
    for path, task, samples in tasks:
        try:
            rows = [row(task, s) for s in msgspec.convert(samples, list[typ])]
        except (msgspec.ValidationError, cx.BadRecord):
            rows = []
            for i, s in enumerate(samples):
                try:
                    rows.append(check(task, s))
                except cx.BadRecord as e:
                    ctx.bad(file, e.what, path=(*path, i, *(e.path or ())))
        failures.add_all(len(rows), [text for passed, text in rows if not passed])
        if rows:
            ctx.add(group, task, len(rows), sum(p for p, _ in rows))
