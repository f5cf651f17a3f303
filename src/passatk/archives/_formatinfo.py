"""The archive formats: names, aliases and how each is detected (plain data, cheap to import).

``passatk formats`` and argument checks read this without loading any reader.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FORMATS", "FormatInfo", "canonical_format", "formats"]


@dataclass(frozen=True)
class FormatInfo:
    """One supported archive format.

    Attributes
    ----------
    name : str
        The name to pass as ``format=`` (``--input-format`` on the command line).
    harness : str
        The tool that writes it.
    files : str
        The usual file names.
    detection : str
        How it is recognized without ``format=``.
    passes : str
        What counts as a pass, and how (n, c) per task follow.
    metric : str
        ``"pass@k"`` or ``"pass^k"``.
    """

    name: str
    harness: str
    files: str
    detection: str
    passes: str
    metric: str = "pass@k"


FORMATS: dict[str, FormatInfo] = {
    f.name: f
    for f in (
        FormatInfo(
            "humaneval", "openai/human-eval", "*_results.jsonl[.gz|.zst]",
            'JSON Lines whose first record has "task_id", "passed", and "result" or '
            '"completion" (with a non-boolean flag and neither "result" nor a *_results.jsonl '
            'name it is a per-sample table)',
            'one line per sample; pass = "passed" is true (pass flags: true/false, 1/0, '
            '1.0/0.0)'),
        FormatInfo(
            "evalplus", "EvalPlus (v1, v2, v3)", "eval_results.json",
            'JSON document with "eval" mapping tasks to {"base": ...} (v1) or to lists of '
            'samples with "base_status" (v2; v3 adds "pass_at_k")',
            'group metric_set=base: base status pass (v1 success); metric_set=plus: base and '
            'plus both pass; base-only runs give only base'),
        FormatInfo(
            "bigcodebench", "BigCodeBench", "*_eval_results.json (+ *_pass_at_k.json)",
            'JSON document with "eval" mapping tasks to lists of samples with "status"',
            'status "pass"'),
        FormatInfo(
            "multipl-e", "MultiPL-E", "<problem>.results.json[.gz], a directory per run",
            'JSON document with "name" and a "results" list',
            'status "OK" and exit_code 0; the task is "name"'),
        FormatInfo(
            "lm-eval", "lm-evaluation-harness",
            "samples_<task>_<date>.jsonl (+ results_<date>.json)",
            'JSON Lines whose first record has "doc_id" and "resps"',
            "c = round(pass@1 * n), n = number of responses; grouped by lm_eval_task and filter"),
        FormatInfo(
            "livecodebench", "LiveCodeBench", "*_eval_all.json",
            'JSON list of problems with "graded_list"',
            "true entries of graded_list; filters: since, until (contest_date), difficulty"),
        FormatInfo(
            "opencompass", "OpenCompass", "results JSON per (model, dataset)",
            'JSON document with "details"',
            'one detail per sample: "passed" is a true pass flag; stored *pass@k in percent'),
        FormatInfo(
            "cruxeval", "CRUXEval", "scored generations JSON",
            'JSON document with "raw_scored_generations"',
            "each sample_<i> is a task with its list of pass flags; stored pass_at_k in percent"),
        FormatInfo(
            "code-eval", "human-eval / HF code_eval result dict (DeepSeek-Coder, Qwen2.5-Coder)",
            "humaneval-<lang>-details.json",
            'JSON document mapping tasks to lists of [completion_id, {"passed": ...}] pairs',
            'one pair per sample; pass = "passed" is a true pass flag'),
        FormatInfo(
            "qwen-math", "Qwen2.5-Math evaluation (SimpleRL-Zoo, SkyThought, ...)",
            "<split>_<prompt>_..._e-1.jsonl (+ *_metrics.json)",
            'JSON Lines whose first record has "idx", a "score" list and "gt" or "pred"',
            "score is one pass flag per sample: n = its length, c = its true entries"),
        FormatInfo(
            "tau-bench", "tau-bench", "results JSON (list of trials)",
            'JSON list of trials with "task_id" and "reward"',
            "a trial succeeds when |reward - 1| <= 1e-6; n counted per task", "pass^k"),
        FormatInfo(
            "counts", "any (the interchange format)", "*.jsonl, *.csv, *.tsv, *.parquet",
            "a table with a task column (task_id, task or id) and columns n and c",
            "one row per (group, task); c <= n, no duplicate rows"),
        FormatInfo(
            "samples", "training logs, custom harnesses", "*.jsonl, *.csv, *.tsv, *.parquet",
            "a table with a task column and a pass flag (passed, pass, correct, is_correct, "
            "success) or a reward column (with threshold=)",
            "one row per sample; flag true/1, or reward >= threshold"),
    )
}

_ALIASES = {
    "human-eval": "humaneval", "human_eval": "humaneval", "multiple": "multipl-e",
    "multipl_e": "multipl-e", "lm-evaluation-harness": "lm-eval", "lm_eval": "lm-eval",
    "lcb": "livecodebench", "taubench": "tau-bench", "tau_bench": "tau-bench",
    "code_eval": "code-eval", "qwen_math": "qwen-math", "qwen2.5-math": "qwen-math",
    "count-table": "counts", "sample-table": "samples", "per-sample": "samples",
}

def canonical_format(name: str) -> str:
    """The registry name for ``name`` (aliases such as ``human-eval`` are accepted)."""
    if not isinstance(name, str):
        raise TypeError(f"format must be a str, got {type(name).__name__}")
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    if key not in FORMATS:
        raise ValueError(f"format must be one of {sorted(FORMATS)}, got {name!r}")
    return key


def formats() -> list[FormatInfo]:
    """The supported archive formats and how each is detected (for ``passatk formats``).

    Examples
    --------
    >>> [f.name for f in formats()][:3]
    ['humaneval', 'evalplus', 'bigcodebench']
    >>> formats()[-3].metric
    'pass^k'
    """
    return list(FORMATS.values())
