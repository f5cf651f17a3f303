"""Numba kernels for ``passatk.rl``: group factorization, the CSR layout, and advantages.

Kernels see typed arrays only; validation and messages live in ``rl._groups`` and
``rl._advantages``. Everything is compiled through ``_jit.jit`` (cache, nogil, no fastmath).
"""

import numpy as np

from ._jit import jit

_MIX = np.uint64(0x9E3779B97F4A7C15)
_SHIFT = np.uint64(29)


@jit(inline="always")
def _hash_row(rows, i):
    h = np.uint64(0xCBF29CE484222325)
    for j in range(rows.shape[1]):
        h = (h ^ np.uint64(rows[i, j])) * _MIX
        h = h ^ (h >> _SHIFT)
    return h


@jit(inline="always")
def _rows_equal(rows, a, b):
    for j in range(rows.shape[1]):
        if rows[a, j] != rows[b, j]:
            return False
    return True


@jit
def factorize_rows(rows):
    """Codes in first-appearance order for the rows of a 2-D unsigned-int array.

    Returns ``(codes, first)``: ``codes[i]`` is the group of row i and ``first[g]`` the
    index of the first row of group g. Open addressing with linear probing; equal rows
    (byte for byte) are one group.
    """
    size = rows.shape[0]
    cap = 16
    while cap < 2 * size:
        cap *= 2
    mask = np.uint64(cap - 1)
    table = np.full(cap, -1, np.int64)
    codes = np.empty(size, np.int64)
    first = np.empty(size, np.int64)
    count = 0
    for i in range(size):
        slot = np.int64(_hash_row(rows, i) & mask)
        while True:
            code = table[slot]
            if code < 0:
                table[slot] = count
                first[count] = i
                codes[i] = count
                count += 1
                break
            if _rows_equal(rows, first[code], i):
                codes[i] = code
                break
            slot = (slot + 1) & (cap - 1)
    return codes, first[:count].copy()


@jit
def csr(codes, count, holes):
    """Stable counting sort of rollouts by group code; rollouts with ``holes[i]`` are left out.

    Returns ``(order, offsets, first)``: the rollouts of group g are
    ``order[offsets[g]:offsets[g+1]]`` in input order; ``first[g]`` is the position of the
    group's first rollout, holes included.
    """
    offsets = np.zeros(count + 1, np.int64)
    first = np.full(count, -1, np.int64)
    for i in range(codes.size):
        code = codes[i]
        if first[code] < 0:
            first[code] = i
        if not holes[i]:
            offsets[code + 1] += 1
    for g in range(count):
        offsets[g + 1] += offsets[g]
    fill = offsets[:-1].copy()
    order = np.empty(offsets[count], np.int64)
    for i in range(codes.size):
        if not holes[i]:
            code = codes[i]
            order[fill[code]] = i
            fill[code] += 1
    return order, offsets, first
