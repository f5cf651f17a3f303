"""The one registry of archive formats: what a format is (:class:`FormatSpec`), the name table
of the harness modules (:data:`HARNESSES`), and the specs registered so far.

This module imports nothing of passatk: each harness module imports it to register its spec,
and :mod:`passatk.archives.harnesses.lookup` (the lookups, which import the harness modules
named here at their first use) is imported by no harness module, so the dynamic imports close
no loop. Adding a format is one module and one line in :data:`HARNESSES`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

#: the name table: the harness modules of ``passatk.archives.harnesses``, in the order of
#: ``passatk formats`` (one line per harness)
HARNESSES = (
    "humaneval",
    "evalplus",
    "bigcodebench",
    "multipl_e",
    "lm_eval",
    "livecodebench",
    "livecodebench_eval",
    "opencompass",
    "cruxeval",
    "code_eval",
    "qwen_math",
    "inspect_logs",
    "taubench",
    "tau2bench",
    "tables",
)

__all__ = ["HARNESSES", "FormatInfo", "FormatSpec", "register", "registered", "unregister"]

KINDS = ("document", "lines", "table", "zip")


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


@dataclass(frozen=True)
class FormatSpec:
    """Everything passatk knows about one format: its description, detection, reader, writer.

    Attributes
    ----------
    info : FormatInfo
        What ``passatk formats`` lists.
    kind : {"document", "lines", "table", "zip"}
        One JSON document (``read(file, ctx, doc)``), JSON Lines (``read(file, ctx)``), a
        count or per-sample table (``read(file, ctx)``; detected from its columns), or a zip
        archive (``read(file, ctx)``; the probe sees the file's first bytes).
    read : callable
        Adds the file's counts to the reading context.
    write : callable(path, tasks, flags, options) -> list of str, optional
        Writes a synthetic archive (``write_archive``); ``options`` is a ``WriteOptions``.
    probe : callable(value, file) -> bool, optional
        Content detection: the parsed document (``document``), the first record (``lines``)
        or the first 64 KiB of the file (``zip``).
    aliases : tuple of str
        Other accepted names (lower case).
    names : tuple of str
        File-name patterns (``fnmatch``, on the name without .gz/.zst) that make
        ``write_archive`` choose this format; the most specific matching pattern wins.
    summary : callable(file, doc) -> str or None, optional
        For a JSON document of this harness that holds only aggregate numbers (a sidecar): the
        message that says what to read instead.
    priority : int
        Probes run in decreasing priority, then in registration order: a specific probe gets
        a higher one than a probe it overlaps with, a generic probe (code-eval) a lower one.
    column_options : tuple of str
        Column options of ``read_counts`` this non-table format accepts (lm-eval: ``passed``).
    filters : bool
        Accepts the LiveCodeBench filters (since, until, difficulty).
    per_directory : bool
        The archive is the file's directory (MultiPL-E: a file per task).
    write_options : tuple of str
        Format-specific ``write_archive`` options the writer takes (``plus``, ...).
    native_ids : bool
        The writer keeps task ids as given (tau-bench's integers); others get ``str(id)``.
    byte_ranges : bool
        A byte range of the file's lines can be read on its own (a Dask task per range): each
        line is one sample, and no check spans lines.
    """

    info: FormatInfo
    kind: str
    read: Callable
    write: Callable | None = None
    probe: Callable[[object, str], bool] | None = None
    aliases: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    summary: Callable[[str, object], str | None] | None = None
    priority: int = 0
    column_options: tuple[str, ...] = ()
    filters: bool = False
    per_directory: bool = False
    write_options: tuple[str, ...] = ()
    native_ids: bool = False
    byte_ranges: bool = False

    @property
    def name(self) -> str:
        return self.info.name

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        if self.kind != "table" and self.probe is None:
            raise ValueError(f"format {self.name!r}: a {self.kind} format needs a probe")


_SPECS: dict[str, FormatSpec] = {}
_ALIASES: dict[str, str] = {}
_ARRIVAL: dict[str, int] = {}
_COUNTER = itertools.count()


def register(spec: FormatSpec) -> FormatSpec:
    """Add ``spec`` to the registry (a harness module calls this once, on import). Raises
    ValueError when the name or an alias is taken by a format registered so far (use
    :func:`passatk.archives.harnesses.lookup.register` to check against every built-in one)."""
    taken = [x for x in (spec.name, *spec.aliases) if x in _SPECS or x in _ALIASES]
    if taken:
        raise ValueError(f"format {spec.name!r}: name or alias {taken[0]!r} is already "
                         "registered")
    _SPECS[spec.name] = spec
    _ALIASES.update(dict.fromkeys(spec.aliases, spec.name))
    _ARRIVAL[spec.name] = next(_COUNTER)
    return spec


def unregister(name: str) -> None:
    """Remove a format (for tests that register a toy format)."""
    spec = _SPECS.pop(name)
    del _ARRIVAL[name]
    for alias in spec.aliases:
        del _ALIASES[alias]


def registered() -> tuple[dict[str, FormatSpec], dict[str, str], dict[str, int]]:
    """The registered specs by name, the aliases, and the order the specs came in."""
    return _SPECS, _ALIASES, _ARRIVAL
