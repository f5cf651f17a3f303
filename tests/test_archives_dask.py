"""The Dask engine: a real LocalCluster of 2 worker processes gives the local read, exactly."""

from __future__ import annotations

import json
import logging
import os
import signal
import sys

import pytest
from corpus import LAYOUT, PASS_HAT, big_humaneval, make_corpus, moto_s3, same

from passatk import cli
from passatk.archives import ArchiveError, read_counts

distributed = pytest.importorskip("distributed")

@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", silence_logs=logging.CRITICAL)
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return make_corpus(tmp_path_factory.mktemp("corpus"))


@pytest.mark.parametrize("split", [150, 1 << 26])
def test_every_format_on_two_workers(client, corpus, split):
    for folder, _, _ in LAYOUT:
        same(read_counts(corpus[folder], scheduler=client, split_bytes=split),
             read_counts(corpus[folder]))
    runs = [corpus[f] for f, _, _ in LAYOUT if f not in PASS_HAT]  # one metric: 20+ runs
    for kw in ({}, {"by": ["path:parent"]}, {"merge": True}):  # labelled by path, or pooled
        same(read_counts(runs, scheduler=client, split_bytes=split, **kw),
             read_counts(runs, **kw))
    # pass@k and pass^k files together: each with its own metric, or pooled the same error
    same(read_counts([*runs, corpus["tau"]], scheduler=client, split_bytes=split),
         read_counts([*runs, corpus["tau"]]))
    with pytest.raises(ArchiveError) as local:
        read_counts([*runs, corpus["tau"]], merge=True)
    with pytest.raises(ArchiveError) as remote:
        read_counts([*runs, corpus["tau"]], scheduler=client, split_bytes=split, merge=True)
    assert str(remote.value) == str(local.value)


def _corrupt(path: str, lines: dict[int, str]) -> None:
    with open(path) as f:
        text = f.read().split("\n")
    for i, line in lines.items():
        text[i - 1] = line
    with open(path, "w") as f:
        f.write("\n".join(text))


@pytest.mark.parametrize("split", [4001, 1 << 26])
def test_large_files_split_identically(client, tmp_path, split):
    a = big_humaneval(tmp_path / "a_results.jsonl", 2000, seed=1)
    b = big_humaneval(tmp_path / "b_results.jsonl", 1500, seed=2)
    _corrupt(b, {10: '{"task_id": "T/1", "passed": "yes"}', 1400: "{oops"})
    for skip in (True, False):
        if skip:
            same(read_counts(tmp_path, scheduler=client, split_bytes=split, skip_bad=True),
                 read_counts(tmp_path, skip_bad=True))
            continue
        with pytest.raises(ArchiveError) as local:
            read_counts([a, b])
        with pytest.raises(ArchiveError) as remote:
            read_counts([a, b], scheduler=client, split_bytes=split)
        assert str(remote.value) == str(local.value)
        assert str(local.value).startswith(f"{b}:10: field \"passed\" must be ")


def test_progress_counts_tasks(client, tmp_path):
    path = big_humaneval(tmp_path / "a_results.jsonl", 2000)
    seen = []
    read_counts(path, scheduler=client, split_bytes=10000,
                progress=lambda d, t: seen.append((d, t)))
    total = seen[-1][1]
    assert seen == [(i, total) for i in range(1, total + 1)] and total > 10


def test_cli_with_a_scheduler_address(client, corpus, capsys):
    args = ["score", corpus["samples_csv"], corpus["he"], "-k", "1,5", "--format", "json",
            "--by", "path:parent"]
    assert cli.main(args) == 0
    local = capsys.readouterr().out
    assert cli.main([*args, "--scheduler", client.scheduler.address]) == 0
    # the same envelope; only the command line it records differs
    assert {**json.loads(capsys.readouterr().out), "argv": 0} == {**json.loads(local), "argv": 0}


def test_bad_schedulers_are_one_line_errors(corpus, capsys, monkeypatch):
    for address, message in [("foo", "scheduler must be 'tcp://HOST:PORT' or 'local:N'"),
                             ("local:0", "needs N >= 1")]:
        assert cli.main(["score", corpus["he"], "--scheduler", address]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(ValueError, match=r"pip install 'passatk\[dask\]'"):
        read_counts(corpus["he"], scheduler="local:1")


def test_a_killed_worker_changes_nothing(client, tmp_path):
    files = [big_humaneval(tmp_path / f"r{i:03d}_results.jsonl", 300, seed=i) for i in range(60)]
    pids = client.run(os.getpid)
    victim = sorted(pids.values())[0]
    killed_at = []

    def progress(done, total):
        if done == 10 and not killed_at:
            os.kill(victim, signal.SIGKILL)
            killed_at.append((done, total))

    counts = read_counts(files, scheduler=client, split_bytes=10000, progress=progress)
    same(counts, read_counts(files))
    assert killed_at and killed_at[0][0] < killed_at[0][1]
    client.wait_for_workers(2, timeout=60)
    assert victim not in client.run(os.getpid).values()  # the nanny started a new process


@pytest.mark.filterwarnings("ignore::DeprecationWarning:botocore")
def test_s3_urls_on_the_cluster(client, corpus):
    pytest.importorskip("s3fs")
    pytest.importorskip("moto.server")
    with moto_s3(corpus, bucket="passatk-dask") as options:
        runs = [f"s3://passatk-dask/v1/{f}" for f in ("he", "he_gz", "bcb", "samples_csv")]
        kw = {"storage_options": options, "by": ["path:parent"]}
        same(read_counts(runs, scheduler=client, split_bytes=200, **kw), read_counts(runs, **kw))


@pytest.mark.slow
def test_cli_local_cluster_in_a_subprocess(corpus):
    import subprocess

    args = [sys.executable, "-m", "passatk", "score", corpus["he"], corpus["samples_jsonl"],
            "-k", "1,5", "--format", "csv"]
    local = subprocess.run(args, capture_output=True, text=True, timeout=120)
    dask = subprocess.run([*args, "--scheduler", "local:2"], capture_output=True, text=True,
                          timeout=120)
    assert local.returncode == dask.returncode == 0, dask.stderr
    assert dask.stdout == local.stdout


def test_cli_skip_bad_on_the_cluster(client, tmp_path, capsys):
    path = big_humaneval(tmp_path / "a_results.jsonl", 3000)
    _corrupt(path, {1234: "{oops", 2999: '{"task_id": 7}'})
    args = ["score", path, "--skip-bad", "--format", "json"]
    assert cli.main(args) == 0
    local = capsys.readouterr()
    assert cli.main([*args, "--scheduler", client.scheduler.address]) == 0
    remote = capsys.readouterr()
    assert {**json.loads(remote.out), "argv": 0} == {**json.loads(local.out), "argv": 0}
    assert remote.err == local.err
    assert f"  {path}:1234: malformed JSON" in remote.err


def test_cli_progress_counts_tasks_when_asked(client, corpus, capsys, monkeypatch):
    from passatk import _output

    monkeypatch.setattr(_output.Progress, "DELAY", 0.0)
    args = ["score", corpus["he"], corpus["bcb"], "--scheduler", client.scheduler.address]
    assert cli.main([*args, "--progress"]) == 0
    err = capsys.readouterr().err
    first = err.splitlines()[0]  # whole lines: stderr is no terminal here
    # a task per file (the three files of the two archives); the merge is the driver's, once
    assert first.startswith("reading [") and first.endswith(" tasks") and "/3 tasks" in first
    assert cli.main(args) == 0
    assert "tasks" not in capsys.readouterr().err  # stderr is no terminal: nothing unasked
