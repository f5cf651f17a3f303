"""The regular expressions the readers share: pass@k keys of stored numbers, names, dates."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

#: ``pass@10`` (EvalPlus ``pass_at_k``, BigCodeBench ``*_pass_at_k.json``)
PASS_AT = re.compile(r"pass@([1-9][0-9]*)\Z")
#: ``pass_at_5`` (CRUXEval)
PASS_UNDERSCORE_AT = re.compile(r"pass_at_([1-9][0-9]*)\Z")
#: ``pass@1`` or ``humaneval_pass@1`` (OpenCompass)
PREFIXED_PASS_AT = re.compile(r"(?:.*_)?pass@([1-9][0-9]*)\Z")
#: any of the above in a summary file: pass@1, pass_at_1, humaneval_pass@1, pass@1,create_test
SUMMARY_PASS_KEY = re.compile(
    r"(?:(?P<pre>.+?)[_/ ])?pass(?:@|_at_)(?P<k>[1-9][0-9]*)(?:,(?P<post>.+))?\Z", re.IGNORECASE)
#: ``YYYY-MM-DD`` at the start of a text (match; fullmatch for a bare date)
DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def stored_numbers(doc: Mapping, pattern: re.Pattern) -> Iterator[tuple[str, int, object]]:
    """``(key, k, value)`` for each numeric member whose key ``pattern`` matches (k: group 1).

    >>> list(stored_numbers({"pass@1": 0.5, "pass@2": True, "n": 3}, PASS_AT))
    [('pass@1', 1, 0.5)]
    """
    for key, value in doc.items():
        m = pattern.match(key)
        if m and isinstance(value, (int, float)) and not isinstance(value, bool):
            yield key, int(m.group(1)), value
