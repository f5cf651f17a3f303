"""Plans in bytes: a read cut into units (whole files, batches, byte ranges); sizes only."""

DEFAULT_SPLIT_BYTES = 64 << 20  # a Dask read's byte range, and the least of a local worker's
BALANCE_SLACK = 8 << 20  # a range costs its worker about 2 ms, some 3 MB of reading
MIN_BATCH_BYTES = 16 << 20  # the least a batch of whole files holds
MAX_BATCH_BYTES = DEFAULT_SPLIT_BYTES  # a worker holds a batch's counts until it returns them


def plan_ranges(size: int, split_bytes: int) -> list[tuple[int, int]]:
    """Ranges ``[start, end)`` of ``split_bytes`` (the last shorter) that tile ``[0, size)``."""
    if isinstance(split_bytes, bool) or not isinstance(split_bytes, int) or split_bytes < 1:
        raise ValueError(f"split_bytes must be a positive int, got {split_bytes!r}")
    return [(s, min(s + split_bytes, size)) for s in range(0, size, split_bytes)] or [(0, 0)]


def plan_files(sizes: list[int], splittable: list[bool], workers: int,
               split_bytes: int | None = None) -> list[list[tuple[int, int]]]:
    """For each file its byte ranges, or ``[]`` to read it whole (docs/architecture.md)."""
    remaining, plans = sum(sizes), []
    loads, share = [0] * workers, sum(sizes) / workers
    for size, split in zip(sizes, splittable, strict=True):
        unit = split_bytes or max(DEFAULT_SPLIT_BYTES, remaining // (2 * workers))
        remaining -= size
        balanced = min(loads) + size <= share + BALANCE_SLACK
        cut = split and size > unit and (split_bytes or not balanced)
        ranges = plan_ranges(size, -(-size // -(-size // unit))) if cut else []  # equal ranges
        for s, e in ranges or [(0, size)]:
            loads[loads.index(min(loads))] += e - s
        plans.append(ranges)
    return plans


def plan_batches(sizes: list[int], plans: list[list[tuple[int, int]]],
                 workers: int) -> list[list[int]]:
    """The units in file order: a file in ranges alone, whole files in batches."""
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
