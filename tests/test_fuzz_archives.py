"""Acceptance fuzz (issue 9): corrupted archives of every format, read by the CLI in a worker
process. Each gives either a clean read (exit 0, nothing on stderr) or exactly one
``passatk: error: ...`` line with exit status 1, never a traceback; the worker's peak RSS,
bombs included, stays under 300 MB. Bounded: about a minute (marked slow)."""

from __future__ import annotations

import gzip
import json
import random
import re
import shutil
import subprocess
import sys
import zlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from passatk.archives import write_archive

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not sys.platform.startswith("linux"),
                                                   reason="reads /proc/self/status")]
RSS_LIMIT_MB = 300

_WORKER = r"""
import contextlib, io, json, sys, traceback
from passatk.cli import console, main
with console():  # the process as the console entry point sets it up
    for line in sys.stdin:
        path = line.rstrip("\n")
        if path == "RSS":
            print(json.dumps(HWM), flush=True)
            continue
        err, out, tb = io.StringIO(), io.StringIO(), None
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
                rc = main(["score", path, "-q"])
        except BaseException:
            rc, tb = None, traceback.format_exc()
        print(json.dumps({"rc": rc, "err": err.getvalue(), "tb": tb}), flush=True)
"""

_SEEDS = [
    ("humaneval", "x_results.jsonl"), ("humaneval", "z_results.jsonl.gz"),
    ("humaneval", "y_results.jsonl.zst"), ("evalplus", "eval_results.json"),
    ("bigcodebench", "b_eval_results.json"), ("multipl-e", "p"),
    ("lm-eval", "samples_t_2024-01-01T00-00-00.jsonl"), ("livecodebench", "l_eval_all.json"),
    ("opencompass", "oc.json"), ("cruxeval", "cx.json"), ("tau-bench", "tau.json"),
    ("counts", "c.csv"), ("counts", "c.parquet"), ("counts", "cj.jsonl"),
    ("samples", "s.tsv"), ("samples", "sj.jsonl.gz"), ("code-eval", "ce_results.json"),
    ("qwen-math", "test_qwen25-math-cot_-1_seed0_t0.7_s0_e-1.jsonl"),
    ("tau2-bench", "t2.json"), ("livecodebench-eval", "m_eval.json"),
    ("inspect-ai", "log.json"), ("inspect-ai-eval", "log.eval"),
]
_PAYLOADS = [b'"', b"{", b"[", b"}", b",", b":", b"\\", b"\n", b"\x00", b"\xff", b"\xef\xbb\xbf",
             b"9" * 400, b"[" * 100_000, b'"T/0": 1, "T/0": 2, ', b"NaN", b"-1", b"1e999",
             b"9223372036854775808", b'"passed": true, "passed": false, ']


@pytest.fixture(scope="module")
def seeds(tmp_path_factory):
    root = tmp_path_factory.mktemp("seeds")
    out = []
    for i, (fmt, name) in enumerate(_SEEDS):
        folder = root / f"s{i}"
        folder.mkdir()
        flags = [[True, False], [False, False, True], [True]]
        write_archive(folder / name, ["T/0", "T/1", "HumanEval/10"], flags, format=fmt)
        main = folder / name
        if main.is_dir():  # MultiPL-E: a directory of per-problem files
            main = sorted(main.iterdir())[0]
        files = sorted(p for p in main.parent.iterdir() if p.is_file())
        out.append((main, files))
    return out


@pytest.fixture(scope="module")
def worker():
    code = _WORKER.replace("HWM", _HWM)
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    yield proc
    proc.stdin.close()
    proc.wait(timeout=30)
    proc.stdout.close()


def _ask(worker, line: str):
    worker.stdin.write(line + "\n")
    worker.stdin.flush()
    return json.loads(worker.stdout.readline())


def _check(worker, path) -> None:
    r = _ask(worker, str(path))
    assert r["tb"] is None, r["tb"]
    lines = r["err"].splitlines()
    if r["rc"] == 0:
        assert lines == [], r["err"]
    else:
        assert r["rc"] == 2 and len(lines) == 1, r
        assert lines[0].startswith("passatk: error: ") and "Traceback" not in lines[0], r


def _mutate(data: bytes, ops: list, rnd: random.Random) -> bytes:
    b = bytearray(data)
    for op, where, payload in ops:
        pos = int(where * len(b))
        if op == "truncate":
            del b[pos:]
        elif op == "flip" and b:
            b[min(pos, len(b) - 1)] ^= 1 << rnd.randrange(8)
        elif op == "insert":
            b[pos:pos] = payload
        elif op == "replace":
            b[pos:pos + len(payload)] = payload
        elif op == "repeat":
            b[pos:pos] = b[pos:pos + 64]
    return bytes(b)


_OPS = st.lists(st.tuples(st.sampled_from(["truncate", "flip", "insert", "replace", "repeat"]),
                          st.floats(0, 1), st.sampled_from(_PAYLOADS)), min_size=1, max_size=3)


def _plain(path, data: bytes) -> bytes:
    """Mutations of a compressed file hit its decompressed text half the time."""
    name = str(path)
    if name.endswith(".gz"):
        return gzip.decompress(data)
    if name.endswith(".zst"):
        import zstandard

        return zstandard.ZstdDecompressor().decompressobj().decompress(data)
    return data


def _recompress(path, data: bytes) -> bytes:
    name = str(path)
    if name.endswith(".gz"):
        return gzip.compress(data)
    if name.endswith(".zst"):
        import zstandard

        return zstandard.ZstdCompressor().compress(data)
    return data


@settings(max_examples=800, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(which=st.integers(0, len(_SEEDS) - 1), ops=_OPS, seed=st.integers(0, 2**16),
       inner=st.booleans())
def test_corrupted_archives_fail_in_one_line(tmp_path_factory, seeds, worker, which, ops, seed,
                                             inner):
    main, files = seeds[which]
    rnd = random.Random(seed)
    work = tmp_path_factory.mktemp("case")
    shutil.copytree(main.parent, work, dirs_exist_ok=True)
    target = work / rnd.choice(files).name
    data = target.read_bytes()
    if inner and target.suffix in (".gz", ".zst"):
        data = _recompress(target, _mutate(_plain(target, data), ops, rnd))
    else:
        data = _mutate(data, ops, rnd)
    target.write_bytes(data)
    _check(worker, work / main.name)


def _bomb(path, size: int, byte: bytes) -> None:
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = byte * (1 << 20)
    path.write_bytes(b"".join(z.compress(chunk) for _ in range(size >> 20)) + z.flush())


# peak RSS from VmHWM: ru_maxrss would include the forking parent's RSS (kept across exec)
_HWM = "int(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')))"
_CHILD = rf"""
import sys
from passatk.cli import console, main
with console():
    rc = main(["score", sys.argv[1], "-q"])
print({_HWM}, file=sys.stderr)
sys.exit(rc)
"""


def test_hostile_inputs_stay_bounded(tmp_path):
    """Bombs and endless records, each in a fresh process as the CLI runs: one line each,
    exit status 1, peak RSS under 300 MB."""
    cases = []
    for name, byte in (("zeros_results.jsonl.gz", b"\0"), ("brace_eval_results.json.gz", b"["),
                       ("c.csv.gz", b"9"), ("samples_t_2024-01-01T00-00-00.jsonl.gz", b"{")):
        _bomb(tmp_path / name, 200 << 20, byte)
        cases.append(tmp_path / name)
    doc = tmp_path / "eval_results.json"
    doc.write_text('{"eval": {"T": [' + ", ".join(['{"base_status": "pass"}'] * 10) + "]}, "
                   '"x": "' + "y" * (70 << 20) + '"}')
    # a 70 MB member of a document under the 128 MiB whole-document threshold is read (the
    # typed view skips it), within the memory limit; a longer one is past the record cap
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(doc)], capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 0 and int(proc.stderr.split()[-1]) / 1024 <= RSS_LIMIT_MB
    doc.unlink()
    for path in cases:
        proc = subprocess.run([sys.executable, "-c", _CHILD, str(path)], capture_output=True,
                              text=True, timeout=120, check=False)
        *lines, rss_kb = proc.stderr.splitlines()
        assert proc.returncode == 2 and len(lines) == 1, proc.stderr
        # a document of brackets is refused at its first value, nested past msgspec's limit
        assert re.match(r"passatk: error: .*(record longer than|JSON nested too deeply)",
                        lines[0]), lines[0]
        assert int(rss_kb) / 1024 <= RSS_LIMIT_MB, (path.name, int(rss_kb) // 1024)


def test_worker_reads_the_valid_seeds_within_the_memory_limit(seeds, worker):
    for main, _ in seeds:
        r = _ask(worker, str(main))
        assert (r["rc"], r["err"], r["tb"]) == (0, "", None), (main, r)
    peak_mb = _ask(worker, "RSS") / 1024  # VmHWM in KiB, after all fuzz cases
    assert peak_mb <= RSS_LIMIT_MB, f"worker peak RSS {peak_mb:.0f} MB"
