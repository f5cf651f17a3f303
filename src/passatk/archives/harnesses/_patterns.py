"""The regular expressions the readers share: pass@k keys of stored numbers, dates."""

import re
from collections.abc import Iterator, Mapping

PASS_AT = re.compile(r"pass@([1-9][0-9]*)\Z")  # EvalPlus, BigCodeBench
PASS_UNDERSCORE_AT = re.compile(r"pass_at_([1-9][0-9]*)\Z")  # CRUXEval
PREFIXED_PASS_AT = re.compile(r"(?:.*_)?pass@([1-9][0-9]*)\Z")  # OpenCompass humaneval_pass@1
#: any of them in a summary file, or lm-eval's pass@1,create_test
SUMMARY_PASS_KEY = re.compile(
    r"(?:(?P<pre>.+?)[_/ ])?pass(?:@|_at_)(?P<k>[1-9][0-9]*)(?:,(?P<post>.+))?\Z", re.IGNORECASE)
DATE = re.compile(r"\d{4}-\d{2}-\d{2}")  # YYYY-MM-DD (match: at the start of a text)

def stored_numbers(doc: Mapping, pattern: re.Pattern) -> Iterator[tuple[str, int, object]]:
    """``(key, k, value)`` for each numeric member whose key ``pattern`` matches (k: group 1)."""
    for key, value in doc.items():
        if (m := pattern.match(key)) and type(value) in (int, float):
            yield key, int(m.group(1)), value
