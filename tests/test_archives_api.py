"""read_counts arguments, path expansion, merging, progress, Counts."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from passatk.archives import (
    ArchiveError,
    Counts,
    expand_paths,
    merge_counts,
    read_counts,
    write_archive,
)

TASKS = ["T/0", "T/1", "T/2"]
FLAGS = [[True, False, True, True], [False, False], [True]]


def _rows(counts):
    return list(zip(counts.task.tolist(), counts.n.tolist(), counts.c.tolist(), strict=True))


def test_merge_of_partial_reads_is_exact(tmp_path):
    """A file split into two shards and read by two workers merges to the whole."""
    whole = tmp_path / "whole_results.jsonl"
    write_archive(whole, TASKS, FLAGS)
    lines = whole.read_text().splitlines(keepends=True)
    (tmp_path / "a_results.jsonl").write_text("".join(lines[:3]))
    (tmp_path / "b_results.jsonl").write_text("".join(lines[3:]))
    a = read_counts(tmp_path / "a_results.jsonl")
    b = read_counts(tmp_path / "b_results.jsonl")
    full = read_counts(whole)
    for merged in (a.merge(b), b.merge(a), merge_counts([b, a])):
        assert _rows(merged) == _rows(full)
        assert merged.files == (*a.files, *b.files) or merged.files == (*b.files, *a.files)
    shards = [tmp_path / "a_results.jsonl", tmp_path / "b_results.jsonl"]
    assert _rows(read_counts(shards, merge=True)) == _rows(full)
    apart = read_counts(shards)  # never pooled unless asked
    assert apart.group_dicts == [{"path": "a_results.jsonl"}, {"path": "b_results.jsonl"}]


def test_merge_rules():
    a = Counts.from_rows([("t", 2, 1)])
    tau = Counts.from_rows([("t", 2, 1)], metric="pass^k")
    with pytest.raises(ValueError, match=r"cannot merge counts of different metrics"):
        a.merge(tau)
    with pytest.raises(TypeError, match=r"parts\[1\] must be Counts, got dict"):
        merge_counts([a, {}])
    with pytest.raises(ValueError, match="at least one"):
        merge_counts([])


def test_counts_arrays_are_read_only_and_typed():
    counts = Counts.from_rows([({"m": "a"}, "t10", 5, 1), ({"m": "a"}, "t9", 3, 3),
                               ({"m": "b"}, "t1", 1, 0)])
    assert counts.n.dtype == np.int64 and counts.c.dtype == np.int64
    assert counts.group.dtype == np.int64
    assert counts.task.tolist() == ["t9", "t10", "t1"]
    assert counts.group.tolist() == [0, 0, 1]
    assert counts.samples == 9 and len(counts) == 3
    with pytest.raises(ValueError):
        counts.n[0] = 7
    assert counts.to_rows()[0] == {"m": "a", "task_id": "t9", "n": 3, "c": 3}


def test_globs_directories_and_duplicates(tmp_path):
    for model in ("m1", "m2"):
        write_archive(tmp_path / model / "s_results.jsonl", TASKS, FLAGS)
    (tmp_path / "m1" / ".hidden_results.jsonl").write_text("garbage")
    files = expand_paths([tmp_path / "*" / "*_results.jsonl", tmp_path / "m1"])
    assert files == [str(tmp_path / "m1" / "s_results.jsonl"),
                     str(tmp_path / "m2" / "s_results.jsonl")]
    counts = read_counts(str(tmp_path / "**" / "*_results.jsonl"), by=["path:-2"])
    assert counts.group_dicts == [{"path:-2": "m1"}, {"path:-2": "m2"}]
    assert read_counts(tmp_path).samples == 2 * sum(map(len, FLAGS))


def test_path_errors(tmp_path):
    with pytest.raises(ArchiveError) as info:
        read_counts(tmp_path / "nope.jsonl")
    assert str(info.value) == f"{tmp_path / 'nope.jsonl'}: no such file or directory"
    with pytest.raises(ArchiveError) as info:
        read_counts(str(tmp_path / "*.jsonl"))
    assert str(info.value) == f"{tmp_path / '*.jsonl'}: no file matches this pattern"
    (tmp_path / "empty").mkdir()
    with pytest.raises(ArchiveError, match="directory holds no result files"):
        read_counts(tmp_path / "empty")
    with pytest.raises(TypeError, match="paths must be a path or an iterable of paths"):
        read_counts(3)


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"format": "nope"}, ValueError, r"format must be one of \[.*\], got 'nope'"),
    ({"format": 3}, TypeError, "format must be a str"),
    ({"by": [1]}, TypeError, "by must hold non-empty str field names, got 1"),
    ({"by": ["a", "a"]}, ValueError, "by must not repeat a field"),
    ({"by": ["path:sideways"]}, ValueError, "by: unknown path spec 'path:sideways'"),
    ({"threshold": "0.5"}, TypeError, "threshold must be a number"),
    ({"threshold": float("nan")}, ValueError, "threshold must be finite"),
    ({"skip_bad": 1}, TypeError, "skip_bad must be a bool"),
    ({"task": ""}, TypeError, "task must be a non-empty str"),
    ({"filters": {"since": "2024/01/01"}}, ValueError, r"must be a date YYYY-MM-DD"),
    ({"filters": {"since": "2024-02-01", "until": "2024-01-01"}}, ValueError, "is after"),
    ({"filters": {"difficulty": "extreme"}}, ValueError, "must be among"),
    ({"filters": {"level": "easy"}}, ValueError, r"unknown key\(s\) \['level'\]"),
    ({"progress": 5}, TypeError, "progress must be callable"),
])
def test_bad_arguments(tmp_path, kwargs, error, match):
    path = tmp_path / "s_results.jsonl"
    write_archive(path, TASKS, FLAGS)
    with pytest.raises(error, match=match):
        read_counts(path, **kwargs)


def test_progress_reaches_the_total(tmp_path):
    paths = []
    for i in range(3):
        paths.append(tmp_path / f"s{i}_results.jsonl")
        write_archive(paths[-1], TASKS, FLAGS)
    calls = []
    read_counts(paths, progress=lambda done, total: calls.append((done, total)))
    total = sum(p.stat().st_size for p in paths)
    assert calls[-1] == (total, total)
    assert all(t == total for _, t in calls)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_mixed_metrics_are_kept_apart_and_refused_pooled(tmp_path):
    write_archive(tmp_path / "s_results.jsonl", TASKS, FLAGS)
    write_archive(tmp_path / "tau.json", TASKS, FLAGS, format="tau-bench")
    files = [tmp_path / "s_results.jsonl", tmp_path / "tau.json"]
    apart = read_counts(files)
    assert apart.metric == "mixed"
    assert [(g["path"], apart.metric_of(i)) for i, g in enumerate(apart.group_dicts)] == [
        ("s_results.jsonl", "pass@k"), ("tau.json", "pass^k")]
    with pytest.raises(ArchiveError, match=r"tau\.json: holds pass\^k data, but .* holds pass@k"):
        read_counts(files, merge=True)
    with pytest.raises(ArchiveError, match=r"does not keep these archives apart"):
        read_counts(files, by=("path:dir",))  # one group would hold both metrics


def test_zstd_documents_and_missing_zstandard(tmp_path, monkeypatch):
    zstandard = pytest.importorskip("zstandard")
    path = tmp_path / "eval_results.json.zst"
    write_archive(path, TASKS, FLAGS, format="evalplus", evalplus_version=2)
    assert _rows(read_counts(path)) == [("T/0", 4, 3), ("T/1", 2, 0), ("T/2", 1, 1)]
    import builtins
    real = builtins.__import__

    def no_zstd(name, *args, **kwargs):
        if name == "zstandard":
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_zstd)
    with pytest.raises(ArchiveError, match="optional package zstandard is not installed"):
        read_counts(path)
    assert zstandard  # imported above, restored after the test


def test_writer_argument_errors(tmp_path):
    with pytest.raises(ValueError, match="equal lengths"):
        write_archive(tmp_path / "a_results.jsonl", ["t"], [[True], [False]])
    with pytest.raises(ValueError, match="task_ids must be distinct"):
        write_archive(tmp_path / "a_results.jsonl", ["t", "t"], [[True], [False]])
    with pytest.raises(TypeError, match=r"passes\[0\]\[1\] must be a bool"):
        write_archive(tmp_path / "a_results.jsonl", ["t"], [[True, "yes"]])
    with pytest.raises(ValueError, match="cannot tell the archive format"):
        write_archive(tmp_path / "a.txt", ["t"], [[True]])
    with pytest.raises(ValueError, match="plus= applies only to format evalplus"):
        write_archive(tmp_path / "a_results.jsonl", ["t"], [[True]], plus=[[True]])
    assert list(tmp_path.iterdir()) == []  # nothing half-written


def test_zstd_writer_round_trip(tmp_path):
    pytest.importorskip("zstandard")
    for fmt, name in (("humaneval", "s_results.jsonl.zst"), ("counts", "c.csv.zst")):
        path = tmp_path / name
        write_archive(path, TASKS, FLAGS, format=fmt)
        assert path.read_bytes()[:4] == b"\x28\xb5\x2f\xfd"
        assert _rows(read_counts(path)) == [("T/0", 4, 3), ("T/1", 2, 0), ("T/2", 1, 1)]


def test_path_specs_and_document_fields_as_groups(tmp_path):
    for model, temp in (("a", "t0.2"), ("b", "t0.8")):
        write_archive(tmp_path / model / temp / "eval_results.json", TASKS, FLAGS,
                      format="evalplus", plus=FLAGS)
    counts = read_counts(tmp_path, by=["path:-3", "path:parent", "metric_set"])
    assert counts.group_dicts == [
        {"path:-3": "a", "path:parent": "t0.2", "metric_set": "base"},
        {"path:-3": "a", "path:parent": "t0.2", "metric_set": "plus"},
        {"path:-3": "b", "path:parent": "t0.8", "metric_set": "base"},
        {"path:-3": "b", "path:parent": "t0.8", "metric_set": "plus"},
    ]
    with pytest.raises(ArchiveError, match="holds the same tasks and samples as"):
        read_counts(tmp_path, by=["path:stem", "hash"], merge=True)  # the two runs are copies
    counts = read_counts(tmp_path, by=["path:stem", "hash"], merge="allow-duplicates")
    assert counts.group_dicts == [{"path:stem": "eval_results", "hash": "synthetic",
                                   "metric_set": s} for s in ("base", "plus")]
    assert counts.n.tolist() == [8, 4, 2] * 2
    # without merge=True a path spec that does not tell the runs apart is an error ...
    with pytest.raises(ArchiveError, match=r"shares the group path:stem=eval_results, "
                       r"hash=synthetic, metric_set=base with .*merge=True"):
        read_counts(tmp_path, by=["path:stem", "hash"])
    # ... and with no path spec each run keeps its own path
    apart = read_counts(tmp_path, by=["hash"])
    runs = [os.path.join(m, t, "eval_results.json") for m, t in (("a", "t0.2"), ("b", "t0.8"))]
    assert [g["path"] for g in apart.group_dicts] == [runs[0]] * 2 + [runs[1]] * 2
    assert apart.n.tolist() == [4, 2, 1] * 4
    with pytest.raises(ArchiveError) as info:
        read_counts(tmp_path / "a", by=["model"])
    path = tmp_path / "a" / "t0.2" / "eval_results.json"
    assert str(info.value) == f'{path}: $: missing group field "model" in the document'


def test_directory_walk_leaves_out_harness_inputs(tmp_path):
    write_archive(tmp_path / "samples.jsonl_results.jsonl", TASKS, FLAGS)
    (tmp_path / "samples.jsonl").write_text('{"task_id": "T/0", "completion": "x"}\n')
    write_archive(tmp_path / "m_eval_results.json", TASKS, FLAGS, format="bigcodebench")
    (tmp_path / "m.jsonl").write_text('{"task_id": "T/0", "solution": "x"}\n')
    write_archive(tmp_path / "lcb_eval_all.json", TASKS, FLAGS, format="livecodebench")
    (tmp_path / "lcb_eval.json").write_text('[{"pass@1": 0.5}]')
    assert expand_paths(tmp_path) == [str(tmp_path / n) for n in (
        "lcb_eval_all.json", "m_eval_results.json", "samples.jsonl_results.jsonl")]
    assert read_counts(tmp_path).samples == 3 * sum(map(len, FLAGS))
    with pytest.raises(ArchiveError, match="cannot detect the format of JSON Lines"):
        read_counts(tmp_path / "samples.jsonl")  # named explicitly: read, and refused


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b"]), st.sampled_from(["t1", "t2", "t10"]),
                          st.integers(1, 50), st.integers(0, 50)), min_size=1, max_size=20),
       st.randoms(use_true_random=False))
def test_merge_equals_reading_everything_at_once(rows, rnd):
    rows = [({"model": m}, t, n, min(c, n)) for m, t, n, c in rows]
    whole = Counts.from_rows(rows)
    shuffled = list(rows)
    rnd.shuffle(shuffled)
    cut = rnd.randrange(len(shuffled) + 1)
    parts = [Counts.from_rows(shuffled[:cut]), Counts.from_rows(shuffled[cut:])]
    merged = merge_counts(parts)
    assert merged.groups == whole.groups
    assert merged.group.tolist() == whole.group.tolist()
    assert _rows(merged) == _rows(whole)
    totals: dict = {}
    for g, t, n, c in rows:
        key = (g["model"], t)
        totals[key] = (totals.get(key, (0, 0))[0] + n, totals.get(key, (0, 0))[1] + c)
    got = {(merged.groups[g][0][1], t): (n, c) for g, t, n, c in zip(
        merged.group.tolist(), merged.task.tolist(), merged.n.tolist(), merged.c.tolist(),
        strict=True)}
    assert got == totals


def test_column_options_only_for_tables(tmp_path):
    path = tmp_path / "s_results.jsonl"
    write_archive(path, TASKS, FLAGS)
    with pytest.raises(ArchiveError) as info:
        read_counts(path, passed="ok", threshold=0.5)
    assert str(info.value) == (f"{path}: is a humaneval archive, but column options (passed=, "
                               "threshold=) apply only to count and per-sample tables; pass "
                               "format='samples' or format='counts' to read it as a table")
    assert _rows(read_counts(path, format="samples", task="task_id", passed="passed")) == [
        ("T/0", 4, 3), ("T/1", 2, 0), ("T/2", 1, 1)]
