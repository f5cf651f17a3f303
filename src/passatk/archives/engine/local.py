"""Running units of work in this process, in order."""

from collections.abc import Callable, Sequence
from typing import Any


def map_local(fn: Callable[[Any], Any], units: Sequence[Any], *,
              stop: Callable[[Any], bool] | None = None) -> list[Any]:
    """``[fn(u) for u in units]``; ``stop(result)`` true ends it (the read has failed)."""
    out = []
    for unit in units:
        out.append(fn(unit))
        if stop is not None and stop(out[-1]):
            break
    return out
