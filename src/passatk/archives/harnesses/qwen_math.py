"""The Qwen2.5-Math evaluation JSONL (also SimpleRL-Zoo, SkyThought, many RL repositories): one
line per problem, ``idx`` and ``score``, one pass flag per sample: n = len(score), c = its trues.
Stored, from the ``<stem>_<prompt_type>_metrics.json`` beside it (percent): ``pass@k``, and
``acc`` (of each problem's first sample) as pass@1 when every problem has one sample."""

import os

import msgspec

from passatk.archives.context import BadRecord, Context, group_from, load_sidecar, require, task_id
from passatk.archives.errors import show
from passatk.archives.harnesses._flags import RULE, Flag, Lines, all_flags, is_flag
from passatk.archives.harnesses._typed import means, store
from passatk.archives.harnesses._writers import WriteOptions, dump_json, dump_lines
from passatk.archives.harnesses._writers import mean_pass_at_k as mean
from passatk.archives.harnesses.registry import FormatInfo, FormatSpec, register
from passatk.archives.io.opening import list_names, logical_name


class _View(msgspec.Struct, gc=False):
    idx: str | int
    score: list[Flag]

class _Reader(Lines):
    def view(self) -> msgspec.json.Decoder | None:
        return None if self.group is None else _DECODER

    def views(self, views: list) -> bool:
        if not all(v.score and all_flags(v.score) for v in views):
            return False
        for v in views:  # (msgspec refuses integers past 64 bits: task_id cannot fail here)
            self.add(self.group, task_id(v.idx, "idx"), len(v.score), v.score.count(True))
        return True

    def count(self, rec: dict) -> None:
        task = task_id(require(rec, "idx"), "idx")
        score = require(rec, "score")
        if not isinstance(score, list) or not score:
            raise BadRecord('field "score" must be a non-empty list of pass flags, got '
                            f"{show(score)}")
        for i, x in enumerate(score):
            if not is_flag(x):
                raise BadRecord(f'field "score": each sample must be {RULE}, got {show(x)} '
                                f"(sample {i})")
        self.add(group_from(self.opts.by, self.pathvals, rec), task, len(score), score.count(True))

_DECODER = msgspec.json.Decoder(_View)

def read(file: str, ctx: Context) -> None:
    reader = _Reader(file, ctx)
    reader.read()
    path = metrics_file(file) if len(reader.groups) == 1 else None
    doc = None if path is None else load_sidecar(path)
    if not isinstance(doc, dict):
        return
    ctx.sidecars.add(os.path.normpath(path))
    (group, max_n), = reader.groups.items()
    per_k = doc.get("pass@k") if isinstance(doc.get("pass@k"), dict) else {}
    found = [(1, doc.get("acc"), ("acc",))] * (max_n == 1) + [
        (int(k), v, ("pass@k", k)) for k, v in per_k.items() if k.isdigit() and int(k) >= 1]
    for k, value, where in found:
        if type(value) in (int, float) and 0 <= value <= 100:
            store(ctx, path, group, k, value, where, "percent")

def metrics_file(file: str) -> str | None:
    """The one ``<stem>_*_metrics.json`` beside ``<stem>.jsonl``, if there is exactly one."""
    name = logical_name(file)
    if not name.endswith(".jsonl"):
        return None
    found = [f for f in list_names(os.path.dirname(file) or ".")
             if f.startswith(name[:-len(".jsonl")] + "_") and f.endswith("_metrics.json")]
    return os.path.join(os.path.dirname(file), found[0]) if len(found) == 1 else None

def write(path: str, tasks: list, flags: list, opts: WriteOptions) -> list[str]:
    written = dump_lines(path, ({"idx": int(t) if t.isdigit() else t, "question": f"problem {t}",
                                 "gt": "1", "pred": ["1" if x else "0" for x in p], "score": p}
                                for t, p in zip(tasks, flags, strict=True)))
    name = logical_name(path)
    if not (opts.stored and name.endswith(".jsonl")):
        return written
    side = os.path.join(os.path.dirname(path), name.removesuffix(".jsonl") + "_cot_metrics.json")
    return written + dump_json(side, {
        "num_samples": len(tasks), "num_scores": sum(map(len, flags)), "timeout_samples": 0,
        "empty_samples": 0, **({"acc": 100 * mean(flags, 1)} if max(map(len, flags)) == 1 else {}),
        "pass@k": means(flags, (1, 2, 4, 8), "{}", 100)})

SPEC = register(FormatSpec(FormatInfo(
    "qwen-math", "Qwen2.5-Math evaluation (SimpleRL-Zoo, SkyThought, ...)",
    "<split>_<prompt>_..._e-1.jsonl (+ *_metrics.json)",
    'JSON Lines whose first record has "idx", a "score" list and "gt" or "pred"',
    "score is one pass flag per sample: n = its length, c = its true entries"),
    kind="lines", read=read, write=write,
    probe=lambda record, file: (isinstance(record, dict) and "idx" in record
                                and isinstance(record.get("score"), list)
                                and ("gt" in record or "pred" in record)),
    aliases=("qwen_math", "qwen2.5-math"), priority=3))  # before humaneval, after lm-eval
