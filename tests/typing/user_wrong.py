"""Wrong calls that mypy and pyright must flag, one per marked line (test_typing.py)."""

import passatk

passatk.score([10], [3], interval="studentized")  # WRONG: not an interval
passatk.score([10], [3], k="ten")  # WRONG: not a k
passatk.compare([10], [3], [10], [4], unmatched="drop")  # WRONG: not a choice
v: float = passatk.pass_at_k([10], [3], 2)  # WRONG: an array, not a float
row = passatk.score([10], [3])[0]
x: float = row.value + 1.0  # WRONG: value may be None
passatk.scroe([10], [3])  # WRONG: no such name
passatk.rl.advantages([1.0, 0.0], [0, 0], k=1, estimator="pkpo-lo")  # WRONG: not an estimator
passatk.rl.group_metrics([1, 0], [0, 0], metrics="pass@2")  # WRONG: not a metric
