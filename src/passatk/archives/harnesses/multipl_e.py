"""MultiPL-E: one ``<problem>.results.json`` (or ``.json.gz``) per problem; a directory is a run.

The task is the file's ``name``. A sample passes when its status is ``"OK"`` and its exit code 0.
Group fields may come from the file's top-level fields (``language``, ``temperature``).
"""

from __future__ import annotations

import os
import re

from passatk.archives.context import (
    BadRecord,
    Context,
    doc_scalar_record,
    group_from,
    path_groups,
    task_id,
)
from passatk.archives.errors import ArchiveError, kind, show
from passatk.archives.harnesses import _hints as hints
from passatk.archives.harnesses._writers import WriteOptions, dump_json
from passatk.archives.harnesses.registry import FormatInfo, FormatSpec, register


def matches(doc: object, file: str = "") -> bool:
    return (isinstance(doc, dict) and isinstance(doc.get("results"), list)
            and "name" in doc and "eval" not in doc)


def read(file: str, ctx: Context, doc: dict) -> None:
    ctx.set_metric("pass@k", file)
    by = ctx.options.by
    try:
        if "name" not in doc:
            raise BadRecord('missing field "name"')
        task = task_id(doc["name"], "name")
        group = group_from(by, path_groups(by, file), doc_scalar_record(doc), (), "document")
    except BadRecord as e:
        raise ArchiveError(file, e.what, path=()) from None
    results = doc.get("results")
    if not isinstance(results, list) or not results:
        raise ArchiveError(file, "no samples under $.results", path=("results",))
    n = c = 0
    failures = hints.failures(ctx, os.path.dirname(file) or ".")  # the directory is the run
    for i, r in enumerate(results):
        if not isinstance(r, dict):
            ctx.bad(file, f"sample must be an object, got {kind(r)}", path=("results", i))
            continue
        if not isinstance(r.get("status"), str):
            ctx.bad(file, f"status must be a string, got {show(r.get('status'))}",
                    path=("results", i, "status"))
            continue
        code = r.get("exit_code")
        if code is not None and (isinstance(code, bool) or not isinstance(code, int)):
            ctx.bad(file, f"exit_code must be an integer or null, got {show(code)}",
                    path=("results", i, "exit_code"))
            continue
        n += 1
        passed = r["status"] == "OK" and code == 0
        c += passed
        failures.add(passed, r.get("stderr"))
    if n:
        ctx.add(group, task, n, c)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def write(path: str, tasks: list, flags: list, opts: WriteOptions) -> list[str]:
    os.makedirs(path, exist_ok=True)
    out = []
    for t, p in zip(tasks, flags, strict=True):
        doc = {"name": t, "language": "py", "temperature": 0.2, "prompt": "def f():\n",
               "tests": "assert f()\n", "results": [
                   {"program": f"def f():\n    return {j}\n", "timestamp": 0,
                    "stdout": "", "stderr": "" if x else "AssertionError",
                    "exit_code": 0 if x else 1, "status": "OK" if x else "Exception"}
                   for j, x in enumerate(p)]}
        f = os.path.join(path, f"{_safe(t)}.results.json")
        dump_json(f, doc)
        out.append(f)
    return out


SPEC = register(FormatSpec(
    FormatInfo(
        "multipl-e", "MultiPL-E", "<problem>.results.json[.gz], a directory per run",
        'JSON document with "name" and a "results" list',
        'status "OK" and exit_code 0; the task is "name"'),
    kind="document", read=read, write=write, probe=matches,
    aliases=("multiple", "multipl_e"), per_directory=True,
))
