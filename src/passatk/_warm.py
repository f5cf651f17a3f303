"""Start numba and load passatk's compiled kernels in a background thread.

numba's first call in a process costs about 0.3-0.5 s (its CPU target starts, then the cached
machine code of each kernel loads), mostly holding the GIL. ``passatk score`` pays it after
reading; when the archives are read in worker processes the main thread only waits on them, so
the CLI starts this thread first and the two overlap. In-process reading would only contend
with it for the GIL, so the CLI does not start it then.
"""

from __future__ import annotations

import threading

__all__ = ["start"]


def _load() -> None:
    import numpy as np

    from .stats import score

    try:
        score(np.array([4, 6]), np.array([1, 3]), [1, 2])
    except Exception:  # pragma: no cover - the real call reports any problem itself
        pass


def start() -> threading.Thread:
    """A started daemon thread that loads the kernels ``passatk.score`` calls first.

    >>> start().join()
    """
    thread = threading.Thread(target=_load, name="passatk-warm", daemon=True)
    thread.start()
    return thread
