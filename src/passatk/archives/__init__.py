"""Readers for the result archives of common code-generation harnesses.

Every reader turns files into per-(group, task) counts: n samples, c of them correct. See
``docs/formats.md`` for each format, and :func:`formats` for how each is detected. The names
below are loaded on first use (PEP 562): listing the formats loads no reader.

>>> from passatk.archives import formats
>>> "evalplus" in [f.name for f in formats()]
True
"""

from importlib import import_module

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


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_LAZY[name], __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))


__all__ = sorted(_LAZY)
