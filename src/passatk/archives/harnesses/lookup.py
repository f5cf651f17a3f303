"""Looking formats up; the first lookup imports the modules of the name table (none imports
this module, so these imports close no loop)."""

import functools
from fnmatch import fnmatchcase
from importlib import import_module

from passatk._show import show
from passatk.archives.harnesses import registry
from passatk.archives.harnesses.registry import HARNESSES, SPECS, FormatSpec


@functools.cache
def _load() -> None:
    for name in HARNESSES:  # each registers its formats
        import_module(f"{__package__}.{name}")


def register(spec: FormatSpec) -> FormatSpec:
    """``registry.register`` of a format added at run time, checked against the built-in ones."""
    _load()
    return registry.register(spec)


def specs() -> list[FormatSpec]:
    """Every registered format, in the order of ``passatk formats``: by the place of its module
    in the name table (any other after them), in arrival order within a place."""
    _load()
    place = {f"{__package__}.{h}": i for i, h in enumerate(HARNESSES)}
    return sorted(SPECS.values(),
                  key=lambda s: place.get(getattr(s.read, "__module__", None), len(place)))


def probing_order(kind: str | None = None) -> list[FormatSpec]:
    """The formats (of one kind), in the order their probes run."""
    return sorted((s for s in specs() if kind in (None, s.kind)), key=lambda s: -s.priority)


def canonical_format(name: str) -> str:
    """The registry name of a format name or alias (``" Human-Eval "``: ``humaneval``)."""
    if not isinstance(name, str):
        raise TypeError(f"format must be a str, got {type(name).__name__}")
    _load()
    key = name.strip().lower()
    key = next((s.name for s in SPECS.values() if key in s.aliases), key)
    if key not in SPECS:
        raise ValueError(f"format must be one of {sorted(SPECS)}, got {show(name)}")
    return key


def get(name: str) -> FormatSpec:
    """The spec of a format name or alias (errors as :func:`canonical_format`)."""
    return SPECS[canonical_format(name)]


def by_file_name(name: str) -> FormatSpec | None:
    """The format whose most specific name pattern (most characters not ``*?``) matches
    ``name``; ties go to the first in listing order."""
    hits = [(sum(ch not in "*?" for ch in p), s) for s in specs() for p in s.names
            if fnmatchcase(name, p)]
    return max(hits, key=lambda hit: hit[0])[1] if hits else None
