"""Every harness format: literal snippets from formats.md, writer round trips, detection,
stored numbers, filters and bad input."""

from __future__ import annotations

import gzip
import json
from math import comb

import pytest

from passatk.archives import ArchiveError, detect_format, formats, read_counts, write_archive

TASKS = ["T/0", "T/1", "T/2", "T/10"]
FLAGS = [[True, False, True], [False] * 4, [True, True], [True, False]]
PLUS = [[True, False, False], [False] * 4, [True, False], [False, False]]


def _rows(counts):
    return list(zip(counts.task.tolist(), counts.n.tolist(), counts.c.tolist(), strict=True))


def _expected(flags=FLAGS, tasks=TASKS):
    # rows come sorted in natural task order
    rows = [(t, len(f), sum(f)) for t, f in zip(tasks, flags, strict=True)]
    return sorted(rows, key=lambda r: int(r[0].split("/")[1]))


def _exact_mean(flags, k):
    from fractions import Fraction
    return float(sum((1 - Fraction(comb(len(f) - sum(f), k), comb(len(f), k)) for f in flags),
                     Fraction(0)) / len(flags))


def _write(tmp_path, name, obj):
    path = tmp_path / name
    path.write_text(obj if isinstance(obj, str) else json.dumps(obj))
    return path


# ------------------------------------------------------------------ writer round trips
ROUND_TRIP = [
    ("humaneval", "s_results.jsonl"), ("humaneval", "s_results.jsonl.gz"),
    ("bigcodebench", "m_eval_results.json"), ("lm-eval", "samples_humaneval_2024-01-01T00.jsonl"),
    ("livecodebench", "m_eval_all.json"), ("opencompass", "humaneval.json"),
    ("cruxeval", "crux.json"), ("tau-bench", "tau.json"), ("counts", "c.jsonl"),
    ("samples", "s.csv"), ("code-eval", "humaneval-cpp-details.json"),
    ("qwen-math", "test_cot_-1_seed0_t0.0_s0_e-1.jsonl"),
]


@pytest.mark.parametrize(("fmt", "name"), ROUND_TRIP)
def test_round_trip_and_detection(tmp_path, fmt, name):
    path = tmp_path / name
    write_archive(path, TASKS, FLAGS, format=fmt)
    assert detect_format(path) == fmt
    counts = read_counts(path)
    assert _rows(counts) == _expected()
    assert _rows(read_counts(path, format=fmt)) == _expected()
    assert counts.metric == ("pass^k" if fmt == "tau-bench" else "pass@k")


@pytest.mark.parametrize("version", [1, 2, 3])
@pytest.mark.parametrize("with_plus", [True, False])
def test_evalplus_versions(tmp_path, version, with_plus):
    path = tmp_path / "eval_results.json"
    write_archive(path, TASKS, FLAGS, format="evalplus", evalplus_version=version,
                  plus=PLUS if with_plus else None)
    assert detect_format(path) == "evalplus"
    counts = read_counts(path)
    sets = ["base", "plus"] if with_plus else ["base"]
    assert counts.group_dicts == [{"metric_set": s} for s in sets]
    by_set = {g.group["metric_set"]: list(zip(g.task.tolist(), g.n.tolist(), g.c.tolist(),
                                              strict=True)) for g in counts.iter_groups()}
    assert by_set["base"] == _expected()
    if with_plus:
        both = [[b and p for b, p in zip(bs, ps, strict=True)]
                for bs, ps in zip(FLAGS, PLUS, strict=True)]
        assert by_set["plus"] == _expected(both)
    if version == 3:
        stored = {(dict(s.group)["metric_set"], s.k): s.value for s in counts.stored}
        assert stored[("base", 1)] == _exact_mean(FLAGS, 1)
        assert set(stored) == {(s, 1) for s in sets}
    else:
        assert counts.stored == ()


def test_multipl_e_directory(tmp_path):
    write_archive(tmp_path / "run", TASKS, FLAGS, format="multipl-e")
    (tmp_path / "run" / "T_0.json").write_text('{"name": "T/0", "completions": []}')
    (tmp_path / "run" / "README.md").write_text("not data")
    counts = read_counts(tmp_path / "run", by=["language"])
    assert _rows(counts) == _expected()
    assert counts.group_dicts == [{"language": "py"}]
    gz = tmp_path / "gz" / "T_0.results.json.gz"
    gz.parent.mkdir()
    gz.write_bytes(gzip.compress((tmp_path / "run" / "T_0.results.json").read_bytes()))
    assert _rows(read_counts(tmp_path / "gz")) == [("T/0", 3, 2)]


# ------------------------------------------------------------------ literal snippets (formats.md)
def test_literal_evalplus_v3_with_stored(tmp_path):
    doc = {"date": "2024-11-01", "hash": "h",
           "eval": {"HumanEval/0": [
               {"task_id": "HumanEval/0", "solution": "...", "base_status": "pass",
                "plus_status": "fail", "base_fail_tests": [], "plus_fail_tests": [[1.0]]},
               {"task_id": "HumanEval/0", "solution": "...", "base_status": "pass",
                "plus_status": "pass", "base_fail_tests": [], "plus_fail_tests": []},
               {"task_id": "HumanEval/0", "solution": "...", "base_status": "timeout",
                "plus_status": "pass", "base_fail_tests": None, "plus_fail_tests": None},
               {"task_id": "HumanEval/0", "solution": "...", "base_status": "fail",
                "plus_status": None, "base_fail_tests": [], "plus_fail_tests": []}]},
           "pass_at_k": {"base": {"pass@1": 0.5}, "plus": {"pass@1": 0.25}}}
    path = _write(tmp_path, "eval_results.json", doc)
    counts = read_counts(path)
    assert counts.group_dicts == [{"metric_set": "base"}, {"metric_set": "plus"}]
    assert counts.n.tolist() == [4, 4] and counts.c.tolist() == [2, 1]
    assert [(s.value, s.source) for s in counts.stored] == [
        (0.5, f'{path}: $.pass_at_k.base["pass@1"]'),
        (0.25, f'{path}: $.pass_at_k.plus["pass@1"]')]


def test_literal_evalplus_v1(tmp_path):
    doc = {"date": "...", "hash": 123, "eval": {
        "HumanEval/0": {"nfiles": 2, "base": [["success", [True, True]], ["failed", [True, False]]],
                        "plus": [["success", [True]], ["timed out", []]]},
        "HumanEval/1": {"files": ["a.py", "b.py"], "base": [["success", []], ["success", []]],
                        "plus": [["failed", []], ["success", []]]}}}
    counts = read_counts(_write(tmp_path, "eval_results.json", doc))
    assert _rows(counts) == [("HumanEval/0", 2, 1), ("HumanEval/1", 2, 2),
                             ("HumanEval/0", 2, 1), ("HumanEval/1", 2, 1)]
    doc["eval"] = {"HumanEval/0": {"nfiles": 1, "base": [["success", [True]]], "plus": []}}
    counts = read_counts(_write(tmp_path, "eval_results.json", doc))
    assert counts.group_dicts == [{"metric_set": "base"}] and _rows(counts) == [
        ("HumanEval/0", 1, 1)]


def test_literal_bigcodebench_with_sidecar(tmp_path):
    doc = {"date": "2024", "eval": {"BigCodeBench/0": [
        {"task_id": "BigCodeBench/0", "solution": "", "status": "pass", "details": {}},
        {"task_id": "BigCodeBench/0", "solution": "", "status": "timeout", "details": {}}]}}
    path = _write(tmp_path, "m_eval_results.json", doc)
    _write(tmp_path, "m_pass_at_k.json", {"pass@1": 0.48, "model": "m", "split": "complete"})
    counts = read_counts(tmp_path)  # the directory: the sidecar is not read as an archive
    assert _rows(counts) == [("BigCodeBench/0", 2, 1)]
    assert [(s.k, s.value, s.scale) for s in counts.stored] == [(1, 0.48, "fraction")]
    assert counts.files == (str(path),)


def test_literal_lm_eval_with_results(tmp_path):
    lines = [
        {"doc_id": 0, "resps": [["a", "b", "c", "d"]], "filtered_resps": ["x"],
         "filter": "create_test", "metrics": ["pass@1"], "pass@1": 0.75},
        {"doc_id": 1, "resps": [["a"], ["b"]], "filtered_resps": ["x"],
         "filter": "create_test", "metrics": ["pass@1"], "pass@1": 0.0},
    ]
    path = _write(tmp_path, "samples_humaneval_2024-05-13T15-20-30.jsonl",
                  "\n".join(json.dumps(x) for x in lines) + "\n")
    _write(tmp_path, "results_2024-05-13T15-20-30.json", {
        "results": {"humaneval": {"pass@1,create_test": 0.37,
                                  "pass@1_stderr,create_test": 0.038}},
        "configs": {}})
    counts = read_counts(path)
    assert counts.group_dicts == [{"lm_eval_task": "humaneval", "filter": "create_test"}]
    assert _rows(counts) == [("0", 4, 3), ("1", 2, 0)]
    assert [(s.k, s.value) for s in counts.stored] == [(1, 0.37)]
    lines[1]["pass@1"] = 1 / 3
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    with pytest.raises(ArchiveError) as info:
        read_counts(path)
    assert str(info.value) == (f"{path}:2: pass@1 = 0.3333333333333333 is not c/n for n = 2 "
                               "responses (pass@1 * n = 0.6666666666666666)")


def test_literal_livecodebench_with_filters(tmp_path):
    doc = [
        {"question_id": "q1", "contest_date": "2023-08-21T00:00:00", "platform": "leetcode",
         "difficulty": "easy", "graded_list": [True, False, True, False, False], "pass@1": 0.4},
        {"question_id": "q2", "contest_date": "2024-02-01T00:00:00", "platform": "atcoder",
         "difficulty": "hard", "graded_list": [False, False], "pass@1": 0.0},
        {"question_id": "q3", "contest_date": "2024-09-30T00:00:00", "platform": "atcoder",
         "difficulty": "medium", "graded_list": [True], "pass@1": 1.0},
    ]
    path = _write(tmp_path, "m_eval_all.json", doc)
    assert _rows(read_counts(path)) == [("q1", 5, 2), ("q2", 2, 0), ("q3", 1, 1)]
    assert _rows(read_counts(path, filters={"since": "2024-01-01"})) == [("q2", 2, 0),
                                                                          ("q3", 1, 1)]
    assert _rows(read_counts(path, filters={"until": "2024-02-01"})) == [("q1", 5, 2),
                                                                          ("q2", 2, 0)]
    assert _rows(read_counts(path, filters={"difficulty": ["easy", "medium"]})) == [
        ("q1", 5, 2), ("q3", 1, 1)]
    counts = read_counts(path, filters={"difficulty": "hard"}, by=["platform"])
    assert counts.group_dicts == [{"platform": "atcoder"}]
    stored = read_counts(path).stored
    assert [(s.task, s.k, s.value) for s in stored] == [("q1", 1, 0.4), ("q2", 1, 0.0),
                                                         ("q3", 1, 1.0)]


def test_literal_opencompass(tmp_path):
    doc = {"humaneval_pass@1": 50.0, "details": {
        "0": {"task_id": "HumanEval/0", "result": "passed", "passed": True},
        "1": {"task_id": "HumanEval/0", "result": "failed", "passed": False},
        "2": {"task_id": "HumanEval/1", "result": "passed", "passed": True}}}
    counts = read_counts(_write(tmp_path, "humaneval.json", doc))
    assert _rows(counts) == [("HumanEval/0", 2, 1), ("HumanEval/1", 1, 1)]
    assert [(s.k, s.value, s.scale) for s in counts.stored] == [(1, 0.5, "percent")]


def test_literal_cruxeval(tmp_path):
    doc = {"raw_generations": {"sample_0": ["a"] * 3},
           "raw_scored_generations": {"sample_10": [True, True, False],
                                      "sample_2": [False, False, False],
                                      "sample_0": [True, False, False]},
           "pass_at_1": 35.95, "pass_at_5": 44.99}
    counts = read_counts(_write(tmp_path, "scored.json", doc))
    assert _rows(counts) == [("sample_0", 3, 1), ("sample_2", 3, 0), ("sample_10", 3, 2)]
    assert sorted((s.k, s.value) for s in counts.stored) == [(1, 35.95 / 100), (5, 44.99 / 100)]


def test_literal_tau_bench_ragged(tmp_path):
    doc = [{"task_id": 0, "reward": 1.0, "trial": 0, "info": {}, "traj": []},
           {"task_id": 0, "reward": 0.9999999, "trial": 1, "info": {}, "traj": []},
           {"task_id": 0, "reward": 0.99, "trial": 2, "info": {}, "traj": []},
           {"task_id": 1, "reward": 0.0, "trial": 0, "info": {}, "traj": []}]
    counts = read_counts(_write(tmp_path, "tau.json", doc))
    assert counts.metric == "pass^k"
    assert _rows(counts) == [("0", 3, 2), ("1", 1, 0)]


def test_literal_human_eval_from_formats_md(tmp_path):
    path = _write(tmp_path, "samples.jsonl_results.jsonl",
                  '{"task_id": "HumanEval/0", "completion": "    return 1", "result": "passed", '
                  '"passed": true}\n'
                  '{"task_id": "HumanEval/0", "completion": "...", "result": "failed: ", '
                  '"passed": false}\n\n'
                  '{"task_id": "HumanEval/0", "completion": "...", "result": "timed out", '
                  '"passed": false}\n')
    assert detect_format(path) == "humaneval"
    assert _rows(read_counts(path)) == [("HumanEval/0", 3, 1)]


# ------------------------------------------------------------------ bad documents
@pytest.mark.parametrize(("name", "doc", "message"), [
    ("eval_results.json",
     {"eval": {"HumanEval/0": [{"base_status": "ok", "plus_status": None}]}},
     '$.eval["HumanEval/0"][0].base_status: base_status must be one of "pass", "fail", '
     "\"timeout\", null, got 'ok'"),
    ("eval_results.json",
     {"eval": {"HumanEval/0": {"nfiles": 3, "base": [["success", []]], "plus": []}}},
     '$.eval["HumanEval/0"].nfiles: nfiles is 3 but base has 1 results'),
    ("m_eval_results.json", {"eval": {"B/0": [{"status": "pass"}, {"status": "PASS"}]}},
     "$.eval[\"B/0\"][1].status: status must be one of \"pass\", \"fail\", \"timeout\", "
     "got 'PASS'"),
    ("m_eval_results.json", {"eval": {"B/0": [{"status": "pass"}], "B/1": []}},
     '$.eval["B/1"]: no samples for this task'),
    ("eval_results.json",
     {"eval": {"H/0": [{"base_status": "pass", "plus_status": None}], "H/1": []}},
     '$.eval["H/1"]: no samples for this task'),
    ("scored.json", {"raw_scored_generations": {"sample_0": [True, 1, 0.5]}},
     "$.raw_scored_generations.sample_0[2]: must be a pass flag (true/false, 1/0, 1.0/0.0), "
     "got 0.5"),
    ("tau.json", [{"task_id": 0, "reward": "1.0"}],
     "$[0]: field \"reward\" must be a number, got '1.0'"),
    ("m_eval_all.json", [{"question_id": "q", "graded_list": [True, "no"]}],
     "$[0].graded_list: graded_list must be a non-empty list of pass flags (true/false, 1/0, "
     "1.0/0.0), got [True, 'no']"),
    ("oc.json", {"details": {"0": {"task_id": "t", "passed": "yes"}}},
     "$.details[\"0\"]: field \"passed\" must be a pass flag (true/false, 1/0, 1.0/0.0), got "
     "'yes'"),
    ("p.results.json", {"name": "p", "results": [{"status": "OK", "exit_code": "0"}]},
     "$.results[0].exit_code: exit_code must be an integer or null, got '0'"),
])
def test_bad_documents(tmp_path, name, doc, message):
    path = _write(tmp_path, name, doc)
    with pytest.raises(ArchiveError) as info:
        read_counts(path)
    assert str(info.value) == f"{path}: {message}"
    assert "\n" not in str(info.value)


def test_skip_bad_in_documents(tmp_path):
    doc = {"eval": {"HumanEval/0": [{"base_status": "pass", "plus_status": None},
                                    {"base_status": 1, "plus_status": None}]}}
    path = _write(tmp_path, "eval_results.json", doc)
    counts = read_counts(path, skip_bad=True)
    assert _rows(counts) == [("HumanEval/0", 1, 1)]
    assert counts.skipped.count == 1
    assert counts.skipped.records[0].location == f'{path}: $.eval["HumanEval/0"][1].base_status'


def test_malformed_json_document(tmp_path):
    path = _write(tmp_path, "eval_results.json", '{"eval": {\n  "a": [1, 2,]\n}}')
    with pytest.raises(ArchiveError) as info:
        read_counts(path)
    assert str(info.value) == f"{path}:2: malformed JSON: Expecting value (column 14)"


def test_undetectable(tmp_path):
    path = _write(tmp_path, "x.json", {"hello": 1})
    with pytest.raises(ArchiveError) as info:
        read_counts(path)
    assert str(info.value) == (f"{path}: cannot detect the format of this JSON document "
                               "(top level: ['hello']); pass format= (see passatk formats)")
    path = _write(tmp_path, "y.jsonl", '{"hello": 1}\n')
    with pytest.raises(ArchiveError) as info:
        read_counts(path)
    assert str(info.value) == (f"{path}:1: cannot detect the format of JSON Lines with keys "
                               "['hello']; pass format= (see passatk formats)")
    path = _write(tmp_path, "z.txt", "hello\x00world")
    with pytest.raises(ArchiveError, match=r"z\.txt: cannot detect the format"):
        read_counts(path)
    path = _write(tmp_path, "results_2024.json", {"results": {"humaneval": {}}, "configs": {}})
    with pytest.raises(ArchiveError, match="holds only aggregate numbers"):
        read_counts(path)
    with pytest.raises(ArchiveError, match=r"is not a cruxeval archive"):
        read_counts(_write(tmp_path, "t.json", [{"task_id": 0, "reward": 1}]), format="cruxeval")


def test_format_list():
    names = [f.name for f in formats()]
    assert names == ["humaneval", "evalplus", "bigcodebench", "multipl-e", "lm-eval",
                     "livecodebench", "livecodebench-eval", "opencompass", "cruxeval",
                     "code-eval", "qwen-math", "inspect-ai", "inspect-ai-eval", "tau-bench",
                     "tau2-bench", "counts", "samples"]
    assert all(f.detection and f.passes and f.files for f in formats())


def test_filters_only_for_livecodebench(tmp_path):
    path = tmp_path / "s_results.jsonl"
    write_archive(path, TASKS, FLAGS)
    with pytest.raises(ArchiveError) as info:
        read_counts(path, filters={"since": "2024-01-01"})
    assert str(info.value) == (f"{path}: is a humaneval archive, but filters (since, until, "
                               "difficulty) apply only to LiveCodeBench")


def test_int_flags_make_a_per_sample_table(tmp_path):
    lines = ('{"task_id": "T/0", "completion": "", "passed": 1}\n'
             '{"task_id": "T/0", "completion": "", "passed": 0}\n')
    assert detect_format(_write(tmp_path, "x_results.jsonl", lines)) == "humaneval"
    path = _write(tmp_path, "flags.jsonl", lines)
    assert detect_format(path) == "samples"
    assert _rows(read_counts(path)) == [("T/0", 2, 1)]
    assert _rows(read_counts(path, format="humaneval")) == [("T/0", 2, 1)]  # 1 and 0 are flags
