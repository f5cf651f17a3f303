"""Readers for the result archives of common code-generation harnesses.

Every reader turns files into per-(group, task) counts: n samples, c of them correct. See
``docs/formats.md`` for each format, and :func:`formats` for how each is detected. The names
below are loaded on first use (PEP 562): listing the formats loads no reader.

>>> from passatk.archives import formats
>>> "evalplus" in [f.name for f in formats()]
True
"""

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # for type checkers and IDEs (``X as X``: re-exported); at run time: lazily
    from .checks import CheckResult as CheckResult
    from .checks import CheckRow as CheckRow
    from .checks import check as check
    from .counts import Counts as Counts
    from .counts import GroupCounts as GroupCounts
    from .counts import StoredMetric as StoredMetric
    from .counts import merge_counts as merge_counts
    from .detect import FormatInfo as FormatInfo
    from .detect import detect_format as detect_format
    from .detect import formats as formats
    from .errors import ArchiveError as ArchiveError
    from .errors import Skipped as Skipped
    from .errors import SkippedRecord as SkippedRecord
    from .examples import example_path as example_path
    from .harnesses._writers import write_counts as write_counts
    from .harnesses.writing import format_for_path as format_for_path
    from .harnesses.writing import write_archive as write_archive
    from .io.paths import expand_paths as expand_paths
    from .pairs import RunPair as RunPair
    from .pairs import pair_runs as pair_runs
    from .pipeline import read_counts as read_counts

#: public name -> the module that defines it
_LAZY = {
    "ArchiveError": ".errors",
    "CheckResult": ".checks",
    "CheckRow": ".checks",
    "RunPair": ".pairs",
    "check": ".checks",
    "pair_runs": ".pairs",
    "Counts": ".counts",
    "FormatInfo": ".detect",
    "GroupCounts": ".counts",
    "Skipped": ".errors",
    "SkippedRecord": ".errors",
    "StoredMetric": ".counts",
    "detect_format": ".detect",
    "example_path": ".examples",
    "expand_paths": ".io.paths",
    "format_for_path": ".harnesses.writing",
    "formats": ".detect",
    "merge_counts": ".counts",
    "read_counts": ".pipeline",
    "write_archive": ".harnesses.writing",
    "write_counts": ".harnesses._writers",
}


def _load(name: str) -> object:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_LAZY[name], __name__), name)
    globals()[name] = value
    return value


if not TYPE_CHECKING:  # type checkers see the imports above, and flag any other name
    __getattr__ = _load


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = sorted(_LAZY)
