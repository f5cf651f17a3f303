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
and ``_results`` (the result objects). Only the names below are public; they are loaded on
first use (PEP 562), so that scoring does not import the comparison or planning modules.

>>> import passatk
>>> r = passatk.score([5], [2], k=[1, 2])
>>> [(row.k, row.value) for row in r]
[(1, 0.4), (2, 0.7)]
"""

from typing import TYPE_CHECKING

from passatk._lazy import lazy

if TYPE_CHECKING:  # for type checkers and IDEs (``X as X``: re-exported); at run time: lazily
    from ._common import INTERVALS as INTERVALS
    from ._common import MAX_ALL_K as MAX_ALL_K
    from ._common import METRICS as METRICS
    from ._compare import compare as compare
    from ._leaderboard import leaderboard as leaderboard
    from ._plan import achieved_power as achieved_power
    from ._plan import min_detectable_effect as min_detectable_effect
    from ._plan import paired_sd as paired_sd
    from ._plan import paired_sd_from_rates as paired_sd_from_rates
    from ._plan import samples_needed as samples_needed
    from ._plan import simulate as simulate
    from ._plan import tasks_needed as tasks_needed
    from ._results import CompareResult as CompareResult
    from ._results import CompareRow as CompareRow
    from ._results import ConfidenceInterval as ConfidenceInterval
    from ._results import LeaderboardResult as LeaderboardResult
    from ._results import LeaderboardRow as LeaderboardRow
    from ._results import PairRow as PairRow
    from ._results import PlanResult as PlanResult
    from ._results import ScoreResult as ScoreResult
    from ._results import ScoreRow as ScoreRow
    from ._results import Simulation as Simulation
    from ._results import TaskResult as TaskResult
    from ._results import TaskRow as TaskRow
    from ._score import score as score
    from ._task import task_intervals as task_intervals
    from ._task import task_variance as task_variance

#: public name -> the module that defines it
_LAZY = {
    "INTERVALS": "._common",
    "MAX_ALL_K": "._common",
    "METRICS": "._common",
    "compare": "._compare",
    "leaderboard": "._leaderboard",
    "achieved_power": "._plan",
    "min_detectable_effect": "._plan",
    "paired_sd": "._plan",
    "paired_sd_from_rates": "._plan",
    "samples_needed": "._plan",
    "simulate": "._plan",
    "tasks_needed": "._plan",
    "CompareResult": "._results",
    "CompareRow": "._results",
    "ConfidenceInterval": "._results",
    "LeaderboardResult": "._results",
    "LeaderboardRow": "._results",
    "PairRow": "._results",
    "PlanResult": "._results",
    "ScoreResult": "._results",
    "ScoreRow": "._results",
    "Simulation": "._results",
    "TaskResult": "._results",
    "TaskRow": "._results",
    "score": "._score",
    "task_intervals": "._task",
    "task_variance": "._task",
}


if not TYPE_CHECKING:  # type checkers see the imports above, and flag any other name
    __getattr__, __dir__ = lazy(__name__, _LAZY)

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
