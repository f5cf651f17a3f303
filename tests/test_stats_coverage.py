"""Coverage of the 95% intervals over 2,000 simulated benchmarks.

Settings where the theory says 95% should hold: N = 300 tasks per benchmark, n = 10 samples
per task, success rates p_i ~ Beta(2, 4) (moderate: mean 1/3, no mass piled at 0 or 1;
population pass@1 = 0.333 and pass@5 = 0.778, so the per-task estimates are not too skewed).
Each task's estimate is bounded and the tasks are independent, so by the central limit
theorem the t interval (super-population) is off by O(1/N) in coverage, about half a
percentage point here; BCa is second-order accurate. The fixed-benchmark normal interval
relies on the CLT over N independent (not identical) per-task errors with an unbiased
variance estimate. With 2,000 replicates the Monte Carlo SE of a coverage of 95% is 0.49
points, so [93%, 97%] is a four-SE band.

All 2,000 benchmarks go through one call of ``passatk.score``, as 2,000 groups.
"""

import math
import zlib

import numpy as np
import pytest

import passatk

REPS = 2000
TASKS = 300
N = 10
A, B = 2.0, 4.0


@pytest.fixture(scope="module")
def sim():
    return passatk.simulate(TASKS, N, A, B, seed=20251130, n_benchmarks=REPS)


def _run(sim, k, interval, **kw):
    bench = np.repeat(np.arange(REPS), TASKS)
    r = passatk.score(sim.n.reshape(-1), sim.c.reshape(-1), k=k, groups={"bench": bench},
                      interval=interval, **kw)
    lo = np.array([row.ci_low for row in r])
    hi = np.array([row.ci_high for row in r])
    return lo, hi


@pytest.mark.slow
@pytest.mark.parametrize("k", [1, 5])
def test_t_interval_covers_population_pass_at_k(sim, k):
    truth = sim.population_pass_at_k(k)
    lo, hi = _run(sim, k, "t")
    cover = np.mean((lo <= truth) & (truth <= hi))
    assert 0.93 <= cover <= 0.97, cover


@pytest.mark.slow
@pytest.mark.parametrize("k", [1, 5])
def test_bca_interval_covers_population_pass_at_k(sim, k):
    truth = sim.population_pass_at_k(k)
    lo, hi = _run(sim, k, "bca", n_resamples=1000, seed=np.random.default_rng(7))
    cover = np.mean((lo <= truth) & (truth <= hi))
    assert 0.93 <= cover <= 0.97, cover


@pytest.mark.slow
@pytest.mark.parametrize("k", [1, 5])
def test_fixed_interval_covers_fixed_benchmark_truth(sim, k):
    truth = sim.true_pass_at_k(k)  # mean over each benchmark's own tasks
    lo, hi = _run(sim, k, "fixed")
    cover = np.mean((lo <= truth) & (truth <= hi))
    assert 0.93 <= cover <= 0.97, cover


@pytest.mark.slow
def test_fixed_interval_undercovers_the_population_estimand(sim):
    # The fixed-benchmark SE ignores task sampling: used for the super-population
    # question it is far too narrow. This is why each row names its estimand.
    truth = sim.population_pass_at_k(1)
    lo, hi = _run(sim, 1, "fixed")
    cover = np.mean((lo <= truth) & (truth <= hi))
    assert cover < 0.85, cover


# ------------------------------------------------------------------ issue 11: the audit grid
# The full grid (N = 20, 164, 1000) is bench/coverage_grid.py; here its N = 20 part, the
# one that failed before, with the same functions. 10,000 replicates per cell (Monte Carlo
# SE 0.2 points): the spike cells sit near 96.5%, too close to 97% for 2,000.
def _grid():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "bench" / "coverage_grid.py"
    spec = importlib.util.spec_from_file_location("coverage_grid", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


GRID = _grid()
BINARY = {(1, 1), (10, 10)}  # per-task values are 0 or 1: the count is Binomial(N, truth)


@pytest.mark.slow
@pytest.mark.parametrize("kind", GRID.KINDS)
@pytest.mark.parametrize("n,k", [c for c in GRID.CELLS if c not in BINARY])
def test_default_interval_covers_at_20_tasks(kind, n, k):
    cover, zero = GRID.coverage(kind, 20, n, k, 10_000,
                                seed=zlib.crc32(f"{kind}{n}{k}".encode()))
    # spike, n = 100, k = 10 measures 96.7-97.2% over seeds (10,000 replicates each): it is
    # conservative by up to 0.2 points, listed as such in docs/statistics.md
    high = 0.975 if (kind, n, k) == ("spike", 100, 10) else 0.97
    assert 0.93 <= cover <= high, cover
    assert zero == 0.0


@pytest.mark.parametrize("kind", GRID.KINDS)
@pytest.mark.parametrize("tasks", [20, 50, 164, 1000])
@pytest.mark.parametrize("n,k", sorted(BINARY))
def test_default_interval_on_binary_values_exact_coverage(kind, tasks, n, k):
    # with binary per-task values the default is Wilson on x ~ Binomial(N, truth): its
    # coverage is a finite sum, computed exactly here instead of simulated
    from scipy import stats as ss

    truth = GRID.population_pass_at_k(kind, k)
    x = np.arange(tasks + 1)
    rows = passatk.score(np.ones(x.size * tasks, dtype=np.int64),
                         (np.arange(tasks)[None, :] < x[:, None]).ravel().astype(np.int64),
                         groups=np.repeat(x, tasks))
    hit = np.array([r.ci_low <= truth <= r.ci_high for r in rows])
    cover = float(np.sum(ss.binom.pmf(x, tasks, truth) * hit))
    assert 0.93 <= cover <= 0.97, cover


@pytest.mark.slow
@pytest.mark.parametrize("kind", GRID.KINDS)
def test_paired_tests_hold_their_size_at_164_tasks(kind):
    # 600 replicates: Monte Carlo SE 0.9 points; the band is 3 SE around 5% on the upper
    # side (a conservative test is allowed to reject less)
    r = GRID.paired_null(kind, 164, 10, [1, 10], 600, seed=11, n_resamples=499)
    for key in ("t", "boot"):
        assert 0.023 <= r[key] <= 0.077, (key, r)
    for key in ("holm", "band"):  # family-wise over k = 1, 10: at most the level
        assert r[key] <= 0.077, (key, r)


@pytest.mark.slow
@pytest.mark.parametrize("tasks,n", [(20, 10), (164, 10), (164, 100)])
def test_skewed_null_t_and_signflip_hold_wilcoxon_does_not(tasks, n):
    r = GRID.paired_null("", tasks, n, [1], 600, seed=tasks + n, skewed=True, n_resamples=499)
    for key in ("t", "boot", "perm"):
        assert r[key] <= 0.077, (key, r)
    if n == 100 and tasks == 164:
        assert r["wilcoxon"] > 0.5  # it tests symmetry, as the row says


@pytest.mark.slow
def test_max_t_band_covers_simultaneously_at_20_tasks():
    # the audit's setting (B is A given two tries, k = 1, 2, 5, 10): it covered 83.6%
    assert GRID.band_coverage(20, 10, [1, 2, 5, 10], 300, seed=5, n_resamples=499) >= 0.93


@pytest.mark.slow
@pytest.mark.parametrize("delta,sd,power", [(0.3, 0.3, 0.8), (0.15, 0.3, 0.9),
                                            (0.1, 0.2, 0.8)])
def test_planning_reaches_its_power(delta, sd, power):
    n_tasks, got = GRID.achieved_power(delta, sd, 4000, seed=3, power=power)
    assert got >= power - 3 * math.sqrt(power * (1 - power) / 4000), (n_tasks, got)


@pytest.mark.slow
@pytest.mark.parametrize("kind,metric", [("beta(2,5)", "posterior"),
                                         ("beta(0.5,0.5)", "posterior-population"),
                                         ("spike", "posterior")])
def test_hierarchical_posterior_covers_at_20_tasks(kind, metric):
    # the independent-prior rows covered 73.9% (Beta(2,5)) and 4.2% (spike, k = 10) here
    cover, _ = GRID.coverage(kind, 20, 10, 10 if kind == "spike" else 1, 250, seed=17,
                             metric=metric)
    assert 0.90 <= cover <= 0.99, cover  # 250 replicates: Monte Carlo SE 1.4 points
