"""Where a cold call spends its compile time, per kernel, from numba's event API.

Run with an empty cache, the shipped kernel cache off and a package copy without
``__pycache__`` (else kernels load)::

    PASSATK_SHIPPED_CACHE=0 NUMBA_CACHE_DIR=$(mktemp -d) python bench/profile_compile.py "CODE"

for example ``"import numpy as np, passatk; passatk.pass_at_k(np.full(10**6, 200), 3, 10)"``.
It prints the CPU time of the whole code, the time inside numba's LLVM lock (LLVM
optimisation and code generation) against the time inside its compiler lock (all of a
compile: typing, numba's lowering and LLVM), and the 30 longest ``numba:compile`` events,
nested under the compile that triggered them (times include the nested ones; wall times).
"""

from __future__ import annotations

import collections
import sys
import time

from numba.core import event


class _Compiles(event.Listener):
    def __init__(self) -> None:
        self.stack: list[tuple[str, str, float]] = []
        self.done: list[tuple[float, int, str, str]] = []

    def on_start(self, ev: event.Event) -> None:
        data = ev.data
        self.stack.append((data["dispatcher"].py_func.__qualname__, str(data["args"]),
                           time.perf_counter()))

    def on_end(self, ev: event.Event) -> None:
        name, args, t = self.stack.pop()
        self.done.append((time.perf_counter() - t, len(self.stack), name, args))


class _Locks(event.Listener):
    """Outermost time inside each (reentrant) lock."""

    def __init__(self) -> None:
        self.total: collections.Counter = collections.Counter()
        self.depth: collections.Counter = collections.Counter()
        self.since: dict[str, float] = {}

    def on_start(self, ev: event.Event) -> None:
        if self.depth[ev.kind] == 0:
            self.since[ev.kind] = time.perf_counter()
        self.depth[ev.kind] += 1

    def on_end(self, ev: event.Event) -> None:
        self.depth[ev.kind] -= 1
        if self.depth[ev.kind] == 0:
            self.total[ev.kind] += time.perf_counter() - self.since.pop(ev.kind)


def main(code: str) -> None:
    compiles, locks = _Compiles(), _Locks()
    event.register("numba:compile", compiles)
    event.register("numba:llvm_lock", locks)
    event.register("numba:compiler_lock", locks)
    cpu = time.process_time()
    exec(compile(code, "<profiled>", "exec"), {})
    print(f"cpu {time.process_time() - cpu:.2f} s; inside numba's LLVM lock "
          f"{locks.total['numba:llvm_lock']:.2f} s of {locks.total['numba:compiler_lock']:.2f} s "
          "inside its compiler lock (wall)")
    for dt, depth, name, args in sorted(compiles.done, reverse=True)[:30]:
        print(f"{dt:8.2f} s {'  ' * depth}{name} {args[:90]}")


if __name__ == "__main__":
    main(sys.argv[1])
