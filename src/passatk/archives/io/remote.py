"""fsspec URLs as inputs: ``s3://``, ``gs://``, ``az://``, ``http(s)://``, ``file://``, ...

fsspec and the package of each protocol (s3fs, gcsfs, adlfs, aiohttp) are optional and imported
only when a URL is read. Storage options come from fsspec's own configuration (``FSSPEC_*``
environment variables, ``~/.config/fsspec``), the protocol's usual credentials (``AWS_*``, ...),
and :func:`storage_options` for one read. Every failure of the store becomes one
:class:`ArchiveError` line that names the URL.
"""

from __future__ import annotations

import contextlib
import contextvars
import io
import json
import os
import posixpath
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from passatk._show import show
from passatk.archives.errors import ArchiveError

__all__ = ["expand_url", "is_url", "open_url", "parse_storage_option", "storage_options",
           "url_isfile", "url_size"]

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]+://")
_OPTIONS: contextvars.ContextVar[dict | None] = contextvars.ContextVar("passatk_storage",
                                                                     default=None)
#: the ETag each object had when a read was planned ({url: etag}); set from PIN_KEY of the
#: storage options that tasks reading parts of one object receive (``_dask``)
_PINS: contextvars.ContextVar[dict | None] = contextvars.ContextVar("passatk_pins", default=None)
#: the key of those pins inside a task's storage options (stripped before fsspec sees them)
PIN_KEY = "passatk:etags"
#: sizes of the objects listed during one read, so that sizing them costs no request each
_SIZES: contextvars.ContextVar[dict | None] = contextvars.ContextVar("passatk_sizes",
                                                                    default=None)

#: protocol -> the extra that installs its fsspec implementation
EXTRAS = {"s3": "s3", "s3a": "s3", "gs": "gcs", "gcs": "gcs", "az": "azure", "abfs": "azure",
          "abfss": "azure", "adl": "azure", "http": "remote", "https": "remote"}
BLOCK_SIZE = 8 << 20  # read-ahead of remote files: few large requests


def is_url(path: object) -> bool:
    """True for ``protocol://...`` strings (fsspec URLs), False for local paths.

    >>> is_url("s3://bucket/runs/x_results.jsonl"), is_url("runs/x_results.jsonl")
    (True, False)
    """
    return isinstance(path, str) and _URL.match(path) is not None


def parse_storage_option(text: str) -> tuple[str, Any]:
    """Parse ``KEY=VALUE``; VALUE is JSON when it parses (``true``, ``3``, ``{...}``), else text.

    A key ``PROTOCOL.KEY`` applies to that protocol only (``s3.endpoint_url=...``).

    >>> parse_storage_option("anon=true")
    ('anon', True)
    >>> parse_storage_option("s3.endpoint_url=http://127.0.0.1:9000")
    ('s3.endpoint_url', 'http://127.0.0.1:9000')
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
    """Use ``options`` for the remote files opened inside the block (this thread/task only);
    sizes seen in listings inside the block are kept for :func:`url_size`."""
    if options is not None and (not isinstance(options, Mapping)
                                or not all(isinstance(k, str) for k in options)):
        raise TypeError(f"storage_options must be a mapping of str keys, got {show(options)}")
    pins = _PINS.set(dict((options or {}).get(PIN_KEY) or {}))
    if options is not None and PIN_KEY in options:
        options = {k: v for k, v in options.items() if k != PIN_KEY}
    token = _OPTIONS.set(dict(options)) if options is not None else None
    sizes = _SIZES.set({})
    try:
        yield
    finally:
        _SIZES.reset(sizes)
        _PINS.reset(pins)
        if token is not None:
            _OPTIONS.reset(token)


def known_sizes() -> dict[str, int]:
    """The sizes listed so far in this block (a copy)."""
    return dict(_SIZES.get() or {})


_INFOS: dict[str, Mapping] = {}  # the last listing's entries, for url_identity (no 2nd call)


def forget_listings() -> None:
    """Drop the entries kept from listings (a new expansion lists again)."""
    _INFOS.clear()


def _remember(url: str, info: Mapping) -> None:
    if len(_INFOS) > 100_000:
        _INFOS.clear()
    _INFOS[url] = info
    cache = _SIZES.get()
    if cache is not None and info.get("size") is not None:
        cache[url] = int(info["size"])


def current_options() -> dict:
    return dict(_OPTIONS.get() or {})


def _options_for(protocol: str) -> dict:
    out = {}
    for key, value in (_OPTIONS.get() or {}).items():
        proto, dot, name = key.partition(".")
        if not dot:
            out[key] = value
        elif proto == protocol:
            out[name] = value
    return out


def _import_fsspec(url: str) -> Any:
    try:
        import fsspec
    except ImportError:
        raise ArchiveError(url, "reading URLs needs the optional package fsspec "
                           "(pip install 'passatk[remote]')") from None
    return fsspec


def _filesystem(url: str) -> tuple[Any, str]:
    fsspec = _import_fsspec(url)
    protocol = url.split("://", 1)[0].lower()
    try:
        cls = fsspec.get_filesystem_class(protocol)
    except (ImportError, ValueError) as e:
        extra = EXTRAS.get(protocol)
        hint = f" (pip install 'passatk[{extra}]')" if extra else ""
        raise ArchiveError(url, f"cannot read {protocol}:// URLs: {_text(e)}{hint}") from None
    options = _options_for(protocol)
    try:
        fs = cls(**{**cls._get_kwargs_from_urls(url), **options})
    except Exception as e:  # the implementations raise their own error types
        raise ArchiveError(url, f"cannot connect to the store: {_text(e)}") from None
    return fs, cls._strip_protocol(url)


def _text(e: BaseException) -> str:
    text = " ".join(str(e).split()) or type(e).__name__
    return text if len(text) <= 300 else text[:297] + "..."


def _call(url: str, what: Callable[[], Any]) -> Any:
    """Run one store operation; its failures become a one-line ArchiveError naming ``url``."""
    try:
        return what()
    except ArchiveError:
        raise
    except FileNotFoundError:
        # fsspec's HTTP file system reports an unreachable server the same way
        where = " (or the server cannot be reached)" if url.lower().startswith("http") else ""
        raise ArchiveError(url, f"no such file or directory{where}") from None
    except PermissionError as e:
        raise ArchiveError(url, f"access denied: {_text(e)}") from None
    except Exception as e:  # botocore, aiohttp, ... raise their own error types
        raise ArchiveError(url, f"cannot read: {type(e).__name__}: {_text(e)}") from None


def _speller(fs: Any, url: str, path: str) -> Callable[[str], str]:
    """Found paths as URLs spelled like ``url`` (the store may spell its root differently)."""
    cut_url, cut_path = url.rstrip("/"), path.rstrip("/")
    magic = [i for i in (url.find(ch) for ch in "*?[") if i >= 0]
    if magic:  # a glob: keep the folder before the first wildcard
        cut_url = url[: url.rfind("/", 0, min(magic))]
        tail = url[len(cut_url):]
        cut_path = path[: len(path) - len(tail)] if path.endswith(tail) else ""

    def spell(found: str) -> str:
        if cut_path and found.startswith(cut_path + "/"):
            return cut_url + found[len(cut_path):]
        return fs.unstrip_protocol(found)

    return spell


def url_size(url: str) -> int:
    """Size in bytes of the object at ``url``."""
    cache = _SIZES.get()
    if cache and url in cache:
        return cache[url]
    fs, path = _filesystem(url)
    info = _call(url, lambda: fs.info(path))
    size = info.get("size")
    return int(size) if size is not None else 0


def url_identity(url: str) -> tuple:
    """What the object at ``url`` is, whatever the URL's spelling: a local file's (device,
    inode) for ``file://``; else the store, its canonical path and the object's version or
    ETag (s3 ``VersionId``/``ETag``, gcs ``generation``/``etag``, HTTP ``ETag``), when the
    store gives one."""
    fs, path = _filesystem(url)
    protocol = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
    if protocol in ("file", "local"):
        try:
            st = os.stat(path)
        except OSError as e:
            raise ArchiveError(url, e.strerror or str(e)) from None
        return (st.st_dev, st.st_ino)
    info = _INFOS.get(url) or _call(url, lambda: fs.info(path))
    tag = next((info[k] for k in ("VersionId", "version_id", "generation", "ETag", "etag",
                                  "e_tag") if info.get(k)), None)
    return (protocol, path.rstrip("/"), str(tag) if tag is not None else None)


def url_isfile(url: str) -> bool:
    """True when ``url`` names an existing object (False when it is missing)."""
    fs, path = _filesystem(url)
    try:
        return bool(_call(url, lambda: fs.isfile(path)))
    except ArchiveError:
        return False


def url_listdir(url: str) -> list[str]:
    """Names of the objects directly under the folder ``url``."""
    fs, path = _filesystem(url)
    return sorted(posixpath.basename(p.rstrip("/")) for p in _call(url, lambda: fs.ls(path,
                                                                                detail=False)))


def etag(url: str) -> str | None:
    """The ETag (or etag, md5Hash) of the object at ``url`` as fsspec lists it, or None."""
    fs, path = _filesystem(url)
    info = _call(url, lambda: fs.info(path))
    found = next((info.get(k) for k in ("ETag", "etag", "md5Hash") if info.get(k)), None)
    return str(found) if found is not None else None


def open_url(url: str) -> io.BufferedReader:
    """A seekable binary file object for ``url`` (read in large blocks). When the read was
    planned with the object's ETag (its parts read by several tasks), an object changed since
    is an error: parts of two versions would make a mixed read."""
    fs, path = _filesystem(url)
    f = _call(url, lambda: fs.open(path, "rb", block_size=BLOCK_SIZE))
    pinned = (_PINS.get() or {}).get(url)
    details = getattr(f, "details", None) or {}
    now = next((details.get(k) for k in ("ETag", "etag", "md5Hash") if details.get(k)), None)
    if pinned is not None and now is not None and str(now) != pinned:
        f.close()
        raise ArchiveError(url, f"the object changed after the read was planned (ETag {now}, "
                           f"was {pinned}); its parts would mix two versions, read it again")
    return io.BufferedReader(_RemoteRaw(f, url), buffer_size=1 << 20)


class _RemoteRaw(io.RawIOBase):
    """A remote file as a raw stream; a failed read (a dropped connection) is an OSError,
    which the readers report for the file."""

    def __init__(self, f: Any, url: str = "") -> None:
        super().__init__()
        self._f = f
        self._url = url

    def _guard(self, what: Callable[[], Any]) -> Any:
        try:
            return what()
        except OSError as e:
            if type(e).__name__ == "FileExpired":  # s3fs reads each block If-Match its ETag
                raise ArchiveError(self._url, "the object changed while it was read (its ETag "
                                   "no longer matches the one it was opened with); nothing "
                                   "of it is used, read it again") from None
            raise
        except Exception as e:
            raise OSError(f"{type(e).__name__}: {_text(e)}") from None

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return bool(self._f.seekable())

    def seek(self, pos: int, whence: int = 0) -> int:
        return self._guard(lambda: self._f.seek(pos, whence))

    def tell(self) -> int:
        return self._f.tell()

    def readinto(self, b: Any) -> int:
        data = self._guard(lambda: self._f.read(len(b)))
        n = len(data)
        memoryview(b).cast("B")[:n] = data
        return n

    def close(self) -> None:
        try:
            self._f.close()
        finally:
            super().close()


def expand_url(url: str, keep: Callable[[str, set[str]], bool]) -> list[str]:
    """Expand a URL: a glob (``*``, ``?``, ``[``) to its matching files, a directory (prefix)
    to the files under it that ``keep(url, all_urls)`` accepts, a file to itself."""
    fs, path = _filesystem(url)
    spell = _speller(fs, url, path)
    if any(ch in path for ch in "*?["):
        found = _call(url, lambda: fs.glob(path, detail=True))
        files = []
        for p, info in found.items():
            if info.get("type") == "file":
                files.append(spell(p))
                _remember(files[-1], info)
        files.sort()
        if not files:
            raise ArchiveError(url, "no file matches this pattern")
        return files
    info = _call(url, lambda: fs.info(path))
    if info.get("type") != "directory" and not url.endswith("/"):  # HTTP: an index page
        _remember(url, info)
        return [url]
    found = _call(url, lambda: fs.find(path, withdirs=False, detail=True))
    urls = set()
    for p, entry in found.items():
        urls.add(spell(p))
        _remember(spell(p), entry)
    root = url.rstrip("/") + "/"
    files = sorted(u for u in urls if keep(u, urls)
                   and not any(part.startswith(".") for part in u[len(root):].split("/")))
    if not files:
        raise ArchiveError(url, "directory holds no result files")
    return files
