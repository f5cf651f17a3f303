"""Running units of work in this process, in order."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["map_local"]


def map_local(fn: Callable[[Any], Any], units: Sequence[Any], *,
              stop: Callable[[Any], bool] | None = None) -> list[Any]:
    """``[fn(u) for u in units]``, in order; ``stop(result)`` true ends it early (the read
    has failed: what follows cannot change the outcome)."""
    out = []
    for unit in units:
        out.append(fn(unit))
        if stop is not None and stop(out[-1]):
            break
    return out
