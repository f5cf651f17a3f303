"""Outputs that carry what the numbers mean (issue 24, part 2) and CSV safety (issue 25, item 10).

The format follows -o's extension; JSON is one envelope (the CLI's and to_dict()'s) that
from_dict loads back; the interval's level and method are columns; --percent names its unit;
the seed is fixed by default and recorded; CSV cannot smuggle formulas or terminal escapes.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import passatk
from passatk.archives import write_archive
from passatk.cli import main
from passatk.stats import CompareResult, ScoreResult

TASKS = [f"T/{i}" for i in range(8)]
PASSES_A = [[j < (i % 5) for j in range(6)] for i in range(8)]
PASSES_B = [[j < ((i + 2) % 6) for j in range(6)] for i in range(8)]


@pytest.fixture
def ab(tmp_path):
    a, b = tmp_path / "model-a" / "x_results.jsonl", tmp_path / "model-b" / "x_results.jsonl"
    write_archive(a, TASKS, PASSES_A)
    write_archive(b, TASKS, PASSES_B)
    return str(a), str(b)


def _counts(passes):
    return [len(p) for p in passes], [sum(p) for p in passes]


# -------------------------------------------------------------------------------- -o and --format
@pytest.mark.parametrize(("name", "check"), [
    ("s.json", lambda t: json.loads(t)["schema"] == 1),
    ("s.jsonl", lambda t: all(json.loads(line)["k"] == 1 for line in t.splitlines())),
    ("s.csv", lambda t: t.startswith("metric,k,value")),
    ("s.md", lambda t: t.startswith("| metric | k |")),
    ("s.txt", lambda t: t.split()[:2] == ["metric", "k"]),
    ("s.out", lambda t: t.split()[:2] == ["metric", "k"]),  # unknown extension: the table
])
@pytest.mark.parametrize("command", ["score", "compare"])
def test_output_format_follows_the_extension(cli, ab, tmp_path, name, check, command):
    target = tmp_path / name
    argv = ["score", ab[0]] if command == "score" else ["compare", *ab]
    code, out, err = cli([*argv, "-o", str(target), "-q"])
    assert (code, out, err) == (0, "", "")
    assert check(target.read_text())


def test_check_follows_the_extension(cli, tmp_path):
    path = tmp_path / "eval_results.json"
    assert main(["simulate", "-o", str(path), "--tasks", "5", "--n", "4", "-q"]) == 0
    code, _, _ = cli(["check", str(path), "-o", str(tmp_path / "c.json"), "-q"])
    doc = json.loads((tmp_path / "c.json").read_text())
    assert code == 0 and doc["command"] == "check" and doc["rows"][0]["status"]


def test_a_format_that_contradicts_the_extension_is_an_error(cli, ab, tmp_path):
    target = tmp_path / "s.json"
    code, out, err = cli(["score", ab[0], "--format", "table", "-o", str(target)])
    assert (code, out) == (2, "") and not target.exists()
    assert err == (f"passatk: error: --format table does not match -o {str(target)!r}, whose "
                   "extension .json means --format json; drop --format or rename the file\n")
    assert cli(["score", ab[0], "--format", "json", "-o", str(target)]).code == 0


# -------------------------------------------------------------------------------- the envelope
def test_json_envelope_records_inputs_seed_and_command(cli, ab):
    code, out, _ = cli(["compare", *ab, "-k", "1,2", "--format", "json"])
    doc = json.loads(out)
    assert code == 0
    assert list(doc)[:5] == ["schema", "passatk", "command", "inputs", "seed"]
    assert list(doc)[-1] == "rows"
    assert (doc["schema"], doc["passatk"], doc["command"]) == (1, passatk.__version__, "compare")
    assert doc["argv"] == ["passatk", "compare", *ab, "-k", "1,2", "--format", "json"]
    assert doc["seed"] == 0 and doc["unit"] == "fraction" and doc["confidence"] == 0.95
    for run, path, got in zip("ab", ab, doc["inputs"], strict=True):
        with open(path, "rb") as fh:
            data = fh.read()
        assert got == {"run": run, "path": path, "bytes": len(data),
                       "sha256": hashlib.sha256(data).hexdigest()}


def test_cli_json_and_to_dict_share_the_envelope_and_load_back(cli, ab):
    code, out, _ = cli(["score", ab[0], "-k", "1,3", "--format", "json"])
    assert code == 0
    doc = json.loads(out)
    api = passatk.score(*_counts(PASSES_A), k=[1, 3], task_ids=TASKS)
    want = api.to_dict()
    assert set(want) - {"merged_duplicates", "n_resamples"} <= set(doc)
    loaded = ScoreResult.from_dict(doc)
    assert loaded.records() == api.records()
    assert ScoreResult.from_dict(json.loads(json.dumps(want))) == api


def test_from_dict_refuses_what_it_cannot_read(cli, ab):
    d = passatk.score([5, 6], [2, 3], k=1).to_dict()
    with pytest.raises(ValueError, match="schema 2 is not one this passatk reads"):
        ScoreResult.from_dict({**d, "schema": 2})
    with pytest.raises(ValueError, match="holds the output of 'score', not of 'compare'"):
        CompareResult.from_dict(d)
    with pytest.raises(ValueError, match=r"rows\[0\] has field\(s\) \['extra'\]"):
        ScoreResult.from_dict({**d, "rows": [{**d["rows"][0], "extra": 1}]})
    with pytest.raises(TypeError, match="from_dict needs a dict"):
        ScoreResult.from_dict([])
    _, out, _ = cli(["score", ab[0], "--format", "json", "--percent"])
    with pytest.raises(ValueError, match="written with --percent"):
        ScoreResult.from_dict(json.loads(out))


def test_overflow_sentinel_is_inf_in_the_repr_and_null_in_json():
    r = passatk.compare([2, 2, 2], [2, 1, 1], [2, 2, 2], [0, 0, 0], k=[1, 2], seed=0,
                        n_resamples=500)
    assert r.band_critical_value == float("inf") and "band_critical_value=inf" in repr(r)
    d = r.to_dict()
    assert d["band_critical_value"] is None
    json.dumps(d, allow_nan=False)


# -------------------------------------------------------------------------------- seeds
def test_compare_repeats_by_default_and_records_a_drawn_seed(cli, ab):
    argv = ["compare", *ab, "-k", "1,2", "--format", "json", "-q"]
    first, again = json.loads(cli(argv).out), json.loads(cli(argv).out)
    assert first["rows"] == again["rows"] and first["seed"] == 0
    drawn = cli([*argv[:-1], "--seed", "random"])
    doc = json.loads(drawn.out)
    assert isinstance(doc["seed"], int) and doc["seed"] >= 0
    assert drawn.err == f"passatk: --seed random drew seed {doc['seed']}\n"
    replay = json.loads(cli([*argv, "--seed", str(doc["seed"])]).out)
    assert replay["rows"] == doc["rows"]
    api = passatk.compare(*_counts(PASSES_A), *_counts(PASSES_B), k=[1, 2], task_ids_a=TASKS,
                          task_ids_b=TASKS, seed=doc["seed"])
    assert [r["band_low"] for r in doc["rows"]] == [r.band_low for r in api]


# -------------------------------------------------------------------------------- columns
def test_csv_names_the_level_the_method_and_the_unit(cli, ab):
    code, out, _ = cli(["score", ab[0], "-k", "1,6", "--level", "0.9", "--format", "csv",
                        "--percent"])
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0
    assert list(rows[0])[:8] == ["metric", "k", "value_pct", "se_pct", "ci_low_pct",
                                 "ci_high_pct", "confidence", "ci_method"]
    api = passatk.score(*_counts(PASSES_A), k=[1, 6], confidence=0.9)
    assert [r["confidence"] for r in rows] == ["0.9", "0.9"]
    assert [r["ci_method"] for r in rows] == [row.ci_method for row in api]
    assert {r["ci_method"] for r in rows} <= {"t-wilson-hull", "wilson"}


@pytest.mark.parametrize("interval", ["auto", "t", "fixed", "percentile", "bca", "wilson",
                                      "clopper-pearson", "cluster"])
def test_ci_method_is_a_machine_name_with_the_text_beside_it(interval):
    from passatk.stats._results import CI_NAMES

    n, c = [10] * 6, [0, 3, 5, 7, 10, 4]
    r = passatk.score(n, c, k=[1, 10], interval=interval, seed=0, n_resamples=300,
                      clusters=["a", "a", "b", "b", "c", "c"])
    names = {name for _, name in CI_NAMES}
    for row in r:
        if row.ci_low is None and row.reason:  # issue 22: a withheld interval has no method
            assert row.ci_method is None
            continue
        assert row.ci_method in names, (row.ci_method, row.ci_text)
        assert row.ci_text and (row.ci_text != row.ci_method or row.ci_method in ("t", "normal"))


def test_greedy_k_above_n_names_the_run(cli, tmp_path):
    for name in ("m1", "m2"):
        write_archive(tmp_path / name / "g_results.jsonl", TASKS, [[True]] * 8)
    code, _, err = cli(["score", str(tmp_path), "-k", "1,10"])
    assert code == 2
    assert err == ("passatk: error: path=m1/g_results.jsonl: cannot report pass@k at k=10: "
                   "k=10 exceeds n: every task has n = 1 (greedy) (8 tasks); pass --missing "
                   "report to report this k as missing\n")


def test_group_columns_come_first_in_every_format():
    from passatk._output import columns, render

    recs = [{"group": {"path": "a"}, "k": 1, "value": 0.5, "note": ""},
            {"group": {"path": "b", "filter": "strict"}, "k": 1, "value": 0.25, "note": "x"}]
    assert columns(recs) == ["path", "filter", "k", "value", "note"]
    for fmt in ("csv", "table", "markdown"):
        head = render(recs, fmt).splitlines()[0]
        assert head.replace("|", " ").replace(",", " ").split() == columns(recs)


def test_compare_for_greedy_runs_shows_mcnemar(cli, tmp_path):
    a, b = tmp_path / "a_results.jsonl", tmp_path / "b_results.jsonl"
    write_archive(a, TASKS, [[i % 2 == 0] for i in range(8)])
    write_archive(b, TASKS, [[i % 3 == 0] for i in range(8)])
    code, out, _ = cli(["compare", str(a), str(b)])
    head = out.splitlines()[0]
    assert code == 0 and "p (McNemar)" in head and "p_value" not in head
    want = passatk.compare([1] * 8, [int(i % 2 == 0) for i in range(8)], [1] * 8,
                           [int(i % 3 == 0) for i in range(8)])[0].mcnemar_p_value
    assert f"{want:.4f}" in out.splitlines()[1]


def test_table_keeps_significant_digits():
    from passatk._output import render_table

    text = render_table([{"group": {}, "k": 1, "se": 0.00004567, "value": 0.012345}])
    assert text.splitlines()[1].split() == ["1", "4.57e-05", "0.0123"]


# -------------------------------------------------------------------------------- CSV safety
EVIL = ["=HYPERLINK(\"http://x\",\"y\")", "@SUM(A1)", "+1", "-2+3", "\tx", "\x1b[31mred"]


@pytest.fixture
def evil(tmp_path):
    path = tmp_path / "t.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["task_id", "passed", "model"])
        for i, model in enumerate(EVIL):
            for j in range(4):
                w.writerow([f"T/{j}", int((i + j) % 2 == 0), model])
    return str(path)


def _models(text):
    return [r["model"] for r in csv.DictReader(io.StringIO(text))]


def test_csv_file_is_safe_by_default(cli, evil, tmp_path):
    out = tmp_path / "scores.csv"
    argv = ["score", evil, "--input-format", "samples", "--by", "model", "-q"]
    assert cli([*argv, "-o", str(out)]).code == 0
    models = _models(out.read_text(encoding="utf-8"))
    assert sorted(models) == sorted("'" + m if m[0] in "=+-@\t" else m for m in EVIL)
    assert cli([*argv, "-o", str(out), "--no-csv-safe"]).code == 0
    assert sorted(_models(out.read_text(encoding="utf-8"))) == sorted(EVIL)
    # numbers are never prefixed, and JSON stays exact
    _, text, _ = cli([*argv, "--format", "json"])
    assert sorted(r["group"]["model"] for r in json.loads(text)["rows"]) == sorted(EVIL)
    stdout_csv = cli([*argv, "--format", "csv", "--csv-safe"]).out
    assert sorted(_models(stdout_csv)) == sorted(models)


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_csv_on_a_terminal_escapes_control_characters(evil, monkeypatch):
    term = _Terminal()
    monkeypatch.setattr("sys.stdout", term)
    assert main(["score", evil, "--input-format", "samples", "--by", "model", "-q",
                 "--format", "csv"]) == 0
    text = term.getvalue()
    assert "\x1b" not in text and "\\u001b[31mred" in text and "\\u0009x" in text


# -------------------------------------------------------------------------------- small things
def test_frames_and_html_have_the_group_columns_first():
    pl = pytest.importorskip("polars")
    pd = pytest.importorskip("pandas")
    r = passatk.score([10, 10, 12, 12], [3, 4, 5, 6], k=[1, 2],
                      groups={"model": ["<a>", "<a>", "b", "b"]})
    frame = r.to_polars()
    assert isinstance(frame, pl.DataFrame) and frame.columns[:3] == ["model", "metric", "k"]
    assert frame["value"].to_list() == [row.value for row in r]
    assert list(r.to_pandas().columns) == frame.columns
    assert isinstance(r.to_pandas(), pd.DataFrame)
    html = r._repr_html_()
    assert html.startswith("<table>") and "&lt;a&gt;" in html and "<a>" not in html
    assert html.count("<tr>") == 1 + len(r)


def test_write_archive_takes_a_numpy_bool_array(tmp_path):
    import numpy as np

    from passatk.archives import read_counts

    passes = np.arange(12).reshape(3, 4) % 3 == 0
    write_archive(tmp_path / "x_results.jsonl", ["a", "b", "c"], passes)
    counts = read_counts(str(tmp_path / "x_results.jsonl"))
    assert counts.c.tolist() == passes.sum(axis=1).tolist()
    write_archive(tmp_path / "y_results.jsonl", ["a"], np.array([[1, 0]], dtype=np.uint8))
    with pytest.raises(TypeError, match=r"passes\[0\]\[0\] must be a bool"):
        write_archive(tmp_path / "z_results.jsonl", ["a"], np.array([[0.5]]))


def test_jobs_help_and_docs_agree():
    from pathlib import Path

    from passatk._cli_args import build_parser

    text = " ".join(build_parser()._subparsers._group_actions[0].choices["score"]
                    .format_help().split())
    doc = (Path(__file__).resolve().parent.parent / "docs" / "cli.md").read_text()
    assert "CPUs from 64 MiB of input" in text and "every CPU from 64 MiB of input" in doc


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(min_size=0, max_size=12), min_size=1, max_size=4),
       st.floats(allow_nan=False, allow_infinity=False, width=64))
def test_csv_safety_for_any_label(labels, number):
    """Safe CSV: no text cell starts a formula, the prefix is the only change (so the label
    comes back exactly), numbers are untouched; escaped CSV holds no control character."""
    from passatk._output import _UNSAFE, render_csv

    recs = [{"group": {"label": lab}, "diff": number} for lab in labels]
    rows = list(csv.reader(io.StringIO(render_csv(recs, safe=True), newline="")))
    assert rows[0] == ["label", "diff"]
    for lab, (cell, diff) in zip(labels, rows[1:], strict=True):
        assert not cell.startswith(("=", "+", "-", "@", "\t", "\r"))
        assert cell == ("'" + lab if lab.startswith(("=", "+", "-", "@", "\t", "\r")) else lab)
        assert float(diff) == number
    escaped = render_csv(recs, escape=True)
    assert not _UNSAFE.search(escaped.replace("\n", ""))


def test_compare_k_above_n_names_the_group(cli, tmp_path):
    for side in ("a", "b"):
        for name in ("m1", "m2"):
            write_archive(tmp_path / side / name / "g_results.jsonl", TASKS, [[True]] * 8)
    code, _, err = cli(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "-k", "2"])
    assert code == 2
    assert err.startswith("passatk: error: path=m1/g_results.jsonl: cannot compare pass@k at "
                          "k=2: k=2 exceeds n: every task has n = 1 (greedy) (8 tasks)")
