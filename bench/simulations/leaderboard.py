"""Family-wise error and rank-interval coverage of passatk.leaderboard, at 5 and 20 models.

Each replicate draws N new tasks (difficulty b_i ~ N(0, 1.5^2)) and, for model m, the
per-task rate p_mi = logistic(theta_m + b_i + e_mi) with a model-by-task effect
e_mi ~ N(0, 0.5^2), then c_mi ~ Binomial(10, p_mi). A model's true score is the population
pass@1 E[logistic(theta_m + b + e)], so models with the same theta are truly tied. Layouts:
all models equal (the complete null), and spread-out thetas with tied blocks.

A replicate makes a family-wise error when some pair is declared significant although the
two are tied or ordered the other way. Rank intervals cover when every model's interval
[rank_low, rank_high] holds its true rank range [1 + #truly better, M - #truly worse].

Usage: python bench/simulations/leaderboard.py REPS [ADJUST,...] [LAYOUT_INDEX,...]
(prints a Markdown table; ADJUST defaults to holm,bh,max-t, the layouts to all four)
"""
import sys
import time

import numpy as np

import passatk

LAYOUTS = {
    (5, "all tied"): np.zeros(5),
    (5, "spread, one tie"): np.array([0.0, 0.0, 0.15, 0.3, 0.6]),
    (20, "all tied"): np.zeros(20),
    (20, "spread, tied blocks"): np.repeat([0.0, 0.1, 0.2, 0.35, 0.5, 0.7, 0.9], [4, 3, 3, 3, 3,
                                                                                  2, 2]),
}


def _truth(theta, rng):
    b = rng.normal(0, 1.5, 400_000)
    e = rng.normal(0, 0.5, 400_000)
    return {t: float(np.mean(1 / (1 + np.exp(-(t + b + e))))) for t in np.unique(theta)}


def main(reps, adjusts=("holm", "bh", "max-t"), layouts=None, tasks=200):
    rng = np.random.default_rng(20260106)
    print("| models | layout | adjust | family-wise error | rank intervals cover | "
          "mean rank-interval width |")
    print("|--:|---|---|--:|--:|--:|")
    for q, ((m, name), theta) in enumerate(LAYOUTS.items()):
        if layouts is not None and q not in layouts:
            continue
        t0 = time.perf_counter()
        mu = _truth(theta, rng)
        true = np.array([mu[t] for t in theta])
        lo_true = 1 + np.array([np.sum(true > x) for x in true])
        hi_true = m - np.array([np.sum(true < x) for x in true])
        names = [f"m{i:02d}" for i in range(m)]
        res = {adj: [0, 0, []] for adj in adjusts}
        ids = np.array([f"t{j}" for j in range(tasks)], dtype=object)
        for r in range(reps):
            b = rng.normal(0, 1.5, tasks)
            runs = {}
            for i in range(m):
                p = 1 / (1 + np.exp(-(theta[i] + b + rng.normal(0, 0.5, tasks))))
                runs[names[i]] = (ids, np.full(tasks, 10), rng.binomial(10, p))
            for adj, acc in res.items():
                lb = passatk.leaderboard(runs, k=1, adjust=adj, seed=r, n_resamples=2000)
                wrong = any(p.significant and (np.sign(p.diff) != np.sign(
                    true[names.index(p.model_a)] - true[names.index(p.model_b)]))
                    for p in lb.pairs)
                acc[0] += wrong
                ok = all(x.rank_low <= lo_true[names.index(x.model)]
                         and x.rank_high >= hi_true[names.index(x.model)] for x in lb.rows)
                acc[1] += ok
                acc[2].append(np.mean([x.rank_high - x.rank_low for x in lb.rows]))
        for adj, (err, cover, width) in res.items():
            print(f"| {m} | {name} | {adj} | {100 * err / reps:.1f}% | "
                  f"{100 * cover / reps:.1f}% | {np.mean(width):.2f} |", flush=True)
        print(f"<!-- {m} models, {name}: {reps} replicates of {tasks} tasks in "
              f"{time.perf_counter() - t0:.0f} s -->")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200,
         tuple(sys.argv[2].split(",")) if len(sys.argv) > 2 else ("holm", "bh", "max-t"),
         {int(q) for q in sys.argv[3].split(",")} if len(sys.argv) > 3 else None)
