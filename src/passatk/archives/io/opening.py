"""Opening input files: local files and fsspec URLs, gzip and zstd (the truncated-stream check
and the bomb defence), standard input and pipes (spooled for a second open), the record cap."""

from __future__ import annotations

import gzip
import io
import os
import stat
import sys
import zlib
from pathlib import Path
from typing import Any, ClassVar

from passatk.archives.errors import ArchiveError
from passatk.archives.io.remote import (
    is_url,
    open_url,
    url_isfile,
    url_listdir,
    url_size,
)
from passatk.errors import Message, Option

__all__ = ["file_size", "is_file", "logical_name", "max_record_bytes", "open_binary", "open_raw",
           "read_all", "read_head", "release_pipes"]

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


def os_reason(e: OSError) -> str:
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
            raise ArchiveError(path, os_reason(e)) from None
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
            raise ArchiveError(path, os_reason(e)) from None
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
