"""Count and per-sample tables (CSV, Parquet) with pyarrow: passatk against a plain pyarrow
one-liner, in the same run (issue 12: within 2x of the one-liner).

Run:
    python -m pytest bench/test_bench_tables.py --benchmark-enable -s

* Files: a 1M-row per-sample table (``model``, ``task_id``, ``passed``: 4 models x 1000
  tasks) as CSV without quotes (as the csv module and pandas write it: nothing needs quoting),
  as CSV quoted the way ``pyarrow.csv.write_csv`` quotes by default (every string) and as
  Parquet; and a 1M-row count table (``model``, ``task_id``, ``n``, ``c``: 1000 models x 1000
  tasks) as CSV and Parquet.
* passatk: ``read_counts(path, by=["model"])``, which checks every value as the stdlib path
  does; the one-liner: ``pyarrow.csv.read_csv(path)`` (or ``pyarrow.parquet.read_table``)
  ``.group_by(["model", "task_id"]).aggregate(...)``, which checks nothing.
* ``test_ratio_to_the_one_liner`` times both interleaved (wall time, 5 rounds) and prints the
  medians and their ratio; the stdlib path (``_arrow.FAST = False``) is timed once per file.
  The 2x target is asserted for the per-sample tables (the issue's target); count tables of
  1M distinct keys are recorded only (their time is mostly the Python ``Tally`` and the
  natural sort of ``Counts``, shared by every reader).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pacsv = pytest.importorskip("pyarrow.csv")
pq = pytest.importorskip("pyarrow.parquet")
np = pytest.importorskip("numpy")

from passatk.archives import read_counts  # noqa: E402
from passatk.archives.io import tables as _arrow  # noqa: E402

ROWS = 1_000_000
TARGET = 2.0  # passatk within 2x of the one-liner
FILES = ["samples.csv", "samples-quoted.csv", "samples.parquet", "counts.csv", "counts.parquet"]


def _tables() -> dict[str, pa.Table]:
    rng = np.random.default_rng(0)
    tasks = np.array([f"HumanEval/{i}" for i in range(1000)])
    models = np.array([f"model-{i}" for i in range(1000)])
    samples = pa.table({"model": models[rng.integers(0, 4, ROWS)],
                        "task_id": tasks[rng.integers(0, 1000, ROWS)],
                        "passed": rng.random(ROWS) < 0.4})
    n = rng.integers(1, 200, ROWS)
    counts = pa.table({"model": np.repeat(models, 1000), "task_id": np.tile(tasks, 1000),
                       "n": n, "c": rng.integers(0, n + 1)})
    return {"samples": samples, "counts": counts}


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("tables")
    tables = _tables()
    out = {}
    for name in FILES:
        path = out[name] = folder / name
        table = tables[name.split(".")[0].split("-")[0]]
        if name.endswith(".parquet"):
            pq.write_table(table, path)
        else:
            quoting = "needed" if "quoted" in name else "none"
            pacsv.write_csv(table, path, pacsv.WriteOptions(quoting_style=quoting))
    return out


def one_liner(path: Path) -> pa.Table:
    table = pq.read_table(path) if path.suffix == ".parquet" else pacsv.read_csv(path)
    if "n" in table.column_names:
        return table.group_by(["model", "task_id"]).aggregate([("n", "sum"), ("c", "sum")])
    return table.group_by(["model", "task_id"]).aggregate([("passed", "count"),
                                                           ("passed", "sum")])


def passatk(path: Path):
    return read_counts(path, by=["model"])


def _same(counts, table: pa.Table) -> None:
    names = table.column_names
    ncol = "n_sum" if "n_sum" in names else "passed_count"
    ccol = "c_sum" if "c_sum" in names else "passed_sum"
    theirs = {(m, t): (n, c) for m, t, n, c in zip(*(table.column(k).to_pylist() for k in (
        "model", "task_id", ncol, ccol)), strict=True)}
    ours = {(counts.groups[g][0][1], t): (n, c) for g, t, n, c in zip(
        counts.group.tolist(), counts.task.tolist(), counts.n.tolist(), counts.c.tolist(),
        strict=True)}
    assert ours == theirs


@pytest.mark.parametrize("name", FILES)
def test_bench_passatk(benchmark, files, name):
    benchmark.extra_info.update(group=f"tables {name}", row="passatk read_counts")
    counts = benchmark(passatk, files[name])
    assert counts.samples == (ROWS if name.startswith("samples") else int(
        pq.read_table(files["counts.parquet"], columns=["n"]).column("n").to_numpy().sum()))


@pytest.mark.parametrize("name", FILES)
def test_bench_one_liner(benchmark, files, name):
    benchmark.extra_info.update(group=f"tables {name}", row="pyarrow one-liner", baseline=True)
    benchmark(one_liner, files[name])


def _wall(fn, *args) -> float:
    t = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t


@pytest.mark.parametrize("name", FILES)
def test_ratio_to_the_one_liner(files, name, capsys):
    path = files[name]
    _same(passatk(path), one_liner(path))
    ours, theirs = [], []
    for _ in range(5):
        ours.append(_wall(passatk, path))
        theirs.append(_wall(one_liner, path))
    _arrow.FAST = False
    try:
        stdlib = _wall(passatk, path)
    finally:
        _arrow.FAST = True
    ratio = statistics.median(ours) / statistics.median(theirs)
    with capsys.disabled():
        print(f"\n{name} ({path.stat().st_size / 1e6:.1f} MB, {ROWS} rows): passatk "
              f"median {statistics.median(ours):.3f} s (best {min(ours):.3f}), one-liner "
              f"median {statistics.median(theirs):.3f} s (best {min(theirs):.3f}): ratio "
              f"{ratio:.2f}x; stdlib path {stdlib:.2f} s")
    if name.startswith("samples"):  # the target; count tables are recorded only
        assert ratio <= TARGET


STDLIB_LOOP_ROWS = 1_000_000


@pytest.fixture(scope="module")
def jsonl_table(tmp_path_factory) -> Path:
    """The per-sample table as JSON Lines, as training logs write it."""
    path = tmp_path_factory.mktemp("jsonl") / "samples.jsonl"
    table = _tables()["samples"]
    with open(path, "w") as f:
        for m, t, p in zip(*(table.column(k).to_pylist() for k in ("model", "task_id",
                                                                     "passed")), strict=True):
            f.write(f'{{"model": "{m}", "task_id": "{t}", "passed": {str(p).lower()}}}\n')
    return path


def stdlib_loop(path: Path) -> dict:
    import collections
    import json

    n, c = collections.Counter(), collections.Counter()
    with open(path) as f:
        for line in f:
            d = json.loads(line)
            key = (d["model"], d["task_id"])
            n[key] += 1
            c[key] += d["passed"]
    return n


def test_jsonl_table_against_the_stdlib_loop(jsonl_table, capsys):
    """A 1M-row JSON Lines sample table: ``read_counts`` (msgspec, each distinct row judged
    once) against the stdlib ``json.loads`` loop (recorded, not asserted)."""
    assert read_counts(jsonl_table, by=["model"]).samples == STDLIB_LOOP_ROWS
    ours, theirs = [], []
    for _ in range(3):
        ours.append(_wall(passatk, jsonl_table))
        theirs.append(_wall(stdlib_loop, jsonl_table))
    with capsys.disabled():
        print(f"\nsamples.jsonl ({jsonl_table.stat().st_size / 1e6:.1f} MB): passatk median "
              f"{statistics.median(ours):.3f} s, stdlib loop median "
              f"{statistics.median(theirs):.3f} s: "
              f"{statistics.median(theirs) / statistics.median(ours):.2f}x faster")
