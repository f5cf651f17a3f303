"""What ``merge=True`` costs over ``merge="allow-duplicates"``: the union check over the
counts and the repeated-records check (issue 23 item 7), on two human-eval shards.

Run:
    python -m pytest bench/test_bench_overlap.py -s -p no:randomly

Two shards of ``PASSATK_BENCH_OVERLAP_LINES`` lines each (default 600,000, about 60 MB each),
40 tasks, every sample its own completion (no record repeats: the read passes). Rows, CPU
medians of 3 rounds in one run:

* ``allow-duplicates``: the read with no check (the baseline);
* ``merge=True``: the same read, then both checks;
* floor: the least the record check can do, in plain Python and NumPy: read both files
  again, split them into lines, hash each (``hash`` of bytes) and sort the hashes
  (``numpy.unique``); the check adds the set operations and, only when a hash is shared,
  a look at the bytes.
"""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from passatk.archives import read_counts

LINES = int(os.environ.get("PASSATK_BENCH_OVERLAP_LINES", "600000"))


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    root = tmp_path_factory.mktemp("overlap")
    out = []
    for s in range(2):
        rng = np.random.default_rng(s)
        task, passed = rng.integers(0, 40, LINES), rng.random(LINES) < 0.4
        path = root / f"s{s}_results.jsonl"
        with open(path, "w") as f:
            for i, (t, p) in enumerate(zip(task.tolist(), passed.tolist(), strict=True)):
                f.write(f'{{"task_id": "T/{t}", "completion": "    return {s} * {i} + x\\n", '
                        f'"result": "{"passed" if p else "failed"}", '
                        f'"passed": {"true" if p else "false"}}}\n')
        out.append(str(path))
    return out


def _floor(files):
    for file in files:
        with open(file, "rb") as f:
            np.unique(np.fromiter(map(hash, f.read().split(b"\n")), dtype=np.int64))


def _cpu(fn, rounds: int = 3) -> float:
    times = []
    for _ in range(rounds):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return float(np.median(times))


def test_merge_checks_against_allow_duplicates(shards, benchmark):
    base = read_counts(shards, merge="allow-duplicates")
    checked = read_counts(shards, merge=True)
    assert checked.to_rows() == base.to_rows()  # the same counts: nothing repeated
    rows = {"allow-duplicates": _cpu(lambda: read_counts(shards, merge="allow-duplicates")),
            "merge=True": _cpu(lambda: read_counts(shards, merge=True)),
            "floor: read, split, hash, sort": _cpu(lambda: _floor(shards))}
    benchmark.pedantic(read_counts, args=(shards,), kwargs={"merge": True}, rounds=1)
    extra = rows["merge=True"] - rows["allow-duplicates"]
    print(f"\n{2 * LINES} lines in two shards, CPU medians of 3:")
    for name, t in rows.items():
        print(f"  {name:<32} {t:7.3f} s")
    print(f"  the checks: {extra:.3f} s, {extra / rows['floor: read, split, hash, sort']:.2f}x "
          f"the floor; merge=True is {rows['merge=True'] / rows['allow-duplicates']:.2f}x "
          "allow-duplicates")
    # the checks are one more pass over the lines: within 2x of the plain pass that floors it
    assert extra <= 2.0 * rows["floor: read, split, hash, sort"] + 0.05
