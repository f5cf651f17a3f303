"""The most common error lines of ``passatk``, pinned whole (pyupgrade's ``err == ...`` style),
with their exit status 2, and the exit-status convention itself."""

from __future__ import annotations

import pytest

from passatk.archives import example_path, write_archive
from passatk.cli import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, build_parser
from passatk.errors import HintedError, Option

TASKS = ["T/0", "T/1", "T/2"]
PASSES = [[True, False, True, False], [False] * 4, [True] * 4]


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_archive("a_results.jsonl", TASKS, PASSES)
    write_archive("b_results.jsonl", TASKS[:2], PASSES[:2])
    (tmp_path / "x.txt").write_text("hello\n")
    (tmp_path / "bad_results.jsonl").write_text(
        '{"task_id": "T/0", "completion": "", "passed": true}\n'
        '{"task_id": "T/1", "completion": "", "passed": "yes"}\n')
    return tmp_path


ERRORS = [
    (["nonsense"], "argument COMMAND: invalid choice: 'nonsense' (choose from 'score', "
     "'compare', 'check', 'plot', 'simulate', 'formats', 'warm', 'leaderboard', 'plan')"),
    (["score"], "the following arguments are required: PATH"),
    (["score", "a_results.jsonl", "-k", "5"],
     "a_results.jsonl: cannot report pass@k at k=5: k=5 exceeds n: every task has n = 4 (3 "
     "tasks); pass --missing report to report this k as missing"),
    (["score", "a_results.jsonl", "-k", "5-2"],
     "argument -k: invalid k range '5-2': the start must not exceed the end"),
    (["score", "a_results.jsonl", "--ci", "normal"],
     "argument --ci: invalid choice: 'normal' (choose from 'auto', 't', 'fixed', 'bootstrap', "
     "'bca', 'wilson', 'clopper-pearson', 'cluster')"),
    (["score", "nope.jsonl"], "nope.jsonl: no such file or directory"),
    (["score", "bad_results.jsonl"], "bad_results.jsonl:2: field \"passed\" must be a pass flag "
     "(true/false, 1/0, 1.0/0.0), got 'yes'"),
    (["score", "x.txt"], "x.txt: cannot detect the format (not JSON, JSON Lines, CSV or Parquet "
     "of a known kind); pass --input-format (see passatk formats)"),
    (["compare", "a_results.jsonl", "b_results.jsonl"],
     "tasks must be present in both runs: 1 only in run A ['T/2'], 0 only in run B []; pass "
     "--unmatched exclude to leave them out and report them"),
    (["check", "a_results.jsonl"],
     "nothing to check: the archives store no pass@k numbers about themselves (EvalPlus v3, "
     "CRUXEval, BigCodeBench *_pass_at_k.json, lm-eval results, ...)"),
    (["score", "a_results.jsonl", "b_results.jsonl", "--by", "path:parent"],
     "b_results.jsonl: shares the group path:parent= with a_results.jsonl: by ['path:parent'] "
     "does not keep these archives apart; choose a path spec that differs between them "
     "(path:name, path:dir, path), or pass --merge to pool them as shards of one run"),
    (["score", "a_results.jsonl", "--passed", "ok", "--threshold", "0.5"],
     "a_results.jsonl: is a humaneval archive, but column options (--passed, --threshold) apply "
     "only to count and per-sample tables; pass --input-format samples or --input-format "
     "counts to read it as a table"),
]


@pytest.mark.parametrize(("argv", "line"), ERRORS, ids=[" ".join(a) for a, _ in ERRORS])
def test_common_error_lines_whole(cli, here, argv, line):
    assert cli(argv) == (EXIT_ERROR, "", f"passatk: error: {line}\n")


def test_exit_statuses_follow_diff_and_ruff():
    assert (EXIT_OK, EXIT_FINDINGS, EXIT_ERROR) == (0, 1, 2)


@pytest.mark.parametrize("command", [None, "score", "compare", "check", "plot", "simulate",
                                     "formats"])
def test_help_states_the_exit_statuses(cli, command):
    code, out, _ = cli(["--help"] if command is None else [command, "--help"])
    assert code == 0
    assert ("exit status:\n  0  success\n  1  findings: 'passatk check' found a stored number "
            "that does not agree\n  2  a usage, input or output error (one line on stderr)\n"
            ) in out


def test_help_states_the_api_words():
    help_text = build_parser()._subparsers._group_actions[0].choices["score"].format_help()
    flat = " ".join(help_text.split())
    assert "Python: interval= (bootstrap is 'percentile')" in flat
    assert "Python: confidence=" in flat and "Python: n_resamples=" in flat


def test_flags_are_spelled_from_the_error_fields_not_its_text(cli, monkeypatch):
    import passatk

    def boom(*args, **kwargs):
        # a library wording the CLI has never seen: the flag still comes from the fields
        raise HintedError("new words; try ", Option("missing", "report"), " or ",
                          Option("filters", key="until"), " or ", Option("merge", True),
                          " or ", Option("format"), " or ", Option("n_resamples", 10))

    monkeypatch.setattr(passatk, "score", boom)
    path = example_path()
    assert cli(["score", path]) == (2, "", f"passatk: error: {path}: new words; try --missing "
                                           "report or --until or --merge or --input-format or "
                                           "--resamples 10\n")


# --------------------------------------------------------------------------------------
# one meaning per flag: --format is the output format everywhere


@pytest.mark.parametrize("argv", [["score", "a_results.jsonl", "-k", "1,2"],
                                  ["compare", "a_results.jsonl", "a_results.jsonl", "-k", "1"],
                                  ["formats"]])
def test_jsonl_is_the_json_records_one_per_line(cli, here, argv):
    import json

    code, out, _ = cli([*argv, "--format", "jsonl", "--seed", "0"] if argv[0] != "formats"
                       else [*argv, "--format", "jsonl"])
    assert code == 0
    lines = [json.loads(line) for line in out.splitlines()]
    _, want, _ = cli([*argv, "--format", "json", "--seed", "0"] if argv[0] != "formats"
                     else [*argv, "--format", "json"])
    assert lines == json.loads(want)["rows"] and len(lines) >= 1


def test_archive_format_is_its_own_flag(cli, here):
    assert cli(["simulate", "-o", "t.json", "--archive-format", "tau-bench", "-q"]) == (
        0, "t.json\n", "")
    assert cli(["score", "t.json", "--input-format", "tau-bench", "--format", "csv"]).code == 0
    for argv in (["simulate", "-o", "u.json", "--format", "tau-bench"],
                 ["score", "t.json", "--format-in", "tau-bench"]):
        code, _, err = cli(argv)
        flags = " ".join(argv[-2:])
        assert (code, err) == (2, f"passatk: error: unrecognized arguments: {flags}\n")
