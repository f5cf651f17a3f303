"""passatk.rl: exact group metrics and pass@k advantages for RL training loops.

``group_metrics`` logs pass@k, pass^k, best@k, worst@k, maj@k, mean@n, std@n, G-Pass@k and
mG-Pass@k for every group of rollouts in one call; ``advantages`` turns rewards into
per-rollout advantages that optimize pass@k. ``verl`` has them in verl's estimator signature
(registered in every verl process by the ``verl.plugins`` entry point, ``verl_plugin``) and
``verl.validation_metrics``, a drop-in for verl's validation metrics; ``trl`` (imported on
its own) logs pass@k in TRL's GRPOTrainer and can replace its advantages. Formulas and usage:
docs/rl.md, docs/advantages.md.

>>> from passatk import rl
>>> rl.group_metrics([1, 1, 0, 1], ["a", "a", "b", "b"], k=2).summary()["pass^2/mean"]
0.5
"""

from . import verl
from ._advantages import advantages
from ._metrics import group_metrics
from ._results import Curve, GroupMetrics, MissingMetricWarning

__all__ = ["Curve", "GroupMetrics", "MissingMetricWarning", "advantages", "group_metrics",
           "verl"]
