"""The one pass-flag rule (true/false, or a number exactly 0 or 1), and the JSON Lines loop of
the line readers: each block of whole lines decoded at once by a typed msgspec view, a block it
refuses read again line by line by ``json``, which names the bad line (docs/architecture.md)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import msgspec

from passatk.archives.context import (
    BadRecord,
    Context,
    block_lines,
    line_blocks,
    number_records,
    parse_json_line,
    path_groups,
)
from passatk.archives.errors import ArchiveError, show
from passatk.archives.harnesses import _hints as hints
from passatk.archives.io import lines
from passatk.errors import Message, Option

RULE = "a pass flag (true/false, 1/0, 1.0/0.0)"
#: the type of a pass flag field in a msgspec view (a value is checked by :func:`all_flags`)
Flag = bool | int | float


def all_flags(values: list) -> bool:
    """Whether every value is a pass flag (1 == 1.0 == True).

    >>> all_flags([True, 0, 1.0, -0.0]), all_flags([True, 0.5]), all_flags([float("nan")])
    (True, False, False)
    """
    return values.count(True) + values.count(False) == len(values)


def is_flag(value: object) -> bool:
    """Whether ``value`` is a pass flag.

    >>> [is_flag(v) for v in (True, 0, 1.0, 0.5, 2, "1", None)]
    [True, True, True, False, False, False, False]
    """
    return isinstance(value, bool) or (isinstance(value, (int, float)) and value in (0, 1))


def pass_flag(value: object, name: str = "", threshold: bool = False) -> bool:
    """``value`` as a pass flag, or BadRecord naming ``name``; ``threshold``: the reader takes
    a threshold, so a number that is not a flag is told to give one.

    >>> pass_flag(1.0, 'field "passed"'), pass_flag(0, 'field "passed"')
    (True, False)
    >>> try:
    ...     pass_flag(0.5, 'field "passed"')
    ... except BadRecord as e:
    ...     print(e.what)
    field "passed" must be a pass flag (true/false, 1/0, 1.0/0.0), got 0.5
    """
    if is_flag(value):
        return value == 1
    what = f"{name} must be" if name else "must be"
    what = f"{what} {RULE}, got {show(value)}"
    if threshold and isinstance(value, (int, float)) and not isinstance(value, bool):
        raise BadRecord(Message(f"{what}; give ", Option("threshold"), " to read it as a reward"))
    raise BadRecord(what)


class Lines:
    """A JSON Lines reader: :meth:`view` (a typed decoder, or None: plain objects) decodes a
    block, :meth:`views` counts it (False: it counted nothing, the block goes line by line),
    :meth:`count` counts one record (a dict), raising BadRecord."""

    def __init__(self, file: str, ctx: Context) -> None:
        self.file, self.ctx, self.opts = file, ctx, ctx.options
        self.pathvals = path_groups(self.opts.by, file)
        self.records = 0

    def view(self) -> Any:
        return None

    def views(self, values: list) -> bool:
        return False

    def count(self, rec: dict) -> None:
        raise NotImplementedError

    def record(self, lineno: int, rec: dict | BadRecord) -> None:
        try:
            if isinstance(rec, BadRecord):
                raise rec
            self.count(rec)
        except BadRecord as e:
            self.ctx.bad(self.file, e.what, line=lineno)
            return
        self.records += 1

    def block(self, lineno: int, block: bytes) -> None:
        dec = self.view()
        values = lines.decode(dec or lines.decoder(Any), block)
        if values is not None and dec is not None and self.views(values):
            self.records += len(values)
            return
        if values is not None and dec is None and all(type(v) is dict for v in values):
            for n, rec in number_records(lineno, block, values):
                self.record(n, rec)
            return
        for n, line in block_lines(self.file, lineno, block):
            try:
                rec = parse_json_line(self.file, n, line)
            except BadRecord as e:
                rec = e
            self.record(n, rec)

    def read(self) -> None:
        self.ctx.set_metric("pass@k", self.file)
        skips = self.ctx.skip_count
        for lineno, block in line_blocks(self.file, self.ctx):
            self.block(lineno, block)
        if self.records == 0 and self.ctx.skip_count == skips:
            raise ArchiveError(self.file, "empty file (no records)")


def count_tasks(file: str, ctx: Context, group: tuple, archive: str, tasks: Iterable,
                typ: object, row: Callable, check: Callable) -> None:
    """Count each ``(path, task, samples)`` of a document: the samples converted to the typed
    view ``list[typ]`` at once, each made ``(passed, failure text)`` by ``row(task, sample)``;
    a list refused (by msgspec or ``row``) goes sample by sample through ``check(task, value)``,
    whose BadRecord skips the one sample (the failure texts are those of ``archive``)."""
    failures = hints.failures(ctx, archive)
    for path, task, samples in tasks:
        try:
            rows = [row(task, s) for s in msgspec.convert(samples, list[typ])]
        except (msgspec.ValidationError, BadRecord):
            rows = []
            for i, s in enumerate(samples):
                try:
                    rows.append(check(task, s))
                except BadRecord as e:
                    ctx.bad(file, e.what, path=(*path, i, *(e.path or ())))
        for passed, text in rows:
            failures.add(passed, text)
        if rows:
            ctx.add(group, task, len(rows), sum(p for p, _ in rows))
