"""The task-set posterior row (metric="posterior") at k = 1, 10, 128 on RLVR-shaped data:
coverage, and the mean and sd of z = (posterior mean - truth) / posterior sd.

The data are those of bench/simulations/posterior.py (its ``_draw``: a point mass at 0, one
at 1 and a Beta between, parameters drawn afresh per replicate, n = 128); the truth is the
drawn tasks' mean of 1 - (1 - p_i)^k. A calibrated row has mean z near 0 and sd z near 1.

Usage: python bench/simulations/posterior_taskset.py N REPS SEED
"""
import sys
import time

import numpy as np
from posterior import _draw

import passatk

KS = (1, 10, 128)


def main(size, reps, seed):
    rng = np.random.default_rng(seed)
    z = {k: [] for k in KS}
    t0 = time.time()
    for _ in range(reps):
        p, _par = _draw(rng, size, True)
        n = np.full(size, 128)
        c = rng.binomial(128, p)
        for k in KS:
            row = passatk.score(n, c, k=k, metric="posterior")[0]
            truth = float(np.mean(1 - (1 - p) ** k))
            z[k].append(((row.value - truth) / row.posterior_sd,
                         row.ci_low <= truth <= row.ci_high, row.reason is not None))
    for k, v in z.items():
        v = np.array(v, dtype=float)
        print(f"N = {size}, k = {k}: mean z {v[:, 0].mean():.3f}, sd z {v[:, 0].std():.3f}, "
              f"cover {100 * v[:, 1].mean():.1f}%, rows with a reason {100 * v[:, 2].mean():.0f}%")
    print(f"{reps} replicates in {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
