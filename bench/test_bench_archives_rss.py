"""Peak memory of the archive readers on large and hostile input (issue 9), in subprocesses.

Run:
    python -m pytest bench/test_bench_archives_rss.py -s

* A streamed EvalPlus ``eval_results.json`` (250 MB by default; ``PASSATK_BENCH_DOC_MB=1000``
  for the 1 GB case): peak RSS at most 300 MB.
* A count table of 1M tasks (``PASSATK_BENCH_TASKS``): peak RSS above the after-import
  baseline, per task, at most 300 bytes.
* A count table of 10M distinct task ids (``PASSATK_BENCH_IDS``): peak RSS at most 600 MB.
* A 2 MB gzip bomb (a 2 GiB line): one error line, peak RSS at most 300 MB.

Peak RSS is ``VmHWM`` from ``/proc/self/status`` (Linux): ``ru_maxrss`` would include the RSS
of the forking parent, which Linux keeps across exec.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
import zlib

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="reads /proc/self/status")
RSS_LIMIT_MB = 300

_CHILD = """
import sys
def hwm():
    return int(next(l.split()[1] for l in open("/proc/self/status") if l.startswith("VmHWM")))
from passatk.archives import ArchiveError, read_counts
try:  # the readers' own imports (numpy; pyarrow, which loads pandas) are not memory per task
    import numpy, pyarrow.acero, pyarrow.compute, pyarrow.csv, pyarrow.parquet
except ImportError:
    import numpy
base = hwm()
try:
    counts = read_counts(sys.argv[1])
    result = str(counts.samples)
except ArchiveError as e:
    result = "error: " + str(e)
print(base, hwm(), result)
"""


def _peak(path) -> tuple[float, float, str, float]:
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(path)], capture_output=True,
                          text=True, check=True)
    base, peak, result = proc.stdout.split(maxsplit=2)
    return int(base) / 1024, int(peak) / 1024, result.strip(), time.perf_counter() - t


def _evalplus(path, target: int) -> int:
    """An EvalPlus v3 document of about ``target`` bytes (200 samples of ~1 KB per task)."""
    rnd = random.Random(0)
    sol = "def f(x):\n" + "".join(f"    y{i} = x * {i} + {i}\n" for i in range(40))
    samples_total = written = t = 0
    with open(path, "w") as f:
        f.write('{"date": "2024-11-30 00:00", "eval": {')
        while written < target:
            task = f"HumanEval/{t}"
            samples = [json.dumps({"task_id": task, "solution": sol,
                                   "base_status": rnd.choice(["pass", "fail"]),
                                   "plus_status": rnd.choice(["pass", "fail"])})
                       for _ in range(200)]
            s = ("" if t == 0 else ", ") + json.dumps(task) + ": [" + ", ".join(samples) + "]"
            f.write(s)
            written += len(s)
            samples_total += 200
            t += 1
        f.write('}, "pass_at_k": {"base": {"pass@1": 0.5}}}')
    return samples_total


def test_streamed_document_peak_rss(tmp_path, capsys):
    mb = float(os.environ.get("PASSATK_BENCH_DOC_MB", "250"))
    path = tmp_path / "eval_results.json"
    samples = _evalplus(path, int(mb * 1e6))
    base, peak, result, wall = _peak(path)
    with capsys.disabled():
        print(f"\nEvalPlus document {path.stat().st_size / 1e6:.0f} MB: {wall:.1f} s, peak RSS "
              f"{peak:.0f} MB (after imports {base:.0f} MB)")
    path.unlink()
    assert result == str(2 * samples)  # metric sets base and plus
    assert peak <= RSS_LIMIT_MB


def test_many_tasks_memory_per_task(tmp_path, capsys):
    tasks = int(os.environ.get("PASSATK_BENCH_TASKS", "1000000"))
    path = tmp_path / "counts.csv"
    rnd = random.Random(0)
    with open(path, "w") as f:
        f.write("task_id,n,c\n")
        f.writelines(f"prompt-{i:07d},8,{rnd.randint(0, 8)}\n" for i in range(tasks))
    base, peak, result, wall = _peak(path)
    per_task = (peak - base) * 2**20 / tasks
    with capsys.disabled():
        print(f"\ncount table of {tasks} tasks: {wall:.1f} s, peak RSS {peak:.0f} MB (after "
              f"imports {base:.0f} MB), {per_task:.0f} bytes per task")
    assert result == str(8 * tasks)
    assert per_task <= 300


def test_ten_million_distinct_ids_peak_rss(tmp_path, capsys):
    """Issue 25 item 9: 10M distinct task ids (``t0`` .. ``t9999999``, as the reliability
    audit wrote them; ``PASSATK_BENCH_IDS`` for another count) at most 600 MB peak RSS."""
    ids = int(os.environ.get("PASSATK_BENCH_IDS", "10000000"))
    path = tmp_path / "ids.csv"
    with open(path, "w") as f:
        f.write("task_id,n,c\n")
        for s in range(0, ids, 100_000):
            f.write("".join(f"t{i},10,{i % 11}\n" for i in range(s, min(s + 100_000, ids))))
    base, peak, result, wall = _peak(path)
    with capsys.disabled():
        print(f"\n{ids} distinct task ids: {wall:.1f} s, peak RSS {peak:.0f} MB (after imports "
              f"{base:.0f} MB)")
    assert result == str(10 * ids)
    assert peak <= 600


def test_gzip_bomb_peak_rss(tmp_path, capsys):
    path = tmp_path / "bomb_results.jsonl.gz"
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    parts = [z.compress(b'{"task_id": "T/0", "completion": "')]
    parts += [z.compress(b"x" * (1 << 24)) for _ in range(128)]  # 2 GiB of 'x'
    path.write_bytes(b"".join(parts) + z.flush())
    _, peak, result, wall = _peak(path)
    with capsys.disabled():
        print(f"\ngzip bomb {path.stat().st_size / 1e6:.1f} MB (2 GiB line): {wall:.1f} s, "
              f"peak RSS {peak:.0f} MB: {result[:60]}...")
    assert result.startswith("error: ") and "record longer than" in result
    assert peak <= RSS_LIMIT_MB
