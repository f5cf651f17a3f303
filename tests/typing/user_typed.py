"""A typed user script: mypy --strict and pyright must accept it with no error (test_typing.py)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

import passatk
from passatk import archives
from passatk.archives import Counts, read_counts
from passatk.stats import CompareRow, ScoreResult, ScoreRow

v: float = passatk.pass_at_k(10, 3, 2)
w: float = passatk.pass_hat_k(np.int64(10), 3, 2) + passatk.fail_at_k(10, 3, 2)
arr: NDArray[np.float64] = passatk.pass_at_k(np.array([10, 10]), np.array([3, 4]), 2)
lst: NDArray[np.float64] = passatk.pass_at_k([10, 10], [3, 4], 2, errors="nan")
curve: NDArray[np.float64] = passatk.pass_at_k_curve(5, 2)
plug: float = passatk.pass_at_k_plugin(10, 2, 3)

res: ScoreResult = passatk.score([10, 10], [3, 4], k=[1, 2], interval="t", missing="report")
row: ScoreRow = res[0]
first: tuple[ScoreRow, ...] = res[:1]
value: float | None = row.value
if row.value is not None:
    x: float = row.value + 1.0
lo, hi = row.confidence_interval
for r in res:
    k: int = r.k
records: list[dict[str, object]] = [dict(rec) for rec in res.records()]
res2 = passatk.score([10, 10], [3, 4], k="all", metric=["pass@k", "pass^k"], interval="wilson")

cmp = passatk.compare([10, 10], [3, 5], [10, 10], [4, 6], k=1, unmatched="exclude")
crow: CompareRow = cmp[0]
p: float | None = crow.p_value


def read(path: str) -> Counts:
    counts = read_counts([path], by=["path:parent"])
    n: NDArray[np.int64] = counts.n
    print(n.sum(), archives.formats()[0].name)
    return counts


version: str = passatk.__version__

gm: passatk.rl.GroupMetrics = passatk.rl.group_metrics(
    [1, 1, 0, 1], ["a", "a", "b", "b"], k=2, metrics=["pass@k", "best@k"], estimator="verl",
    short_groups="exclude", none_answers="skip")
adv = passatk.rl.advantages([1.0, 0.0, 1.0, 0.0], [0, 0, 1, 1], k=1, estimator="pkpo",
                            normalize="group-std", short_groups="zero")
