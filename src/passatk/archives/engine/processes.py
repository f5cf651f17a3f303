"""Reading archives in local worker processes (``read_counts(..., workers=N)``).

The units of work are the Dask engine's (:mod:`._parts`): a file, or a byte range of a large
uncompressed JSON Lines or CSV file cut at line boundaries (:mod:`._ranges`); consecutive
small files go out together (:func:`plan_batches`). They
run in a process pool started with ``forkserver`` (``spawn`` where that is missing), so that no
numba or OpenMP threads of the caller are copied into a child; only the command line, whose
process is known to be clean when it starts reading, forks (:func:`launching`). The parts
are merged in file order, so the Counts, errors included, are those of the sequential read.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextvars import ContextVar
from typing import NamedTuple

from passatk._limits import check_worker_count
from passatk.archives.context import Options
from passatk.archives.counts import Counts
from passatk.archives.engine.dask_engine import DEFAULT_SPLIT_BYTES
from passatk.archives.engine.parts import (
    combine,
    finish_file,
    read_files,
    read_range,
    split_candidate,
    to_counts,
)
from passatk.archives.harnesses.registry import HARNESSES
from passatk.archives.io.opening import file_size, is_stream
from passatk.archives.io.ranges import plan_ranges
from passatk.archives.io.remote import current_options, is_url

__all__ = ["MIN_FORKED_PARALLEL_BYTES", "MIN_PARALLEL_BYTES", "check_workers", "launching",
           "pool_size", "range_bytes", "read_in_processes"]

#: with ``workers=None``, the input size from which all CPUs are used: below it the workers'
#: start (a fresh interpreter importing numpy and the readers, cold caches) costs about what
#: they save (docs/benchmarks.md, "Local worker processes")
MIN_PARALLEL_BYTES = 256 << 20
#: the same where the command line forks its workers (:func:`launching`): they start in
#: milliseconds, and the command loads its kernels while they read; two processes were as
#: fast as one at 30 MB and 8-14% faster from 65 MB (docs/benchmarks.md)
MIN_FORKED_PARALLEL_BYTES = 64 << 20


def check_workers(workers: object) -> int | None:
    """``workers`` as a positive int or None, or TypeError / ValueError naming it."""
    if workers is None:
        return None
    if isinstance(workers, bool) or not isinstance(workers, int):
        raise TypeError(f"workers must be an int or None, got {type(workers).__name__}")
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    return check_worker_count(workers, "workers")


def pool_size(files: list[str], workers: int | None) -> int:
    """How many processes to read ``files`` in (1: in this process). ``None``: every CPU
    when the files hold at least MIN_PARALLEL_BYTES (MIN_FORKED_PARALLEL_BYTES where the
    command line forks its workers). Standard input, pipes and URLs are
    read here, and so is everything when ``__main__`` is a script read from stdin."""
    if workers == 1 or any(is_stream(f) or is_url(f) for f in files) or not _main_importable():
        return 1
    if workers is None:
        launch = _LAUNCH.get()
        forked = launch is not None and launch.fork_when_clean and _clean_for_fork()
        least = MIN_FORKED_PARALLEL_BYTES if forked else MIN_PARALLEL_BYTES
        big = sum(file_size(f) for f in files) >= least
        return (os.cpu_count() or 1) if big else 1
    return workers


def range_bytes(remaining: int, workers: int) -> int:
    """The byte-range size for a file that starts with ``remaining`` bytes of the read still
    to go: 64 MiB (``DEFAULT_SPLIT_BYTES``), or a share of what remains, ``remaining / (2 *
    workers)``, when that is larger (guided self-scheduling, Polychronopoulos and Kuck 1987).
    Early files are read whole, since each range costs its worker a little (opening the
    file, the lines at its cuts); the last are cut finer, so that the workers finish
    together.

    >>> [range_bytes(r << 20, 2) >> 20 for r in (2400, 1200, 900, 600, 300)]
    [600, 300, 225, 150, 75]
    >>> range_bytes(100 << 20, 2) >> 20  # never below 64 MiB
    64
    """
    return max(DEFAULT_SPLIT_BYTES, remaining // (2 * workers))


#: how far past an even share the files read whole may load a worker before a file is cut: a
#: byte range costs its worker about 2 ms (opening, the line at its cut), some 3 MB of reading
BALANCE_SLACK = 8 << 20


def plan_files(sizes: list[int], splittable: list[bool], workers: int,
               split_bytes: int | None = None) -> list[list[tuple[int, int]]]:
    """For each file, its byte ranges, or ``[]`` to read it whole.

    With ``split_bytes``, a splittable file larger than it is cut in as many ranges of equal
    size. Without, the pool is followed as it will run (each file or range to the least
    loaded worker, load in bytes): a file is read whole while that keeps its worker within
    ``BALANCE_SLACK`` of an even share of all the bytes, and otherwise, when splittable, cut
    in ranges of ``range_bytes`` of what remains from its start.

    >>> [len(r) for r in plan_files([300 << 20] * 8, [True] * 8, 2)]  # they balance whole
    [0, 0, 0, 0, 0, 0, 0, 0]
    >>> [len(r) for r in plan_files([300 << 20] * 7, [True] * 7, 2)]
    [0, 0, 0, 0, 0, 0, 4]
    >>> plan_files([10, 10], [True, False], 2, split_bytes=4)
    [[(0, 4), (4, 8), (8, 10)], []]
    """
    remaining, plans = sum(sizes), []
    loads, share = [0] * workers, sum(sizes) / workers
    for size, split in zip(sizes, splittable, strict=True):
        unit = split_bytes or range_bytes(remaining, workers)
        remaining -= size
        balanced = min(loads) + size <= share + BALANCE_SLACK
        if split and size > unit and (split_bytes or not balanced):
            ranges = plan_ranges(size, -(-size // -(-size // unit)))  # equal ranges
        else:
            ranges = []
        for s, e in ranges or [(0, size)]:
            loads[loads.index(min(loads))] += e - s
        plans.append(ranges)
    return plans


#: the least a batch of whole files holds before it is handed out (:func:`plan_batches`)
MIN_BATCH_BYTES = 16 << 20
#: the most: a worker holds a batch's counts until it returns them (a count table's are
#: several times its bytes), so a batch stays near the size of a byte range
MAX_BATCH_BYTES = DEFAULT_SPLIT_BYTES


def plan_batches(sizes: list[int], plans: list[list[tuple[int, int]]],
                 workers: int) -> list[list[int]]:
    """The units of work in file order: a file read in ranges alone, and consecutive files
    read whole in batches of at least MIN_BATCH_BYTES, or of a share of what remains,
    ``remaining / (2 * workers)``, when that is larger (guided, as :func:`range_bytes`), up
    to MAX_BATCH_BYTES (a batch's last file may take it past either).
    Each unit costs the parent a result to take and the next unit to hand out, and while
    it loads the kernels those wait for the GIL: 100 files of 4.5 MB one at a time left
    the workers idle a third of the time.

    >>> plan_batches([10 << 20] * 6, [[]] * 6, 2)
    [[0, 1], [2, 3], [4, 5]]
    >>> plan_batches([10, 10, 10], [[], [(0, 5), (5, 10)], []], 2)
    [[0], [1], [2]]
    """
    batches: list[list[int]] = []
    remaining, budget = sum(sizes), 0
    for i, (size, ranges) in enumerate(zip(sizes, plans, strict=True)):
        if not ranges and budget > 0:  # the open batch has room
            batches[-1].append(i)
            budget -= size
        else:
            batches.append([i])
            share = min(MAX_BATCH_BYTES, max(MIN_BATCH_BYTES, remaining // (2 * workers)))
            budget = 0 if ranges else share - size
        remaining -= size
    return batches


def _main_importable() -> bool:
    """A new worker imports ``__main__`` by its path: a script read from stdin has none."""
    main = getattr(sys.modules.get("__main__"), "__file__", None)
    return main is None or os.path.exists(main)


#: imported once by the fork server, so that each worker forked from it starts warm: a worker
#: that imports these itself spends 0.1-0.3 s on it (numpy, every reader) before its first file
PRELOAD = ("__main__", "numpy", "msgspec", "passatk.archives.engine.parts", "passatk.archives.read",
           "passatk.archives.harnesses._humaneval_scan",
           *(f"passatk.archives.{h}" for h in HARNESSES))


class _Launch(NamedTuple):
    """How the command line asks for its pools (see :func:`launching`)."""

    fork_when_clean: bool
    after_start: Callable[[], object] | None


_LAUNCH: ContextVar[_Launch | None] = ContextVar("passatk_launch", default=None)


@contextlib.contextmanager
def launching(after_start: Callable[[], object] | None = None,
              fork_when_clean: bool = True) -> Iterator[None]:
    """Within it (in this context only), a pool forks its workers when this process is clean
    for ``fork`` (one thread; neither numba nor pyarrow loaded: no native thread pools) and
    calls ``after_start`` once they run. The command line uses it: its process is clean when
    it starts reading, ``fork`` starts a worker in milliseconds where the fork server takes
    about 0.1 s, and ``after_start`` then loads the kernels while the workers read."""
    token = _LAUNCH.set(_Launch(fork_when_clean, after_start))
    try:
        yield
    finally:
        _LAUNCH.reset(token)


def _clean_for_fork() -> bool:
    return ("fork" in multiprocessing.get_all_start_methods()
            and threading.active_count() == 1
            and not any(m in sys.modules for m in ("numba", "pyarrow", "torch")))


def _context():
    launch = _LAUNCH.get()
    if launch is not None and launch.fork_when_clean and _clean_for_fork():
        # the workers inherit numpy instead of each importing it (about 45 ms of CPU each);
        # OpenBLAS's threads, if any, are shut around a fork by its own handlers
        import numpy  # noqa: F401
        return multiprocessing.get_context("fork")
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    # the process-wide preload list; "__main__" (the default) stays first. A fork server
    # already running keeps what it has.
    ctx.set_forkserver_preload(list(PRELOAD))
    return ctx


#: signals whose default action ends this process: while its workers run, each ends them first
ENDING_SIGNALS = tuple(getattr(signal, s) for s in ("SIGTERM", "SIGHUP") if hasattr(signal, s))


def _worker_start() -> None:
    """Each worker: the default action for SIGTERM and SIGHUP (a forked worker inherits the
    parent's handlers), and, on Linux, SIGKILL when its parent dies however it dies."""
    for sig in ENDING_SIGNALS:
        signal.signal(sig, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            import ctypes

            ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _raise_exit(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


@contextlib.contextmanager
def _workers_end_with_the_read(pool: ProcessPoolExecutor) -> Iterator[None]:
    """While ``pool`` reads: SIGTERM and SIGHUP (where they have their default action, in the
    main thread) become SystemExit(128 + signal); that, Ctrl-C or any error ends every worker
    before it propagates, instead of leaving them reading as orphans."""
    installed = {}
    if threading.current_thread() is threading.main_thread():
        for sig in ENDING_SIGNALS:
            if signal.getsignal(sig) == signal.SIG_DFL:
                installed[sig] = signal.signal(sig, _raise_exit)
    try:
        yield
    except BaseException:
        processes = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for p in processes:
            with contextlib.suppress(OSError, ValueError, AttributeError):
                p.terminate()
        for p in processes:
            with contextlib.suppress(OSError, ValueError, AttributeError, AssertionError):
                p.join(5)
        raise
    finally:
        for sig, old in installed.items():
            signal.signal(sig, old)


def read_in_processes(files: list[str], fmt: str | None, opts: Options, filtering: bool,
                      named: set[str], merge: bool, *, workers: int,
                      progress: Callable[[int, int], None] | None = None,
                      split_bytes: int | None = None) -> Counts:
    """Read ``files`` in ``workers`` processes; the same Counts as the sequential read.

    A large file is read in byte ranges of ``split_bytes``; by default (None) of
    ``range_bytes``."""
    if split_bytes is not None and (isinstance(split_bytes, bool)
                                    or not isinstance(split_bytes, int)):
        raise TypeError(f"split_bytes must be an int, got {type(split_bytes).__name__}")
    if split_bytes is not None and split_bytes < 1:
        raise ValueError(f"split_bytes must be at least 1, got {split_bytes}")
    sizes = [file_size(f) for f in files]
    storage = current_options()
    plans = plan_files(sizes, [split_candidate(f) for f in files], workers, split_bytes)
    given = [os.path.normpath(f) in named for f in files]
    with (ProcessPoolExecutor(max_workers=workers, mp_context=_context(),
                              initializer=_worker_start) as pool,
          _workers_end_with_the_read(pool)):
        units: list[tuple[list[int], bool, list[Future]]] = []
        for batch in plan_batches(sizes, plans, workers):
            i = batch[0]
            if plans[i]:
                futures = [pool.submit(read_range, files[i], s, e, fmt, opts, filtering,
                                       given[i], storage) for s, e in plans[i]]
            else:
                futures = [pool.submit(read_files, [(files[j], given[j]) for j in batch], fmt,
                                       opts, filtering, storage)]
            units.append((batch, bool(plans[i]), futures))
        launch = _LAUNCH.get()
        if launch is not None and launch.after_start is not None:
            launch.after_start()  # the workers run: with fork, threads are safe from here
        total, done = sum(sizes), 0
        parts = []
        for batch, ranged, futures in units:  # in file order: errors too
            if ranged:
                i = batch[0]
                parts.append(finish_file(files[i], fmt, opts, filtering, given[i], storage,
                                         *(fut.result() for fut in futures)))
            else:
                parts.extend(futures[0].result())
            done += sum(sizes[j] for j in batch)
            if progress is not None:
                progress(done, total)
    return to_counts(combine(*parts, pool=merge == "allow-duplicates"), opts, files, merge)
