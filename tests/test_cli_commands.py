"""``passatk compare``, ``check``, ``plot``, ``simulate`` and ``formats``, and real subprocess runs.

Expected numbers come from the library (passatk.compare, passatk.score, passatk.reference).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

import passatk
from passatk import reference
from passatk.archives import formats, read_counts, write_archive

TASKS = [f"HumanEval/{i}" for i in range(8)]
PASSES_A = [[(i * j) % 5 < 3 for j in range(10)] for i in range(8)]
PASSES_B = [[(i + j) % 4 == 0 for j in range(10)] for i in range(8)]


def counts_of(passes):
    return [len(p) for p in passes], [sum(p) for p in passes]


@pytest.fixture
def ab(tmp_path):
    a = tmp_path / "a" / "x_results.jsonl"
    b = tmp_path / "b" / "x_results.jsonl"
    write_archive(a, TASKS, PASSES_A)
    write_archive(b, TASKS, PASSES_B)
    return str(a), str(b)


# --------------------------------------------------------------------------------------
# compare

COMPARE_KEYS = ["group", "metric", "k", "diff", "se", "ci_low", "ci_high", "p_value", "tasks"]


def test_compare_json_matches_library(cli, ab):
    code, out, err = cli(["compare", *ab, "-k", "1,3", "--seed", "0", "--format", "json"])
    assert (code, err) == (0, "")
    got = json.loads(out)["rows"]
    assert [list(r)[: len(COMPARE_KEYS)] for r in got] == [COMPARE_KEYS] * 2
    na, ca = counts_of(PASSES_A)
    nb, cb = counts_of(PASSES_B)
    want = passatk.compare(na, ca, nb, cb, [1, 3], task_ids_a=TASKS, task_ids_b=TASKS,
                           seed=np.random.default_rng(0)).records()
    for g, w in zip(got, want, strict=True):
        for key in ("diff", "se", "ci_low", "ci_high", "p_value", "tasks", "value_a", "value_b",
                    "boot_low", "boot_high"):
            assert g[key] == w[key], key


def test_compare_is_a_minus_b(cli, ab):
    _, ab_out, _ = cli(["compare", *ab, "--format", "json"])
    _, ba_out, _ = cli(["compare", *reversed(ab), "--format", "json"])
    d_ab, d_ba = json.loads(ab_out)["rows"][0], json.loads(ba_out)["rows"][0]
    na, ca = counts_of(PASSES_A)
    nb, cb = counts_of(PASSES_B)
    mean_a = sum(Fraction(c, n) for n, c in zip(na, ca, strict=True)) / len(na)
    mean_b = sum(Fraction(c, n) for n, c in zip(nb, cb, strict=True)) / len(nb)
    assert d_ab["diff"] == pytest.approx(float(mean_a - mean_b), rel=1e-12)
    assert d_ba["diff"] == pytest.approx(-d_ab["diff"], rel=1e-12)


def test_compare_table_and_bootstrap(cli, ab):
    code, out, _ = cli(["compare", *ab, "-k", "1,2"])
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["metric", "k", "A:", "a", "B:", "b", "diff", "(A-B)",
                                "se", "ci_low", "ci_high", "confidence", "ci_method", "p_value",
                                "tasks", "estimand"]
    assert len({len(line) for line in lines[1:]}) == 1  # the last column, estimand, is text
    code, out, _ = cli(["compare", *ab, "--ci", "bootstrap", "--seed", "3", "--format",
                                "json"])
    assert code == 0
    rec = json.loads(out)["rows"][0]
    assert (rec["ci_low"], rec["ci_high"], rec["p_value"]) == (
        rec["boot_low"], rec["boot_high"], rec["perm_p_value"])
    assert rec["ci_method"] == "paired-bootstrap-t" and json.loads(out)["seed"] == 3
    code, _, err = cli(["compare", *ab, "--ci", "bca"])
    assert code == 2 and err.startswith("passatk: error: argument --ci: invalid choice")


def test_compare_unmatched_tasks(cli, ab, tmp_path):
    short = tmp_path / "short_results.jsonl"
    write_archive(short, TASKS[:6], PASSES_B[:6])
    code, out, err = cli(["compare", ab[0], str(short)])
    assert (code, out) == (2, "")
    assert err.startswith("passatk: error: tasks must be present in both runs: 2 only in run A")
    assert "--unmatched exclude" in err and err.count("\n") == 1
    code, out, err = cli(["compare", ab[0], str(short), "--unmatched", "exclude",
                                  "--format", "json"])
    assert code == 0
    assert "excluded 2 task(s) only in A" in err
    doc = json.loads(out)
    assert doc["rows"][0]["tasks"] == 6 and "only_in_a" not in doc["rows"][0]
    assert doc["unmatched"] == [{"group": {}, "only_in_a": TASKS[6:], "only_in_b": []}]


def test_compare_groups_by_field(cli, tmp_path):
    # EvalPlus runs have two groups each (base and plus): compared group by group
    plus = [[x and j % 2 == 0 for j, x in enumerate(p)] for p in PASSES_A]
    write_archive(tmp_path / "a" / "eval_results.json", TASKS, PASSES_A, plus=plus)
    write_archive(tmp_path / "b" / "eval_results.json", TASKS, PASSES_B)
    code, _, err = cli(["compare", str(tmp_path / "a"), str(tmp_path / "b")])
    assert code == 2 and "different groups" in err and err.count("\n") == 1
    write_archive(tmp_path / "b" / "eval_results.json", TASKS, PASSES_B, plus=PASSES_B)
    code, out, _ = cli(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--format",
                                "json"])
    assert code == 0
    assert [r["group"] for r in json.loads(out)["rows"]] == [{"metric_set": "base"},
                                                     {"metric_set": "plus"}]


# --------------------------------------------------------------------------------------
# check


@pytest.mark.parametrize(
    ("fmt", "name"),
    [("evalplus", "eval_results.json"), ("cruxeval", "scored.json"),
     ("bigcodebench", "m_eval_results.json"), ("lm-eval", "samples_humaneval_2024.jsonl"),
     ("opencompass", "oc.json"), ("livecodebench", "m_eval_all.json")],
)
def test_check_agrees(cli, tmp_path, fmt, name):
    path = tmp_path / name
    write_archive(path, TASKS, PASSES_A, format=fmt)
    code, out, err = cli(["check", str(tmp_path), "--format", "json"])
    assert code == 0, err
    records = json.loads(out)["rows"]
    stored = read_counts(str(tmp_path)).stored
    assert len(records) == len(stored) > 0
    for rec, s in zip(records, stored, strict=True):
        assert rec["status"] == "ok" and rec["stored"] == s.value
        assert rec["rel_diff"] <= 1e-9
        if s.task is None:
            n, c = counts_of(PASSES_A)
            exact = sum(reference.pass_at_k_exact(ni, ci, s.k)
                        for ni, ci in zip(n, c, strict=True)) / len(n)
            assert rec["recomputed"] == pytest.approx(float(exact), rel=1e-12)
    assert err.endswith(f"{len(stored)} of {len(stored)} stored number(s) agree within "
                        "relative 1e-09\n")


def test_check_disagreement_exits_1(cli, tmp_path):
    path = tmp_path / "scored.json"
    write_archive(path, TASKS, PASSES_A, format="cruxeval")
    doc = json.loads(path.read_text())
    doc["pass_at_1"] = round(doc["pass_at_1"], 2) + 0.01  # percent, off by 0.01 pp
    path.write_text(json.dumps(doc))
    code, out, err = cli(["check", str(path)])
    assert code == 1
    assert "MISMATCH" in out
    assert "; 1 do not" in err
    # a loose tolerance accepts it
    code, _, _ = cli(["check", str(path), "--tolerance", "1e-3"])
    assert code == 0


def test_check_without_stored_numbers(cli, tmp_path):
    path = tmp_path / "x_results.jsonl"
    write_archive(path, TASKS, PASSES_A)
    code, out, err = cli(["check", str(path)])
    assert (code, out) == (2, "")
    assert err.startswith("passatk: error: nothing to check") and err.count("\n") == 1


# --------------------------------------------------------------------------------------
# simulate


@pytest.mark.parametrize(
    ("name", "fmt"),
    [("demo_results.jsonl", None), ("counts.csv", None), ("trials.json", "tau-bench"),
     ("eval_results.json", None)],
)
def test_simulate_writes_what_simulate_draws(cli, tmp_path, name, fmt):
    target = tmp_path / name
    argv = ["simulate", "-o", str(target), "--tasks", "30", "--n", "7", "--a", "0.5", "--b", "2",
            "--seed", "4"]
    if fmt:
        argv += ["--archive-format", fmt]
    code, out, err = cli(argv)
    assert code == 0
    assert str(target) in out.splitlines()
    assert "simulated 30 tasks x 7 samples" in err
    sim = passatk.simulate(30, 7, 0.5, 2.0, seed=4)
    counts = read_counts(str(target))
    assert counts.n.tolist() == sim.n.tolist()
    order = [int(str(t).rsplit("/", 1)[-1]) for t in counts.task.tolist()]
    assert counts.c.tolist() == sim.c[order].tolist()
    if fmt == "tau-bench":
        assert counts.metric == "pass^k"


def test_simulate_bad_inputs(cli, tmp_path):
    code, out, err = cli(["simulate", "-o", str(tmp_path / "x.txt")])
    assert (code, out) == (2, "")
    assert "cannot tell the archive format" in err and err.count("\n") == 1
    code, _, err = cli(["simulate", "-o", str(tmp_path / "x.json"), "--archive-format", "nope"])
    assert code == 2 and "got 'nope'" in err
    # --format is the output format everywhere; simulate writes an archive and has none
    code, _, err = cli(["simulate", "-o", str(tmp_path / "x.json"), "--format", "evalplus"])
    assert (code, err) == (2, "passatk: error: unrecognized arguments: --format evalplus\n")
    assert os.listdir(tmp_path) == []


# --------------------------------------------------------------------------------------
# plot


def test_plot_writes_an_image(cli, ab, tmp_path):
    pytest.importorskip("matplotlib")
    target = tmp_path / "curve.png"
    code, out, err = cli(["plot", os.path.dirname(os.path.dirname(ab[0])), "--by",
                                  "path:parent", "-k", "1-10", "--ci", "t", "-o", str(target)])
    assert (code, out) == (0, "")
    # the method each row used: t, and the bounded Wilson where every per-task value is equal
    assert err == (f"passatk: wrote {target} (band: 95% bounded Wilson interval (t at k = 1, 2, "
                   "3, ...); t interval (bounded Wilson at k = 9, 10), within [0, 1])\n")
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(os.listdir(tmp_path)) == ["a", "b", "curve.png"]


def test_plot_svg_with_all_k_and_bca(cli, ab, tmp_path):
    pytest.importorskip("matplotlib")
    target = tmp_path / "curve.svg"
    code, _, _ = cli(["plot", ab[0], "--ci", "bca", "--seed", "1", "--resamples", "200",
                              "--log-k", "--title", "demo", "-q", "-o", str(target)])
    assert code == 0
    assert b"<svg" in target.read_bytes()[:500]


def test_plot_without_matplotlib_is_one_line(cli, ab, tmp_path, monkeypatch):
    for name in list(sys.modules):
        if name == "matplotlib" or name.startswith("matplotlib."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    target = tmp_path / "curve.png"
    code, out, err = cli(["plot", ab[0], "-o", str(target)])
    assert (code, out) == (2, "")
    assert err == ("passatk: error: plot needs matplotlib, which is not installed; install it "
                   "with: pip install 'passatk[plot]'\n")
    assert not target.exists()


def test_plot_bad_inputs_leave_no_file(cli, ab, tmp_path):
    pytest.importorskip("matplotlib")
    code, _, err = cli(["plot", ab[0], "-o", str(tmp_path / "curve")])
    assert code == 2 and "cannot tell the image format" in err
    code, _, err = cli(["plot", ab[0], "-o", str(tmp_path / "curve.xyz")])
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    code, _, err = cli(["plot", ab[0], "-k", "11", "-o", str(tmp_path / "c.png")])
    assert code == 2 and "k=11" in err
    assert sorted(os.listdir(tmp_path)) == ["a", "b"]


# --------------------------------------------------------------------------------------
# formats


def test_formats_table_and_json(cli):
    code, out, _ = cli(["formats"])
    assert code == 0
    names = [f.name for f in formats()]
    listed = [line.split()[0] for line in out.splitlines() if line and not line[0].isspace()]
    assert listed[: len(names)] == names
    assert out.count("detected:") == len(names)
    code, out, _ = cli(["formats", "--format", "json"])
    assert [r["name"] for r in json.loads(out)["rows"]] == names
    assert [r["detection"] for r in json.loads(out)["rows"]] == [f.detection for f in formats()]
    code, out, _ = cli(["formats", "--format", "markdown"])
    assert out.splitlines()[0].startswith("| name | harness |")


# --------------------------------------------------------------------------------------
# real processes


def _cli():
    script = shutil.which("passatk")
    return [script] if script else [sys.executable, "-m", "passatk"]


def test_console_script_version_and_score(tmp_path):
    path = tmp_path / "s_results.jsonl"
    write_archive(path, TASKS, PASSES_A)
    version = subprocess.run([*_cli(), "--version"], capture_output=True, text=True, check=False)
    assert version.returncode == 0
    assert version.stdout.strip() == f"passatk {passatk.__version__}"
    proc = subprocess.run([*_cli(), "score", str(path), "-k", "1,5", "--format", "json"],
                          capture_output=True, text=True, check=False)
    assert (proc.returncode, proc.stderr) == (0, "")  # no progress bar: stderr is not a tty
    n, c = counts_of(PASSES_A)
    want = passatk.score(n, c, [1, 5], task_ids=TASKS).records()
    assert [r["value"] for r in json.loads(proc.stdout)["rows"]] == [w["value"] for w in want]


def test_python_m_passatk_error_has_no_traceback(tmp_path):
    path = tmp_path / "bad_results.jsonl"
    path.write_text('{"task_id": "T/0", "completion": "", "passed": "yes"}\n')
    proc = subprocess.run([sys.executable, "-m", "passatk", "score", str(path), "-k", "1"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == (f"passatk: error: {path}:1: field \"passed\" must be a pass flag "
                           "(true/false, 1/0, 1.0/0.0), got 'yes'\n")
    proc = subprocess.run([sys.executable, "-m", "passatk", "score", str(path), "-k", "0"],
                          capture_output=True, text=True, check=False)
    assert (proc.returncode, proc.stderr.count("\n")) == (2, 1)


def test_compare_one_group_each_labels_both(cli, ab):
    base = os.path.dirname(os.path.dirname(ab[0]))
    code, out, _ = cli(["compare", os.path.join(base, "a"), os.path.join(base, "b"),
                                "--by", "path:parent", "--format", "json"])
    assert code == 0
    rec = json.loads(out)["rows"][0]
    assert rec["group"] == {"a": "path:parent=a", "b": "path:parent=b"}
    _, plain, _ = cli(["compare", *ab, "--format", "json"])
    assert rec["diff"] == json.loads(plain)["rows"][0]["diff"]


def test_check_livecodebench_per_problem_and_missing(cli, tmp_path):
    path = tmp_path / "m_eval_all.json"
    write_archive(path, TASKS, PASSES_A, format="livecodebench")
    doc = json.loads(path.read_text())
    doc[2]["pass@1"] += 1e-6
    path.write_text(json.dumps(doc))
    code, out, err = cli(["check", str(path), "--format", "json"])
    assert code == 1
    records = json.loads(out)["rows"]
    assert [r["status"] for r in records].count("MISMATCH") == 1
    bad = next(r for r in records if r["status"] == "MISMATCH")
    n, c = counts_of(PASSES_A)
    i = TASKS.index(bad["task"])
    assert bad["recomputed"] == passatk.pass_at_k(n[i], c[i], 1)
    assert err.endswith("; 1 do not\n")


@pytest.mark.parametrize("name", ["humaneval_results.jsonl", "counts.csv"])
def test_bundled_example_scores(cli, name):
    path = os.path.join(os.path.dirname(passatk.__file__), "data", "examples", name)
    code, out, err = cli(["score", path, "-k", "1,10", "--format", "json"])
    assert (code, err) == (0, "")
    counts = read_counts(path)
    want = passatk.score(counts.n, counts.c, [1, 10], task_ids=counts.task).records()
    assert json.loads(out)["rows"] == want
