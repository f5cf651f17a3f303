"""The command line's statistics options from issue 11: --ci auto/wilson/clopper-pearson/
cluster, --cluster-by, and the estimand column. Expected numbers come from the library."""

from __future__ import annotations

import json

import pytest

import passatk
from passatk.archives import write_archive

TASKS = [f"{g}/{i}" for g in ("easy", "mid", "hard") for i in range(6)]
GREEDY = [[i % 4 != 0] for i in range(18)]
MANY = [[(i * j) % 7 < 3 + i % 3 for j in range(8)] for i in range(18)]


@pytest.fixture
def greedy(tmp_path):
    path = tmp_path / "g.jsonl_results.jsonl"
    write_archive(path, TASKS, GREEDY)
    return str(path)


@pytest.fixture
def many(tmp_path):
    path = tmp_path / "m.jsonl_results.jsonl"
    write_archive(path, TASKS, MANY)
    return str(path)


def _lib(passes, **kw):
    n = [len(p) for p in passes]
    c = [sum(p) for p in passes]
    return passatk.score(n, c, 1, task_ids=TASKS, **kw)[0].to_dict()


@pytest.mark.parametrize("ci", ["auto", "wilson", "clopper-pearson"])
def test_binary_intervals_from_the_cli(cli, greedy, ci):
    code, out, _ = cli(["score", greedy, "--ci", ci, "--format", "json"])
    assert code == 0
    rec = json.loads(out)["rows"][0]
    want = _lib(GREEDY, interval=ci)
    assert (rec["ci_low"], rec["ci_high"]) == (want["ci_low"], want["ci_high"])
    assert rec["estimand"] == "super-population"


def test_cluster_interval_from_the_cli(cli, many):
    code, out, _ = cli(["score", many, "--ci", "cluster", "--cluster-by", "^[a-z]+",
                                 "--format", "json"])
    assert code == 0
    rec = json.loads(out)["rows"][0]
    want = _lib(MANY, interval="cluster", clusters=[t.split("/")[0] for t in TASKS])
    assert rec["se"] == want["se"] and rec["clusters"] == 3
    assert rec["estimand"] == "super-population (clustered)"


def test_cluster_by_must_match_every_task(cli, many):
    code, _, err = cli(["score", many, "--ci", "cluster", "--cluster-by", "^mid"])
    assert code != 0 and "does not match task id" in err and len(err.splitlines()) == 1


def test_compare_with_clusters_and_estimand_column(cli, many, tmp_path):
    other = tmp_path / "o.jsonl_results.jsonl"
    write_archive(other, TASKS, [[not x for x in p] for p in MANY])
    code, out, _ = cli(["compare", many, str(other), "--cluster-by", "^[a-z]+",
                                 "--seed", "0", "--format", "json"])
    assert code == 0
    rec = json.loads(out)["rows"][0]
    assert rec["clusters"] == 3 and rec["df"] == 2 and rec["estimand"].endswith("clustered")
    code, out, _ = cli(["score", many])
    assert out.splitlines()[0].split()[-1] == "estimand"
