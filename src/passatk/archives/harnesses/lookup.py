"""Looking formats up: the specs of the registry, each harness module of its name table imported
at the first lookup. No harness module imports this module (they import
:mod:`~passatk.archives.harnesses.registry`), so these dynamic imports close no loop."""

from __future__ import annotations

from fnmatch import fnmatchcase
from importlib import import_module

from passatk.archives.harnesses import registry
from passatk.archives.harnesses.registry import HARNESSES, FormatSpec

__all__ = ["by_file_name", "canonical_format", "get", "probing_order", "register", "specs"]

_loaded = False


def _load() -> None:
    """Import every harness module of the name table once (each registers its formats)."""
    global _loaded
    if not _loaded:
        for name in HARNESSES:
            import_module(f"{__package__}.{name}")
        _loaded = True


def register(spec: FormatSpec) -> FormatSpec:
    """:func:`registry.register <passatk.archives.harnesses.registry.register>`, checked
    against every built-in format (a format added at run time)."""
    _load()
    return registry.register(spec)


def _rank(spec: FormatSpec) -> tuple[int, int]:
    """A module of the name table: its place there; any other format after them, in arrival."""
    package, _, leaf = (getattr(spec.read, "__module__", "") or "").rpartition(".")
    own = package == __package__ and leaf in HARNESSES
    place = HARNESSES.index(leaf) if own else len(HARNESSES)
    return place, registry.registered()[2][spec.name]


def specs() -> list[FormatSpec]:
    """Every registered format, in the order of ``passatk formats``."""
    _load()
    return sorted(registry.registered()[0].values(), key=_rank)


def probing_order(kind: str | None = None) -> list[FormatSpec]:
    """The formats (of one kind), in the order their probes run."""
    found = [s for s in specs() if kind is None or s.kind == kind]
    return sorted(found, key=lambda s: -s.priority)  # stable: listing order within


def canonical_format(name: str) -> str:
    """The registry name for ``name`` (aliases such as ``human-eval`` are accepted).

    >>> canonical_format(" Human-Eval ")
    'humaneval'
    """
    if not isinstance(name, str):
        raise TypeError(f"format must be a str, got {type(name).__name__}")
    _load()
    found, aliases, _ = registry.registered()
    key = name.strip().lower()
    key = aliases.get(key, key)
    if key not in found:
        raise ValueError(f"format must be one of {sorted(found)}, got {name!r}")
    return key


def get(name: str) -> FormatSpec:
    """The spec of a format name or alias (errors as :func:`canonical_format`)."""
    return registry.registered()[0][canonical_format(name)]


def _specificity(pattern: str) -> int:
    return sum(ch not in "*?" for ch in pattern)


def by_file_name(name: str) -> FormatSpec | None:
    """The format whose most specific name pattern matches ``name`` (ties: registration order).

    >>> by_file_name("demo_results.jsonl").name, by_file_name("x.jsonl").name
    ('humaneval', 'samples')
    """
    best, score = None, -1
    for spec in specs():
        for pattern in spec.names:
            if _specificity(pattern) > score and fnmatchcase(name, pattern):
                best, score = spec, _specificity(pattern)
    return best
