"""The process tuning of the ``passatk`` console entry point, in one place.

The command line itself (:mod:`passatk.cli`) only parses, calls the library and formats.
What this module does to the process around it:

* OpenBLAS is kept to one thread (passatk calls no BLAS);
* numba's BLAS probe is answered without importing ``scipy.linalg``;
* the numba kernels are loaded in a background thread while worker processes or a cluster
  read (:class:`Warm`);
* the process ends with ``os._exit`` after flushing (:func:`run`).

This module imports nothing of passatk's at import time, and nothing imports the command
line from here: :func:`run` is handed ``main``.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["Warm", "console", "run", "start_warm_thread"]

EXIT_ERROR = 2
_SCIPY_BLAS = "scipy.linalg.cython_blas"


@contextlib.contextmanager
def _without_scipy_blas() -> Iterator[None]:
    """numba's first compile probes for BLAS by importing scipy.linalg (0.2 s of its 0.5 s
    start when scipy is installed). passatk's kernels use no BLAS and the command line no
    scipy, so in this process the probe is told there is none; the entry is removed after."""
    blocked = "scipy.linalg" not in sys.modules and _SCIPY_BLAS not in sys.modules
    if blocked:
        sys.modules[_SCIPY_BLAS] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        if blocked and _SCIPY_BLAS in sys.modules and sys.modules[_SCIPY_BLAS] is None:
            del sys.modules[_SCIPY_BLAS]


@contextlib.contextmanager
def console() -> Iterator[None]:
    """The process settings of the console entry point, around the command line's ``main``
    (tests that run the command line in one process use them too).

    >>> with console():
    ...     pass
    """
    # numpy's OpenBLAS starts a thread per core at import that spins for about 0.1-0.2 s of
    # CPU; passatk calls no BLAS, and on a small machine the spinning takes the cores the
    # worker processes read on (they inherit this). A value the user set is kept.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    with _without_scipy_blas():
        yield


def _load() -> None:
    import numpy as np

    from .stats import score

    try:
        # large enough for the kernels (not the exact small-input path): it loads them
        score(np.full(4096, 200), np.arange(4096) % 201, [1, 2])
    except Exception:  # pragma: no cover - the real call reports any problem itself
        pass


def start_warm_thread() -> threading.Thread:
    """A started daemon thread that loads the kernels ``passatk.score`` calls first.

    numba's first call in a process costs about 0.3-0.5 s (its CPU target starts, then the
    cached machine code of each kernel loads), mostly holding the GIL. When the archives are
    read in worker processes the main thread only waits on them, so the two overlap.

    >>> start_warm_thread().join()
    """
    thread = threading.Thread(target=_load, name="passatk-warm", daemon=True)
    thread.start()
    return thread


class Warm:
    """The kernels loaded in a thread while others read: at once when a cluster reads, or
    when the local worker processes have started. In-process reading would only contend
    with it for the GIL, so the command line does not start it then.

    >>> w = Warm()
    >>> w.join()  # never started: nothing to wait for
    """

    def __init__(self, wanted: bool = True) -> None:
        self.thread: Any = None
        self.wanted = wanted  # False: the command calls no kernel (its load would only compete)

    def start(self) -> None:
        if self.thread is None and self.wanted:
            self.thread = start_warm_thread()

    def join(self) -> None:
        if self.thread is not None:
            self.thread.join()


def run(main: Callable[[], int]) -> None:
    """Run ``main()`` under :func:`console`, then end the process with its status.

    A normal interpreter exit spends 0.1-0.2 s tearing LLVM and numba's modules down once
    numba is loaded, and about 0.08 s CPU tearing numpy and the rest down when it is not
    (docs/benchmarks.md, "Issue 20"); by then everything passatk wrote is closed or flushed
    here, and no exit handler is left with work (pools and clusters are shut by ``main``), so
    the process ends at once with ``os._exit``.
    """
    with console():
        code = main()
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        pass  # the reader left: status 0, as in main
    except ValueError:  # standard output closed
        code = code or EXIT_ERROR
    try:
        sys.stderr.flush()
    finally:
        os._exit(code)
