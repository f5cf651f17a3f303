"""The leaderboard and plan commands: every number comes from the library."""

from __future__ import annotations

import json

import numpy as np
import pytest

import passatk
from passatk.archives import read_counts, write_archive

TASKS = [f"t/{i}" for i in range(30)]


@pytest.fixture
def runs(tmp_path):
    rng = np.random.default_rng(0)
    base = rng.random(30)
    paths = []
    for j, shift in enumerate((0.0, 0.1, 0.3)):
        p = np.clip(base + shift, 0, 1)
        passes = [[bool(x) for x in rng.random(6) < pi] for pi in p]
        path = tmp_path / f"m{j}.jsonl_results.jsonl"
        write_archive(path, TASKS, passes)
        paths.append(str(path))
    return paths


def test_rows_and_pairs_are_the_librarys(cli, runs):
    code, out, err = cli(["leaderboard", *runs, "-k", "1,3", "--format", "json"])
    assert code == 0, err
    got = json.loads(out)
    lib = passatk.leaderboard({p: read_counts([p]) for p in runs}, [1, 3])
    assert got == lib.records()
    code, out, _ = cli(["leaderboard", *runs, "--pairs", "--format", "json"])
    assert json.loads(out) == passatk.leaderboard({p: read_counts([p]) for p in runs}
                                                  ).pair_records()


def test_table_latex_matrix_and_plot(cli, runs, tmp_path):
    code, out, _ = cli(["leaderboard", *runs])
    assert code == 0 and "rank_low" in out and "groups" in out
    code, out, _ = cli(["leaderboard", *runs, "--format", "latex"])
    assert code == 0 and "\\toprule" in out and out.count("\\\\") == 4
    code, out, _ = cli(["leaderboard", *runs, "--matrix", "--format", "csv"])
    assert code == 0 and out.splitlines()[0].startswith("k,quantity,model")
    assert len(out.splitlines()) == 1 + 2 * 3
    fig = tmp_path / "forest.svg"
    code, _, err = cli(["leaderboard", *runs, "--plot", fig, "-q"])
    assert code == 0, err
    assert fig.read_text().lstrip().startswith("<?xml")


def test_one_path_without_by_is_one_model(cli, runs):
    code, _, err = cli(["leaderboard", runs[0], "--format", "json"])
    assert code == 2 and "at least 2 models" in err and "--by" in err
    assert err.count("\n") == 1


def test_leaderboard_usage_errors(cli, runs):
    code, _, err = cli(["leaderboard", *runs, "--pairs", "--format", "latex"])
    assert code == 2 and "latex" in err
    code, _, err = cli(["leaderboard", *runs, "--plot", "x.gif"])
    assert code == 2 and "image format" in err
    code, _, err = cli(["leaderboard", *runs, "--missing", "report"])
    assert code == 2 and "--missing report" in err and err.count("\n") == 1
    code, _, err = cli(["leaderboard", *runs, "--ci", "cluster"])  # no --cluster-by here
    assert code == 2 and "'cluster'" in err and err.count("\n") == 1


def test_plan_answers_are_the_librarys(cli, runs):
    code, out, err = cli(["plan", "--delta", "0.03", "--sd", "0.2", "--tasks", "164",
                          "--format", "json"])
    assert code == 0, err
    got = {r["quantity"]: r["value"] for r in json.loads(out)}
    assert got["tasks"] == passatk.tasks_needed(0.03, 0.2).value
    assert got["min_detectable_effect"] == passatk.min_detectable_effect(164, 0.2).value
    assert got["power"] == passatk.stats.achieved_power(164, 0.03, 0.2).value
    code, out, _ = cli(["plan", "--tasks", "100", "--baseline", "0.6", "--rho", "0.8",
                        "--samples-per-task", "10", "--format", "json"])
    sd = passatk.stats.paired_sd_from_rates(0.6, 0.8, 10).value
    assert json.loads(out)[0]["value"] == sd
    code, out, _ = cli(["plan", "--pilot", runs[1], runs[0], "--delta", "0.05",
                        "--target-se", "0.02", "--format", "json"])
    a, b = read_counts([runs[1]]), read_counts([runs[0]])
    rec = {r["quantity"]: r["value"] for r in json.loads(out)}
    assert rec["sd"] == passatk.stats.paired_sd(a.n, a.c, b.n, b.c, task_ids_a=a.task,
                                                task_ids_b=b.task).value
    assert rec["samples_per_task"] == passatk.samples_needed(a.n, a.c, 1, 0.02).value


def test_plan_samples_per_task_alone(cli, runs):
    # --target-se with a pilot needs nothing else: only the samples per task are planned
    code, out, err = cli(["plan", "--pilot", runs[0], runs[1], "-k", "5", "--target-se",
                          "0.03", "--format", "json"])
    assert code == 0, err
    a = read_counts([runs[0]])
    recs = json.loads(out)
    assert [r["quantity"] for r in recs] == ["samples_per_task"]
    assert recs[0]["value"] == passatk.samples_needed(a.n, a.c, 5, 0.03).value


@pytest.mark.parametrize(("argv", "match"), [
    (["plan"], "give the sd"),
    (["plan", "--sd", "0.2"], "say what to plan"),
    (["plan", "--sd", "0.2", "--baseline", "0.5", "--delta", "0.1"], "one way"),
    (["plan", "--baseline", "0.5", "--delta", "0.1"], "--rho"),
    (["plan", "--target-se", "0.01"], "needs a pilot"),
    (["plan", "--sd", "0.2", "--tasks", "1"], "n_tasks"),
])
def test_plan_errors_are_one_line(cli, argv, match):
    code, _, err = cli(argv)
    assert code == 2 and match in err and err.count("\n") == 1
