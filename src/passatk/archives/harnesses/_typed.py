"""What the document formats share: typed views (msgspec), located errors, stored numbers."""

import contextlib
from collections.abc import Callable, Iterator
from typing import NamedTuple

import msgspec

from passatk.archives.context import BadRecord, Context, doc_scalar_record, path_groups
from passatk.archives.counts import StoredMetric
from passatk.archives.errors import ArchiveError, location, stored_float
from passatk.archives.harnesses._writers import mean_pass_at_k

_ERRORS = (msgspec.DecodeError, RecursionError)
_TOP = msgspec.json.Decoder(dict[str, msgspec.Raw])


def whole(typ: object, needle: bytes, ok: Callable = bool) -> Callable[[bytes], object]:
    """A view: the bytes as ``typ`` if ``needle`` is in their first MiB and ``ok(doc)``."""
    decoder = msgspec.json.Decoder(typ)

    def decode(data: bytes) -> object:
        try:
            doc = decoder.decode(data) if data.find(needle, 0, 1 << 20) >= 0 else None
        except _ERRORS:
            return None
        return doc if doc is not None and ok(doc) else None
    return decode


class Member(NamedTuple):
    """A document as its top-level scalars and its per-task member, typed."""

    record: dict
    member: object

    @classmethod
    def of(cls, doc: object, key: str) -> "Member":
        """The same of a plain (or streamed) document."""
        return doc if isinstance(doc, cls) else cls(doc_scalar_record(doc), doc.get(key))


def member(key: str, typ: object, refuse: frozenset) -> Callable[[bytes], Member | None]:
    """A view of the member ``key`` as ``typ``, none with a key of ``refuse`` (probed first)."""
    decoder, needle = msgspec.json.Decoder(typ), f'"{key}"'.encode()

    def decode(data: bytes) -> Member | None:
        try:
            top = _TOP.decode(data) if needle in data else {}
            if key not in top or refuse & top.keys():
                return None
            return Member({k: msgspec.json.decode(v) for k, v in top.items()
                           if memoryview(v)[:1] not in (b"{", b"[")}, decoder.decode(top[key]))
        except _ERRORS:
            return None
    return decode


def begin(ctx: Context, file: str, metric: str = "pass@k") -> tuple[tuple, dict]:
    """Set the metric of ``file``; the ``by`` fields and the values of those in its path."""
    ctx.set_metric(metric, file)
    return ctx.options.by, path_groups(ctx.options.by, file)


@contextlib.contextmanager
def fatal(file: str, path: tuple | None = None) -> Iterator[None]:
    """A BadRecord inside is an ArchiveError of the whole file (at ``path`` when given)."""
    try:
        yield
    except BadRecord as e:
        raise ArchiveError(file, e.what, path=e.path if path is None else path) from None


def store(ctx: Context, file: str, group: tuple, k: int, value: object, path: tuple,
          scale: str = "fraction", task: str | None = None) -> None:
    x = stored_float(value, file, path) / (100.0 if scale == "percent" else 1.0)
    ctx.stored.append(StoredMetric(group, "pass@k", k, x, location(file, path=path), scale, task))


def means(flags: list, ks: tuple, key: str = "pass@{}", scale: float = 1) -> dict:
    """The stored numbers a writer puts in its archive, for each k up to the fewest samples."""
    nmin = min(map(len, flags))
    return {key.format(k): scale * mean_pass_at_k(flags, k) for k in ks if k <= nmin}
