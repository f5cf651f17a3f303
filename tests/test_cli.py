"""Tests of the passatk command line (call main([...]) and read capsys)."""

from __future__ import annotations

from importlib.metadata import version

import pytest

from passatk.cli import main


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"passatk {version('passatk')}"


def test_help(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for command in ("score", "compare", "check", "plot", "simulate", "formats"):
        assert command in out


def test_no_command_prints_help(capsys):
    assert main([]) == 0
    assert "usage: passatk" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [["nonsense"], ["--no-such-flag"]])
def test_usage_error_is_one_line_exit_1(capsys, argv):
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("passatk: error: ")
    assert err.count("\n") == 1
