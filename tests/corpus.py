"""A folder of archives in every format, for the remote and distributed reading tests."""

from __future__ import annotations

import contextlib
import os
import random

import numpy as np

from passatk.archives import ArchiveError, read_counts, write_archive

TASKS = [f"HumanEval/{i}" for i in range(12)]

#: (folder, file name, format); every folder is one run that read_counts reads as a whole
LAYOUT = [
    ("he", "s_results.jsonl", "humaneval"),
    ("he_gz", "s_results.jsonl.gz", "humaneval"),
    ("he_zst", "s_results.jsonl.zst", "humaneval"),
    ("evalplus", "eval_results.json", "evalplus"),
    ("bcb", "m_eval_results.json", "bigcodebench"),
    ("lm", "samples_humaneval_2024-01-01T00-00-00.jsonl", "lm-eval"),
    ("lcb", "m_eval_all.json", "livecodebench"),
    ("oc", "humaneval.json", "opencompass"),
    ("crux", "crux.json", "cruxeval"),
    ("mpe", "run", "multipl-e"),
    ("counts", "c.parquet", "counts"),
    ("samples_csv", "s.csv", "samples"),
    ("samples_jsonl", "s.jsonl", "samples"),
    ("code_eval", "code_eval.json", "code-eval"),
    ("qwen", "test_qwen25-math-cot_-1_seed0_t0.7_s0_e-1.jsonl", "qwen-math"),
    ("tau", "tau.json", "tau-bench"),
    ("tau2", "results.json", "tau2-bench"),
    ("lcb_eval", "m_eval.json", "livecodebench-eval"),
    ("inspect", "log.json", "inspect-ai"),
    ("inspect_eval", "log.eval", "inspect-ai-eval"),
    ("inspect_zst", "log.eval.zst", "inspect-ai-eval"),
]

#: the folders of LAYOUT whose archives hold pass^k data (not scored with the others)
PASS_HAT = ("tau", "tau2")


def flags(seed: int, tasks: int = len(TASKS), samples: int = 20) -> list[list[bool]]:
    rng = random.Random(seed)
    return [[rng.random() < p for _ in range(samples)]
            for p in (rng.random() for _ in range(tasks))]


def make_corpus(root: str | os.PathLike) -> dict[str, str]:
    """Write every format of LAYOUT under ``root``; return folder name -> folder path."""
    out = {}
    for i, (folder, name, fmt) in enumerate(LAYOUT):
        path = os.path.join(root, folder)
        os.makedirs(path, exist_ok=True)
        task_ids = list(range(len(TASKS))) if fmt == "tau-bench" else TASKS
        own = {"completion": lambda t, j, i=i: f"return {i}, {t}, {j}"} if fmt == "humaneval" \
            else {}  # each run its own samples: pooled by merge, no record repeats another's
        write_archive(os.path.join(path, name), task_ids, flags(i), format=fmt, **own)
        out[folder] = path
    with open(os.path.join(out["he"], "results.json"), "w") as f:  # a summary beside a run
        f.write('{"humaneval": {"pass@1": 0.25, "pass@10": 0.5}}')
    with open(os.path.join(out["mpe"], "run", "summary.json"), "w") as f:  # inside a run
        f.write('{"pass@1": 0.3}')
    return out


def big_humaneval(path: str | os.PathLike, lines: int, seed: int = 0) -> str:
    """A human-eval results file of ``lines`` samples with a few odd lines (slow-path ones)."""
    rng = np.random.default_rng(seed)
    task = rng.integers(0, 40, size=lines)
    passed = rng.random(lines) < 0.4
    with open(path, "w") as f:
        for i, (t, p) in enumerate(zip(task.tolist(), passed.tolist(), strict=True)):
            if i % 97 == 5:  # other key order: parsed by json.loads
                f.write(f'{{"passed": {str(p).lower()}, "task_id": "T/{t}", "completion": ""}}\n')
            elif i % 211 == 7:
                f.write("\n")
            else:
                body = "x" * int(rng.integers(0, 60))
                f.write(f'{{"task_id": "T/{t}", "completion": "{body}", "result": "passed", '
                        f'"passed": {str(p).lower()}}}\n')
    return str(path)


def same(a, b) -> None:
    """Assert that two Counts are identical in every field."""
    assert a.groups == b.groups
    for name in ("group", "task", "n", "c"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name
    assert a.metric == b.metric
    assert a.group_metrics == b.group_metrics
    assert a.stored == b.stored
    assert a.skipped == b.skipped
    assert a.files == b.files
    assert a.notes == b.notes


def upload(fs, corpus: dict[str, str], root: str) -> None:
    """Copy the folders of ``corpus`` to ``root`` on the fsspec file system ``fs``."""
    for path in corpus.values():
        for dirpath, _, names in os.walk(path):
            for name in names:
                local = os.path.join(dirpath, name)
                rel = os.path.relpath(local, os.path.dirname(path))
                with open(local, "rb") as f:
                    fs.pipe(f"{root}/{rel}", f.read())


@contextlib.contextmanager
def moto_s3(corpus: dict[str, str], bucket: str = "passatk-runs"):
    """moto's S3 server on 127.0.0.1 holding ``corpus`` under ``s3://bucket/v1/``; yields the
    storage options that reach it."""
    import fsspec
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        options = {"key": "testing", "secret": "testing", "endpoint_url": f"http://{host}:{port}",
                   "client_kwargs": {"region_name": "eu-west-1"}}
        fs = fsspec.filesystem("s3", **options)
        fs.mkdir(bucket)
        upload(fs, corpus, f"{bucket}/v1")
        yield options
    finally:
        server.stop()


def relocated(counts, old: str, new: str):
    """``counts`` with the prefix ``old`` of every file, source and note changed to ``new``."""
    import dataclasses

    return dataclasses.replace(
        counts, files=tuple(f.replace(old, new) for f in counts.files),
        stored=tuple(dataclasses.replace(s, source=s.source.replace(old, new))
                     for s in counts.stored),
        notes=tuple(n.replace(old, new) for n in counts.notes))


def outcome_of(counts) -> tuple:
    """The rows and groups of ``counts`` as plain values."""
    return ("ok", repr(counts.groups), counts.group.tolist(), counts.task.tolist(),
            counts.n.tolist(), counts.c.tolist())


def outcome(path, **kw) -> tuple:
    """What read_counts gives: the rows, groups and skips, or the error as the user sees it."""
    try:
        counts = read_counts(path, **kw)
    except ArchiveError as e:
        return ("error", str(e))
    except (ValueError, TypeError) as e:
        return (type(e).__name__, str(e))
    return (*outcome_of(counts), counts.skipped.count, [str(r) for r in counts.skipped.records])
