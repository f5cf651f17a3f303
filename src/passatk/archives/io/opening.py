"""Opening inputs through fsspec (local files and URLs): gzip and zstd with the truncated-stream
check and the bomb defence, standard input and pipes spooled for a second open, the record cap."""

from __future__ import annotations

import contextlib
import functools
import gzip
import io
import mmap
import os
import re
import sys
import types
import zlib
from pathlib import Path
from typing import Any, ClassVar

from passatk.archives.errors import ArchiveError
from passatk.archives.io.remote import Guarded, _call, filesystem, is_url, open_raw
from passatk.archives.io.remote import file_size as file_size
from passatk.archives.io.remote import is_regular as is_regular
from passatk.errors import Message, Option

PARQUET_MAGIC = b"PAR1"
ZIP_MAGIC = b"PK\x03\x04"
UTF8_BOM = b"\xef\xbb\xbf"
STDIN = "-"  # the path that names standard input
COMPRESSED_SUFFIXES = (".gz", ".zst", ".zstd")
DATA_SUFFIXES = (".jsonl", ".json", ".csv", ".tsv", ".parquet", ".pq", ".ndjson", ".eval")
#: compressed bytes fed to zstd per call: a block of 4 bytes can expand to 128 KiB, so one
#: call's output stays under 64 MiB whatever the input (a bomb)
ZSTD_FEED = 2048
#: a first line: a newline after the first byte that is not ASCII white space (one scan)
_FIRST_LINE = re.compile(rb"\s*\S[^\n]*\n")


def logical_name(path: str | os.PathLike) -> str:
    """File name without a compression suffix: ``a.jsonl.gz`` -> ``a.jsonl``."""
    name = Path(path).name
    return next((name[:-len(s)] for s in COMPRESSED_SUFFIXES if name.endswith(s)), name)


def is_stream(p: str) -> bool:
    return p == STDIN or not (is_url(p) or not os.path.exists(p) or os.path.isfile(p)
                              or os.path.isdir(p))


def _undecodable(path: str, e: Exception) -> Exception:
    zstandard = sys.modules.get("zstandard")
    errors = (OSError, EOFError, zlib.error, *([zstandard.ZstdError] if zstandard else []))
    return ArchiveError(path, f"cannot decompress: {e}") if isinstance(e, errors) else e


def _zstandard(path: str):
    try:
        import zstandard
    except ImportError:
        raise ArchiveError(path, "zstd-compressed file, but the optional package zstandard is not "
                           "installed (pip install 'passatk[zstd]')") from None
    return zstandard


class _Zstd:
    """zstd frames, one decompressobj each; a file that ends inside a frame is an error."""

    def __init__(self, read, path: str) -> None:
        self._read, self._path = read, path
        self._dctx = _zstandard(path).ZstdDecompressor(max_window_size=1 << 27)  # its default
        self._obj, self._input, self._out = None, b"", memoryview(b"")

    def read(self, size: int) -> memoryview:
        while not self._out:
            data, self._input = self._input or self._read(ZSTD_FEED), b""
            if not data and self._obj is not None:
                raise ArchiveError(self._path, "truncated zstd stream: the file ends inside a "
                                   "frame (an incomplete copy or a crashed writer)")
            if not data:
                return self._out
            self._obj = self._obj or self._dctx.decompressobj()
            self._out = memoryview(self._obj.decompress(data))
            if self._obj.eof:  # the frame is complete; what follows starts the next frame
                self._input, self._obj = self._obj.unused_data, None
        out, self._out = self._out[:size], self._out[size:]
        return out


class Mapped(mmap.mmap):
    """A file mapped read-only; ``in`` finds a byte string (``mmap``'s own, single bytes)."""

    def __contains__(self, needle: object) -> bool:
        return self.find(needle) >= 0  # type: ignore[arg-type]


def mapped(f: open_binary, limit: int | None = None) -> Mapped | None:
    """The file that ``f`` opened, mapped whole rather than read (no copy to page-fault in:
    docs/robustness.md, "Mapped files"), when it is uncompressed and holds 1 to ``limit``
    bytes; None otherwise (a pipe, a URL, a compressed or an empty file)."""
    try:
        fd = f.raw.fileno()
        size = os.fstat(fd).st_size
    except (AttributeError, OSError, ValueError):  # no file descriptor
        return None
    if f.compression is not None or size == 0 or (limit is not None and size > limit):
        return None
    return Mapped(fd, 0, access=mmap.ACCESS_READ)


class open_binary(contextlib.ExitStack):
    """A file opened for reading, gzip and zstd decompressed (found by magic bytes): ``stream``,
    the decompressed bytes; ``raw``, the file (progress); ``compression``."""

    def __init__(self, path: str) -> None:
        super().__init__()
        try:
            raw = self.raw = self.enter_context(io.BufferedReader(_Pipe(path), 1 << 16)
                                                if is_stream(path) else open_raw(path))
            magic = raw.peek(4)[:4]  # every raw is buffered: no seek back (a pipe)
            gz = magic[:2] == b"\x1f\x8b"
            self.compression = "gzip" if gz else "zstd" if magic == b"\x28\xb5\x2f\xfd" else None
            self.stream = raw
            if self.compression is not None:
                f = gzip.GzipFile(fileobj=raw, mode="rb") if gz else _Zstd(raw.read, path)
                self.stream = self.enter_context(io.BufferedReader(
                    Guarded(f, functools.partial(_undecodable, path)), 1 << 16 if gz else 1 << 20))
        except BaseException as e:
            self.close()
            if isinstance(e, OSError):
                raise ArchiveError(path, e.strerror or str(e)) from None
            raise

    def raw_position(self) -> int:
        return self.raw.tell()


class _Pipe(io.RawIOBase):
    """One open of standard input, a pipe or a device, read by several opens in turn (detection,
    then the reader): each replays what the earlier ones read, kept (``_open``) up to the record
    cap plus 1 MiB. Past that the kept bytes go (memory stays bounded) and a later open is an
    ArchiveError."""

    _open: ClassVar[dict[str, types.SimpleNamespace]] = {}

    def __init__(self, path: str) -> None:
        super().__init__()
        if path not in self._open:  # open(), not fsspec: it seeks to the end, a FIFO cannot
            self._open[path] = types.SimpleNamespace(
                source=sys.stdin.buffer if path == STDIN else open(path, "rb"), kept=bytearray(),
                dropped=False, limit=max_record_bytes() + (1 << 20))
        self.pipe, self.pos = self._open[path], 0
        if self.pipe.dropped:
            raise ArchiveError(path, Message(
                "is a pipe already read past its start, which cannot be read twice: give its "
                "format (", Option("format"), ") or save the data to a file"))

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        pipe, size = self.pipe, len(b)
        out = bytes(pipe.kept[self.pos:self.pos + size])
        if len(out) < size:
            data = pipe.source.read(size - len(out)) or b""
            if not pipe.dropped:
                pipe.kept += data
                if len(pipe.kept) > pipe.limit:
                    pipe.dropped, pipe.kept = True, bytearray()
            out += data
        memoryview(b).cast("B")[:len(out)] = out
        self.pos += len(out)
        return len(out)

    def tell(self) -> int:
        return self.pos


def release_pipes() -> None:
    for pipe in _Pipe._open.values():
        if pipe.source is not sys.stdin.buffer:
            pipe.source.close()
    _Pipe._open.clear()


def list_names(folder: str) -> list[str]:
    fs, path = filesystem(folder)
    return sorted(os.path.basename(p.rstrip("/")) for p in _call(folder, lambda: fs.ls(
        path, detail=False)))


def is_file(path: str) -> bool:
    fs, p = filesystem(path)
    with contextlib.suppress(Exception):  # the stores raise their own error types
        return bool(fs.isfile(p))
    return False


def max_record_bytes() -> int:
    """The record-length cap in bytes: 64 MiB, or ``PASSATK_MAX_RECORD_BYTES`` (``256M``)."""
    text = os.environ.get("PASSATK_MAX_RECORD_BYTES", "").strip() or "64M"
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:].upper(), 1)
    digits = text[:-1] if scale > 1 else text
    if not (digits.isascii() and digits.isdigit()) or len(digits) > 15 or int(digits) == 0:
        raise ValueError(f"PASSATK_MAX_RECORD_BYTES must be a positive number of bytes such as "
                         f"67108864 or 64M, got {text[:40]!r}")
    return int(digits) * scale


def too_long(file: str, lineno: int | None, cap: int) -> ArchiveError:
    """The error for a record over the cap (a whole-file error: the rest cannot be framed)."""
    return ArchiveError(file, f"record longer than {cap} bytes, the record-length cap (set "
                        "PASSATK_MAX_RECORD_BYTES to read longer records)", line=lineno)


def read_head(path: str, size: int = 1 << 16) -> bytes:
    """The first ``size`` decompressed bytes, without a UTF-8 BOM; for line files (any name but
    ``*.json``) extended to the end of the first non-blank line, at most the record cap."""
    cap = max_record_bytes()
    with open_binary(path) as f:
        head = bytearray(f.stream.read(size))
        extend = head[:4] not in (PARQUET_MAGIC, ZIP_MAGIC) and not logical_name(
            path).endswith(".json")
        if extend and len(head) >= size and not _FIRST_LINE.match(head):
            while more := f.stream.read(1 << 20):
                head += more
                if b"\n" in more and _FIRST_LINE.match(head):
                    break
                if len(head) > cap:
                    raise too_long(path, 1, cap)
    return bytes(head).removeprefix(UTF8_BOM)  # the readers' JSON and CSV decoders skip it


def read_all(path: str, cap: int | None = None) -> bytes:
    with open_binary(path) as f:
        data = f.stream.read() if cap is None else f.stream.read(cap + 1)
    if cap is not None and len(data) > cap:
        raise too_long(path, None, cap)
    return data
