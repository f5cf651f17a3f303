"""``passatk.archives.checks`` and ``pair_runs``: the library side of ``passatk check`` and
``passatk compare``; the CLI only formats what they return."""

from __future__ import annotations

import dataclasses
import json

import pytest

import passatk
from passatk.archives import (
    CheckResult,
    Counts,
    RunPair,
    StoredMetric,
    check,
    pair_runs,
    read_counts,
    write_archive,
)
from passatk.errors import HintedError, Option

TASKS = ["T/0", "T/1", "T/2"]
PASSES = [[True, False, True, False], [False] * 4, [True, True, True, False]]


def _counts(stored, rows=(("T/0", 4, 2), ("T/1", 4, 0), ("T/2", 4, 3))):
    return Counts.from_rows(list(rows), stored=stored)


def test_check_recomputes_each_stored_number(tmp_path):
    path = tmp_path / "eval_results.json"
    write_archive(path, TASKS, PASSES, format="evalplus")
    result = check(read_counts(path))
    assert isinstance(result, CheckResult) and result.ok and result.findings == 0
    want = {k: passatk.score([4] * 3, [2, 0, 3], k)[0].value for k in (1,)}
    assert [(r.k, r.recomputed, r.status) for r in result] == [(1, want[1], "ok")]


def test_check_statuses_and_findings():
    ok = passatk.score([4] * 3, [2, 0, 3], 2)[0].value
    stored = [
        StoredMetric((), "pass@k", 2, ok, "f: $.a"),
        StoredMetric((), "pass@k", 2, ok * (1 + 1e-6), "f: $.b"),
        StoredMetric((), "pass@k", 8, 1.0, "f: $.c"),  # k > n and 1.0: the harness's 1.0
        StoredMetric((), "pass@k", 8, 0.5, "f: $.d"),  # k > n: nothing to recompute
        StoredMetric((("model", "x"),), "pass@k", 1, 0.5, "f: $.e"),  # no such group
        StoredMetric((), "pass@k", 1, 0.5, "f: $.f", task="T/0"),  # per task: 2 of 4
        StoredMetric((), "pass@k", 1, 0.5, "f: $.g", task="T/9"),
    ]
    result = check(_counts(stored))
    assert [r.status for r in result] == ["ok", "MISMATCH", "undefined", "MISSING", "MISSING",
                                          "ok", "MISSING"]
    assert result.rows[1].rel_diff == pytest.approx(1e-6 / (1 + 1e-6), rel=1e-6)
    assert result.rows[2].reason.startswith("undefined: k > n; the stored value is the "
                                            "harness's 1.0 (k=8 exceeds n: every task has n = 4")
    assert result.rows[4].reason == "no samples of this group in the archives"
    assert result.rows[6].reason == "no samples of task T/9 in the archives"
    assert (result.findings, result.ok) == (4, False)
    assert check(_counts(stored), strict=True).findings == 5
    assert result.summary() == ("2 of 7 stored number(s) agree within relative 1e-09; 4 do not; "
                                "1 undefined (k > n; the harness stored 1.0), a finding only "
                                "with --strict")
    assert check(_counts(stored[1:2]), tolerance=1e-5).ok


def test_check_rows_are_frozen_and_json_ready():
    result = check(_counts([StoredMetric((), "pass@k", 1, 5 / 12, "f: $.a", "percent")]))
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.rows[0].status = "ok"
    record = result.rows[0].to_dict()
    assert list(record) == ["group", "metric", "k", "task", "stored", "recomputed", "rel_diff",
                            "status", "scale", "source", "reason"]
    assert json.loads(json.dumps(record))["scale"] == "percent"


def test_check_refuses_bad_arguments():
    with pytest.raises(ValueError, match="nothing to check"):
        check(_counts([]))
    with pytest.raises(TypeError, match="counts must be a Counts"):
        check([1, 2])
    for bad in (0, -1.0, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="tolerance must be positive and finite"):
            check(_counts([StoredMetric((), "pass@k", 1, 0.5, "f")]), tolerance=bad)
    with pytest.raises(TypeError, match="tolerance must be a number"):
        check(_counts([StoredMetric((), "pass@k", 1, 0.5, "f")]), tolerance="1e-9")


def test_cli_check_exit_status_is_one_for_findings_only(cli, tmp_path):
    path = tmp_path / "eval_results.json"
    write_archive(path, TASKS, PASSES, format="evalplus")
    assert cli(["check", path, "-q"]).code == 0
    doc = json.loads(path.read_text())
    doc["pass_at_k"]["base"]["pass@1"] += 0.01
    path.write_text(json.dumps(doc))
    code, out, err = cli(["check", path, "--format", "jsonl"])
    assert code == 1
    assert [json.loads(line)["status"] for line in out.splitlines()] == ["MISMATCH"]
    assert err == "passatk: 0 of 1 stored number(s) agree within relative 1e-09; 1 do not\n"


def test_pair_runs_by_equal_groups_or_one_to_one():
    a = Counts.from_rows([("T/0", 4, 1)])
    b = Counts.from_rows([("T/0", 4, 2)])
    (pair,) = pair_runs(a, b)
    assert isinstance(pair, RunPair) and pair.group == {}
    assert (pair.a.c.tolist(), pair.b.c.tolist()) == ([1], [2])
    ga = Counts.from_rows([({"model": "x"}, "T/0", 4, 1)])
    gb = Counts.from_rows([({"model": "y"}, "T/0", 4, 2)])
    assert pair_runs(ga, gb)[0].group == {"a": "model=x", "b": "model=y"}


def test_pair_runs_names_the_options_as_fields():
    two = Counts.from_rows([({"s": 1}, "T/0", 4, 1), ({"s": 2}, "T/0", 4, 2)])
    one = Counts.from_rows([({"s": 9}, "T/0", 4, 1)])
    with pytest.raises(HintedError) as info:
        pair_runs(two, one)
    assert info.value.options == (Option("by"), Option("merge", True))
    assert info.value.option == "by"
    assert str(info.value) == ("runs A and B have different groups (only in A: s=1; s=2; only in "
                               "B: s=9); choose by= fields that both runs share, or merge=True "
                               "to pool the shards of a run")
    with pytest.raises(TypeError, match="b must be a Counts"):
        pair_runs(one, [1])
