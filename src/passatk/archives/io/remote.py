"""fsspec for every path and URL (``s3://``, ``gs://``, ``http(s)://``, ``file://``, ...): storage
options, listings, sizes, ETags. Each failure of a store is one ArchiveError naming the URL."""

from __future__ import annotations

import contextlib
import contextvars
import io
import json
import os
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from passatk._show import show
from passatk.archives.errors import ArchiveError

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]+://")
#: (the storage options; {url: its ETag when its read was planned}, from PIN_KEY, stripped
#: before fsspec sees them; the entries listed in one read: sizing them costs no request)
_STATE: contextvars.ContextVar = contextvars.ContextVar("passatk_storage", default=None)
PIN_KEY = "passatk:etags"
#: protocol -> the extra that installs its fsspec implementation
EXTRAS = {"s3": "s3", "s3a": "s3", "gs": "gcs", "gcs": "gcs", "az": "azure", "abfs": "azure",
          "abfss": "azure", "adl": "azure", "http": "remote", "https": "remote"}
BLOCK_SIZE = 8 << 20  # read-ahead of remote files: few large requests
READ_BLOCK = 4 << 20  # the most one read of a guarded stream asks for
ETAG_KEYS = ("ETag", "etag", "md5Hash")
VERSION_KEYS = ("VersionId", "version_id", "generation", "ETag", "etag", "e_tag")


def is_url(path: object) -> bool:
    return isinstance(path, str) and _URL.match(path) is not None


def is_regular(p: str) -> bool:
    """Whether ``p`` can be read again: a regular file or a URL (not a pipe, a device, ``-``)."""
    return is_url(p) or (p != "-" and os.path.isfile(p))


def parse_storage_option(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` -> (KEY, VALUE parsed as JSON when it parses, else the text).

    >>> parse_storage_option("anon=true"), parse_storage_option("s3.endpoint_url=http://h:9")
    (('anon', True), ('s3.endpoint_url', 'http://h:9'))
    """
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"storage option must be KEY=VALUE, got {text!r}")
    try:
        parsed: Any = json.loads(value)
    except ValueError:
        parsed = value
    except RecursionError:
        raise ValueError(f"storage option {key.strip()!r}: its JSON value is nested too "
                         "deeply") from None
    return key.strip(), parsed


@contextlib.contextmanager
def storage_options(options: Mapping[str, Any] | None) -> Iterator[None]:
    """Use ``options`` for the URLs opened in the block (this thread or task only); a key
    ``PROTOCOL.KEY`` is for that protocol only. Sizes seen in listings are kept for the block."""
    if options is not None and (not isinstance(options, Mapping)
                                or not all(isinstance(k, str) for k in options)):
        raise TypeError(f"storage_options must be a mapping of str keys, got {show(options)}")
    given = _state()[0] if options is None else {k: v for k, v in options.items()
                                                     if k != PIN_KEY}
    token = _STATE.set((given, dict((options or {}).get(PIN_KEY) or {}), {}))
    try:
        yield
    finally:
        _STATE.reset(token)


def _state() -> tuple[dict | None, dict, dict]:
    return _STATE.get() or (None, {}, {})  # outside a block, nothing is kept


def known_sizes() -> dict[str, int]:
    return {u: int(i["size"]) for u, i in _state()[2].items() if i.get("size") is not None}


def current_options() -> dict:
    return dict(_state()[0] or {})


def filesystem(path: str) -> tuple[Any, str]:
    try:
        import fsspec
    except ImportError:
        raise ArchiveError(path, "reading files and URLs needs the package fsspec (pip install "
                           "'passatk[remote]')") from None
    if not is_url(path):  # absolute: fsspec would read "file:x" as x and "~x" as home
        return fsspec.filesystem("file"), os.path.abspath(path)
    protocol = path.split("://", 1)[0].lower()
    try:
        cls = fsspec.get_filesystem_class(protocol)
    except (ImportError, ValueError) as e:
        hint = f" (pip install 'passatk[{EXTRAS[protocol]}]')" if protocol in EXTRAS else ""
        raise ArchiveError(path, f"cannot read {protocol}:// URLs: {_text(e)}{hint}") from None
    options = {k.partition(".")[2] or k: v for k, v in current_options().items()
               if "." not in k or k.partition(".")[0] == protocol}
    try:
        fs = cls(**{**cls._get_kwargs_from_urls(path), **options})
    except Exception as e:  # the implementations raise their own error types
        raise ArchiveError(path, f"cannot connect to the store: {_text(e)}") from None
    return fs, cls._strip_protocol(path)


def _text(e: BaseException) -> str:
    text = " ".join(str(e).split()) or type(e).__name__
    return text if len(text) <= 300 else text[:297] + "..."


def _call(url: str, what: Callable[[], Any]) -> Any:
    """Run one store operation; its failures become a one-line ArchiveError naming ``url``."""
    try:
        return what()
    except FileNotFoundError:  # fsspec's HTTP file system says so of an unreachable server too
        where = " (or the server cannot be reached)" if url.lower().startswith("http") else ""
        raise ArchiveError(url, f"no such file or directory{where}") from None
    except PermissionError as e:
        raise ArchiveError(url, f"access denied: {_text(e)}") from None
    except Exception as e:  # botocore, aiohttp, ... raise their own error types
        raise ArchiveError(url, f"cannot read: {type(e).__name__}: {_text(e)}") from None


def _tag(info: Mapping, keys: tuple[str, ...]) -> str | None:
    return next((str(info[k]) for k in keys if info.get(k)), None)


def _info(url: str, listed: bool = True) -> Mapping:
    """The store's entry for ``url``: from the listing of this read when ``listed`` saw it."""
    fs, path = filesystem(url)
    return (listed and _state()[2].get(url)) or _call(url, lambda: fs.info(path))


def file_size(path: str) -> int:
    """Size in bytes of a file or an object; 0 for a pipe, a device or ``-`` (for progress)."""
    return int(_info(path).get("size") or 0) if is_regular(path) else 0


def url_identity(url: str) -> tuple:
    """What an input is, whatever names it: (device, inode) of a local file, of ``file://`` and
    of standard input ``-`` (``- < f`` is ``f``); else the store, its path and the object's
    version or ETag when the store gives one."""
    fs, path = filesystem(url)
    protocol = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
    if protocol in ("file", "local"):
        try:
            st = os.fstat(sys.stdin.fileno()) if url == "-" else os.stat(path)
        except (OSError, ValueError, AttributeError) as e:  # "-" without a standard input
            if url == "-":
                return ("stdin",)
            raise ArchiveError(url, getattr(e, "strerror", None) or str(e)) from None
        return (st.st_dev, st.st_ino)
    return (protocol, path.rstrip("/"), _tag(_info(url), VERSION_KEYS))


def etag(url: str) -> str | None:
    return _tag(_info(url, listed=False), ETAG_KEYS)


def open_raw(url: str) -> Any:
    """A local file (its OSError names no URL: the readers report it for the file); for a URL, a
    seekable binary file read in large blocks. When the read was planned with the object's ETag
    (its parts read by several tasks), an object changed since is an error."""
    fs, path = filesystem(url)
    if not is_url(url):
        return fs.open(path, "rb")
    f = _call(url, lambda: fs.open(path, "rb", block_size=BLOCK_SIZE))
    pinned = _state()[1].get(url)
    now = _tag(getattr(f, "details", None) or {}, ETAG_KEYS)
    if pinned is not None and now is not None and now != pinned:
        f.close()
        raise ArchiveError(url, f"the object changed after the read was planned (ETag {now}, "
                           f"was {pinned}); its parts would mix two versions, read it again")

    def fail(e: Exception) -> Exception:
        if type(e).__name__ == "FileExpired":  # s3fs reads each block If-Match its ETag
            return ArchiveError(url, "the object changed while it was read (its ETag no longer "
                                "matches the one it was opened with); nothing of it is used, "
                                "read it again")  # a dropped connection: an OSError, as a file's
        return e if isinstance(e, (OSError, ArchiveError)) else OSError(f"{type(e).__name__}: "
                                                                        f"{_text(e)}")
    return io.BufferedReader(Guarded(f, fail), buffer_size=1 << 20)


class Guarded(io.RawIOBase):
    """A raw stream over ``f`` (its read; seek and tell if it has them) whose errors ``fail``
    turns into the one to report."""

    def __init__(self, f: Any, fail: Callable[[Exception], Exception]) -> None:
        super().__init__()
        self._f, self._fail = f, fail

    def _guard(self, what: Callable[..., Any], *args: Any) -> Any:
        try:
            return what(*args)
        except Exception as e:
            raise self._fail(e) from None

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return bool(getattr(self._f, "seekable", bool)())

    def seek(self, pos: int, whence: int = 0) -> int:
        return self._guard(self._f.seek, pos, whence)

    def tell(self) -> int:
        return self._f.tell()

    def readinto(self, b: Any) -> int:  # a block at a time: read(len(b)) makes a copy of b
        data = self._guard(self._f.read, min(len(b), READ_BLOCK))
        memoryview(b).cast("B")[:len(data)] = data
        return len(data)

    def close(self) -> None:
        try:
            getattr(self._f, "close", bool)()
        finally:
            super().close()
