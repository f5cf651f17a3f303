"""OpenCompass results JSON with per-sample ``details``; stored ``*pass@k`` numbers in percent."""

from __future__ import annotations

import re

from . import _hints as hints
from ._common import (
    BadRecord,
    Context,
    doc_scalar_record,
    group_from,
    path_groups,
    require,
    task_id,
)
from ._counts import StoredMetric
from ._errors import ArchiveError, location
from ._flags import pass_flag

_PASS_KEY = re.compile(r"(?:.*_)?pass@([1-9][0-9]*)\Z")


def matches(doc: object) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("details"), (dict, list))


def read(file: str, ctx: Context, doc: dict) -> None:
    ctx.set_metric("pass@k", file)
    by = ctx.options.by
    pathvals = path_groups(by, file)
    top = doc_scalar_record(doc)
    details = doc.get("details")
    if not details:
        raise ArchiveError(file, "no samples under $.details", path=("details",))
    items = details.items() if isinstance(details, dict) else enumerate(details)
    groups = set()
    failures = hints.failures(ctx, file)
    for key, d in items:
        try:
            if not isinstance(d, dict):
                raise BadRecord(f"must be an object, got {type(d).__name__}")
            task = task_id(require(d, "task_id"))
            passed = pass_flag(require(d, "passed"), 'field "passed"')
            group = group_from(by, pathvals, {**top, **d})
        except BadRecord as e:
            ctx.bad(file, e.what, path=("details", key))
            continue
        groups.add(group)
        ctx.add(group, task, 1, int(passed))
        failures.add(passed, d.get("result"))
    for key, value in doc.items():
        m = _PASS_KEY.match(key)
        if m and isinstance(value, (int, float)) and not isinstance(value, bool):
            for group in sorted(groups, key=repr) or [()]:
                ctx.stored.append(StoredMetric(group, "pass@k", int(m.group(1)), value / 100.0,
                                               location(file, path=(key,)), "percent"))
