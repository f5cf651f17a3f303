"""``-o`` never replaces one of its inputs (issue 25 item 3, audit reliability-3 D1): named
directly, through a symlink or a hard link, found by walking a directory or a glob, as a
``file://`` URL or as standard input, it is an error naming both, and the archive is kept
byte for byte. ``simulate -o`` over an existing file needs ``--force``."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ARCHIVE = "task_id,n,c\nA,10,1\nB,10,9\n"


@pytest.fixture
def run_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "in.csv").write_text(ARCHIVE)
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "x.csv").write_text(ARCHIVE)
    os.symlink("in.csv", tmp_path / "lnk.csv")
    os.link(tmp_path / "in.csv", tmp_path / "hard.csv")
    return tmp_path


def _refused(run, output, input_name):
    assert run.code == 2, run
    lines = run.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in run.err, run.err
    assert f"-o {output!r} is the input {input_name!r}" in lines[0], lines[0]


CASES = [  # (inputs, -o, the input named in the error)
    (["in.csv"], "in.csv", "in.csv"),
    (["lnk.csv"], "in.csv", "lnk.csv"),
    (["in.csv"], "lnk.csv", "in.csv"),
    (["in.csv"], "hard.csv", "in.csv"),
    (["in.csv"], "./d/../in.csv", "in.csv"),
    (["d"], "d/x.csv", os.path.join("d", "x.csv")),
    (["d/*.csv"], "d/x.csv", os.path.join("d", "x.csv")),
    (["d", "in.csv"], "in.csv", "in.csv"),
]


@pytest.mark.parametrize("command", ["score", "check"])
@pytest.mark.parametrize("inputs, output, named", CASES)
def test_output_onto_an_input_is_refused(cli, run_dir, command, inputs, output, named):
    run = cli([command, *inputs, "-o", output, "--format", "csv", "-q"])
    _refused(run, output, named)
    assert (run_dir / "in.csv").read_text() == ARCHIVE
    assert (run_dir / "d" / "x.csv").read_text() == ARCHIVE


def test_compare_and_plot_refuse_either_run(cli, run_dir):
    _refused(cli(["compare", "in.csv", "d", "-o", "d/x.csv", "-q"]), "d/x.csv",
             os.path.join("d", "x.csv"))
    _refused(cli(["compare", "d", "lnk.csv", "-o", "in.csv", "-q"]), "in.csv", "lnk.csv")
    _refused(cli(["plot", "in.csv", "-o", "lnk.csv", "-q"]), "lnk.csv", "in.csv")
    assert (run_dir / "in.csv").read_text() == ARCHIVE


def test_file_url_input_is_recognised(cli, run_dir):
    url = (run_dir / "in.csv").as_uri()
    _refused(cli(["score", url, "-o", "in.csv", "-q"]), "in.csv", url)


def test_standard_input_redirected_from_the_output(run_dir):
    with open(run_dir / "in.csv", "rb") as stdin:
        proc = subprocess.run([sys.executable, "-m", "passatk", "score", "-", "-o", "in.csv",
                               "-q"], stdin=stdin, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "-o 'in.csv' is the input '-'" in proc.stderr, proc.stderr
    assert (run_dir / "in.csv").read_text() == ARCHIVE


def test_other_outputs_are_written(cli, run_dir):
    assert cli(["score", "in.csv", "-o", "out.csv", "--format", "csv", "-q"]).code == 0
    assert cli(["score", "d", "-o", "d/new.json", "--format", "json", "-q"]).code == 0
    assert cli(["score", "in.csv", "-o", os.devnull, "-q"]).code == 0
    assert (run_dir / "out.csv").read_text().startswith("metric,")
    # the report now sits in the walked folder: it is an input of the next walk, so refused
    _refused(cli(["score", "d", "-o", "d/new.json", "-q"]), "d/new.json",
             os.path.join("d", "new.json"))


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["in.csv", "lnk.csv", "hard.csv", "./in.csv", "d/../in.csv",
                        "d/../lnk.csv"]),
       st.sampled_from(["in.csv", "lnk.csv", "hard.csv", "./in.csv", "d/../hard.csv"]))
def test_any_spelling_of_the_same_file_is_refused(cli, run_dir, given_input, output):
    run = cli(["score", given_input, "-o", output, "-q"])
    assert run.code == 2 and f"-o {output!r} is the input {given_input!r}" in run.err
    assert (run_dir / "in.csv").read_text() == ARCHIVE


def test_simulate_over_an_existing_file_needs_force(cli, run_dir):
    run = cli(["simulate", "-o", "in.csv", "--tasks", "3", "-q"])
    assert run.code == 2 and run.err.strip() == (
        "passatk: error: -o 'in.csv' exists; pass --force to replace it")
    assert (run_dir / "in.csv").read_text() == ARCHIVE
    run = cli(["simulate", "-o", "lnk.csv", "--tasks", "3", "-q"])  # through a link too
    assert run.code == 2 and "exists; pass --force" in run.err
    assert cli(["simulate", "-o", "in.csv", "--tasks", "3", "--force", "-q"]).code == 0
    assert (run_dir / "in.csv").read_text() != ARCHIVE
    assert cli(["simulate", "-o", "new_results.jsonl", "--tasks", "3", "-q"]).code == 0
    assert cli(["simulate", "-o", os.devnull, "--archive-format", "humaneval", "--tasks", "3",
                "-q"]).code == 0
