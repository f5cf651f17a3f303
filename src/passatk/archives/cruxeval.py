"""CRUXEval scored generations: ``raw_scored_generations`` maps ``sample_<i>`` to booleans.

Stored ``pass_at_1`` / ``pass_at_5`` are in percent.
"""

from __future__ import annotations

import re

from ._common import Context, document_group
from ._counts import StoredMetric
from ._errors import ArchiveError, location, show
from ._flags import RULE, is_flag

_PASS_KEY = re.compile(r"pass_at_([1-9][0-9]*)\Z")


def matches(doc: object) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("raw_scored_generations"), dict)


def read(file: str, ctx: Context, doc: dict) -> None:
    ctx.set_metric("pass@k", file)
    group = document_group(file, ctx, doc)
    scored = doc["raw_scored_generations"]
    if not scored:
        raise ArchiveError(file, "no tasks under $.raw_scored_generations",
                           path=("raw_scored_generations",))
    for task, flags in scored.items():
        if not isinstance(flags, list) or not flags:
            ctx.bad(file, f"must be a non-empty list of pass flags, got {show(flags)}",
                    path=("raw_scored_generations", task))
            continue
        bad = next((i for i, f in enumerate(flags) if not is_flag(f)), None)
        if bad is not None:
            ctx.bad(file, f"must be {RULE}, got {show(flags[bad])}",
                    path=("raw_scored_generations", task, bad))
            continue
        ctx.add(group, task, len(flags), sum(f == 1 for f in flags))
    for key, value in doc.items():
        m = _PASS_KEY.match(key)
        if m and isinstance(value, (int, float)) and not isinstance(value, bool):
            ctx.stored.append(StoredMetric(group, "pass@k", int(m.group(1)), value / 100.0,
                                           location(file, path=(key,)), "percent"))
