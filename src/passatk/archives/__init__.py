"""Result archives of code-generation harnesses in, per-(group, task) counts (n, c) out
(docs/formats.md); the names load on first use: listing the formats loads no reader.

>>> from passatk.archives import formats
>>> "evalplus" in [f.name for f in formats()]
True
"""

from typing import TYPE_CHECKING

from passatk._lazy import lazy

if TYPE_CHECKING:  # what type checkers see (public by __all__); at run time: lazily
    from .checks import CheckResult, CheckRow, check
    from .counts import Counts, GroupCounts, StoredMetric, merge_counts
    from .detect import FormatInfo, detect_format, formats
    from .errors import ArchiveError, Skipped, SkippedRecord
    from .examples import example_path
    from .harnesses._writers import write_counts
    from .harnesses.writing import format_for_path, write_archive
    from .io.paths import expand_paths
    from .pairs import RunPair, pair_runs
    from .pipeline import read_counts

_LAZY = {name: module for module, names in {
    ".checks": "CheckResult CheckRow check", ".detect": "FormatInfo detect_format formats",
    ".counts": "Counts GroupCounts StoredMetric merge_counts",
    ".errors": "ArchiveError Skipped SkippedRecord",
    ".examples": "example_path", ".harnesses._writers": "write_counts",
    ".harnesses.writing": "format_for_path write_archive", ".io.paths": "expand_paths",
    ".pairs": "RunPair pair_runs", ".pipeline": "read_counts"}.items() for name in names.split()}
__all__ = ["ArchiveError", "CheckResult", "CheckRow", "Counts", "FormatInfo", "GroupCounts",
           "RunPair", "Skipped", "SkippedRecord", "StoredMetric", "check", "detect_format",
           "example_path", "expand_paths", "format_for_path", "formats", "merge_counts",
           "pair_runs", "read_counts", "write_archive", "write_counts"]

if not TYPE_CHECKING:  # type checkers see the imports above, and flag any other name
    __getattr__, __dir__ = lazy(__name__, _LAZY)
