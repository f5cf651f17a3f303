"""What the writers of synthetic archives share (atomic, compressed streams; tables; checks);
:mod:`passatk.archives.harnesses.writing` picks the format's writer.

Files are written atomically by passatk._output's writer: to a temporary file in the same
directory, fsynced, then renamed.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import io
import json
import os
from collections.abc import Callable, Iterator, Sequence
from fractions import Fraction
from typing import NamedTuple

from passatk._output import atomic_open, atomic_path
from passatk.archives.counts import Counts
from passatk.archives.io.opening import logical_name
from passatk.reference import pass_at_k_exact

__all__ = ["WriteOptions", "atomic_stream", "check_passes", "dump_json", "table_rows",
           "write_counts"]


def mean_pass_at_k(passes: list[list[bool]], k: int) -> float:
    """The mean exact pass@k over tasks (``passes``: each task's pass flags), as a float."""
    total = sum((pass_at_k_exact(len(p), sum(p), k) for p in passes), Fraction(0))
    return float(total / len(passes))


@contextlib.contextmanager
def atomic_stream(path: str) -> Iterator:
    """A binary stream that replaces ``path`` atomically (passatk._output), compressing by
    suffix (.gz, .zst)."""
    compressor = None
    if path.endswith((".zst", ".zstd")):
        try:
            import zstandard
        except ImportError:
            raise ValueError(f"{path}: writing .zst needs the optional package zstandard "
                             "(pip install 'passatk[zstd]')") from None
        compressor = zstandard.ZstdCompressor()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with atomic_open(path, "wb") as raw:
        if path.endswith(".gz"):
            # the header names the target, not the temporary file: equal input, equal bytes
            name = os.path.basename(path)[: -len(".gz")]
            with gzip.GzipFile(name, mode="wb", fileobj=raw, mtime=0) as out:
                yield out
        elif compressor is not None:
            with compressor.stream_writer(raw, closefd=False) as out:
                yield out
        else:
            yield raw


def dump_json(path: str, obj: object) -> None:
    """Write ``obj`` as indented JSON, atomically (compressed by suffix)."""
    with atomic_stream(path) as f:
        f.write(json.dumps(obj, indent=1).encode() + b"\n")


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
    task_ids = list(task_ids)
    passes = [list(p) for p in passes]
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
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise ValueError(f"{path}: writing Parquet needs the optional package pyarrow "
                             "(pip install 'passatk[parquet]')") from None
        table = pa.table({h: [r[i] for r in rows] for i, h in enumerate(header)})
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with atomic_path(path) as tmp:
            pq.write_table(table, tmp)
        return [path]
    with atomic_stream(path) as f:
        if name.endswith((".csv", ".tsv")):
            text = io.StringIO()
            w = csv.writer(text, delimiter="\t" if name.endswith(".tsv") else ",",
                           lineterminator="\n")
            w.writerow(header)
            w.writerows(rows)
            f.write(text.getvalue().encode())
        else:
            for r in rows:
                f.write(json.dumps(dict(zip(header, r, strict=True))).encode() + b"\n")
    return [path]


def write_counts(path: str | os.PathLike, counts: Counts) -> list[str]:
    """Write ``counts`` as a count table (JSON Lines, CSV/TSV or Parquet, by suffix).

    Group fields become columns before ``task_id``, ``n`` and ``c``.

    Examples
    --------
    >>> import os, tempfile
    >>> from passatk.archives import Counts, read_counts, write_counts
    >>> counts = Counts.from_rows([({"model": "a"}, "T/0", 10, 4)])
    >>> path = os.path.join(tempfile.mkdtemp(), "counts.csv")
    >>> _ = write_counts(path, counts)
    >>> with open(path) as f:
    ...     print(f.read(), end="")
    model,task_id,n,c
    a,T/0,10,4
    >>> read_counts(path, by=["model"]).c.tolist()
    [4]
    """
    if not isinstance(counts, Counts):
        raise TypeError(f"counts must be Counts, got {type(counts).__name__}")
    fields: list[str] = []
    for g in counts.groups:
        for name, _ in g:
            if name not in fields:
                fields.append(name)
    header = [*fields, "task_id", "n", "c"]
    rows = [[r.get(f) for f in header] for r in counts.to_rows()]
    return table_rows(os.fspath(path), header, rows)
