"""Readers for the result archives of common code-generation harnesses.

Every reader turns files into per-(group, task) counts: n samples, c of them correct. See
``docs/formats.md`` for each format, and :func:`formats` for how each is detected.

>>> from passatk.archives import formats
>>> "evalplus" in [f.name for f in formats()]
True
"""

from ._check import CheckResult, CheckRow, check
from ._counts import Counts, GroupCounts, StoredMetric, merge_counts
from ._detect import FormatInfo, detect_format, formats
from ._errors import ArchiveError, Skipped, SkippedRecord
from ._examples import example_path
from ._pairs import RunPair, pair_runs
from ._read import read_counts
from ._sources import expand_paths
from ._writers import format_for_path, write_archive, write_counts

__all__ = [
    "ArchiveError",
    "CheckResult",
    "CheckRow",
    "Counts",
    "FormatInfo",
    "GroupCounts",
    "RunPair",
    "Skipped",
    "SkippedRecord",
    "StoredMetric",
    "check",
    "detect_format",
    "example_path",
    "expand_paths",
    "format_for_path",
    "formats",
    "merge_counts",
    "pair_runs",
    "read_counts",
    "write_archive",
    "write_counts",
]
