"""read_counts(..., workers=N) and passatk score --jobs N: the same Counts for any N.

The pool starts with forkserver or spawn; every format is read with N = 1, 2, 3, whole files
and byte ranges cut at line boundaries, with bad records skipped or raised.
"""

from __future__ import annotations

import itertools
import json
import os
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from passatk.archives import ArchiveError, read_counts, write_archive
from passatk.archives import pipeline as _pipeline
from passatk.archives.engine import plan as _plan
from passatk.archives.engine import processes as _processes

FILES = {
    "humaneval": "x_results.jsonl", "evalplus": "eval_results.json",
    "bigcodebench": "m_eval_results.json", "lm-eval": "samples_t_2024-01-01.jsonl",
    "livecodebench": "m_eval_all.json", "opencompass": "oc.json", "cruxeval": "cx.json",
    "code-eval": "humaneval-python-details.json", "qwen-math": "test_e-1.jsonl",
    "tau-bench": "tau.json", "counts": "counts.csv", "samples": "samples.jsonl",
}


@pytest.fixture(autouse=True)
def _always_in_processes(monkeypatch):
    monkeypatch.setattr(_processes, "MIN_PARALLEL_BYTES", 0)  # for workers=None
    monkeypatch.setattr(_processes, "MIN_FORKED_PARALLEL_BYTES", 0)
    monkeypatch.setattr(_plan, "MIN_BATCH_BYTES", 0)  # small files: several units


def _pool_size(files, workers):
    return _pipeline._pool_size(files, _pipeline._sizes(files), workers)


def test_pool_size(tmp_path, monkeypatch):
    path = _lines(tmp_path, bad=False)
    assert _pool_size([str(path)], 3) == 3
    assert _pool_size([str(path)], 1) == 1
    assert _pool_size([str(path), "-"], 3) == 1  # standard input is read here
    assert _pool_size([str(path)], None) == (os.cpu_count() or 1)
    monkeypatch.setattr(_processes, "MIN_PARALLEL_BYTES", path.stat().st_size + 1)
    assert _pool_size([str(path)], None) == 1


def test_the_command_line_uses_every_cpu_from_a_lower_size(tmp_path, monkeypatch):
    """Where the command line forks its workers they pay from a smaller input."""
    path = _lines(tmp_path, bad=False)
    size = path.stat().st_size
    monkeypatch.setattr(_processes, "MIN_PARALLEL_BYTES", size + 1)
    monkeypatch.setattr(_processes, "MIN_FORKED_PARALLEL_BYTES", size)
    assert _pool_size([str(path)], None) == 1
    monkeypatch.setattr(_processes, "_clean_for_fork", lambda: True)
    with _processes.launching():
        assert _pool_size([str(path)], None) == (os.cpu_count() or 1)
    with _processes.launching(fork_when_clean=False):  # the fork server's start: the higher size
        assert _pool_size([str(path)], None) == 1
    monkeypatch.setattr(_processes, "_clean_for_fork", lambda: False)  # numba loaded, say
    with _processes.launching():
        assert _pool_size([str(path)], None) == 1


def _same(a, b):
    assert a.to_rows() == b.to_rows()
    assert (a.metric, a.notes, a.skipped, a.files) == (b.metric, b.notes, b.skipped, b.files)
    assert a.group_metrics == b.group_metrics
    assert a.stored == b.stored


@pytest.mark.slow
@pytest.mark.parametrize("batch", [0, 1 << 30])  # units of a few files, or one of them all
def test_every_format_in_one_directory_for_any_n(tmp_path, monkeypatch, batch):
    monkeypatch.setattr(_plan, "MIN_BATCH_BYTES", batch)
    tasks = [f"T/{i}" for i in range(7)]
    flags = [[(i * j) % 3 == 0 for j in range(1 + i % 4)] for i in range(7)]
    for fmt, name in FILES.items():
        write_archive(tmp_path / fmt / name, tasks, flags, format=fmt)
    tau = tmp_path / "tau-bench"
    at_k = [tmp_path / fmt for fmt in FILES if fmt != "tau-bench"]
    for paths in (at_k, tau):  # pass^k data apart
        one = read_counts(paths)
        for n in (2, 3):
            _same(read_counts(paths, workers=n), one)
    mixed = read_counts(tmp_path)  # both metrics, each archive with its own
    assert mixed.metric == "mixed" and set(mixed.group_metrics) == {"pass@k", "pass^k"}
    _same(read_counts(tmp_path, workers=3), mixed)
    with pytest.raises(ArchiveError) as seq:  # pooled mixed metrics: the same first error
        read_counts(tmp_path, merge=True)
    with pytest.raises(ArchiveError) as par:
        read_counts(tmp_path, workers=3, merge=True)
    assert str(par.value) == str(seq.value)


def _lines(tmp_path, bad: bool):
    rows = [json.dumps({"task_id": f"T/{i % 5}", "completion": "x\\n\"q\"", "result": "failed: ",
                        "passed": i % 3 == 0}) for i in range(200)]
    if bad:
        rows[57] = '{"task_id": "T/1", "passed": "yes"}'
        rows[150] = "not json"
    path = tmp_path / "big_results.jsonl"
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.mark.parametrize("n", [2, 3])
def test_byte_ranges_give_the_sequential_counts_and_skips(tmp_path, n, monkeypatch):
    calls = []
    real = _pipeline.map_processes
    monkeypatch.setattr(_pipeline, "map_processes",
                        lambda *a, **kw: calls.append(kw) or real(*a, **kw))
    path = _lines(tmp_path, bad=True)
    assert len(_plan.plan_ranges(path.stat().st_size, 700)) > 3  # really split
    one = read_counts(path, skip_bad=True)
    assert one.skipped.count == 2
    _same(read_counts(path, skip_bad=True, workers=n, split_bytes=700), one)
    with pytest.raises(ArchiveError) as seq:
        read_counts(path)
    with pytest.raises(ArchiveError) as par:
        read_counts(path, workers=n, split_bytes=700)
    assert str(par.value) == str(seq.value) and ":58:" in str(seq.value)
    assert [kw["workers"] for kw in calls] == [n, n]  # the pool ran, not the sequential read


@pytest.mark.parametrize("n", [1, 2, 3])
def test_sample_tables_csv_and_jsonl_in_ranges(tmp_path, n):
    csv_path = tmp_path / "s.csv"
    csv_path.write_text("task_id,passed\n" + "".join(f"T/{i % 9},{int(i % 4 == 0)}\n"
                                                    for i in range(300)))
    jsonl = tmp_path / "s.jsonl"
    jsonl.write_text("".join(json.dumps({"task_id": f"T/{i % 9}", "passed": i % 5 == 0}) + "\n"
                             for i in range(300)))
    for path in (csv_path, jsonl):
        _same(read_counts(path, workers=n, split_bytes=512), read_counts(path))


def test_bad_workers():
    with pytest.raises(TypeError, match="workers must be an int or None, got float"):
        read_counts("x", workers=2.0)
    with pytest.raises(ValueError, match="workers must be at least 1, got 0"):
        read_counts("x", workers=0)


def test_cli_jobs_output_is_identical(tmp_path, capsys):
    from passatk.cli import main

    path = _lines(tmp_path, bad=False)
    outs = []
    for jobs in ([], ["--jobs", "1"], ["--jobs", "2"], ["--jobs", "3"]):
        assert main(["score", str(path), "-k", "1,2", "--format", "json", *jobs]) == 0
        outs.append({**json.loads(capsys.readouterr().out), "argv": 0})  # argv names --jobs
    assert outs[0] == outs[1] == outs[2] == outs[3]


def test_a_broken_pool_falls_back_to_this_process(tmp_path, monkeypatch):
    from concurrent.futures.process import BrokenProcessPool

    def broken(*args, **kwargs):
        raise BrokenProcessPool("a worker could not start")

    monkeypatch.setattr(_pipeline, "map_processes", broken)
    path = _lines(tmp_path, bad=False)
    _same(read_counts(path, workers=2), read_counts(path))


def test_the_command_line_forks_only_a_clean_process(monkeypatch):
    import threading

    monkeypatch.setattr(_processes, "_clean_for_fork", lambda: True)
    assert _processes._context(()).get_start_method() != "fork"  # not asked: never fork
    with _processes.launching():
        assert _processes._context(()).get_start_method() == "fork"
    with _processes.launching(fork_when_clean=False):
        assert _processes._context(()).get_start_method() != "fork"
    monkeypatch.undo()
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not _processes._clean_for_fork()  # a second thread: the fork server
    finally:
        stop.set()
        thread.join()


def test_after_start_runs_once_the_workers_run(tmp_path):
    path = _lines(tmp_path, bad=False)
    started = []
    with _processes.launching(after_start=lambda: started.append(1)):
        counts = read_counts(path, workers=2, split_bytes=1 << 12)  # ranges: two units
    assert started == [1]
    _same(counts, read_counts(path))


def test_one_unit_is_read_in_this_process(tmp_path, monkeypatch):
    """A lone file read whole, or a count table (its ranges do not stand alone): no worker
    would share the work, and one would hold a second copy of the counts."""
    table = tmp_path / "c.csv"
    table.write_text("task_id,n,c\n" + "".join(f"T/{i},3,1\n" for i in range(5000)))
    monkeypatch.setattr(_pipeline, "map_processes", lambda *a, **k: pytest.fail("forked"))
    for path, split in ((_lines(tmp_path, bad=False), None), (table, 1 << 12)):
        _same(read_counts(path, workers=2, split_bytes=split), read_counts(path))


@settings(max_examples=200, deadline=None)
@given(sizes=st.lists(st.integers(0, 4 << 30), min_size=1, max_size=12),
       workers=st.integers(2, 16), data=st.data())
def test_the_default_plan_tiles_each_file_and_cuts_finer_at_the_end(sizes, workers, data):
    """Guided ranges: each file is read whole or tiled by ranges of equal size (one byte
    apart at most), none below 64 MiB, none above the share of what remains; and the pool,
    taking the units in order, ends within a unit (or the slack) of an even share."""
    from passatk.archives.engine.plan import BALANCE_SLACK, DEFAULT_SPLIT_BYTES, plan_files

    splittable = data.draw(st.lists(st.booleans(), min_size=len(sizes), max_size=len(sizes)))
    remaining, loads, allowance = sum(sizes), [0] * workers, BALANCE_SLACK
    for size, split, ranges in zip(sizes, splittable, plan_files(sizes, splittable, workers),
                                   strict=True):
        share = max(DEFAULT_SPLIT_BYTES, remaining // (2 * workers))
        remaining -= size
        assert not ranges or (split and size > share)
        if not split or size <= share:  # a unit the plan could not cut
            allowance = max(allowance, size)
        for s, e in ranges or [(0, size)]:
            loads[loads.index(min(loads))] += e - s
        if ranges:
            assert ranges[0][0] == 0 and ranges[-1][1] == size
            assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))
            lengths = [e - s for s, e in ranges]
            assert max(lengths) - min(lengths) <= len(ranges)
            assert max(lengths) <= share and min(lengths) >= DEFAULT_SPLIT_BYTES // 2 - len(ranges)
            allowance = max(allowance, max(lengths))
    assert max(loads) <= sum(sizes) / workers + allowance


@given(size=st.integers(1, 4 << 30), workers=st.integers(2, 8), per_worker=st.integers(1, 4))
def test_files_that_share_out_evenly_are_read_whole(size, workers, per_worker):
    """Equal files, as many per worker: no cut pays. The same bytes in one file are cut
    once the file is larger than a range (64 MiB)."""
    from passatk.archives.engine.plan import plan_files

    count = workers * per_worker
    assert plan_files([size] * count, [True] * count, workers) == [[]] * count
    total = size * count
    assert bool(plan_files([total], [True], workers)[0]) == (total > 64 << 20)


@settings(max_examples=200, deadline=None)
@given(sizes=st.lists(st.integers(0, 32 << 20) | st.integers(0, 4 << 30), min_size=1,
                     max_size=40), workers=st.integers(2, 16), data=st.data())
def test_batches_keep_the_file_order_and_close_once_full(sizes, workers, data):
    """Batches tile the files in order; a file read in ranges is a unit alone; a batch of
    whole files closes as soon as it holds its budget (at least MIN_BATCH_BYTES, or its
    share of what remains, at most MAX_BATCH_BYTES), so only the last file may take it
    past."""
    least = data.draw(st.sampled_from([0, 1 << 20, 16 << 20]))
    ranged = data.draw(st.lists(st.sampled_from([False, False, False, True]),
                                min_size=len(sizes), max_size=len(sizes)))
    plans = [[(0, s // 2), (s // 2, s)] if r else [] for s, r in zip(sizes, ranged, strict=True)]
    with mock.patch.object(_plan, "MIN_BATCH_BYTES", least):
        batches = _plan.plan_batches(sizes, plans, workers)
    assert [i for b in batches for i in b] == list(range(len(sizes)))
    remaining = sum(sizes)
    for k, batch in enumerate(batches):
        if any(ranged[i] for i in batch):
            assert len(batch) == 1
        else:
            budget = min(_plan.MAX_BATCH_BYTES, max(least, remaining // (2 * workers)))
            assert len(batch) == 1 or sum(sizes[i] for i in batch[:-1]) < budget
            following = batches[k + 1][0] if k + 1 < len(batches) else None
            if following is not None and not ranged[following]:
                assert sum(sizes[i] for i in batch) >= budget  # closed because it was full
        remaining -= sum(sizes[i] for i in batch)


def test_a_batch_stays_near_a_range():
    """A worker holds a batch's counts until it returns them: many small files of a large
    read go out in batches of at most MAX_BATCH_BYTES (and one file)."""
    sizes = [10 << 20] * 40
    batches = _plan.plan_batches(sizes, [[]] * 40, 2)
    assert len(batches) > 1
    assert all(sum(sizes[i] for i in b[:-1]) < _plan.MAX_BATCH_BYTES for b in batches)
