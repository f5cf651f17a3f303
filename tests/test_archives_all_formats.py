"""One folder holding every supported format at once, and the new formats on every engine."""

from __future__ import annotations

import gzip
import json
import os
import random
import subprocess
import sys
from fractions import Fraction

import pytest
from corpus import same

from passatk import cli
from passatk.archives import detect_format, formats, read_counts, write_archive

#: a file name for each format (the rest are x_<name>.json)
NAMES = {"humaneval": "x_results.jsonl", "lm-eval": "samples_t_2024-01-01.jsonl",
         "livecodebench": "x_eval_all.json", "livecodebench-eval": "y_eval.json",
         "evalplus": "eval_results.json", "bigcodebench": "x_eval_results.json",
         "multipl-e": "mpe", "qwen-math": "test_cot_-1_seed0_t0.0_s0_e-1.jsonl",
         "counts": "c.csv", "samples": "s.jsonl", "inspect-ai": "log.json",
         "inspect-ai-eval": "log.eval", "tau2-bench": "tau2.json"}
NEW = ("livecodebench-eval", "tau2-bench", "inspect-ai", "inspect-ai-eval")


def flags(seed: int) -> tuple[list, list]:
    rng = random.Random(seed)
    tasks = rng.randint(2, 6)
    return [[rng.random() < 0.5 for _ in range(rng.randint(1, 5))] for _ in range(tasks)], \
        [f"task/{seed}/{i}" for i in range(tasks)]


def write_all(root) -> dict:
    """Every format under ``root``: archive path -> (format, metric, {task: (n, c)}), the
    counts recounted from the flags written by a plain loop."""
    out = {}
    for seed, f in enumerate(formats()):
        passes, tasks = flags(seed)
        if f.name == "tau-bench":
            tasks = list(range(100 * seed, 100 * seed + len(passes)))
        path = os.path.join(root, NAMES.get(f.name, f"x_{f.name}.json"))
        written = write_archive(path, tasks, passes, format=f.name)
        archive = path if f.name != "multipl-e" else os.path.dirname(written[0])
        counts = {}
        for t, p in zip(tasks, passes, strict=True):
            n = c = 0
            for passed in p:
                n += 1
                c += 1 if passed else 0
            counts[str(t)] = (n, c)
        out[archive] = (f.name, f.metric, counts)
    return out


def by_archive(rows: list, root: str) -> dict:
    """(tasks, samples, pass@1 or pass^1, metric) of each archive's row group of a score."""
    out: dict = {}
    for r in rows:
        key = os.path.join(root, r["group"]["path"])
        assert key not in out, key  # one row group per archive
        out[key] = (r["tasks"], r["samples"], r["value"], r["metric"])
    return out


def expected(tasks: dict) -> tuple:
    """pass@1 (= pass^1) as a plain loop: the mean over tasks of c / n, exactly."""
    total = Fraction(0)
    for n, c in tasks.values():
        total += Fraction(c, n)
    return len(tasks), sum(n for n, _ in tasks.values()), total / len(tasks)


def test_score_one_folder_of_every_format(tmp_path, capsys):
    """pass@k archives and pass^k archives (tau-bench, tau2-bench) in one folder: one row
    group per archive, each scored with its own metric."""
    want = write_all(tmp_path)
    assert len(want) == len(formats())
    assert {m for _, m, _ in want.values()} == {"pass@k", "pass^k"}
    for path, (name, _, _) in want.items():
        if name != "multipl-e":
            assert detect_format(path) == name
    assert cli.main(["score", str(tmp_path), "-k", "1", "--format", "json"]) == 0
    got = by_archive(json.loads(capsys.readouterr().out)["rows"], str(tmp_path))
    assert set(got) == set(want)
    for path, (_, metric, tasks) in want.items():
        n_tasks, samples, value = expected(tasks)
        assert got[path][:2] == (n_tasks, samples), path
        assert abs(Fraction(got[path][2]) - value) <= Fraction(1, 2**50), path
        assert got[path][3] == metric, path
    counts = read_counts(tmp_path)
    assert counts.metric == "mixed"
    for i, g in enumerate(counts.iter_groups()):
        path = os.path.join(str(tmp_path), g.group["path"])
        assert _rows_of(g) == want[path][2], path
        assert counts.metric_of(i) == want[path][1], path


def _rows_of(g) -> dict:
    return {str(t): (int(n), int(c)) for t, n, c in zip(g.task, g.n, g.c, strict=True)}


def test_library_score_of_a_mixed_folder(tmp_path):
    import passatk

    want = write_all(tmp_path)
    rows = passatk.score(read_counts(tmp_path), k=1).rows
    got = {os.path.join(str(tmp_path), r.group["path"]): r.metric for r in rows}
    assert got == {path: metric for path, (_, metric, _) in want.items()}


def test_pooling_both_metrics_is_refused_in_one_line(tmp_path, capsys):
    """``--merge`` pools the archives into one run: pass@k and pass^k cannot be pooled."""
    write_all(tmp_path)
    assert cli.main(["score", str(tmp_path), "--merge"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "score them separately" in err


@pytest.fixture(scope="module")
def new_formats(tmp_path_factory):
    root = tmp_path_factory.mktemp("new")
    out = {}
    for seed, name in enumerate(NEW):
        passes, tasks = flags(40 + seed)
        folder = root / name
        for suffix in ("", ".gz", ".zst"):
            write_archive(str(folder / (NAMES[name] + suffix)), tasks, passes, format=name)
        out[name] = (folder, {t: (len(p), sum(p)) for t, p in zip(tasks, passes, strict=True)})
    return out


def _rows(counts) -> dict:
    return {t: (int(n), int(c)) for t, n, c in zip(counts.task, counts.n, counts.c,
                                                      strict=True)}


@pytest.mark.parametrize("name", NEW)
def test_folders_globs_compression_and_workers(new_formats, name):
    folder, want = new_formats[name]
    files = sorted(str(folder / f) for f in os.listdir(folder))
    assert len(files) == 3
    for f in files:
        assert _rows(read_counts(f)) == want
    walked = read_counts(folder)
    assert len(walked.groups) == 3  # three archives, kept apart by path
    globbed = read_counts(str(folder / "*"))
    same(walked, globbed)
    same(read_counts(folder, workers=2), walked)
    merged = read_counts(files[:1], merge=True)
    assert _rows(merged) == want


@pytest.mark.parametrize("name", NEW)
@pytest.mark.parametrize("how", ["-", "/dev/stdin"])
def test_standard_input(new_formats, name, how):
    folder, want = new_formats[name]
    plain = str(folder / NAMES[name])
    for path in (plain, plain + ".gz"):
        assert stdin_rows(path, how) == want


def stdin_rows(path: str, how: str) -> dict:
    """The counts of ``read_counts(how)`` in a child whose standard input is ``path``."""
    code = ("import json, sys; from passatk.archives import read_counts; c = read_counts("
            f"{how!r}); print(json.dumps([[t, int(n), int(k)] for t, n, k in zip(c.task, c.n, "
            "c.c)]))")
    with open(path, "rb") as f:
        out = subprocess.run([sys.executable, "-c", code], stdin=f, capture_output=True,
                             text=True)
    assert out.returncode == 0, out.stderr
    return {t: (n, c) for t, n, c in json.loads(out.stdout)}


def test_one_line_documents_through_stdin(tmp_path):
    """EvalPlus and CRUXEval write one JSON object on one line: through stdin it is that
    document, not JSON Lines."""
    passes, tasks = flags(3)
    for name, fmt in (("eval_results.json", "evalplus"), ("crux.json", "cruxeval")):
        path = tmp_path / name
        write_archive(path, tasks, passes, format=fmt)
        one = tmp_path / (name + ".line")
        one.write_text(json.dumps(json.loads(path.read_text())))
        want = _rows(read_counts(path))
        for how in ("-", "/dev/stdin"):
            assert stdin_rows(str(one), how) == want
        gz = tmp_path / (name + ".line.gz")
        gz.write_bytes(gzip.compress(one.read_bytes()))
        assert _rows(read_counts(gz)) == want  # unnamed by its suffix: the same rule


def test_a_stray_jsonl_in_a_walk_is_skipped_with_a_note(tmp_path):
    passes, tasks = flags(5)
    write_archive(tmp_path / "x_results.jsonl", tasks, passes)
    (tmp_path / "config.jsonl").write_text('{"lr": 0.1, "seed": 3}\n')
    (tmp_path / "notes.json").write_text('{"comment": "hi"}')
    counts = read_counts(tmp_path)
    assert _rows(counts) == {t: (len(p), sum(p)) for t, p in zip(tasks, passes, strict=True)}
    note = " ".join(counts.notes)
    assert "skipped 2 JSON file(s)" in note and "config.jsonl" in note and "notes.json" in note
    globbed = read_counts(str(tmp_path / "*.jsonl"))
    assert "config.jsonl" in " ".join(globbed.notes)
    with pytest.raises(ValueError, match=r"config\.jsonl:1: cannot detect the format of JSON "
                                         r"Lines with keys \['lr', 'seed'\]"):
        read_counts(tmp_path / "config.jsonl")


def test_solved_flags(tmp_path):
    """MapCoder / Reflexion JSON Lines: task_id and is_solved (or solved)."""
    rng = random.Random(0)
    for field in ("is_solved", "solved"):
        records = [{"task_id": f"HumanEval/{rng.randrange(5)}", "prompt": "def f():",
                    "source_codes": ["pass"], field: rng.random() < 0.5, "language": "Python3",
                    "api_calls": 3} for _ in range(40)]
        path = tmp_path / f"{field}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        want: dict = {}
        for r in records:
            n, c = want.get(r["task_id"], (0, 0))
            want[r["task_id"]] = (n + 1, c + r[field])
        assert detect_format(path) == "samples"
        assert _rows(read_counts(path)) == want


# ------------------------------------------------------------------ every format, every way in
def compressed(path: str, suffix: str) -> str:
    """``path`` (a file, or a MultiPL-E folder of files) compressed as a user would."""
    pack = gzip.compress if suffix == ".gz" else pytest.importorskip("zstandard").compress
    if os.path.isdir(path):
        out = path + suffix.replace(".", "_")
        os.makedirs(out)
        for name in os.listdir(path):
            with open(os.path.join(path, name), "rb") as f, \
                    open(os.path.join(out, name + suffix), "wb") as g:
                g.write(pack(f.read()))
        return out
    with open(path, "rb") as f, open(path + suffix, "wb") as g:
        g.write(pack(f.read()))
    return path + suffix


@pytest.fixture(scope="module")
def every_format(tmp_path_factory):
    """Per format: a folder holding its archive plain, gzip and zstd, and the counts of each
    task recounted by a plain loop over the flags written."""
    root = tmp_path_factory.mktemp("every")
    out = {}
    for seed, f in enumerate(formats()):
        passes, tasks = flags(60 + seed)
        if f.name == "tau-bench":
            tasks = list(range(len(passes)))
        name = NAMES.get(f.name, f"x_{f.name}.json")
        folder = root / f.name
        written = write_archive(str(folder / name), tasks, passes, format=f.name)
        plain = str(folder / name) if f.name != "multipl-e" else os.path.dirname(written[0])
        archives = [plain] + [compressed(plain, s) for s in (".gz", ".zst")]
        want = {str(t): (len(p), sum(p)) for t, p in zip(tasks, passes, strict=True)}
        out[f.name] = (str(folder), archives, want)
    return out


def per_archive(counts, archives: list[str], folder: str) -> dict:
    """Each archive's {task: (n, c)}, its rows found by its ``path`` group; one group each."""
    out: dict = {}
    for row in counts.to_rows():
        path = os.path.join(folder, row.pop("path"))
        task, n, c = row.pop("task_id"), row.pop("n"), row.pop("c")
        groups = out.setdefault(path, {})
        groups.setdefault(tuple(sorted(row.items())), {})[task] = (n, c)
    assert set(out) == set(archives)
    assert all(len(g) == 1 for g in out.values()), out  # one row group per archive
    return {a: next(iter(g.values())) for a, g in out.items()}


@pytest.mark.parametrize("name", [f.name for f in formats()])
def test_every_format_alone_walked_globbed_compressed_and_on_workers(every_format, name):
    folder, archives, want = every_format[name]
    for archive in archives:
        assert _rows(read_counts(archive)) == want, archive
        if name != "multipl-e":
            assert detect_format(archive) == name
    walked = read_counts(folder)
    assert per_archive(walked, archives, folder) == dict.fromkeys(archives, want)
    pattern = os.path.join(folder, "*", "*") if name == "multipl-e" else os.path.join(folder, "*")
    same_rows(read_counts(pattern), walked)  # a glob also names the sidecars: other files
    same(read_counts(folder, workers=2), walked)
    same_rows(read_counts(archives, workers=2), walked)


def same_rows(a, b) -> None:
    assert a.to_rows() == b.to_rows() and a.stored == b.stored and a.metric == b.metric


@pytest.mark.parametrize("name", [f.name for f in formats() if f.name != "multipl-e"])
def test_every_format_through_standard_input(every_format, name):
    """Plain through ``-``, gzip through ``/dev/stdin`` (MultiPL-E is a folder per run: it
    cannot come on one stream)."""
    _, archives, want = every_format[name]
    assert stdin_rows(archives[0], "-") == want
    assert stdin_rows(archives[1], "/dev/stdin") == want


@pytest.mark.parametrize("name", [f.name for f in formats()])
def test_every_format_on_a_dask_cluster_and_with_jobs(every_format, dask_client, name,
                                                      capsys):
    folder, archives, want = every_format[name]
    same(read_counts(folder, scheduler=dask_client, split_bytes=200), read_counts(folder))
    assert per_archive(read_counts(archives, scheduler=dask_client), archives, folder) == \
        dict.fromkeys(archives, want)
    assert cli.main(["score", folder, "--jobs", "2", "-k", "1", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    address = dask_client.scheduler.address
    assert cli.main(["score", folder, "--scheduler", address, "-k", "1", "--format",
                     "json"]) == 0
    assert json.loads(capsys.readouterr().out)["rows"] == rows
    n_tasks, samples, value = expected(want)
    assert len(rows) == 3 and all(r["tasks"] == n_tasks and r["samples"] == samples
                                  and abs(Fraction(r["value"]) - value) <= Fraction(1, 2**50)
                                  for r in rows)


@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("distributed")
    import logging

    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", silence_logs=logging.CRITICAL)
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


def test_a_mixed_folder_with_one_metric_asked_or_pooled_by_combine(tmp_path, capsys):
    import passatk

    write_all(tmp_path)
    counts = read_counts(tmp_path)
    rows = passatk.score(counts, k=1, metric="pass@k").rows
    assert {r.metric for r in rows} == {"pass@k"} and len(rows) == len(counts.groups)
    with pytest.raises(ValueError, match=r"combine= cannot pool groups of different metrics"):
        passatk.score(counts, k=1, combine="mean")
    assert cli.main(["compare", str(tmp_path), str(tmp_path)]) == 2
    errors = [e for e in capsys.readouterr().err.splitlines() if e.startswith("passatk: error")]
    assert len(errors) == 1 and "holds both pass@k and pass^k" in errors[0]
    with pytest.raises(ValueError, match=r"holds both pass@k and pass\^k groups"):
        passatk.compare(counts, counts, k=1)
    with pytest.raises(ValueError, match=r"hold both pass@k and pass\^k groups"):
        passatk.leaderboard(counts, 1)
