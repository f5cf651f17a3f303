"""Print the measured maximum ulp error of pass@k, pass^k and P0 per test set.

Run: python bench/accuracy.py  (docs/estimator.md quotes its output)
     python bench/accuracy.py --large  (only 70,000 random triples: 30k, 30k and 10k)

The sets are the ones tests/test_accuracy.py asserts on, plus a larger log-uniform random
sample; the exact values come from tests/oracle.py (Fraction, or 500-bit mpmath).
"""

import math
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from oracle import exact, ulps
from test_accuracy import ALL_SMALL, HARD, N200

import passatk
from passatk import fail_at_k

FUNCS = {"pass@k": (passatk.pass_at_k, "pass"), "pass^k": (passatk.pass_hat_k, "hat"),
         "P0": (fail_at_k, "fail")}


def random_set(count, nmin, nmax, seed):
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        n = int(math.exp(rng.uniform(math.log(nmin), math.log(nmax))))
        c = min(n, int(math.exp(rng.uniform(0, math.log(n + 1)))))
        k = max(1, min(n, int(math.exp(rng.uniform(0, math.log(n + 1))))))
        if rng.random() < 0.5:
            c = n - c
        out.append((n, c, k))
    return out


def main():
    if "--large" in sys.argv[1:]:
        sets = {
            "log-uniform, n <= 2^17": random_set(30000, 2, 2**17, 11),
            "log-uniform, 2^17 < n <= 1e12": random_set(30000, 2**17, 10**12, 12),
            "log-uniform, 1e12 < n < 2^53": random_set(10000, 10**12, 2**53 - 1, 13),
        }
        return report(sets)
    sets = {
        "every triple, n <= 30": ALL_SMALL,
        "n = 200, every c, 8 k": N200,
        "hard cases, n <= 1e12": [t for t in HARD if t[0] <= 10**12],
        "hard cases, n > 1e12": [t for t in HARD if t[0] > 10**12],
        "log-uniform, n <= 2^17": random_set(4000, 2, 2**17, 1),
        "log-uniform, 2^17 < n <= 1e12": random_set(4000, 2**17, 10**12, 2),
        "log-uniform, 1e12 < n < 2^53": random_set(2000, 10**12, 2**53 - 1, 3),
    }
    return report(sets)


def report(sets):
    print(f"{'test set':<32} {'triples':>8} {'pass@k':>8} {'pass^k':>8} {'P0':>8}")
    for name, triples in sets.items():
        t0 = time.perf_counter()
        n, c, k = (np.array(x, dtype=np.int64) for x in zip(*triples, strict=True))
        row = []
        for func, what in FUNCS.values():
            got = func(n, c, k)
            row.append(max(ulps(float(v), exact(*t, what)) for v, t in zip(got, triples,
                                                                             strict=True)))
        print(f"{name:<32} {len(triples):>8} " + " ".join(f"{e:8.3f}" for e in row)
              + f"   ({time.perf_counter() - t0:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
