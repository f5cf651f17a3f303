"""Double-double tables shipped as package data: ln(i!) for 0 <= i <= 2**17 and
ln(1 + i/512) for -256 <= i <= 256.

``build(nmax)`` and ``build_ln1p(steps)`` recompute them from 50-digit :mod:`decimal`
logarithms; the shipped files were written by ``python -m passatk._lnfact`` and the tests
rebuild them (a slice of the first) and compare bit for bit.
"""

from __future__ import annotations

import threading
from decimal import Decimal, localcontext
from pathlib import Path

import numpy as np

from ._validation import TABLE_MAX

_PATH = Path(__file__).with_name("data") / "lnfact_dd.npy"
LN1P_PATH = Path(__file__).with_name("data") / "ln1p_dd.npy"
LN1P_STEPS = 512
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


def build_ln1p(steps: int) -> tuple[np.ndarray, np.ndarray]:
    """Return (hi, lo) with hi[j] + lo[j] = ln(1 + (j - steps/2)/steps), j = 0..steps."""
    hi = np.empty(steps + 1)
    lo = np.empty(steps + 1)
    with localcontext() as ctx:
        ctx.prec = 50
        for j, i in enumerate(range(-steps // 2, steps // 2 + 1)):
            x = (1 + Decimal(i) / steps).ln()
            hi[j] = float(x)
            lo[j] = float(x - Decimal(hi[j]))
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
    np.save(LN1P_PATH, np.stack(build_ln1p(LN1P_STEPS)))
