"""Plans in bytes: how a read is cut into units of work (whole files, batches of small files,
byte ranges of large ones). Arithmetic on sizes only: what the bytes hold is the pipeline's."""

from __future__ import annotations

__all__ = ["DEFAULT_SPLIT_BYTES", "check_split_bytes", "plan_batches", "plan_files",
           "plan_ranges", "range_bytes"]

#: the byte-range size of a Dask read, and the least a local worker's range holds
DEFAULT_SPLIT_BYTES = 64 << 20


def check_split_bytes(split_bytes: object) -> int | None:
    """``split_bytes`` as a positive int or None, or TypeError / ValueError naming it."""
    if split_bytes is None:
        return None
    if isinstance(split_bytes, bool) or not isinstance(split_bytes, int):
        raise TypeError(f"split_bytes must be an int, got {type(split_bytes).__name__}")
    if split_bytes < 1:
        raise ValueError(f"split_bytes must be at least 1, got {split_bytes}")
    return split_bytes


def plan_ranges(size: int, split_bytes: int) -> list[tuple[int, int]]:
    """Nominal ranges ``[start, end)`` of about ``split_bytes`` that tile ``[0, size)``.

    >>> plan_ranges(10, 4)
    [(0, 4), (4, 8), (8, 10)]
    >>> plan_ranges(0, 4)
    [(0, 0)]
    """
    if isinstance(split_bytes, bool) or not isinstance(split_bytes, int) or split_bytes < 1:
        raise ValueError(f"split_bytes must be a positive int, got {split_bytes!r}")
    if size <= 0:
        return [(0, 0)]
    return [(s, min(s + split_bytes, size)) for s in range(0, size, split_bytes)]


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
