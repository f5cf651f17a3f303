"""Task ids kept compactly (issue 25 item 9): Arrow strings while reading, NumPy's StringDType
in Counts, and the natural order computed by pyarrow, checked against the Python sort."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import passatk.archives.counts as counts_module
from passatk.archives import read_counts
from passatk.archives.counts import _natural_sorted, natural_order

_ids = st.lists(st.text(st.sampled_from("0123456789aZ/-_ é²"), min_size=1, max_size=6)
                | st.from_regex(r"T/0*[0-9]{1,25}", fullmatch=True), max_size=40, unique=True)


@settings(max_examples=200, deadline=None)
@given(ids=_ids, sort_first=st.booleans(), step=st.sampled_from([2, 3, 1 << 20]),
       groups=st.integers(1, 3), data=st.data())
def test_natural_order_is_the_python_sort(ids, sort_first, step, groups, data):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(counts_module, "_STEP", step)  # steps end inside the ids
        _check_order(ids, sort_first, groups, data)


def _check_order(ids, sort_first, groups, data):
    if sort_first:  # the in-order check, and a near miss of it
        ids = _natural_sorted(ids)
    g = np.array(sorted(data.draw(st.lists(st.integers(0, groups - 1), min_size=len(ids),
                                           max_size=len(ids)))))
    if groups == 1:
        got = [ids[i] for i in natural_order(None, pa.array(ids, pa.string()))]
        assert got == _natural_sorted(ids)
    got = [(int(g[i]), ids[i]) for i in natural_order(g, pa.array(ids, pa.string()))]
    want = [(x, t) for x in sorted(set(g.tolist()))
            for t in _natural_sorted([t for y, t in zip(g.tolist(), ids, strict=True) if y == x])]
    assert got == want


_common = st.lists(st.from_regex(r"[aZ/\u00e9_-]{0,3}[0-9]{0,3}", fullmatch=True), max_size=40)


@settings(max_examples=200, deadline=None)
@given(ids=_common, sort_first=st.booleans(), step=st.sampled_from([2, 3, 1 << 20]),
       groups=st.integers(1, 3), data=st.data())
def test_the_common_shape_is_the_python_sort(ids, sort_first, step, groups, data):
    """Ids of text then digits (the shape keyed without strings), repeated and with leading
    zeros ("a01" and "a1": one key, two ids) or none, in order or not."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(counts_module, "_STEP", step)
        if ids:
            assert counts_module._split(pa.array(ids)) is not None
        order = natural_order(None, pa.array(ids, pa.string()))
        assert [ids[i] for i in order] == sorted(ids, key=counts_module._sort_key)
        _check_order(ids, sort_first, groups, data)


def test_ids_with_a_nul_are_sorted_in_python():
    ids = ["b\0", "a\0x", "a"]
    assert [ids[i] for i in natural_order(None, pa.array(ids))] == _natural_sorted(ids)


def test_a_big_count_table_gives_the_plain_counts(tmp_path):
    """Past the size where the pyarrow reader starts: the Counts of the stdlib rows."""
    rows = [(f"T/{(i * 7919) % 200_000}", 10, i % 11) for i in range(200_000)]
    path = tmp_path / "t.csv"
    path.write_text("task_id,n,c\n" + "".join(f"{t},{n},{c}\n" for t, n, c in rows))
    counts = read_counts(path)
    order = _natural_sorted([t for t, _, _ in rows])
    by_task = {t: (n, c) for t, n, c in rows}
    assert counts.task.dtype.kind in "OT"
    assert counts.task.tolist() == order
    assert counts.n.tolist() == [by_task[t][0] for t in order]
    assert counts.c.tolist() == [by_task[t][1] for t in order]
    assert counts.group.tolist() == [0] * len(order) and counts.n.dtype == np.int64


def test_a_duplicate_row_still_names_both_lines(tmp_path):
    path = tmp_path / "t.csv"
    rows = "".join(f"T/{i},2,1\n" for i in range(200_000))
    path.write_text("task_id,n,c\n" + rows + "T/7,3,1\n")
    with pytest.raises(ValueError, match=r"t\.csv:200002: duplicate row for task 'T/7' "
                                         r"\(first at line 9\)"):
        read_counts(path)


_PEAKS = """
import json, sys, tracemalloc
import pyarrow as pa
from passatk.archives import read_counts

pa.set_cpu_count(1)  # Arrow's peak with several threads depends on their scheduling
pa.set_io_thread_count(1)
tracemalloc.start()
counts = read_counts(sys.argv[1])
python_peak = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
print(json.dumps([len(counts), str(counts.task[-1]), int(counts.c[12]), python_peak,
                  pa.default_memory_pool().max_memory()]))
"""


@pytest.mark.slow
def test_a_million_distinct_ids_stay_compact(tmp_path):
    """Counted deterministically, in a fresh process (Arrow's pool keeps its peak for the life
    of a process) with one Arrow thread: the peak of the Python heap (NumPy's arrays included,
    by tracemalloc) and of Arrow's pool: 159 bytes a task, 274 with a str and a dict entry per
    task (docs/benchmarks.md, issue 19 section, reads 10M and records the RSS)."""
    import json
    import subprocess
    import sys

    n = 1_000_000
    path = tmp_path / "ids.csv"
    with open(path, "w") as f:
        f.write("task_id,n,c\n")
        for s in range(0, n, 100_000):
            f.write("".join(f"t{i},10,{i % 11}\n" for i in range(s, s + 100_000)))
    out = subprocess.run([sys.executable, "-c", _PEAKS, str(path)], check=True,
                         capture_output=True, text=True).stdout
    rows, last, c12, python_peak, arrow_peak = json.loads(out)
    assert (rows, last, c12) == (n, f"t{n - 1}", 1)
    assert python_peak + arrow_peak < 200 * n, (python_peak, arrow_peak)  # was 274 bytes


_RSS = """
import resource, subprocess, sys
out = subprocess.run([sys.executable, "-m", "passatk", "score", sys.argv[1], "-q"],
                     check=True, capture_output=True, text=True).stdout
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
print(out)
"""


@pytest.mark.slow
def test_ten_million_ids_are_scored_in_600_mb(tmp_path):
    """The command line, end to end, on the audit's 10M distinct ids (issue 25 item 9: 2.45 GB
    before): the peak RSS of the whole process, measured by the kernel in a fresh parent whose
    only child it is."""
    import subprocess
    import sys

    path = tmp_path / "tasks10m.csv"
    with open(path, "w") as f:
        f.write("task_id,n,c\n")
        for s in range(0, 10_000_000, 500_000):
            f.write("".join(f"t{i},10,{i % 11}\n" for i in range(s, s + 500_000)))
    peak, table = subprocess.run([sys.executable, "-c", _RSS, str(path)], check=True,
                                 capture_output=True, text=True).stdout.split("\n", 1)
    row = table.splitlines()[1].split()
    assert row[:3] == ["pass@k", "1", "0.5000"] and row[8:10] == ["10000000", "100000000"]
    assert int(peak) <= 600, peak
