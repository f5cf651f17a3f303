"""The double-double table of ln(i!) for 0 <= i <= 2**17, shipped as package data.

``build(nmax)`` recomputes it from 50-digit :mod:`decimal` logarithms; the shipped file was
written by ``python -m passatk._lnfact`` and the tests rebuild a slice and compare bit for bit.
"""

from __future__ import annotations

import threading
from decimal import Decimal, localcontext
from pathlib import Path

import numpy as np

TABLE_MAX = 2**17
_PATH = Path(__file__).with_name("data") / "lnfact_dd.npy"
_lock = threading.Lock()
_table: tuple[np.ndarray, np.ndarray] | None = None


def build(nmax: int) -> tuple[np.ndarray, np.ndarray]:
    """Return (hi, lo) with hi[i] + lo[i] = ln(i!) to about 2**-106 relative."""
    hi = np.zeros(nmax + 1)
    lo = np.zeros(nmax + 1)
    with localcontext() as ctx:
        ctx.prec = 50
        s = Decimal(0)
        for i in range(2, nmax + 1):
            s += Decimal(i).ln()
            h = float(s)
            hi[i] = h
            lo[i] = float(s - Decimal(h))
    return hi, lo


def table() -> tuple[np.ndarray, np.ndarray]:
    """The shipped table, loaded once under a lock and read-only afterwards."""
    global _table
    t = _table
    if t is None:
        with _lock:
            if _table is None:
                data = np.load(_PATH)
                hi = np.ascontiguousarray(data[0])
                lo = np.ascontiguousarray(data[1])
                hi.flags.writeable = False
                lo.flags.writeable = False
                _table = (hi, lo)
            t = _table
    return t


if __name__ == "__main__":  # pragma: no cover - regenerates the package data
    h, l = build(TABLE_MAX)
    np.save(_PATH, np.stack([h, l]))
