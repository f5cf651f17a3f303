"""Coverage of the Bayesian rows, and how often they carry a reason, on RLVR-shaped data.

Per-task rates come from a three-part mixture: a point mass at p = 0, one at p = 1 and a
Beta in between (the shape of RLVR archives: many prompts never or always solved). The
weights and the Beta are drawn afresh for each replicate from wide ranges (w0 in [0.05,
0.2], w1 in [0.15, 0.4], Beta(a, b) with a, b in [0.5, 2]), so the table does not describe
one parameter setting. Each replicate draws N new tasks and c ~ Binomial(128, p).
Truths: posterior-population -> the mixture's exact E[1 - (1 - p)^k]; posterior -> the
mean over the drawn tasks of 1 - (1 - p_i)^k; bayes@n -> mean p_i of the drawn tasks.
A row "covers" when its interval holds the truth. The table gives the share of rows with
a reason, the coverage of the rows without one, and of all rows.
A control block draws from a plain Beta population (no point masses), where the model fits.

Usage: python bench/simulations/posterior.py REPS   (prints a Markdown table)
"""
import math
import sys
import time

import numpy as np

import passatk

N_SAMPLES = 128


def _pop(w0, w1, a, b, k):
    lb = math.lgamma(a) + math.lgamma(b + k) - math.lgamma(a + b + k)
    lb0 = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    return w1 + (1 - w0 - w1) * (1 - math.exp(lb - lb0))


def _draw(rng, size, mixture):
    if mixture:
        w0, w1 = rng.uniform(0.05, 0.2), rng.uniform(0.15, 0.4)
    else:
        w0 = w1 = 0.0
    a, b = rng.uniform(0.5, 2.0, 2)
    u = rng.random(size)
    p = np.where(u < w0, 0.0, np.where(u < w0 + w1, 1.0, rng.beta(a, b, size)))
    return p, (w0, w1, a, b)


def main(reps):
    rng = np.random.default_rng(20260105)
    print("| data | N | metric | k | rows with a reason | coverage without a reason | "
          "coverage of all rows |")
    print("|---|--:|---|--:|--:|--:|--:|")
    for mixture in (True, False):
        for size in (164, 1060):
            t0 = time.perf_counter()
            stats = {}
            for _ in range(reps):
                p, par = _draw(rng, size, mixture)
                n = np.full(size, N_SAMPLES)
                c = rng.binomial(N_SAMPLES, p)
                for metric, ks in (("posterior-population", (1, 10, N_SAMPLES)),
                                   ("posterior", (1, 10, N_SAMPLES)), ("bayes@n", (1,))):
                    for k in ks:
                        row = passatk.score(n, c, k=k, metric=metric)[0]
                        if metric == "posterior-population":
                            truth = _pop(*par, k)
                        elif metric == "posterior":
                            truth = float(np.mean(1 - (1 - p) ** k))
                        else:
                            truth = float(np.mean(p))
                        hit = row.ci_low <= truth <= row.ci_high
                        stats.setdefault((metric, k), []).append((row.reason is not None, hit))
            label = "RLVR-shaped mixture" if mixture else "Beta population (control)"
            for (metric, k), v in stats.items():
                v = np.array(v)
                free = v[~v[:, 0], 1]
                cov = f"{100 * free.mean():.1f}% ({free.size})" if free.size else "-"
                print(f"| {label} | {size} | {metric} | {k} | {100 * v[:, 0].mean():.1f}% | "
                      f"{cov} | {100 * v[:, 1].mean():.1f}% |", flush=True)
            print(f"<!-- {label}, N = {size}: {reps} replicates in "
                  f"{time.perf_counter() - t0:.0f} s -->")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100)
