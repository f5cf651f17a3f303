"""MultiPL-E: one ``<problem>.results.json[.gz]`` per problem, a directory per run; the task is
``name``; a sample passes when its status is ``"OK"`` and its exit code 0."""

import os
import re
from typing import Any

from passatk.archives.context import BadRecord, Context, document_group, require, task_id
from passatk.archives.errors import ArchiveError, kind, show
from passatk.archives.harnesses._flags import count_tasks
from passatk.archives.harnesses._typed import fatal
from passatk.archives.harnesses._writers import WriteOptions, dump_json
from passatk.archives.harnesses.registry import FormatInfo, FormatSpec, register


def _check(task: str, r: object) -> tuple[bool, object]:
    if not isinstance(r, dict):
        raise BadRecord(f"sample must be an object, got {kind(r)}")
    if not isinstance(r.get("status"), str):
        raise BadRecord(f"status must be a string, got {show(r.get('status'))}", ("status",))
    code = r.get("exit_code")
    if code is not None and (isinstance(code, bool) or not isinstance(code, int)):
        raise BadRecord(f"exit_code must be an integer or null, got {show(code)}",
                        ("exit_code",))
    return r["status"] == "OK" and code == 0, r.get("stderr")

def read(file: str, ctx: Context, doc: dict) -> None:
    ctx.set_metric("pass@k", file)
    with fatal(file, ()):
        task = task_id(require(doc, "name"), "name")
    group = document_group(file, ctx, doc)
    results = doc.get("results")
    if not isinstance(results, list) or not results:
        raise ArchiveError(file, "no samples under $.results", path=("results",))
    count_tasks(file, ctx, group, os.path.dirname(file) or ".",  # the directory is the run
                [(("results",), task, results)], Any, _check, _check)  # plain, as BigCodeBench

def write(path: str, tasks: list, flags: list, opts: WriteOptions) -> list[str]:
    os.makedirs(path, exist_ok=True)
    return [file for t, p in zip(tasks, flags, strict=True) for file in dump_json(
        os.path.join(path, re.sub(r"[^A-Za-z0-9_.-]", "_", t) + ".results.json"),
        {"name": t, "language": "py", "temperature": 0.2, "prompt": "def f():\n",
         "tests": "assert f()\n", "results": [
             {"program": f"def f():\n    return {j}\n", "timestamp": 0, "stdout": "",
              "stderr": "" if x else "AssertionError", "exit_code": 0 if x else 1,
              "status": "OK" if x else "Exception"} for j, x in enumerate(p)]})]

SPEC = register(FormatSpec(FormatInfo(
    "multipl-e", "MultiPL-E", "<problem>.results.json[.gz], a directory per run",
    'JSON document with "name" and a "results" list',
    'status "OK" and exit_code 0; the task is "name"'),
    kind="document", read=read, write=write,
    probe=lambda doc, file: (isinstance(doc, dict) and isinstance(doc.get("results"), list)
                             and "name" in doc and "eval" not in doc),
    aliases=("multiple", "multipl_e"), per_directory=True))
