"""The one registry of archive formats.

Each harness module declares one :class:`FormatSpec` and registers it on import; the registry
imports the modules named in :data:`HARNESSES` at its first lookup. Detection, reading, writing
and ``passatk formats`` iterate the registry: adding a format is one module and one line here.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from importlib import import_module

#: the harness modules of ``passatk.archives``, in the order of ``passatk formats``
HARNESSES = ("humaneval", "evalplus", "bigcodebench", "multipl_e", "lm_eval", "livecodebench",
             "livecodebench_eval",
             "opencompass", "cruxeval", "code_eval", "qwen_math", "inspect_logs", "taubench",
             "tau2bench",
             "tables")

__all__ = [
    "FormatInfo", "FormatSpec", "by_file_name", "canonical_format", "get", "probing_order",
    "register", "specs", "unregister",
]

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
    view : callable(data) -> object or None, optional
        A document format's typed view (msgspec) of the whole document's bytes, tried before
        the plain decode; None when the bytes are not cleanly of this format. The reader then
        gets the view instead of the plain values (see ``io/documents.py``).
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
    view: Callable[[bytes], object] | None = None

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
_RANK: dict[str, tuple[int, int]] = {}  # name -> (its module's place in HARNESSES, arrival)
_ARRIVAL = itertools.count()
_loaded = False


def _load() -> None:
    """Import every harness module once (each registers its formats)."""
    global _loaded
    if not _loaded:
        _loaded = True  # first: the imports call register(), which calls this
        try:
            for name in HARNESSES:
                import_module(f"{__package__}.{name}")
        except BaseException:
            _loaded = False  # a failed import is retried (and raises again) at the next lookup
            raise


def register(spec: FormatSpec) -> FormatSpec:
    """Add ``spec`` to the registry (a harness module calls this once, on import).

    Formats of the modules in :data:`HARNESSES` are listed in that order (whoever imported them
    first), any other after them, in the order they came. Raises ValueError when the name or
    an alias is taken.
    """
    _load()  # a name is checked against every built-in format
    taken = [x for x in (spec.name, *spec.aliases) if x in _SPECS or x in _ALIASES]
    if taken:
        raise ValueError(f"format {spec.name!r}: name or alias {taken[0]!r} is already "
                         "registered")
    module = getattr(spec.read, "__module__", "") or ""
    package, _, leaf = module.rpartition(".")
    rank = HARNESSES.index(leaf) if package == __package__ and leaf in HARNESSES else len(HARNESSES)
    _SPECS[spec.name] = spec
    _ALIASES.update(dict.fromkeys(spec.aliases, spec.name))
    _RANK[spec.name] = (rank, next(_ARRIVAL))
    return spec


def unregister(name: str) -> None:
    """Remove a format (for tests that register a toy format)."""
    spec = _SPECS.pop(name)
    del _RANK[name]
    for alias in spec.aliases:
        del _ALIASES[alias]


def specs() -> list[FormatSpec]:
    """Every registered format, in the order of ``passatk formats``."""
    _load()
    return sorted(_SPECS.values(), key=lambda s: _RANK[s.name])


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
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    if key not in _SPECS:
        raise ValueError(f"format must be one of {sorted(_SPECS)}, got {name!r}")
    return key


def get(name: str) -> FormatSpec:
    """The spec of a format name or alias (errors as :func:`canonical_format`)."""
    return _SPECS[canonical_format(name)]


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
