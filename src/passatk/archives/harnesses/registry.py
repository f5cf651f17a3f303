"""The one registry of formats: FormatSpec, the name table HARNESSES, the specs registered."""

from collections.abc import Callable
from dataclasses import dataclass

from passatk.archives.errors import ArchiveError
from passatk.errors import Message, Option

#: the harness modules, in the order of ``passatk formats``; a new harness adds one line
HARNESSES = (
    "humaneval", "evalplus", "bigcodebench", "multipl_e", "lm_eval", "livecodebench",
    "opencompass", "cruxeval", "code_eval", "qwen_math", "inspect_logs", "taubench", "tables",
)
KINDS = ("document", "lines", "table", "zip")


@dataclass(frozen=True)
class FormatInfo:
    """One supported format as ``passatk formats`` lists it: the name to pass as ``format=``,
    the harness that writes it, its usual files, how it is detected without ``format=``, what
    counts as a pass (and how (n, c) per task follow), and the metric, pass@k or pass^k."""

    name: str
    harness: str
    files: str
    detection: str
    passes: str
    metric: str = "pass@k"


@dataclass(frozen=True)
class FormatSpec:
    """Everything passatk knows about one format (each field: docs/formats.md)."""

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

    def check_options(self, file: str, o: object) -> None:
        """Column options only for tables (or a format that takes them), filters likewise."""
        mapped = [name for name in ("task", "passed", "reward", "threshold", "n", "c")
                  if getattr(o, name) is not None and name not in self.column_options]
        if self.kind != "table" and mapped:
            named = [part for m in mapped for part in (", ", Option(m))][1:]
            raise ArchiveError(file, Message(
                f"is a {self.name} archive, but column options (", *named, ") apply only to "
                "count and per-sample tables; pass ", Option("format", "samples"), " or ",
                Option("format", "counts"), " to read it as a table"))
        if {o.since, o.until, o.difficulty} != {None} and not self.filters:
            takers = ", ".join(s.info.harness for s in SPECS.values() if s.filters)
            raise ArchiveError(file, f"is a {self.name} archive, but filters (since, until, "
                               f"difficulty) apply only to {takers}")


SPECS: dict[str, FormatSpec] = {}  # in the order they came in


def register(spec: FormatSpec) -> FormatSpec:
    """Add ``spec`` (a harness module does, on import); a name or alias taken is a ValueError."""
    known = {x for s in SPECS.values() for x in (s.name, *s.aliases)}
    taken = [x for x in (spec.name, *spec.aliases) if x in known]
    if taken:
        raise ValueError(f"format {spec.name!r}: name or alias {taken[0]!r} is already registered")
    SPECS[spec.name] = spec
    return spec


def unregister(name: str) -> None:
    """Remove a format (for tests that register a toy format)."""
    del SPECS[name]
