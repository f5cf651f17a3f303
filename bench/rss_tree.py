"""Peak RSS of a command and of its whole process tree (forked workers included).

    python bench/rss_tree.py python -m passatk score tasks10m.csv -q

Samples every 20 ms with psutil; prints the peaks, the wall time and a digest of stdout on
stderr, then stdout itself.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import threading
import time

import psutil


def main(argv: list[str]) -> int:
    start = time.time()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE)
    root = psutil.Process(proc.pid)
    out: list[bytes] = []
    reader = threading.Thread(target=lambda: out.append(proc.stdout.read()))
    reader.start()
    peak_main = peak_tree = 0
    while proc.poll() is None:
        rss = []
        try:
            for q in [root, *root.children(recursive=True)]:
                rss.append(q.memory_info().rss)
        except psutil.Error:
            pass  # a child ended between the listing and the sample
        if rss:
            peak_main, peak_tree = max(peak_main, rss[0]), max(peak_tree, sum(rss))
        time.sleep(0.02)
    reader.join()
    data = out[0] if out else b""
    print(f"rc={proc.returncode} wall={time.time() - start:.1f}s "
          f"peak_main={peak_main / 1e6:.0f}MB peak_tree={peak_tree / 1e6:.0f}MB "
          f"stdout_sha256={hashlib.sha256(data).hexdigest()[:16]}", file=sys.stderr)
    sys.stdout.write(data.decode(errors="replace"))
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
