"""passatk.rl: exact group metrics and pass@k advantages for RL training loops.

``group_metrics`` logs pass@k, pass^k, best@k, worst@k, maj@k, mean@n, std@n, G-Pass@k and
mG-Pass@k for every group of rollouts in one call; ``advantages`` turns rewards into
per-rollout advantages that optimize pass@k; ``verl`` registers them in verl. Formulas and
usage: docs/rl.md.

>>> from passatk import rl
>>> rl.group_metrics([1, 1, 0, 1], ["a", "a", "b", "b"], k=2).summary()["pass^2/mean"]
0.5
"""

from . import verl
from ._advantages import advantages
from ._metrics import group_metrics
from ._results import GroupMetrics

__all__ = ["GroupMetrics", "advantages", "group_metrics", "verl"]
