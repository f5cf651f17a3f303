"""Coverage of the clustered intervals of a paired difference with 4, 8 and 20 clusters.

Tasks: p_B ~ U(0.2, 0.8); p_A = clip(p_B + u_g), with a cluster effect u_g ~ N(0, 0.05^2);
n = 10 samples per task; the true mean difference is 0 by symmetry. Cluster sizes are
unequal (one large cluster, a long tail), as the sources of real archives are.
Rows: the CR1 t interval on G - 1 df, the wild cluster bootstrap (WCR, Rademacher or Webb
weights) and the cluster pairs bootstrap (from 10 clusters on).

Usage: python bench/simulations/wild_clusters.py REPS   (prints a Markdown table)
"""
import sys
import time

import numpy as np

import passatk

_GEOM = 0.8 ** np.arange(20)
LAYOUTS = {4: (630, 360, 40, 30), 8: (400, 250, 150, 100, 70, 50, 30, 10),
           20: tuple(int(x) for x in np.round(1060 * _GEOM / _GEOM.sum()).clip(5))}


def main(reps):
    rng = np.random.default_rng(20260104)
    print("| clusters | sizes | CR1 t(G-1) | wild cluster bootstrap | cluster pairs bootstrap | "
          "median width CR1 / wild | reason set |")
    print("|---|---|--:|--:|--:|---|--:|")
    for g, sizes in LAYOUTS.items():
        t0 = time.perf_counter()
        cl = np.repeat(np.arange(g), sizes)
        size = cl.size
        n = np.full(size, 10)
        hit = {"cr1": 0, "wild": 0, "boot": 0}
        wid = {"cr1": [], "wild": []}
        reasons = 0
        for r in range(reps):
            pb = rng.uniform(0.2, 0.8, size)
            pa = np.clip(pb + rng.normal(0, 0.05, g)[cl], 0, 1)
            row = passatk.compare(n, rng.binomial(10, pa), n, rng.binomial(10, pb), k=1,
                                  clusters=cl, n_resamples=1999, seed=r)[0]
            hit["cr1"] += row.ci_low <= 0 <= row.ci_high
            hit["wild"] += row.wild_low <= 0 <= row.wild_high
            if row.boot_low is not None:
                hit["boot"] += row.boot_low <= 0 <= row.boot_high
            wid["cr1"].append(row.ci_high - row.ci_low)
            wid["wild"].append(row.wild_high - row.wild_low)
            reasons += row.reason is not None
        boot = f"{100 * hit['boot'] / reps:.1f}%" if g >= 10 else "not offered"
        print(f"| {g} | {sizes[:4]}{'...' if g > 4 else ''} ({size} tasks) | "
              f"{100 * hit['cr1'] / reps:.1f}% | {100 * hit['wild'] / reps:.1f}% | {boot} | "
              f"{np.median(wid['cr1']):.3f} / {np.median(wid['wild']):.3f} | "
              f"{reasons}/{reps} |", flush=True)
        print(f"<!-- {g} clusters: {reps} replicates in {time.perf_counter() - t0:.0f} s -->")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
