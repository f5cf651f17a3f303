"""Tests of the passatk command line (call main([...]) and read capsys)."""

from __future__ import annotations

from importlib.metadata import version

import pytest

from passatk.cli import main, parse_ks


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"passatk {version('passatk')}"


def test_help(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for command in ("score", "compare", "check", "plot", "simulate", "formats"):
        assert command in out


def test_no_command_prints_the_usage_and_exits_2(capsys):
    assert main([]) == 2  # as git: a command is required
    err = capsys.readouterr().err
    assert err.startswith("usage: passatk") and err.splitlines()[-1] == (
        "passatk: error: a command is required; run 'passatk --help' for the list")


@pytest.mark.parametrize("argv", [["nonsense"], ["--no-such-flag"]])
def test_usage_error_is_one_line_exit_2(capsys, argv):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("passatk: error: ")
    assert err.count("\n") == 1


@pytest.mark.parametrize("command", ["score", "compare", "check", "plot", "simulate", "formats"])
def test_each_command_help_shows_an_example(capsys, command):
    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert f"usage: passatk {command}" in out
    assert f"examples:\n  passatk {command}" in out


@pytest.mark.parametrize(
    ("k", "expected"),
    [
        ("1", [1]),
        ("1,10,100", [1, 10, 100]),
        ("1-4", [1, 2, 3, 4]),
        ("10,1-3,2", [1, 2, 3, 10]),
        (" 5 - 6 ", [5, 6]),
    ],
)
def test_parse_ks(k, expected):
    assert parse_ks(k) == expected


@pytest.mark.parametrize(
    ("k", "message"),
    [
        ("0", "invalid k '0': k must be at least 1"),
        ("-1", "invalid k '-1': k must be at least 1"),
        ("5-2", "invalid k range '5-2': the start must not exceed the end"),
        ("0-3", "invalid k '0-3': k must be at least 1"),
        ("a", "invalid k 'a': k must be a positive integer"),
        ("1.5", "invalid k '1.5': k must be a positive integer"),
        ("1,,2", "invalid k list '1,,2'"),
        ("", "invalid k list ''"),
    ],
)
@pytest.mark.parametrize("command", ["score", "compare", "plot"])
def test_bad_k_is_one_line_exit_2(capsys, tmp_path, k, message, command):
    paths = ["a.jsonl", "b.jsonl"] if command == "compare" else ["a.jsonl"]
    argv = [command, *paths, "-k", k]
    if command == "plot":
        argv += ["-o", str(tmp_path / "x.png")]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"passatk: error: argument -k: {message}")
    assert captured.err.count("\n") == 1
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["score"], "the following arguments are required: PATH"),
        (["compare", "a"], "the following arguments are required: B"),
        (["score", "x", "--ci", "normal"], "argument --ci: invalid choice: 'normal'"),
        (["score", "x", "--metric", "pass@"], "argument --metric: invalid choice: 'pass@'"),
        (["score", "x", "--format", "xml"], "argument --format: invalid choice: 'xml'"),
        (["score", "x", "--level", "95"], "argument --level: '95' must lie strictly"),
        (["score", "x", "--seed", "-3"], "argument --seed: '-3' must not be negative"),
        (["score", "x", "--threshold", "nan"], "argument --threshold: 'nan' is not a finite"),
        (["plot", "x"], "the following arguments are required: -o/--output"),
        (["simulate", "-o", "x.jsonl", "--tasks", "0"], "argument --tasks: '0' must be at least 1"),
        (["simulate", "-o", "x.jsonl", "--a", "-1"], "argument --a: '-1' must be positive"),
        (["score", "x", "--perc"], "unrecognized arguments: --perc"),
    ],
)
def test_bad_flags_are_one_line_exit_2(capsys, argv, message):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"passatk: error: {message}")
    assert captured.err.count("\n") == 1
