"""passatk: fast, exact pass@k for code-generation and RLVR evaluation.

The public names are loaded on first use (PEP 562), so ``import passatk`` and
``import passatk.archives`` stay cheap and numba is imported only when a kernel is needed.

>>> import passatk
>>> passatk.pass_at_k(10, 2, 3)
0.5333333333333333
"""

from importlib import import_module as _import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time the names load on first use
    from . import archives, plot, reference, rl, stats  # noqa: F401 (PEP 562 attributes)
    from ._api import fail_at_k, pass_at_k, pass_at_k_curve, pass_at_k_plugin, pass_hat_k
    from .stats import (
        compare,
        leaderboard,
        min_detectable_effect,
        samples_needed,
        score,
        simulate,
        task_variance,
        tasks_needed,
    )

    __version__: str

#: public name -> the module that defines it
_LAZY = {
    "fail_at_k": "._api",
    "pass_at_k": "._api",
    "pass_at_k_curve": "._api",
    "pass_at_k_plugin": "._api",
    "pass_hat_k": "._api",
    "compare": ".stats",
    "leaderboard": ".stats",
    "min_detectable_effect": ".stats",
    "samples_needed": ".stats",
    "score": ".stats",
    "simulate": ".stats",
    "task_variance": ".stats",
    "tasks_needed": ".stats",
}
_SUBMODULES = ("archives", "plot", "reference", "rl", "stats")


def _version():
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("passatk")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0.0.0+unknown"


def _load(name: str) -> object:
    """The public ``name``, imported on first use and kept in the module's namespace."""
    if name in _LAZY:
        value = getattr(_import_module(_LAZY[name], __name__), name)
    elif name in _SUBMODULES:
        value = _import_module("." + name, __name__)
    elif name == "__version__":
        value = _version()
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


if not TYPE_CHECKING:  # type checkers see the imports above, and flag any other name
    __getattr__ = _load


def __dir__() -> list[str]:
    return sorted({*__all__, *_SUBMODULES})


__all__ = [
    "__version__",
    "compare",
    "fail_at_k",
    "leaderboard",
    "min_detectable_effect",
    "pass_at_k",
    "pass_at_k_curve",
    "pass_at_k_plugin",
    "pass_hat_k",
    "reference",
    "samples_needed",
    "score",
    "simulate",
    "task_variance",
    "tasks_needed",
]
