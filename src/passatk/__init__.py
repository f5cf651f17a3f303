"""passatk: fast, exact pass@k for code-generation and RLVR evaluation.

>>> import passatk
>>> passatk.pass_at_k(10, 2, 3)
0.5333333333333333
"""

from importlib.metadata import PackageNotFoundError, version

from . import reference
from ._api import fail_at_k, pass_at_k, pass_at_k_curve, pass_at_k_plugin, pass_hat_k
from .stats import (
    compare,
    min_detectable_effect,
    samples_needed,
    score,
    simulate,
    task_variance,
    tasks_needed,
)

try:
    __version__ = version("passatk")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0+unknown"

__all__ = [
    "__version__",
    "compare",
    "fail_at_k",
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
