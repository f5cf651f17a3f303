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
    from ._check import CheckResult as CheckResult
    from ._check import CheckRow as CheckRow
    from ._check import check as check
    from ._counts import Counts as Counts
    from ._counts import GroupCounts as GroupCounts
    from ._counts import StoredMetric as StoredMetric
    from ._counts import merge_counts as merge_counts
    from ._detect import FormatInfo as FormatInfo
    from ._detect import detect_format as detect_format
    from ._detect import formats as formats
    from ._errors import ArchiveError as ArchiveError
    from ._errors import Skipped as Skipped
    from ._errors import SkippedRecord as SkippedRecord
    from ._examples import example_path as example_path
    from ._pairs import RunPair as RunPair
    from ._pairs import pair_runs as pair_runs
    from ._read import read_counts as read_counts
    from ._sources import expand_paths as expand_paths
    from ._writers import format_for_path as format_for_path
    from ._writers import write_archive as write_archive
    from ._writers import write_counts as write_counts

#: public name -> the module that defines it
_LAZY = {
    "ArchiveError": "._errors",
    "CheckResult": "._check",
    "CheckRow": "._check",
    "RunPair": "._pairs",
    "check": "._check",
    "pair_runs": "._pairs",
    "Counts": "._counts",
    "FormatInfo": "._detect",
    "GroupCounts": "._counts",
    "Skipped": "._errors",
    "SkippedRecord": "._errors",
    "StoredMetric": "._counts",
    "detect_format": "._detect",
    "example_path": "._examples",
    "expand_paths": "._sources",
    "format_for_path": "._writers",
    "formats": "._detect",
    "merge_counts": "._counts",
    "read_counts": "._read",
    "write_archive": "._writers",
    "write_counts": "._writers",
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
