"""Format registry and detection from file name and content."""

from __future__ import annotations

import os
from dataclasses import dataclass

from . import (
    bigcodebench,
    code_eval,
    cruxeval,
    evalplus,
    livecodebench,
    lm_eval,
    multipl_e,
    opencompass,
    qwen_math,
    tables,
    taubench,
)
from ._common import BadRecord, Context, decode_json, load_json_document
from ._errors import ArchiveError
from ._sources import PARQUET_MAGIC, is_regular, logical_name, read_head

__all__ = [
    "FORMATS", "FormatInfo", "UnknownDocument", "canonical_format", "detect", "detect_format",
    "document_format", "formats",
]


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

JSON_DOCUMENT_FORMATS = {
    "evalplus": lambda d: evalplus.version(d) is not None,
    "bigcodebench": bigcodebench.matches,
    "cruxeval": cruxeval.matches,
    "livecodebench": livecodebench.matches,
    "tau-bench": taubench.matches,
    "multipl-e": multipl_e.matches,
    "opencompass": opencompass.matches,
    "code-eval": code_eval.matches,
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


def _first_line(head: bytes) -> tuple[int, bytes] | None:
    for i, line in enumerate(head.split(b"\n"), start=1):
        if line.strip():
            return i, line
    return None


def _line_format(record: dict, ctx: Context, file: str) -> str | None:
    if lm_eval.looks_like(record):
        return "lm-eval"
    if qwen_math.looks_like(record):
        return "qwen-math"
    has_text = "result" in record or "completion" in record
    if "task_id" in record and "passed" in record and has_text:
        # human-eval, unless the flag is 0/1 in a file not named like human-eval's output
        if (isinstance(record["passed"], bool) or "result" in record
                or logical_name(file).endswith("_results.jsonl")):
            return "humaneval"
    try:
        return tables.columns(list(record), None, ctx, file, strict=False)["kind"]
    except ArchiveError:
        return None


class UnknownDocument(ArchiveError):
    """A JSON document no reader recognizes (a summary, a config); ``doc`` is its content.

    A directory walk or a glob skips such files with a note; a file named explicitly raises.
    """

    def __init__(self, file: str, what: str, doc: object) -> None:
        super().__init__(file, what)
        self.doc = doc


def key_list(keys: list, shown: int = 10) -> str:
    """``['a', 'b']``, or ``['a', 'b'] and 3 more``: at most ``shown`` sorted keys.

    >>> key_list(list("abcdefghijkl"), 3)
    "['a', 'b', 'c'] and 9 more"
    """
    return tables.name_list(keys, shown, sort=True)


def document_format(file: str, doc: object) -> str:
    """The format of a parsed JSON document; UnknownDocument when no reader recognizes it."""
    for fmt, test in JSON_DOCUMENT_FORMATS.items():
        if test(doc):
            return fmt
    if isinstance(doc, dict) and isinstance(doc.get("results"), dict) and (
            "configs" in doc or "versions" in doc):
        raise UnknownDocument(file, "an lm-eval results file holds only aggregate numbers; "
                              "read the samples_*.jsonl files next to it", doc)
    if logical_name(file).endswith("_pass_at_k.json"):
        raise UnknownDocument(file, "a BigCodeBench pass@k file holds only aggregate numbers; "
                              "read the *_eval_results.json next to it", doc)
    keys = key_list(list(doc)) if isinstance(doc, dict) else type(doc).__name__
    raise UnknownDocument(file, f"cannot detect the format of this JSON document "
                          f"(top level: {keys}); pass format= (see passatk formats)", doc)


def detect_format(path: str | os.PathLike) -> str:
    """The format name of one file, detected from its name and content.

    Raises
    ------
    ArchiveError
        For an empty file or a format that cannot be detected.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "counts.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("task_id,n,c\\nHumanEval/0,10,3\\n")
    >>> detect_format(path)
    'counts'
    """
    return detect(os.fspath(path))[0]


def _as_lines(name: str, head: bytes, start: bytes) -> bool:
    """JSON Lines by name (.jsonl, .ndjson), or an unnamed file whose first line is an object."""
    if name.endswith((".jsonl", ".ndjson")):
        return True
    if name.endswith(".json") or start != b"{":
        return False
    first = _first_line(head)
    try:
        return first is not None and isinstance(decode_json(first[1]), dict)
    except BadRecord:
        return False


def _lines_format(file: str, head: bytes, ctx: Context) -> str:
    lineno, line = _first_line(head)
    try:
        record = decode_json(line)
    except BadRecord as e:
        hint = document_hint(file, head)
        if hint is not None:
            raise ArchiveError(file, hint) from None
        raise ArchiveError(file, e.what, line=lineno) from None
    fmt = _line_format(record, ctx, file) if isinstance(record, dict) else None
    if fmt is None:
        keys = key_list(list(record)) if isinstance(record, dict) else type(record).__name__
        raise ArchiveError(file, f"cannot detect the format of JSON Lines with keys {keys}; pass "
                           "format= (see passatk formats)", line=lineno)
    return fmt


def document_hint(file: str, head: bytes | None = None) -> str | None:
    """For a whole (pretty-printed) JSON document given as JSON Lines: what to do instead.

    None when the first line is a JSON value of its own, or the file is no JSON document.
    """
    if head is None and not is_regular(file):
        return None  # a pipe or device is read once, by the reader
    head = read_head(file, 1 << 16) if head is None else head
    first = _first_line(head)
    if first is None or not first[1].rstrip().endswith((b"{", b"[", b",")):
        return None  # not the opening line of an indented document: no whole-file parse
    try:
        decode_json(first[1])
        return None
    except BadRecord:
        pass
    try:
        doc = load_json_document(file)
    except ArchiveError:
        return None
    try:
        fmt = document_format(file, doc)
    except UnknownDocument:
        keys = key_list(list(doc)) if isinstance(doc, dict) else type(doc).__name__
        if logical_name(file).endswith(".json"):
            return ("this is a JSON document, not JSON Lines, and no reader recognizes it "
                    f"(top level: {keys})")
        return ("this is a JSON document, not JSON Lines; did you mean to name it .json? "
                f"(top level: {keys})")
    return f"this is a JSON document, not JSON Lines; did you mean format={fmt}?"


def detect(file: str, ctx: Context | None = None) -> tuple[str, object]:
    """Detect the format of one file: ``(name, parsed JSON document or None)``.

    Raises
    ------
    ArchiveError
        For an empty file or a format that cannot be detected.
    """
    from ._common import Options

    ctx = ctx or Context(Options())
    name = logical_name(file)
    head = read_head(file, 1 << 16)
    if not head.strip():
        raise ArchiveError(file, "empty file (no records)")
    if head[:4] == PARQUET_MAGIC or name.endswith((".csv", ".tsv", ".parquet", ".pq")):
        kind = tables.peek_kind(file, ctx)
        if kind is None:
            raise ArchiveError(
                file, "cannot detect the format: the table has neither n and c columns nor a "
                "pass flag or reward column; map columns (task=, n=, c=, passed=, reward=) or "
                "pass format="
            )
        return kind, None
    start = head.lstrip()[:1]
    if start in (b"{", b"["):
        if _as_lines(name, head, start):
            return _lines_format(file, head, ctx), None
        doc = load_json_document(file)
        return document_format(file, doc), doc
    kind = tables.peek_kind(file, ctx)
    if kind is not None:
        return kind, None
    raise ArchiveError(file, "cannot detect the format (not JSON, JSON Lines, CSV or Parquet "
                       "of a known kind); pass format= (see passatk formats)")
