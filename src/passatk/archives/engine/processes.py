"""Running units of work in local worker processes (``read_counts(..., workers=N)``).

The pool is started with ``forkserver`` (``spawn`` where that is missing), so that no numba or
OpenMP threads of the caller are copied into a child; only the command line, whose process is
known to be clean when it starts reading, forks (:func:`launching`). :func:`map_processes`
returns the results in the order of the units, whatever order they finish in; what a unit
reads is the caller's function (the pipeline's ``read_part``): nothing here knows.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

from passatk._limits import check_worker_count

__all__ = ["MIN_FORKED_PARALLEL_BYTES", "MIN_PARALLEL_BYTES", "check_workers", "forks",
           "launching", "main_importable", "map_processes"]

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


def main_importable() -> bool:
    """A new worker imports ``__main__`` by its path: a script read from stdin has none."""
    main = getattr(sys.modules.get("__main__"), "__file__", None)
    return main is None or os.path.exists(main)


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
    import multiprocessing  # here: a read that starts no pool does not import it

    return ("fork" in multiprocessing.get_all_start_methods()
            and threading.active_count() == 1
            and not any(m in sys.modules for m in ("numba", "pyarrow", "torch")))


def forks() -> bool:
    """Whether a pool started here forks its workers (see :func:`launching`)."""
    launch = _LAUNCH.get()
    return launch is not None and launch.fork_when_clean and _clean_for_fork()


def _context(preload: Sequence[str]) -> Any:
    import multiprocessing

    if forks():
        # the workers inherit numpy instead of each importing it (about 45 ms of CPU each);
        # OpenBLAS's threads, if any, are shut around a fork by its own handlers
        import numpy  # noqa: F401
        return multiprocessing.get_context("fork")
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    # the process-wide preload list (imported once by the fork server, so that each worker
    # starts warm); "__main__" (the default) stays first. A server already running keeps its.
    ctx.set_forkserver_preload(["__main__", *preload])
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


def map_processes(fn: Callable[[Any], Any], units: Sequence[Any], *, workers: int,
                  weights: Sequence[int] | None = None,
                  progress: Callable[[int, int], None] | None = None,
                  preload: Sequence[str] = ()) -> list[Any]:
    """``[fn(u) for u in units]``, computed in ``workers`` processes; ``progress(done, total)``
    after each unit in order, ``weights`` giving each unit's share (default 1 each).
    ``preload``: modules the fork server imports once for all its workers."""
    from concurrent.futures import ProcessPoolExecutor

    weights = list(weights) if weights is not None else [1] * len(units)
    with (ProcessPoolExecutor(max_workers=workers, mp_context=_context(preload),
                              initializer=_worker_start) as pool,
          _workers_end_with_the_read(pool)):
        futures = [pool.submit(fn, unit) for unit in units]
        launch = _LAUNCH.get()
        if launch is not None and launch.after_start is not None:
            launch.after_start()  # the workers run: with fork, threads are safe from here
        total, done, out = sum(weights), 0, []
        for future, weight in zip(futures, weights, strict=True):  # in order: errors too
            out.append(future.result())
            done += weight
            if progress is not None:
                progress(done, total)
    return out
