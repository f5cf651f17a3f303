"""Coverage and size simulations behind the tables in docs/statistics.md.

Run from the repository root (about 10 minutes on 2 cores for everything):

    PYTHONPATH=src python bench/coverage_grid.py --what score --reps 2000
    PYTHONPATH=src python bench/coverage_grid.py --what posterior --reps 400
    PYTHONPATH=src python bench/coverage_grid.py --what paired --reps 1000
    PYTHONPATH=src python bench/coverage_grid.py --what planning --reps 2000

The grid is the one of the statistics audit: difficulty p_i ~ Beta(0.5, 0.5), Beta(2, 5), or
a spike (30% of tasks p = 0, 40% p = 1, 30% p ~ U(0, 1)); N = 20, 164, 1000 tasks; n = 1, 10,
100 samples per task; pass@1 and pass@10 (k <= n). ``tests/test_stats_coverage.py`` runs the
N = 20 part (the hard part) as slow tests with the same functions.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np

import passatk

KINDS = ("beta(0.5,0.5)", "beta(2,5)", "spike")
CELLS = [(1, 1), (10, 1), (10, 10), (100, 1), (100, 10)]  # (n, k)
SIZES = (20, 164, 1000)


def draw_p(kind, shape, rng):
    if kind == "beta(0.5,0.5)":
        return rng.beta(0.5, 0.5, shape)
    if kind == "beta(2,5)":
        return rng.beta(2.0, 5.0, shape)
    u = rng.random(shape)
    return np.where(u < 0.3, 0.0, np.where(u < 0.7, 1.0, rng.random(shape)))


def population_pass_at_k(kind, k):
    """E[1 - (1 - p)^k] under the difficulty distribution."""
    if kind == "spike":  # 0.4 * 1 + 0.3 * E[1 - (1-U)^k] = 0.4 + 0.3 k/(k+1)
        return 0.4 + 0.3 * k / (k + 1)
    a, b = (0.5, 0.5) if kind == "beta(0.5,0.5)" else (2.0, 5.0)
    return 1.0 - math.prod((b + j) / (a + b + j) for j in range(k))


def benchmarks(kind, tasks, n, reps, seed):
    """reps benchmarks of ``tasks`` tasks: flat (n, c, bench index) and p of shape (reps, tasks)."""
    rng = np.random.default_rng(seed)
    p = draw_p(kind, (reps, tasks), rng)
    c = rng.binomial(n, p)
    return np.full(c.size, n), c.ravel(), np.repeat(np.arange(reps), tasks), p


def coverage(kind, tasks, n, k, reps, seed, interval="auto", metric="pass@k", **kw):
    """Share of replicates whose interval holds the truth, and the share of zero-width ones.

    The truth is the population pass@k, except for ``interval="fixed"`` and the
    ``"posterior"`` metric, which are scored against each benchmark's own mean of
    1 - (1 - p_i)^k.
    """
    nn, c, bench, p = benchmarks(kind, tasks, n, reps, seed)
    r = passatk.score(nn, c, k=k, groups={"b": bench}, interval=interval, metric=metric, **kw)
    lo = np.array([np.nan if x.ci_low is None else x.ci_low for x in r])
    hi = np.array([np.nan if x.ci_high is None else x.ci_high for x in r])
    if interval == "fixed" or metric == "posterior":
        with np.errstate(divide="ignore"):
            truth = np.mean(-np.expm1(k * np.log1p(-p)), axis=1)
    else:
        truth = population_pass_at_k(kind, k)
    hit = (lo <= truth) & (truth <= hi)
    return float(np.mean(hit)), float(np.mean(hi - lo == 0))


def score_table(reps, sizes=SIZES, intervals=("auto", "t")):
    print("| difficulty | N | n | k | truth | " + " | ".join(intervals) + " |")
    print("|---|--:|--:|--:|--:|" + "--:|" * len(intervals))
    seed = 1
    for kind in KINDS:
        for tasks in sizes:
            for n, k in CELLS:
                cov = []
                for iv in intervals:
                    seed += 1
                    cov.append(coverage(kind, tasks, n, k, reps, seed, interval=iv)[0])
                cells = " | ".join(_pct(x) for x in cov)
                print(f"| {kind} | {tasks} | {n} | {k} | {population_pass_at_k(kind, k):.3f} | "
                      f"{cells} |", flush=True)


def posterior_table(reps, sizes=SIZES):
    print("| difficulty | N | n | k | posterior (these tasks) | posterior-population |")
    print("|---|--:|--:|--:|--:|--:|")
    seed = 100
    for kind in KINDS:
        for tasks in sizes:
            for n, k in CELLS:
                seed += 1
                own = coverage(kind, tasks, n, k, reps, seed, metric="posterior")[0]
                pop = coverage(kind, tasks, n, k, reps, seed, metric="posterior-population")[0]
                print(f"| {kind} | {tasks} | {n} | {k} | {_pct(own)} | {_pct(pop)} |",
                      flush=True)


def paired_null(kind, tasks, n, ks, reps, seed, skewed=False, n_resamples=999):
    """Rejection rates at alpha = 0.05 under a true null (A and B equally good).

    Symmetric null: A and B draw independently with the same p_i. Skewed null (k = 1):
    p_B ~ U(0.5, 0.9) and p_A = p_B + 0.05 with probability 0.9, else p_B - 0.45, so the
    mean difference is 0 and its distribution is skewed. Returns a dict of rates.
    """
    rng = np.random.default_rng(seed)
    out = {"t": 0, "boot": 0, "perm": 0, "wilcoxon": 0, "holm": 0, "band": 0}
    for _ in range(reps):
        if skewed:
            pb = rng.uniform(0.5, 0.9, tasks)
            pa = pb + np.where(rng.random(tasks) < 0.9, 0.05, -0.45)
        else:
            pa = pb = draw_p(kind, tasks, rng)
        ca, cb = rng.binomial(n, pa), rng.binomial(n, pb)
        rows = passatk.compare(np.full(tasks, n), ca, np.full(tasks, n), cb, k=ks, seed=rng,
                               n_resamples=n_resamples)
        r0 = rows[0]
        out["t"] += r0.p_value < 0.05
        out["boot"] += not (r0.boot_low <= 0 <= r0.boot_high)
        out["perm"] += r0.perm_p_value < 0.05
        out["wilcoxon"] += r0.wilcoxon_p_value < 0.05
        out["holm"] += any(x.p_value_holm < 0.05 for x in rows)
        out["band"] += any(not (x.band_low <= 0 <= x.band_high) for x in rows)
    return {key: v / reps for key, v in out.items()}


def band_coverage(tasks, n, ks, reps, seed, n_resamples=999):
    """Simultaneous coverage of the max-T band when B is A given two tries (audit 3e)."""
    rng = np.random.default_rng(seed)
    moments = [math.prod((5 + j) / (7 + j) for j in range(m)) for m in range(2 * max(ks) + 1)]
    truth = np.array([moments[2 * k] - moments[k] for k in ks])
    hits = 0
    for _ in range(reps):
        p = rng.beta(2, 5, tasks)
        rows = passatk.compare(np.full(tasks, n), rng.binomial(n, p), np.full(tasks, n),
                               rng.binomial(n, 1 - (1 - p) ** 2), k=ks, seed=rng,
                               n_resamples=n_resamples)
        hits += all(x.band_low <= t <= x.band_high for x, t in zip(rows, truth, strict=True))
    return hits / reps


def paired_table(reps):
    print("| null | N | n | paired t | studentized bootstrap | sign-flip | Wilcoxon | "
          "FWER Holm (k = 1, 10) | FWER band (k = 1, 10) |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|")
    seed = 500
    for kind in KINDS:
        for tasks in (20, 164):
            for n in (1, 10, 100):
                seed += 1
                ks = [1] if n == 1 else [1, 10]
                r = paired_null(kind, tasks, n, ks, reps, seed)
                multi = (f"{_pct(r['holm'])} | {_pct(r['band'])}" if n > 1 else "- | -")
                print(f"| symmetric, {kind} | {tasks} | {n} | {_pct(r['t'])} | "
                      f"{_pct(r['boot'])} | {_pct(r['perm'])} | {_pct(r['wilcoxon'])} | "
                      f"{multi} |", flush=True)
    for tasks in (20, 164):
        for n in (10, 100):
            seed += 1
            r = paired_null("", tasks, n, [1], reps, seed, skewed=True)
            print(f"| skewed (mean 0) | {tasks} | {n} | {_pct(r['t'])} | {_pct(r['boot'])} | "
                  f"{_pct(r['perm'])} | {_pct(r['wilcoxon'])} | - | - |", flush=True)
    for tasks in (20, 164):
        seed += 1
        cov = band_coverage(tasks, 10, [1, 2, 5, 10], reps, seed)
        print(f"\nmax-T band, B = A with two tries, N = {tasks}, n = 10, k = 1, 2, 5, 10: "
              f"simultaneous coverage {_pct(cov)}", flush=True)


def achieved_power(delta, sd, reps, seed, alpha=0.05, power=0.8):
    """Planned N from tasks_needed, then the rejection rate of compare's t test at that N.

    Per-task differences are simulated directly as D_i ~ Normal(delta, sd) through
    compare on continuous scores would need another model, so the test here is the t test
    of compare applied to the simulated differences (``passatk.stats`` internals).
    """
    from passatk.stats._dist import _t_tail

    n_tasks = passatk.tasks_needed(delta, sd, alpha=alpha, power=power).value
    rng = np.random.default_rng(seed)
    d = rng.normal(delta, sd, (reps, n_tasks))
    t = d.mean(axis=1) / (d.std(axis=1, ddof=1) / math.sqrt(n_tasks))
    p = np.array([2 * _t_tail(x, n_tasks - 1) for x in t])
    return n_tasks, float(np.mean(p < alpha))


def planning_table(reps):
    print("| delta | sd | target power | N (noncentral t) | achieved power |")
    print("|--:|--:|--:|--:|--:|")
    seed = 900
    for delta, sd, pw in ((0.3, 0.3, 0.8), (0.2, 0.3, 0.8), (0.1, 0.2, 0.8), (0.3, 0.3, 0.9),
                          (0.15, 0.3, 0.9), (0.05, 0.2, 0.8)):
        seed += 1
        n_tasks, got = achieved_power(delta, sd, reps, seed, power=pw)
        print(f"| {delta} | {sd} | {pw} | {n_tasks} | {got:.3f} |", flush=True)


def _pct(x):
    return f"{100 * x:.1f}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--what", choices=("score", "posterior", "paired", "planning"),
                    required=True)
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--sizes", default="20,164,1000")
    args = ap.parse_args(argv)
    sizes = tuple(int(x) for x in args.sizes.split(","))
    t0 = time.perf_counter()
    if args.what == "score":
        score_table(args.reps, sizes)
    elif args.what == "posterior":
        posterior_table(args.reps, sizes)
    elif args.what == "paired":
        paired_table(args.reps)
    else:
        planning_table(args.reps)
    print(f"\n({args.reps} replicates, {time.perf_counter() - t0:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
