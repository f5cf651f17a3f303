"""The types of the public signatures: one ``Literal`` per string choice, and the budgets k.

Type checkers flag a misspelt choice (``interval="studentized"``) before the run does; the run
still checks every value (``_validation.choice``), and ``tests/test_typing.py`` holds each
``Literal`` equal to the tuple of names the code accepts.
"""

from collections.abc import Sequence
from typing import Any, Literal, Protocol, TypeAlias

import numpy as np


class SupportsArray(Protocol):
    """Anything numpy can turn into an array: an ndarray, a CPU torch tensor, a pandas Series."""

    def __array__(self) -> Any: ...


#: ``metric=`` of :func:`passatk.score`
Metric: TypeAlias = Literal["pass@k", "pass^k", "plugin", "g-pass@k", "mg-pass@k", "posterior",
                            "posterior-population", "bayes@n"]
#: ``metric=`` of compare and paired_sd
CompareMetric: TypeAlias = Literal["pass@k", "pass^k", "plugin"]
#: ``metric=`` of task_variance, task_intervals and samples_needed
TaskMetric: TypeAlias = Literal["pass@k", "pass^k"]
#: ``interval=`` of :func:`passatk.score`
Interval: TypeAlias = Literal["auto", "t", "fixed", "cluster", "percentile", "bca", "wilson",
                              "clopper-pearson"]
#: ``method=`` of :func:`passatk.stats.task_intervals`
TaskMethod: TypeAlias = Literal["wilson", "clopper-pearson"]
Missing: TypeAlias = Literal["raise", "report"]
Duplicates: TypeAlias = Literal["raise", "merge"]
Unmatched: TypeAlias = Literal["raise", "exclude"]
#: The budgets of ``score``/``compare``: one k, several, or a named set (a str is not a list).
KSpec: TypeAlias = (int | np.integer[Any] | Sequence[int | np.integer[Any]] | SupportsArray
                    | Literal["all", "ladder"])

#: ``metrics=`` of :func:`passatk.rl.group_metrics` (one name, several, or "all")
RLMetric: TypeAlias = Literal["pass@k", "pass^k", "best@k", "worst@k", "maj@k", "mean@n",
                              "std@n", "g-pass@k", "mg-pass@k"]
#: ``estimator=`` of :func:`passatk.rl.group_metrics`
RLMetricEstimator: TypeAlias = Literal["unbiased", "verl"]
#: ``short_groups=`` of :func:`passatk.rl.group_metrics`
RLShortGroups: TypeAlias = Literal["missing", "exclude"]
#: ``none_answers=`` of :func:`passatk.rl.group_metrics` (maj@k with a None answer)
NoneAnswers: TypeAlias = Literal["abstain", "vote", "skip"]
#: ``nan=`` of the rl functions (1-D scores)
NanRule: TypeAlias = Literal["raise", "drop"]
#: ``estimator=`` of :func:`passatk.rl.advantages`
AdvEstimator: TypeAlias = Literal["pkpo", "pkpo-loo", "pkpo-loo1", "passk-training",
                                  "maxk-training", "grpo-passk"]
#: ``normalize=`` of :func:`passatk.rl.advantages`
Normalize: TypeAlias = Literal["none", "group-std", "batch-std"]
#: ``short_groups=`` of :func:`passatk.rl.advantages`
AdvShortGroups: TypeAlias = Literal["raise", "zero"]
