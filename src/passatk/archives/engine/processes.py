"""Units of work in local worker processes (forkserver, else spawn; fork only in launching())."""

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from typing import Any

#: ``workers=None``: every CPU from this size, lower where workers fork (docs/benchmarks.md)
MIN_PARALLEL_BYTES = 256 << 20
MIN_FORKED_PARALLEL_BYTES = 64 << 20
#: signals whose default action ends this process: while its workers run, each ends them first
ENDING_SIGNALS = tuple(getattr(signal, s) for s in ("SIGTERM", "SIGHUP") if hasattr(signal, s))
_LAUNCH: ContextVar[tuple | None] = ContextVar("passatk_launch", default=None)


def main_importable() -> bool:
    """A new worker imports ``__main__`` by its path: a script read from stdin has none."""
    main = getattr(sys.modules.get("__main__"), "__file__", None)
    return main is None or os.path.exists(main)


@contextlib.contextmanager
def launching(after_start: Callable[[], object] | None = None,
              fork_when_clean: bool = True) -> Iterator[None]:
    """Within it, pools fork their workers where this process is clean (one thread, no native
    thread pools), and call ``after_start`` once they run (docs/architecture.md)."""
    token = _LAUNCH.set((fork_when_clean, after_start))
    try:
        yield
    finally:
        _LAUNCH.reset(token)


def _clean_for_fork() -> bool:
    import multiprocessing  # here: a read that starts no pool does not import it
    return ("fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1
            and not any(m in sys.modules for m in ("numba", "pyarrow", "torch")))


def forks() -> bool:
    launch = _LAUNCH.get()
    return launch is not None and launch[0] and _clean_for_fork()


def _context(preload: Sequence[str]) -> Any:
    import multiprocessing
    if forks():
        import numpy  # noqa: F401 (the workers inherit it instead of each importing it)
        return multiprocessing.get_context("fork")
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["__main__", *preload])  # a server already running keeps its
    return ctx


def _worker_start() -> None:
    """Default SIGTERM and SIGHUP (not the parent's), and SIGKILL when the parent dies."""
    for sig in ENDING_SIGNALS:
        signal.signal(sig, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            import ctypes
            ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


@contextlib.contextmanager
def _workers_end_with_the_read(pool: Any) -> Iterator[None]:
    """SIGTERM/SIGHUP become SystemExit(128 + signal); that or any error ends the workers."""
    main = threading.current_thread() is threading.main_thread()
    installed = {sig: signal.signal(sig, lambda signum, _: sys.exit(128 + signum))
                 for sig in ENDING_SIGNALS if main and signal.getsignal(sig) == signal.SIG_DFL}
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
    """``[fn(u) for u in units]`` in ``workers`` processes; progress in ``weights`` per unit."""
    from concurrent.futures import ProcessPoolExecutor
    weights = list(weights) if weights is not None else [1] * len(units)
    with (ProcessPoolExecutor(max_workers=workers, mp_context=_context(preload),
                              initializer=_worker_start) as pool,
          _workers_end_with_the_read(pool)):
        futures = [pool.submit(fn, unit) for unit in units]
        if (launch := _LAUNCH.get()) is not None and launch[1] is not None:
            launch[1]()  # the workers run: with fork, threads are safe from here
        total, done, out = sum(weights), 0, []
        for future, weight in zip(futures, weights, strict=True):  # in order: errors too
            out.append(future.result())
            done += weight
            if progress is not None:
                progress(done, total)
    return out
