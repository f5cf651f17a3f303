"""What the writers of synthetic archives share: atomic compressed streams, tables, checks."""

import contextlib
import csv
import gzip
import io
import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from fractions import Fraction
from importlib import import_module
from typing import Any, NamedTuple

from passatk._output import atomic_open, atomic_path
from passatk.archives.counts import Counts
from passatk.archives.io.opening import logical_name
from passatk.reference import pass_at_k_exact


def mean_pass_at_k(passes: list[list[bool]], k: int) -> float:
    """The mean exact pass@k over tasks (``passes``: each task's pass flags), as a float."""
    total = sum((pass_at_k_exact(len(p), sum(p), k) for p in passes), Fraction(0))
    return float(total / len(passes))


def _optional(module: str, path: str, what: str, extra: str) -> Any:
    try:
        return import_module(module)
    except ImportError:
        raise ValueError(f"{path}: writing {what} needs the optional package "
                         f"{module.partition('.')[0]} (pip install 'passatk[{extra}]')") from None


@contextlib.contextmanager
def atomic_stream(path: str) -> Iterator:
    """A binary stream that replaces ``path`` atomically, compressed by suffix (.gz, .zst)."""
    zstd = path.endswith((".zst", ".zstd")) and _optional("zstandard", path, ".zst", "zstd")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with atomic_open(path, "wb") as raw:
        if path.endswith(".gz"):  # the header names the target, not the temporary file
            with gzip.GzipFile(os.path.basename(path)[:-3], "wb", fileobj=raw, mtime=0) as out:
                yield out
        elif zstd:
            with zstd.ZstdCompressor().stream_writer(raw, closefd=False) as out:
                yield out
        else:
            yield raw


def dump_json(path: str, obj: object) -> list[str]:
    """Write ``obj`` as indented JSON, atomically (compressed by suffix); ``[path]``."""
    with atomic_stream(path) as f:
        f.write(json.dumps(obj, indent=1).encode() + b"\n")
    return [path]


def dump_lines(path: str, records: Iterable[dict]) -> list[str]:
    """Write ``records`` as JSON Lines, atomically (compressed by suffix); ``[path]``."""
    with atomic_stream(path) as f:
        for r in records:  # (a zstd stream writer has no writelines)
            f.write(json.dumps(r).encode() + b"\n")
    return [path]


class WriteOptions(NamedTuple):
    """The options of :func:`write_archive`, as each format's writer receives them."""

    stored: bool = True
    plus: Sequence[Sequence[bool]] | None = None
    evalplus_version: int = 3
    completion: Callable[[int, int], str] | None = None
    dates: Sequence[str] | None = None
    difficulties: Sequence[str] | None = None


def check_passes(task_ids: Sequence, passes: Sequence) -> tuple[list[str], list[list[bool]]]:
    """The task ids and pass flags as lists, checked: equal lengths, distinct ids, bools."""
    task_ids, passes = list(task_ids), [list(p) for p in passes]
    if len(task_ids) != len(passes):
        raise ValueError(f"task_ids and passes must have equal lengths, got {len(task_ids)} "
                         f"and {len(passes)}")
    if not task_ids:
        raise ValueError("task_ids must not be empty")
    if len(set(map(str, task_ids))) != len(task_ids):
        raise ValueError("task_ids must be distinct")
    for i, p in enumerate(passes):
        if not p:
            raise ValueError(f"passes[{i}] is empty: every task needs at least one sample")
        for j, x in enumerate(p):
            if getattr(getattr(x, "dtype", None), "kind", "") in ("b", "i", "u"):
                x = x.item()  # a numpy bool or integer, as from a 2-d bool array (issue 24)
            if not isinstance(x, (bool, int)) or x not in (0, 1):
                raise TypeError(f"passes[{i}][{j}] must be a bool, got {x!r}")
    return task_ids, [[bool(x) for x in p] for p in passes]


def table_rows(path: str, header: list[str], rows: list[list]) -> list[str]:
    """Write a table (Parquet, CSV/TSV or JSON Lines, by suffix) atomically."""
    name = logical_name(path)
    if name.endswith((".parquet", ".pq")):
        pq = _optional("pyarrow.parquet", path, "Parquet", "parquet")
        import pyarrow as pa
        table = pa.table({h: [r[i] for r in rows] for i, h in enumerate(header)})
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with atomic_path(path) as tmp:
            pq.write_table(table, tmp)
        return [path]
    if not name.endswith((".csv", ".tsv")):
        return dump_lines(path, (dict(zip(header, r, strict=True)) for r in rows))
    text = io.StringIO()
    csv.writer(text, delimiter="\t" if name.endswith(".tsv") else ",",
               lineterminator="\n").writerows([header, *rows])
    with atomic_stream(path) as f:
        f.write(text.getvalue().encode())
    return [path]


def write_counts(path: str | os.PathLike, counts: Counts) -> list[str]:
    """Write ``counts`` as a count table (JSON Lines, CSV/TSV or Parquet, by suffix): the
    group fields, then ``task_id``, ``n`` and ``c``.

    Examples
    --------
    >>> import os, pathlib, tempfile
    >>> from passatk.archives import Counts, write_counts
    >>> path = os.path.join(tempfile.mkdtemp(), "counts.csv")
    >>> _ = write_counts(path, Counts.from_rows([({"model": "a"}, "T/0", 10, 4)]))
    >>> print(pathlib.Path(path).read_text(), end="")
    model,task_id,n,c
    a,T/0,10,4
    """
    if not isinstance(counts, Counts):
        raise TypeError(f"counts must be Counts, got {type(counts).__name__}")
    header = [*dict.fromkeys(name for g in counts.groups for name, _ in g), "task_id", "n", "c"]
    rows = [[r.get(f) for f in header] for r in counts.to_rows()]
    return table_rows(os.fspath(path), header, rows)
