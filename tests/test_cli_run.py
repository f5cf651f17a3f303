"""The console entry point ``run()``: once numba is loaded it ends the process with
``os._exit``; the output, the files written and the exit status must be those of ``main``."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from passatk.archives import example_path, write_archive
from passatk.cli import main

TASKS = ["T/0", "T/1", "T/2"]
PASSES = [[True, False, True, True], [False] * 4, [True] * 4]


def _run(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "passatk", *map(str, argv)],
                          capture_output=True, text=True, timeout=300)


def test_score_prints_what_main_prints(capsys):
    argv = ["score", example_path(), "-k", "1,10", "--format", "json"]
    assert main(argv) == 0
    expected = capsys.readouterr().out
    proc = _run(*argv)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, expected, "")


def test_an_output_file_is_whole(tmp_path):
    out = tmp_path / "score.csv"
    proc = _run("score", example_path(), "-k", "1,2,5", "--format", "csv", "-o", out, "-q")
    assert proc.returncode == 0, proc.stderr
    lines = out.read_text().splitlines()
    assert lines[0].startswith("group,") or lines[0].startswith("metric,")
    assert len(lines) == 4


def test_findings_exit_one_after_the_kernels_ran(tmp_path):
    path = tmp_path / "eval_results.json"
    write_archive(path, TASKS, PASSES, format="evalplus")
    doc = json.loads(path.read_text())
    doc["pass_at_k"]["base"]["pass@1"] += 0.01
    path.write_text(json.dumps(doc))
    proc = _run("check", path, "--format", "jsonl")
    assert proc.returncode == 1
    assert [json.loads(line)["status"] for line in proc.stdout.splitlines()] == ["MISMATCH"]
    assert proc.stderr.count("\n") == 1


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_jobs_run_the_same_from_the_console(tmp_path, jobs):
    for i in range(3):
        write_archive(tmp_path / f"run{i}" / "x_results.jsonl", TASKS, PASSES)
    proc = _run("score", tmp_path, "-k", "1,2", "--format", "jsonl", "--jobs", jobs)
    ref = _run("score", tmp_path, "-k", "1,2", "--format", "jsonl", "--jobs", "1")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ref.stdout and len(proc.stdout.splitlines()) == 6


def test_the_blas_probe_is_answered_only_inside_run(monkeypatch):
    from passatk import _console as cli

    monkeypatch.delitem(sys.modules, "scipy.linalg", raising=False)
    monkeypatch.delitem(sys.modules, cli._SCIPY_BLAS, raising=False)
    with cli._without_scipy_blas():
        with pytest.raises(ImportError):
            import scipy.linalg.cython_blas  # noqa: F401
    assert cli._SCIPY_BLAS not in sys.modules


def test_the_blas_probe_is_left_alone_once_scipy_linalg_is_loaded(monkeypatch):
    from passatk import _console as cli

    monkeypatch.setitem(sys.modules, "scipy.linalg", object())
    monkeypatch.delitem(sys.modules, cli._SCIPY_BLAS, raising=False)
    with cli._without_scipy_blas():
        assert cli._SCIPY_BLAS not in sys.modules


def test_openblas_is_kept_to_one_thread_unless_the_user_says(tmp_path):
    # run() ends the process with os._exit: here that prints the setting instead
    code = ("import os, sys; sys.argv = ['passatk', '--version']\n"
            "from passatk.cli import run\n"
            "os._exit = lambda status: print(os.environ['OPENBLAS_NUM_THREADS'])\n"
            "run()")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout
    assert out.splitlines()[-1] == "1"
    env["OPENBLAS_NUM_THREADS"] = "4"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout
    assert out.splitlines()[-1] == "4"
