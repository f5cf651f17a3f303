"""Reading archives on a Dask cluster (``read_counts(..., scheduler=...)``).

One task per file, and one per byte range of large uncompressed JSON Lines and CSV files
(:mod:`._parts`), then an ordered tree reduction of the partial counts; the driver only lists
files, plans the tasks and turns the merged part into Counts. Dask retries the tasks of a worker
that dies; every task is a pure function of its file, so the numbers do not change.
"""

from __future__ import annotations

import itertools
import logging
import os
import re
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from passatk._limits import check_worker_count
from passatk._show import show
from passatk.archives.context import Options
from passatk.archives.counts import Counts
from passatk.archives.engine.parts import (
    combine,
    finish_file,
    read_file,
    read_range,
    split_candidate,
    to_counts,
)
from passatk.archives.errors import ArchiveError
from passatk.archives.io.opening import file_size
from passatk.archives.io.ranges import plan_ranges
from passatk.archives.io.remote import (
    PIN_KEY,
    current_options,
    etag,
    is_url,
    known_sizes,
    storage_options,
)

__all__ = ["DEFAULT_SPLIT_BYTES", "connect", "read_on_cluster"]

DEFAULT_SPLIT_BYTES = 64 << 20
FAN_IN = 8  # parts merged per reduction task
RETRIES = 2  # a task that raises (a dropped connection) runs again; bad input is returned
_LOCAL = re.compile(r"local:(\d{1,4300})\Z")
_ADDRESS = re.compile(r"(tcp|tls|ucx|ws|wss|inproc)://\S+\Z")


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise ValueError("a Dask scheduler needs the optional packages dask and distributed "
                         "(pip install 'passatk[dask]')") from None
    return distributed


def connect(scheduler: object) -> tuple[Any, Callable[[], None]]:
    """A ``distributed.Client`` for ``scheduler`` and the function that closes what was opened.

    ``scheduler`` is ``"local:N"`` (a LocalCluster of N single-threaded worker processes),
    a scheduler address ``"tcp://host:8786"``, or a ``distributed.Client`` (left open).
    """
    local = None
    if isinstance(scheduler, str):
        text = scheduler.strip()
        local = _LOCAL.match(text)
        if not local and not _ADDRESS.match(text):
            raise ValueError(f"scheduler must be 'tcp://HOST:PORT' or 'local:N', got "
                             f"{show(scheduler)}")
        if local:  # before anything starts: a huge N would build its worker specs first
            check_worker_count(int(local.group(1)) or 1, "the N of scheduler 'local:N'")
    elif type(scheduler).__name__ != "Client":
        raise TypeError("scheduler must be an address str ('tcp://HOST:PORT', 'local:N') or a "
                        f"distributed.Client, got {type(scheduler).__name__}")
    distributed = _distributed()
    if isinstance(scheduler, distributed.Client):
        return scheduler, lambda: None
    if local:
        workers = int(local.group(1))
        if workers < 1:
            raise ValueError(f"scheduler 'local:N' needs N >= 1, got {scheduler!r}")
        cluster = distributed.LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0",
            silence_logs=logging.ERROR)
        client = distributed.Client(cluster)

        def close() -> None:
            client.close()
            cluster.close()

        return client, close
    try:
        client = distributed.Client(text, timeout="10s")
    except (OSError, TimeoutError) as e:
        raise ValueError(f"cannot connect to the Dask scheduler at {text}: "
                         f"{' '.join(str(e).split())}") from None
    return client, client.close


def _sizes(files: list[str], storage: dict) -> dict[str, int]:
    """Sizes of the files that may be split (the listing does not keep them)."""
    candidates = [f for f in files if split_candidate(f)]
    known = known_sizes()  # from the listing: no request for these

    def size(file: str) -> int:
        if file in known:
            return known[file]
        with storage_options(storage):  # a pool thread does not inherit the caller's
            return file_size(file)

    if not candidates:
        return {}
    with ThreadPoolExecutor(max_workers=16) as pool:
        return dict(zip(candidates, pool.map(size, candidates), strict=True))


def _pinned(file: str, storage: dict) -> dict:
    """The storage options of the tasks that read parts of ``file``: with the object's ETag
    when it is a URL, so that a part read after the object changed is an error, not a part of
    another version (each task opens the object itself)."""
    if not is_url(file):
        return storage
    with storage_options(storage):
        tag = etag(file)
    return storage if tag is None else {**storage, PIN_KEY: {file: tag}}


def _submit_all(client: Any, files: list[str], fmt: str | None, opts: Options,
                filtering: bool, named: set[str], split_bytes: int,
                merge: bool = False) -> tuple[Any, list[Any]]:
    """Submit the read, range and reduction tasks; return the root and every future."""
    storage = current_options()
    sizes = _sizes(files, storage)
    run = uuid.uuid4().hex[:12]
    counter = itertools.count()
    every: list[Any] = []

    def submit(fn: Callable, *args: Any, **kw: Any) -> Any:
        name = fn.__name__.replace("_", "-")
        future = client.submit(fn, *args, **kw, key=f"passatk-{name}-{run}-{next(counter)}",
                               pure=False, retries=RETRIES)
        every.append(future)
        return future

    level = []
    for f in files:
        size = sizes.get(f, 0)
        given = os.path.normpath(f) in named
        if size > split_bytes:
            pinned = _pinned(f, storage)
            ranges = [submit(read_range, f, s, e, fmt, opts, filtering, given, pinned)
                      for s, e in plan_ranges(size, split_bytes)]
            level.append(submit(finish_file, f, fmt, opts, filtering, given, pinned, *ranges))
        else:
            level.append(submit(read_file, f, fmt, opts, filtering, given, storage))
    while len(level) > 1:
        level = [submit(combine, *level[i:i + FAN_IN], pool=merge == "allow-duplicates")
                 for i in range(0, len(level), FAN_IN)]
    return level[0], every


def read_on_cluster(files: list[str], fmt: str | None, opts: Options, filtering: bool,
                    named: set[str], merge: bool, *, scheduler: object,
                    progress: Callable[[int, int], None] | None = None,
                    split_bytes: int | None = None) -> Counts:
    """Read ``files`` on a Dask cluster; the same Counts as the sequential read."""
    if split_bytes is None:
        split_bytes = DEFAULT_SPLIT_BYTES
    elif isinstance(split_bytes, bool) or not isinstance(split_bytes, int):
        raise TypeError(f"split_bytes must be an int, got {type(split_bytes).__name__}")
    elif split_bytes < 1:
        raise ValueError(f"split_bytes must be at least 1, got {split_bytes}")
    client, close = connect(scheduler)
    try:
        root, every = _submit_all(client, files, fmt, opts, filtering, named, split_bytes, merge)
        distributed = _distributed()
        total = len(every)
        try:
            for done, _ in enumerate(distributed.as_completed(every), start=1):
                if progress is not None:
                    progress(done, total)
            part = root.result()
        except (ArchiveError, OSError, ValueError, TypeError):
            raise
        except Exception as e:  # KilledWorker, CancelledError, ...: one line, not a traceback
            raise OSError(f"the Dask run failed: {type(e).__name__}: "
                          f"{' '.join(str(e).split())[:300]}") from None
        finally:
            client.cancel(every)
    finally:
        close()
    return to_counts(part, opts, files, merge)
