"""Timing helpers shared by the bench modules (imported by name: bench/ is on sys.path)."""

import time


def best_of(fn, reps=3):
    """The best wall time of ``reps`` calls of ``fn``, in seconds."""
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best
