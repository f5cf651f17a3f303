"""The limits of passatk, each defined once (stdlib only: the archive readers import them
without numpy; :mod:`passatk._validation` re-exports them with the rules that use them)."""

#: Counts must be exact in a double: n < 2**53.
MAX_N = 2**53
#: The largest n of the ln(i!) table (``_lnfact``); larger n take the table-free paths.
TABLE_MAX = 2**17
#: The most bootstrap resamples (or random sign patterns) one call may ask for.
MAX_RESAMPLES = 10**7
#: The most values one ``simulate`` call draws (n_tasks x n_benchmarks): it holds three
#: arrays of 8 bytes per value, 1.5 GiB at this bound.
MAX_SIMULATED = 2**26
#: Worker processes per CPU that one read may start (``workers=``, ``--jobs``, ``local:N``).
WORKERS_PER_CPU = 4


def max_workers() -> int:
    """The most worker processes one read may start: ``WORKERS_PER_CPU`` per CPU, or the
    positive integer in the environment variable ``PASSATK_MAX_WORKERS``.

    >>> import os
    >>> cap = int(os.environ.get("PASSATK_MAX_WORKERS", 0)) or WORKERS_PER_CPU * (
    ...     os.cpu_count() or 1)
    >>> max_workers() == cap
    True
    """
    import os

    text = os.environ.get("PASSATK_MAX_WORKERS", "").strip()
    if text:
        if not (text.isascii() and text.isdigit() and len(text) <= 6 and int(text) >= 1):
            raise ValueError(f"PASSATK_MAX_WORKERS must be a positive integer of at most 6 "
                             f"digits, got {text[:40]!r}")
        return int(text)
    return WORKERS_PER_CPU * (os.cpu_count() or 1)


def check_worker_count(workers: int, name: str) -> int:
    """``workers`` (an int >= 1) if at most :func:`max_workers`, else a ValueError naming
    ``name``: each worker is a process, and a huge count exhausts memory before it runs."""
    cap = max_workers()
    if workers > cap:
        shown = f"{workers}" if workers < 10**30 else "an integer of 31 digits or more"
        raise ValueError(f"{name} must be at most {cap} ({WORKERS_PER_CPU} worker processes "
                         f"per CPU; set PASSATK_MAX_WORKERS to allow more), got {shown}")
    return workers
