"""Benchmark scores with honest uncertainty: aggregation, standard errors, bootstrap,
paired comparison, planning, simulation and Bayesian summaries.

The formulas and their sources are in ``docs/statistics.md``. Two estimands are offered
and every result row names the one it belongs to:

- **super-population**: the tasks are a sample from a population of possible tasks; the
  standard error is sd(thetahat_i, ddof=1) / sqrt(N) (Miller 2024), with a t interval.
- **fixed-benchmark**: the tasks are fixed and only the model's sampling is random; the
  standard error is sqrt(sum_i Vhat_i) / N with the unbiased per-task variance Vhat.

The package is split by concern: ``_score`` (score), ``_compare`` (compare), ``_paired``
(the paired tests), ``_plan`` (planning and simulation), ``_task`` (per-task quantities),
``_dist`` (normal and t distributions; no scipy at runtime), ``_kernels`` (numba kernels)
and ``_results`` (the result objects). Only the names below are public.

>>> import passatk
>>> r = passatk.score([5], [2], k=[1, 2])
>>> [(row.k, row.value) for row in r]
[(1, 0.4), (2, 0.7)]
"""

from ._common import INTERVALS, MAX_ALL_K, METRICS
from ._compare import compare
from ._leaderboard import leaderboard
from ._plan import (
    achieved_power,
    min_detectable_effect,
    paired_sd,
    paired_sd_from_rates,
    samples_needed,
    simulate,
    tasks_needed,
)
from ._results import (
    CompareResult,
    CompareRow,
    ConfidenceInterval,
    LeaderboardResult,
    LeaderboardRow,
    PairRow,
    PlanResult,
    ScoreResult,
    ScoreRow,
    Simulation,
    TaskResult,
    TaskRow,
)
from ._score import score
from ._task import task_intervals, task_variance

__all__ = [
    "INTERVALS",
    "MAX_ALL_K",
    "METRICS",
    "CompareResult",
    "CompareRow",
    "ConfidenceInterval",
    "LeaderboardResult",
    "LeaderboardRow",
    "PairRow",
    "PlanResult",
    "ScoreResult",
    "ScoreRow",
    "Simulation",
    "TaskResult",
    "TaskRow",
    "achieved_power",
    "compare",
    "leaderboard",
    "min_detectable_effect",
    "paired_sd",
    "paired_sd_from_rates",
    "samples_needed",
    "score",
    "simulate",
    "task_intervals",
    "task_variance",
    "tasks_needed",
]
