"""The human-eval / Hugging Face ``code_eval`` result dict, as DeepSeek-Coder-derived harnesses
dump it (Qwen2.5-Coder's ``humaneval-<lang>-details.json``): each key a task, each
``[completion_id, {"task_id": ..., "passed": true, ...}]`` pair one sample."""

from typing import Any

from passatk.archives.context import BadRecord, Context, document_group, require
from passatk.archives.errors import ArchiveError, show
from passatk.archives.harnesses._flags import count_tasks, pass_flag
from passatk.archives.harnesses._writers import WriteOptions, dump_json
from passatk.archives.harnesses.registry import FormatInfo, FormatSpec, register


def _pair(item: object) -> bool:
    return (isinstance(item, list) and len(item) == 2 and isinstance(item[1], dict)
            and "passed" in item[1])

def matches(doc: object, file: str = "") -> bool:
    first = next(iter(doc.values()), None) if isinstance(doc, dict) else None
    return isinstance(first, list) and bool(first) and _pair(first[0])

def _check(task: str, item: object) -> tuple[bool, object]:
    if not _pair(item):
        raise BadRecord(f'must be [completion_id, {{..., "passed": ...}}], got {show(item)}')
    result = item[1]
    if "task_id" in result and str(result["task_id"]) != task:
        raise BadRecord(f"task_id {show(result['task_id'])} differs from its key {task!r}",
                        (1, "task_id"))
    try:
        return pass_flag(require(result, "passed"), 'field "passed"'), result.get("result")
    except BadRecord as e:
        raise BadRecord(e.what, (1, "passed")) from None

def _tasks(file: str, ctx: Context, doc: dict):
    for task, items in doc.items():
        if isinstance(items, list) and items:
            yield (task,), task, items
        else:
            ctx.bad(file, "must be a non-empty list of [completion_id, result] pairs, got "
                    f"{show(items)}", path=(task,))

def read(file: str, ctx: Context, doc: dict) -> None:
    ctx.set_metric("pass@k", file)
    group = document_group(file, ctx, {})
    if not doc:
        raise ArchiveError(file, "no tasks in the result dict", path=())
    # the plain document, sample by sample (a msgspec Struct copy of it measured no faster)
    count_tasks(file, ctx, group, file, _tasks(file, ctx, doc), Any, _check, _check)

def write(path: str, tasks: list, flags: list, opts: WriteOptions) -> list[str]:
    return dump_json(path, {t: [[j, {"task_id": t, "completion_id": j, "result": "passed" if x
                                     else "failed: ", "passed": x}] for j, x in enumerate(p)]
                            for t, p in zip(tasks, flags, strict=True)})

SPEC = register(FormatSpec(FormatInfo(
    "code-eval", "human-eval / HF code_eval result dict (DeepSeek-Coder, Qwen2.5-Coder)",
    "humaneval-<lang>-details.json",
    'JSON document mapping tasks to lists of [completion_id, {"passed": ...}] pairs',
    'one pair per sample; pass = "passed" is a true pass flag'),
    kind="document", read=read, write=write, probe=matches,
    aliases=("code_eval",), priority=-1))  # any dict of lists of pairs: after the others
