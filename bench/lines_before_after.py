"""read_counts of one JSON Lines file by an older passatk source tree, by this one, and the msgspec
floor of bench/test_bench_lines.py: CPU seconds in fresh processes, best of REPS, interleaved.

    git archive 02d262a src | tar -x -C /tmp/old
    python bench/lines_before_after.py /tmp/old/src FILE [REPS]

Per method two figures: the first read of the process (imports and set-up inside the timed
part) and the best of three more reads in the same process (warm).
"""

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CODE = """
import json, sys, time
sys.path[:0] = [{bench!r}, {tests!r}]
if sys.argv[2] == "floor":
    from test_bench_lines import floor as read
else:
    from passatk.archives import read_counts as read
times = []
for _ in range(4):
    t = time.process_time()
    read(sys.argv[1])
    times.append(time.process_time() - t)
print(json.dumps([times[0], min(times[1:])]))
"""


def main() -> None:
    old, path = sys.argv[1], sys.argv[2]
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    code = CODE.format(bench=HERE, tests=os.path.join(HERE, "..", "tests"))
    trees = {"before": old, "after": os.path.join(HERE, "..", "src"),
             "floor": os.path.join(HERE, "..", "src")}
    best: dict = {}
    for _ in range(reps):
        for name, src in trees.items():
            out = subprocess.run([sys.executable, "-c", code, path, name], check=True,
                                 env={**os.environ, "PYTHONPATH": src}, capture_output=True,
                                 text=True).stdout
            first, warm = json.loads(out)
            old_first, old_warm = best.get(name, (first, warm))
            best[name] = (min(first, old_first), min(warm, old_warm))
    floor_first, floor_warm = best["floor"]
    for name, (first, warm) in best.items():
        print(f"{name:7s} first read {first:.3f} s ({first / floor_first:.2f}x the floor), "
              f"warm {warm:.3f} s ({warm / floor_warm:.2f}x)")


if __name__ == "__main__":
    main()
