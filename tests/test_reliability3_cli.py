"""Command lines that used to end in a traceback (issue 25 item 4, audit reliability-3 T1/T2):
each is one ``passatk: error:`` line with exit status 2."""

from __future__ import annotations

import json
import re
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


@pytest.fixture
def counts_csv(tmp_path):
    path = tmp_path / "in.csv"
    path.write_text("task_id,n,c\nA/1,10,1\nB/2,10,9\n")
    return path


def _one_error_line(run, fragment=""):
    assert run.code == 2, run
    lines = run.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("passatk: error: "), run.err
    assert "Traceback" not in run.err and fragment in lines[0]
    return lines[0]


@pytest.mark.parametrize("regex", ["(", "[", "\\", "(?P<x>", "a{2,1}", "(" * 5000,
                                   "(?:" * 2000 + "a" + ")" * 2000])
def test_invalid_cluster_by_regex_is_one_line(cli, counts_csv, regex):
    for command in (["score", counts_csv], ["compare", counts_csv, counts_csv]):
        run = cli([*command, "--cluster-by", regex, "-q"])
        if regex.startswith("(?:"):  # valid, only deep: compiled, or refused in one line
            assert run.code in (0, 2) and "Traceback" not in run.err
            continue
        _one_error_line(run, "argument --cluster-by: invalid regex")


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet="()[]{}\\?*+|^$.a1:<>P-", max_size=12))
def test_any_cluster_by_text_never_raises(capsys, tmp_path_factory, regex):
    from passatk.cli import main

    path = tmp_path_factory.mktemp("c") / "in.csv"
    path.write_text("task_id,n,c\nA/1,10,1\nB/2,10,9\n")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # "possible nested set"
            re.compile(regex)
        valid = True
    except re.error:
        valid = False
    capsys.readouterr()  # the fixture lives across examples: read each command's own output
    code = main(["score", str(path), f"--cluster-by={regex}", "--ci", "cluster", "-q"])
    err = capsys.readouterr().err
    assert "Traceback" not in err and "Warning" not in err
    if not valid:
        assert code == 2 and err.count("\n") == 1 and "invalid regex" in err


@pytest.mark.parametrize("command", [["score", "{path}"], ["check", "{path}"],
                                     ["compare", "{path}", "{path}"], ["formats"]])
@pytest.mark.parametrize("value", ["[" * 5000, '{"a":' * 5000, "[" * 5000 + "]" * 5000])
def test_deeply_nested_storage_option_is_one_line(cli, counts_csv, command, value):
    argv = [a.format(path=counts_csv) for a in command]
    run = cli([*argv, "--storage-option", f"a={value}"])
    if command == ["formats"]:  # not an option of formats: argparse's own one line
        _one_error_line(run)
    else:
        _one_error_line(run, "nested too deeply")
    # before the command, too
    _one_error_line(cli(["--storage-option", f"a={value}", *argv]))


def test_storage_option_json_still_parses(cli, counts_csv):
    from passatk.archives.io.remote import parse_storage_option

    assert parse_storage_option('a={"b": [1, 2]}') == ("a", {"b": [1, 2]})
    assert parse_storage_option("a=[[[") == ("a", "[[[")  # not JSON: kept as text


def _livecodebench(path, stored):
    problems = [{"question_id": f"t{i}", "question_title": "", "contest_date": "2024-01-01",
                 "platform": "leetcode", "difficulty": "easy", "graded_list": [True, False],
                 "code_list": ["", ""], "pass@1": 0.5} for i in range(3)]
    text = json.dumps(problems).replace('"pass@1": 0.5', f'"pass@1": {stored}', 1)
    path.write_text(text)
    return path


@pytest.mark.parametrize("digits", [310, 500, 4000])
def test_check_with_a_huge_stored_number_is_an_input_error(cli, tmp_path, digits):
    path = _livecodebench(tmp_path / "m_eval_all.json", "5" * digits)
    for command in ("check", "score"):
        line = _one_error_line(cli([command, path, "-q"]),
                               'stored number too large for a float')
        assert '$[0]["pass@1"]' in line and f"{digits} digits" in line


def test_check_with_a_normal_stored_number_still_works(cli, tmp_path):
    path = _livecodebench(tmp_path / "m_eval_all.json", "0.5")
    assert cli(["check", path, "-q"]).code == 0


@pytest.mark.parametrize("name, doc", [
    ("e_eval_results.json", {"eval": {"T/0": [{"base_status": "pass", "plus_status": "pass"}]},
                             "pass_at_k": {"base": {"pass@1": 10**500}}}),
    ("c.json", {"raw_generations": {"t": ["x"]}, "raw_scored_generations": {"t": [True]},
                "pass_at_1": 10**500}),
])
def test_huge_stored_numbers_in_other_documents(cli, tmp_path, name, doc):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    _one_error_line(cli(["check", path, "-q"]), "stored number too large for a float")


@pytest.mark.parametrize("spec", ["local:999999999999999999999999999999", "local:" + "9" * 5000,
                                  "local:{over}"])
def test_scheduler_local_n_is_capped_before_anything_starts(cli, counts_csv, spec):
    from passatk._limits import max_workers

    spec = spec.format(over=max_workers() + 1)
    line = _one_error_line(cli(["score", counts_csv, "--scheduler", spec, "-q"]))
    assert "must be at most" in line or "scheduler must be" in line
    if len(spec) < 100:
        assert f"at most {max_workers()} " in line and "PASSATK_MAX_WORKERS" in line


def test_jobs_is_capped(cli, counts_csv):
    from passatk._limits import max_workers

    line = _one_error_line(cli(["score", counts_csv, "--jobs", max_workers() + 1, "-q"]))
    assert line.startswith("passatk: error: argument --jobs: ") and "PASSATK_MAX_WORKERS" in line
    assert cli(["score", counts_csv, "--jobs", 2, "-q"]).code == 0


def test_output_to_a_dangling_symlink_names_the_missing_directory(cli, counts_csv, tmp_path):
    """``-o`` onto a symlink whose target's directory is missing names that directory, not the
    link's own (audit reliability-3 U1: it said "its directory '.' does not exist")."""
    (tmp_path / "dang").symlink_to("nodir/none.txt")
    (tmp_path / "dang2").symlink_to("dang")
    for link in ("dang", "dang2"):
        line = _one_error_line(cli(["score", counts_csv, "-o", tmp_path / link, "-q"]))
        missing = str(tmp_path / "nodir")
        assert f"whose directory {missing!r} does not exist" in line, line
        assert "'.'" not in line
    line = _one_error_line(cli(["score", counts_csv, "-o", tmp_path / "nod" / "x.csv", "-q"]))
    assert f"its directory {str(tmp_path / 'nod')!r} does not exist" in line, line
    (tmp_path / "nodir").mkdir()
    assert cli(["score", counts_csv, "-o", tmp_path / "dang", "-q"]).code == 0
    assert (tmp_path / "nodir" / "none.txt").read_text().startswith("metric")
