"""Inspect AI logs (.json and .eval), hand-written as Inspect writes them, and by inspect_ai."""

from __future__ import annotations

import gzip
import json
import random
import struct
import subprocess
import sys
import zipfile
import zlib
from collections import defaultdict

import pytest

from passatk.archives import ArchiveError, detect_format, read_counts

VALUES = ["C", "I", "N", True, False, 1, 0, 1.0, 0.0]


def header(task: str = "gsm8k", model: str = "openai/gpt-4o", epochs: int = 3) -> dict:
    return {"version": 2, "status": "success",
            "eval": {"eval_id": "abc", "run_id": "def", "created": "2025-05-01T10:00:00+00:00",
                     "task": task, "task_id": "t1", "task_version": 0, "task_attribs": {},
                     "dataset": {"name": "gsm8k", "samples": 5, "shuffled": False},
                     "model": model, "model_generate_config": {}, "model_args": {},
                     "config": {"epochs": epochs}, "packages": {"inspect_ai": "0.3.99"}},
            "plan": {"name": "plan", "steps": [{"solver": "generate", "params": {}}],
                     "config": {}},
            "results": {"total_samples": 5, "completed_samples": 5,
                        "scores": [{"name": "match", "scorer": "match", "params": {},
                                    "metrics": {"accuracy": {"name": "accuracy",
                                                             "value": 0.5, "params": {}}}}]},
            "stats": {"started_at": "2025-05-01T10:00:00+00:00",
                      "completed_at": "2025-05-01T10:05:00+00:00", "model_usage": {}}}


def sample(sid, epoch: int, scores: dict) -> dict:
    return {"id": sid, "epoch": epoch, "input": "What is 6 * 7?", "target": "42",
            "messages": [{"role": "user", "content": "What is 6 * 7?", "source": "input"}],
            "output": {"model": "gpt-4o", "choices": [{"message": {"role": "assistant",
                                                                   "content": "42"},
                                                       "stop_reason": "stop"}]},
            "scores": {name: {"value": v, "answer": "42", "explanation": "..."}
                       for name, v in scores.items()},
            "metadata": {}, "store": {}, "events": [], "model_usage": {}, "uuid": "u",
            "total_time": 1.5, "working_time": 1.2}


def random_samples(seed: int, samples: int = 6, epochs: int = 3,
                   scorers=("match",)) -> list:
    rng = random.Random(seed)
    ids = [rng.choice([i, f"q{i}"]) for i in range(samples)]
    return [sample(i, e, {s: rng.choice(VALUES) for s in scorers})
            for e in range(1, epochs + 1) for i in ids]


def recount(samples: list, threshold=None) -> dict:
    out: dict = defaultdict(lambda: [0, 0])
    for s in samples:
        for scorer, score in s["scores"].items():
            v = score["value"]
            ok = v == "C" if isinstance(v, str) else (v >= threshold if threshold is not None
                                                      else v == 1)
            key = (scorer, str(s["id"]))
            out[key][0] += 1
            out[key][1] += bool(ok)
    return {k: tuple(v) for k, v in out.items()}


def rows(counts) -> dict:
    return {(dict(counts.groups[g])["scorer"], t): (int(n), int(c))
            for g, t, n, c in zip(counts.group, counts.task, counts.n, counts.c, strict=True)}


def write_json(path, samples, **kw) -> None:
    path.write_text(json.dumps({**header(**kw), "samples": samples}, indent=2))


def write_eval(path, samples, zstd: bool = False, **kw) -> None:
    """An .eval zip as Inspect's recorder leaves it: journal, samples, summaries, header."""
    members = [("_journal/start.json", {k: header(**kw)[k] for k in ("version", "eval",
                                                                      "plan")})]
    members += [(f"samples/{s['id']}_epoch_{s['epoch']}.json", s) for s in samples]
    members += [("summaries.json", [{"id": s["id"], "epoch": s["epoch"]} for s in samples]),
                ("header.json", header(**kw))]
    data = [(name, json.dumps(obj).encode()) for name, obj in members]
    if zstd:
        path.write_bytes(zstd_zip(data))
        return
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, body in data:
            z.writestr(name, body)


def zstd_zip(members: list) -> bytes:
    """A zip whose members use method 93 (zstd), as Inspect writes with zipfile_zstd."""
    zstandard = pytest.importorskip("zstandard")
    out, central = bytearray(), bytearray()
    for name, body in members:
        packed = zstandard.ZstdCompressor().compress(body)
        crc, raw = zlib.crc32(body), name.encode()
        fields = struct.pack("<HHHHHIIIHH", 63, 0, 93, 0, 0, crc, len(packed), len(body),
                             len(raw), 0)
        central += b"PK\x01\x02" + struct.pack("<H", 63) + fields + struct.pack(
            "<HHHII", 0, 0, 0, 0, len(out)) + raw
        out += b"PK\x03\x04" + fields + raw + packed
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(central),
                      len(out), 0)
    return bytes(out + central + end)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("kind", ["json", "one-line", "eval", "eval-zstd", "eval-gz"])
def test_counts_per_scorer(tmp_path, seed, kind):
    samples = random_samples(seed, scorers=("match", "model_graded"))
    if kind == "one-line":
        path = tmp_path / "log.json"
        path.write_text(json.dumps({**header(), "samples": samples}))
    elif kind == "json":
        path = tmp_path / "log.json"
        write_json(path, samples)
    else:
        path = tmp_path / "log.eval"
        write_eval(path, samples, zstd=kind == "eval-zstd")
        if kind == "eval-gz":
            gz = tmp_path / "log.eval.gz"
            gz.write_bytes(gzip.compress(path.read_bytes()))
            path.unlink()
            path = gz
    assert detect_format(path) == ("inspect-ai" if "json" in kind or kind == "one-line"
                                   else "inspect-ai-eval")
    counts = read_counts(path)
    assert {tuple((k, v) for k, v in g if k != "scorer") for g in counts.groups} == {
        (("task", "gsm8k"), ("model", "openai/gpt-4o"))}
    assert rows(counts) == recount(samples)


def test_standard_input_and_a_folder(tmp_path):
    samples = random_samples(7)
    write_eval(tmp_path / "a.eval", samples, model="openai/a")
    write_json(tmp_path / "b.json", samples, model="openai/b")
    with open(tmp_path / "a.eval", "rb") as f:
        out = subprocess.run([sys.executable, "-m", "passatk", "score", "-", "--format", "csv"],
                             stdin=f, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "openai/a" in out.stdout
    both = read_counts(tmp_path, by=["model"])
    assert sorted({dict(g)["model"] for g in both.groups}) == ["openai/a", "openai/b"]
    assert both.n.sum() == 2 * len(samples)


def test_threshold_and_partial_credit(tmp_path):
    rng = random.Random(3)
    samples = [sample(i, e, {"f1": rng.choice([0.0, 0.25, 0.5, 0.75, 1.0])})
               for e in (1, 2) for i in range(5)]
    path = tmp_path / "log.json"
    write_json(path, samples)
    if any(s["scores"]["f1"]["value"] not in (0, 1) for s in samples):
        with pytest.raises(ArchiveError, match=r"\$\.samples\[\d+\]\.scores\.f1\.value: score "
                                               r"value .* give --threshold|threshold="):
            read_counts(path)
    counts = read_counts(path, threshold=0.5)
    assert rows(counts) == recount(samples, threshold=0.5)
    partial = [sample(0, 1, {"m": "P"}), sample(0, 2, {"m": "C"})]
    write_json(path, partial)
    with pytest.raises(ArchiveError, match="neither correct nor incorrect"):
        read_counts(path)
    assert read_counts(path, threshold=0.5).c.tolist() == [2]
    assert read_counts(path, threshold=0.6).c.tolist() == [1]


def test_samples_without_scores_and_odd_values(tmp_path):
    samples = random_samples(1)
    samples[2]["scores"] = None
    samples[2]["error"] = {"message": "RuntimeError", "traceback": "..."}
    path = tmp_path / "log.json"
    write_json(path, samples)
    with pytest.raises(ArchiveError, match=r"\$\.samples\[2\]: sample .* has no scores \(the "
                                           r"sample ended with an error\)"):
        read_counts(path)
    counts = read_counts(path, skip_bad=True)
    assert counts.skipped.count == 1
    assert rows(counts) == recount(samples[:2] + samples[3:])
    samples[2] = sample(1, 9, {"match": {"nested": 1}})
    write_eval(tmp_path / "log.eval", samples)
    with pytest.raises(ArchiveError, match=r"log\.eval: samples/1_epoch_9\.json: "
                                           r"\$\.scores\.match\.value: a score value must be"):
        read_counts(tmp_path / "log.eval")


def test_a_log_without_samples(tmp_path):
    (tmp_path / "header.json").write_text(json.dumps(header()))
    write_json(tmp_path / "run.json", random_samples(0))
    counts = read_counts(tmp_path)
    assert "header.json" in " ".join(counts.notes)
    with pytest.raises(ArchiveError, match="an Inspect log without samples"):
        read_counts(tmp_path / "header.json")


def test_an_unknown_zip(tmp_path):
    with zipfile.ZipFile(tmp_path / "x.eval", "w") as z:
        z.writestr("data.txt", "hello")
    with pytest.raises(ArchiveError, match="cannot detect the format of this zip archive"):
        read_counts(tmp_path / "x.eval")


def test_logs_written_by_inspect_ai(tmp_path):
    log = pytest.importorskip("inspect_ai.log")
    from inspect_ai.scorer import Score

    spec = log.EvalSpec(created="2025-01-01T00:00:00+00:00", task="arith", model="mockllm/model",
                        dataset=log.EvalDataset(name="d", samples=4),
                        config=log.EvalConfig(epochs=3))
    rng = random.Random(0)
    values = {(i, e): rng.choice(["C", "I"]) for i in range(1, 5) for e in (1, 2, 3)}
    samples = [log.EvalSample(id=i, epoch=e, input="q", target="a",
                              scores={"match": Score(value=v)}) for (i, e), v in values.items()]
    whole = log.EvalLog(eval=spec, samples=samples, status="success", plan=log.EvalPlan(),
                        results=log.EvalResults(),
                        stats=log.EvalStats(started_at="", completed_at=""))
    want = {("match", str(i)): (3, sum(values[(i, e)] == "C" for e in (1, 2, 3)))
            for i in range(1, 5)}
    for name in ("arith.eval", "arith.json"):
        log.write_eval_log(whole, str(tmp_path / name))
        assert rows(read_counts(tmp_path / name)) == want


def test_compare_two_logs(tmp_path, capsys):
    """Paired tests over two logs of one task (Inspect's own tracker asks for them)."""
    from passatk import cli

    rng = random.Random(0)
    flags = {}
    for name, model, p in (("a.eval", "openai/a", 0.7), ("b.eval", "openai/b", 0.4)):
        flags[name] = {(i, e): rng.random() < p for e in (1, 2, 3) for i in range(30)}
        write_eval(tmp_path / name, [sample(i, e, {"match": "C" if ok else "I"})
                                     for (i, e), ok in flags[name].items()], model=model)
    assert cli.main(["compare", str(tmp_path / "a.eval"), str(tmp_path / "b.eval"),
                     "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    row = out["rows"][0]
    diff = sum(flags["a.eval"].values()) / 90 - sum(flags["b.eval"].values()) / 90
    assert row["tasks"] == 30 and abs(row["diff"] - diff) < 1e-12


@pytest.mark.parametrize("zstd", [False, True])
def test_corrupt_eval_logs_fail_in_one_line(tmp_path, zstd):
    """Bit flips, cuts and junk in a .eval zip (deflate or zstd members): exit 0 or one line,
    exit 2; never a traceback (corrupt deflate data raises zlib.error inside zipfile)."""
    import contextlib
    import io

    from passatk.cli import main

    write_eval(tmp_path / "log.eval", random_samples(0), zstd=zstd)
    orig = (tmp_path / "log.eval").read_bytes()
    rng = random.Random(1)
    codes = []
    for i in range(120):
        b = bytearray(orig)
        for _ in range(rng.randint(1, 3)):
            pos = rng.randrange(len(b))
            op = rng.random()
            if op < 0.7:
                b[pos] ^= 1 << rng.randrange(8)
            elif op < 0.85:
                del b[max(pos, 1):]
            else:
                b[pos:pos] = rng.choice([b"\x00" * 8, b"PK\x03\x04", b"\xff" * 30])
        path = tmp_path / f"m{i}.eval"
        path.write_bytes(bytes(b))
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(["score", str(path), "-q"])
        lines = err.getvalue().splitlines()
        assert (code == 0 and not lines) or (code == 2 and len(lines) == 1), (code, lines)
        codes.append(code)
        path.unlink()
    assert codes.count(2) > 60  # most corruptions are found


def test_unfinished_logs_say_so(tmp_path):
    samples = random_samples(4)
    with zipfile.ZipFile(tmp_path / "running.eval", "w") as z:  # journal and samples only
        z.writestr("_journal/start.json", json.dumps({k: header()[k] for k in
                                                      ("version", "eval", "plan")}))
        for s in samples[:5]:
            z.writestr(f"samples/{s['id']}_epoch_{s['epoch']}.json", json.dumps(s))
    counts = read_counts(tmp_path / "running.eval")
    assert rows(counts) == recount(samples[:5])
    assert "no header.json (the run did not finish)" in " ".join(counts.notes)
    path = tmp_path / "cancelled.json"
    path.write_text(json.dumps({**header(), "status": "cancelled", "samples": samples[:4]}))
    assert "an Inspect log with status 'cancelled'" in " ".join(read_counts(path).notes)
    write_json(tmp_path / "done.json", samples)
    assert not any("Inspect log with" in x for x in read_counts(tmp_path / "done.json").notes)


def test_a_corrupt_zstd_member_with_inspect_ai_imported(tmp_path):
    """Importing inspect_ai gives zipfile zstd (method 93), whose errors are zstandard's own:
    a corrupt member is still one line, exit 2, in a process that uses Inspect and passatk."""
    pytest.importorskip("inspect_ai.log")
    zstandard = pytest.importorskip("zstandard")
    samples = random_samples(0)
    body = json.dumps(samples[0]).encode()
    packed = zstandard.ZstdCompressor().compress(body)
    data = zstd_zip([(f"samples/{samples[0]['id']}_epoch_1.json", body),
                     ("header.json", json.dumps(header()).encode())])
    assert data.count(packed) == 1
    (tmp_path / "log.eval").write_bytes(data.replace(packed, b"\0\0\0\0" + packed[4:]))
    code = ("import sys, zipfile, inspect_ai.log; from passatk.cli import main; "
            "assert zipfile.ZIP_ZSTANDARD == 93; sys.exit(main(sys.argv[1:]))")
    out = subprocess.run([sys.executable, "-c", code, "score", str(tmp_path / "log.eval")],
                         capture_output=True, text=True)
    assert out.returncode == 2, out.stderr
    assert out.stderr.count("\n") == 1 and "log.eval: member samples/" in out.stderr
    assert "cannot read it" in out.stderr and "Traceback" not in out.stderr
