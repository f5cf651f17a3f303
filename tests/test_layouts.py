"""Folders as harnesses leave them: separate archives are never pooled unless asked.

Each layout is a small fixture built here, with ``write_archive`` and by hand. Expected numbers
come from reading each archive alone, or from ``passatk.score`` on the flags.
"""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import passatk
from passatk.archives import ArchiveError, read_counts, write_archive

TASKS = [f"HumanEval/{i}" for i in range(6)]
FLAGS_A = [[(i * j) % 5 < 2 for j in range(5)] for i in range(6)]
FLAGS_B = [[(i + j) % 3 == 0 for j in range(5)] for i in range(6)]


def _by_group(counts):
    return {tuple(sorted(g.group.items())): (g.task.tolist(), g.n.tolist(), g.c.tolist())
            for g in counts.iter_groups()}


def _alone(path, **kw):
    return next(iter(_by_group(read_counts(path, **kw)).values()))


# ------------------------------------------------------------------ EvalPlus: two models
@pytest.fixture
def evalplus_folder(tmp_path):
    """evalplus_results/humaneval/<model>_..._eval_results.json, side by side."""
    folder = tmp_path / "evalplus_results" / "humaneval"
    for model, flags in (("model-a", FLAGS_A), ("model-b", FLAGS_B)):
        write_archive(folder / f"{model}_vllm_temp_0.8.eval_results.json", TASKS, flags,
                      format="evalplus", plus=flags)
    return folder


def test_two_evalplus_models_are_two_runs(evalplus_folder):
    counts = read_counts(evalplus_folder)
    names = [f"{m}_vllm_temp_0.8.eval_results.json" for m in ("model-a", "model-b")]
    assert counts.group_dicts == [{"path": name, "metric_set": s}
                                  for name in names for s in ("base", "plus")]
    for name, flags in zip(names, (FLAGS_A, FLAGS_B), strict=True):
        got = _by_group(counts)[(("metric_set", "base"), ("path", name))]
        assert got == ([*TASKS], [5] * 6, [sum(f) for f in flags])
    # the stored pass_at_k of each file is checked against that file alone
    assert {s.group[0] for s in counts.stored} == {("path", n) for n in names}


def test_merge_pools_shards_and_sums_a_task_in_two(evalplus_folder):
    counts = read_counts(evalplus_folder, merge=True)
    assert counts.group_dicts == [{"metric_set": "base"}, {"metric_set": "plus"}]
    base = counts.n[counts.group == 0].tolist(), counts.c[counts.group == 0].tolist()
    assert base == ([10] * 6, [sum(a) + sum(b) for a, b in zip(FLAGS_A, FLAGS_B, strict=True)])


def test_hand_written_evalplus_pair(tmp_path):
    """Two v2 files written by hand (no pass_at_k): greedy runs stay n = 1 each."""
    for model, status in (("a", "pass"), ("b", "fail")):
        doc = {"date": "2024-05-01 10:00", "hash": "x", "eval": {
            f"Mbpp/{i}": [{"task_id": f"Mbpp/{i}", "solution": "", "base_status": status,
                           "plus_status": status, "base_fail_tests": [],
                           "plus_fail_tests": []}] for i in range(3)}}
        (tmp_path / f"{model}_eval_results.json").write_text(json.dumps(doc))
    counts = read_counts(tmp_path)
    assert counts.n.tolist() == [1] * 12  # two greedy models never become n = 2
    assert sorted({g["path"] for g in counts.group_dicts}) == ["a_eval_results.json",
                                                                "b_eval_results.json"]


def test_cli_score_keeps_models_apart(cli, evalplus_folder):
    code, out, _ = cli(["score", str(evalplus_folder), "--format", "json"])
    assert code == 0
    records = json.loads(out)["rows"]
    assert len(records) == 4 and all("path" in r["group"] for r in records)
    want = passatk.score([5] * 6, [sum(f) for f in FLAGS_B], 1)[0].value
    assert [r["value"] for r in records if r["group"]["path"].startswith("model-b")
            and r["group"]["metric_set"] == "base"] == [want]
    code, out, _ = cli(["score", str(evalplus_folder), "--merge", "--format", "json"])
    assert [r["group"] for r in json.loads(out)["rows"]] == [{"metric_set": "base"},
                                                     {"metric_set": "plus"}]


# ------------------------------------------------------------------ CRUXEval input/output pair
@pytest.fixture
def cruxeval_folder(tmp_path):
    """The CRUXEval pair: the same task ids sample_0.. in ..._input.json and ..._output.json."""
    ids = [f"sample_{i}" for i in range(6)]
    write_archive(tmp_path / "codellama_temp0.8_input.json", ids, FLAGS_A, format="cruxeval")
    doc = {"raw_generations": {t: [""] * 5 for t in ids},
           "raw_scored_generations": dict(zip(ids, FLAGS_B, strict=True))}
    n, flags = 5, FLAGS_B
    for k in (1, 5):
        per_task = [passatk.pass_at_k(n, sum(f), k) for f in flags]
        doc[f"pass_at_{k}"] = 100 * float(sum(per_task) / len(per_task))
    (tmp_path / "codellama_temp0.8_output.json").write_text(json.dumps(doc, indent=4))
    return tmp_path


def test_cruxeval_pair_is_two_runs(cruxeval_folder):
    counts = read_counts(cruxeval_folder)
    assert [g["path"] for g in counts.group_dicts] == ["codellama_temp0.8_input.json",
                                                       "codellama_temp0.8_output.json"]
    for g in counts.iter_groups():
        assert g.n.tolist() == [5] * 6
        assert (g.task.tolist(), g.n.tolist(), g.c.tolist()) == _alone(
            cruxeval_folder / g.group["path"])


def test_check_on_the_cruxeval_pair_agrees_four_of_four(cli, cruxeval_folder):
    code, _, err = cli(["check", str(cruxeval_folder), "--tolerance", "1e-12"])
    assert code == 0, err
    assert "4 of 4 stored number(s) agree" in err
    code, _, err = cli(["check", str(cruxeval_folder), "--merge"])
    assert code == 1  # pooled, the pair matches neither file's numbers


# ------------------------------------------------------------------ lm-eval: two filters
def _lm_eval_two_filters(folder):
    """samples_gsm8k_<date>.jsonl as lm-eval writes it: one line per doc_id and filter."""
    lines = []
    for doc_id in range(4):
        for flt, ok in (("strict-match", doc_id % 2 == 0), ("flexible-extract", doc_id < 3)):
            lines.append({"doc_id": doc_id, "doc": {"question": "?"}, "target": "1",
                          "arguments": {}, "resps": [["r0", "r1"]],
                          "filtered_resps": [["a", "b"]], "filter": flt,
                          "metrics": ["pass@1"], "pass@1": 1.0 if ok else 0.0})
    path = folder / "samples_gsm8k_2024-06-01T10-00-00.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_lm_eval_filters_are_separate_groups(tmp_path):
    counts = read_counts(_lm_eval_two_filters(tmp_path))
    got = _by_group(counts)
    assert got[(("filter", "flexible-extract"), ("lm_eval_task", "gsm8k"))][2] == [2, 2, 2, 0]
    assert got[(("filter", "strict-match"), ("lm_eval_task", "gsm8k"))][2] == [2, 0, 2, 0]


def test_sample_table_groups_by_its_filter_column(tmp_path):
    path = tmp_path / "rows.jsonl"
    rows = [{"task_id": t, "passed": ok, "filter": f}
            for t in ("a", "b") for f, ok in (("strict", t == "a"), ("flexible", True))]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    counts = read_counts(path)
    assert counts.group_dicts == [{"filter": "flexible"}, {"filter": "strict"}]
    assert counts.c.tolist() == [1, 1, 1, 0]


def test_sample_table_rows_disagreeing_in_a_run_column_ask_for_by(cli, tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text("task_id,passed,variant\na,1,base\na,0,plus\nb,1,base\n")
    with pytest.raises(ArchiveError, match=r'rows\.csv:3: rows of task .a. differ in column '
                       r"\"variant\" .*; pass by=\['variant'\] to score each$"):
        read_counts(path)
    assert cli(["score", path]).err == (
        f"passatk: error: {path}:3: rows of task 'a' differ in column \"variant\" ('base' at "
        "line 2, 'plus' here): these are separate runs; pass --by variant to score each\n")
    counts = read_counts(path, by=["variant"])
    assert counts.group_dicts == [{"variant": "base"}, {"variant": "plus"}]
    ok = tmp_path / "same.csv"
    ok.write_text("task_id,passed,variant\na,1,base\na,0,base\n")
    assert read_counts(ok).n.tolist() == [2]


# ------------------------------------------------------------------ other layouts
def test_human_eval_runs_of_two_models_and_compare(cli, tmp_path):
    for side in ("new", "old"):
        for model, flags in (("m1", FLAGS_A), ("m2", FLAGS_B)):
            flags = flags if side == "new" else [f[::-1][:4] for f in flags]
            write_archive(tmp_path / side / model / "samples.jsonl_results.jsonl", TASKS, flags)
    # groups path=m1/..., m2/... in both runs: compared group by group
    code, out, err = cli(["compare", str(tmp_path / "new"), str(tmp_path / "old"),
                                  "--format", "json"])
    assert code == 0, err
    assert [r["group"]["path"] for r in json.loads(out)["rows"]] == [
        os.path.join(m, "samples.jsonl_results.jsonl") for m in ("m1", "m2")]


def test_multipl_e_directory_is_one_archive(tmp_path):
    for run_dir, flags in (("humaneval-py-a-0.2", FLAGS_A), ("humaneval-py-b-0.2", FLAGS_B)):
        write_archive(tmp_path / run_dir, TASKS, flags, format="multipl-e")
    counts = read_counts(tmp_path)
    assert [g["path"] for g in counts.group_dicts] == ["humaneval-py-a-0.2",
                                                       "humaneval-py-b-0.2"]
    assert counts.n.tolist() == [5] * 12
    assert read_counts(tmp_path / "humaneval-py-a-0.2").groups == ((),)


def test_several_archives_always_carry_path(tmp_path):
    """lm-eval files of two tasks already differ in lm_eval_task; still, with several archives
    every run carries ``path``, so the group fields do not depend on what the files hold."""
    write_archive(tmp_path / "samples_humaneval_2024-01-01T00-00-00.jsonl", TASKS, FLAGS_A)
    write_archive(tmp_path / "samples_mbpp_2024-01-01T00-00-00.jsonl", TASKS, FLAGS_B)
    counts = read_counts(tmp_path)
    assert [(g["lm_eval_task"], g["path"]) for g in counts.group_dicts] == [
        ("humaneval", "samples_humaneval_2024-01-01T00-00-00.jsonl"),
        ("mbpp", "samples_mbpp_2024-01-01T00-00-00.jsonl")]
    alone = read_counts(tmp_path / "samples_mbpp_2024-01-01T00-00-00.jsonl")
    assert all("path" not in g for g in alone.group_dicts)  # one archive: no path field
    merged = read_counts(tmp_path, merge=True)
    assert all("path" not in g for g in merged.group_dicts)


def test_a_path_spec_in_by_replaces_path_when_it_keeps_archives_apart(cli, tmp_path):
    for model, flags in (("a", FLAGS_A), ("b", FLAGS_B)):
        write_archive(tmp_path / model / "x_results.jsonl", TASKS, flags)
    counts = read_counts(tmp_path, by=["path:parent"])
    assert counts.group_dicts == [{"path:parent": "a"}, {"path:parent": "b"}]
    assert _by_group(counts)[(("path:parent", "b"),)] == _alone(tmp_path / "b")
    write_archive(tmp_path / "b" / "y_results.jsonl", TASKS, FLAGS_A,
                  completion=lambda i, j: f"y {i} {j}")  # other samples than x's
    with pytest.raises(ArchiveError, match=r"y_results\.jsonl: shares the group "
                       r"path:parent=b with .*x_results\.jsonl: by \['path:parent'\] does not "
                       r"keep these archives apart.*merge=True"):
        read_counts(tmp_path, by=["path:parent"])
    assert read_counts(tmp_path, by=["path:parent", "path:name"]).n.tolist() == [5] * 18
    pooled = read_counts(tmp_path, by=["path:parent"], merge=True)
    assert pooled.n.tolist() == [5] * 6 + [10] * 6
    code, _, err = cli(["score", str(tmp_path), "--by", "path:parent"])
    assert code != 0 and "shares the group" in err and "pass --merge" in err
    assert len(err.strip().splitlines()) == 1


def test_plot_draws_one_curve_per_archive(cli, tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from passatk import plot

    for model, flags in (("a", FLAGS_A), ("b", FLAGS_B)):
        write_archive(tmp_path / model / "x_results.jsonl", TASKS, flags)
    seen = {}
    draw = plot.plot_pass_at_k
    monkeypatch.setattr(plot, "plot_pass_at_k", lambda rows, *a, **k: draw(
        seen.setdefault("rows", rows), *a, **k))
    code, _, err = cli(["plot", str(tmp_path), "-o", str(tmp_path / "p.png")])
    assert code == 0, err
    paths = [os.path.join(m, "x_results.jsonl") for m in "ab"]
    assert list(dict.fromkeys(r.group["path"] for r in seen["rows"])) == paths
    ax = draw(seen["rows"])  # labelled by the part of the path that differs
    assert [t.get_text() for t in ax.figure.legends[0].get_texts()] == ["a", "b"]


def test_merge_argument_is_checked(tmp_path):
    write_archive(tmp_path / "x_results.jsonl", TASKS, FLAGS_A)
    with pytest.raises(TypeError, match="merge must be a bool"):
        read_counts(tmp_path, merge=1)


def test_livecodebench_one_file_per_model_checks_per_problem(cli, tmp_path):
    ids = [f"abc30{i}_a" for i in range(6)]
    for model, flags in (("model-a", FLAGS_A), ("model-b", FLAGS_B)):
        write_archive(tmp_path / f"{model}_codegeneration_output_eval_all.json", ids, flags,
                      format="livecodebench")
    counts = read_counts(tmp_path)
    assert len(counts.groups) == 2 and len(counts.stored) == 12
    code, _, err = cli(["check", str(tmp_path)])
    assert code == 0 and "12 of 12 stored number(s) agree" in err
    code, _, err = cli(["check", str(tmp_path), "--merge"])
    assert code == 1  # each file's per-problem pass@1 against the pooled problem


def _by_key(counts) -> dict:
    return {(counts.groups[g], t): (int(n), int(c))
            for g, t, n, c in zip(counts.group, counts.task, counts.n, counts.c, strict=True)}


def _one_repeats_others(tables: list[dict]) -> bool:
    """Whether one table's rows are the sums of the rows of the tables that share one."""
    for i, whole in enumerate(tables):
        others = [t for j, t in enumerate(tables) if j != i and set(t) & set(whole)]
        if others and all(set(t) <= set(whole) for t in others) and all(
                tuple(map(sum, zip(*(t[k] for t in others if k in t), strict=True))) == v
                for k, v in whole.items()):
            return True
    return False


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b/c", "d"]),
                          st.lists(st.tuples(st.sampled_from(["t1", "t2", "t10"]),
                                             st.sampled_from(["x", "y"]),
                                             st.integers(1, 9), st.integers(0, 9)),
                                   min_size=1, max_size=5, unique_by=lambda r: r[:2])),
                min_size=1, max_size=4))
def test_archives_are_runs_and_merge_is_the_exact_pool(tmp_path_factory, archives):
    """Random count tables in folders: each archive alone equals its path group; merge sums."""
    from passatk.archives import merge_counts

    root = tmp_path_factory.mktemp("runs")
    files = []
    for i, (folder, rows) in enumerate(archives):
        path = root / folder / f"counts_{i}.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("task_id,model,n,c\n" + "".join(
            f"{t},{m},{n},{min(c, n)}\n" for t, m, n, c in rows))
        files.append(path)
    alone = [read_counts(f, by=["model"]) for f in files]
    merged = read_counts(root, by=["model"], merge="allow-duplicates")
    assert _by_group(merged) == _by_group(merge_counts(alone))
    if _one_repeats_others([_by_key(a) for a in alone]):  # a copy, or a merged file
        with pytest.raises(ArchiveError, match="holds the same tasks and samples as"):
            read_counts(root, by=["model"], merge=True)
    else:
        assert _by_group(read_counts(root, by=["model"], merge=True)) == _by_group(merged)
    apart = read_counts(root, by=["model"])
    if len(files) == 1:
        assert _by_group(apart) == _by_group(alone[0])
        return
    common = os.path.commonpath([os.path.dirname(x) for x in files])
    assert all("path" in g for g in apart.group_dicts)
    for f, a in zip(files, alone, strict=True):
        rel = os.path.relpath(f, common)
        mine = {k: v for k, v in _by_group(apart).items() if ("path", rel) in k}
        assert {tuple(x for x in k if x[0] != "path"): v for k, v in mine.items()} == \
            _by_group(a)


def test_evalplus_folder_with_its_samples_inputs(tmp_path):
    """evalplus_results/humaneval/: <model>.jsonl samples beside <model>.eval_results.json
    (newer EvalPlus) or <model>_eval_results.json (older): the inputs are left out."""
    folder = tmp_path / "humaneval"
    for model, sep, flags in (("a_vllm_temp_0.0", ".", FLAGS_A), ("b_vllm_temp_0.0", "_", FLAGS_B)):
        write_archive(folder / f"{model}{sep}eval_results.json", TASKS, flags, format="evalplus",
                      plus=flags)
        (folder / f"{model}.jsonl").write_text(
            "".join(json.dumps({"task_id": t, "solution": "pass"}) + "\n" for t in TASKS))
    counts = read_counts(folder)
    assert sorted({g["path"] for g in counts.group_dicts}) == [
        "a_vllm_temp_0.0.eval_results.json", "b_vllm_temp_0.0_eval_results.json"]
