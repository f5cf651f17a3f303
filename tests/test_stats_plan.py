"""Planning functions and the simulator."""

import math

import naive_stats as naive
import numpy as np
import pytest
from scipy import stats as ss

import passatk
from passatk.stats import _exact_task_var


def test_tasks_needed_formula_and_power_by_simulation():
    delta, sd = 0.05, 0.3
    r = passatk.tasks_needed(delta, sd, alpha=0.05, power=0.8)
    z = ss.norm.ppf(0.975) + ss.norm.ppf(0.8)
    assert r.value == math.ceil((z * sd / delta) ** 2)
    assert r.quantity == "tasks" and r.inputs["delta"] == delta
    # simulate paired differences with that sd: the two-sided t test rejects ~80% of the time
    rng = np.random.default_rng(0)
    d = rng.normal(delta, sd, size=(4000, r.value))
    t = d.mean(axis=1) / (d.std(axis=1, ddof=1) / math.sqrt(r.value))
    power = np.mean(np.abs(t) > ss.t.ppf(0.975, r.value - 1))
    assert 0.77 <= power <= 0.83
    assert passatk.tasks_needed(-delta, sd).value == r.value  # sign of delta is irrelevant


def test_mde_inverts_tasks_needed():
    sd = 0.25
    for n_tasks in (50, 164, 1000):
        mde = passatk.min_detectable_effect(n_tasks, sd, alpha=0.01, power=0.9).value
        z = ss.norm.ppf(0.995) + ss.norm.ppf(0.9)
        assert mde == pytest.approx(z * sd / math.sqrt(n_tasks), rel=1e-14)
        assert passatk.tasks_needed(mde, sd, alpha=0.01, power=0.9).value == n_tasks


@pytest.mark.parametrize(
    ("func", "args", "kwargs", "exc", "match"),
    [
        ("tasks_needed", (0.0, 0.2), {}, ValueError, "delta must be a finite number > 0"),
        ("tasks_needed", (0.1, -1.0), {}, ValueError, "sd must be"),
        ("tasks_needed", (0.1, 0.2), {"power": 1.0}, ValueError, "power must satisfy"),
        ("tasks_needed", ("0.1", 0.2), {}, TypeError, "delta must be a number"),
        ("min_detectable_effect", (0, 0.2), {}, ValueError, "n_tasks must satisfy"),
        ("min_detectable_effect", (10, 0.2), {"alpha": "x"}, TypeError, "alpha must be"),
        ("samples_needed", ([10], [2], 3, 0.0), {}, ValueError, "target_se"),
        ("samples_needed", ([10], [2], 3, 0.1), {"metric": "plugin"}, ValueError, "metric"),
    ],
)
def test_planning_validation(func, args, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        getattr(passatk, func)(*args, **kwargs)


@pytest.mark.parametrize(("k", "target"), [(1, 0.01), (5, 0.01), (10, 0.005)])
def test_samples_needed_is_the_smallest_sufficient_n(k, target):
    rng = np.random.default_rng(k)
    n0 = np.full(80, 20)
    c0 = rng.binomial(20, rng.beta(1, 4, 80))
    r = passatk.samples_needed(n0, c0, k, target)
    p = c0 / n0
    m = r.value

    def se(nn):
        return math.sqrt(float(np.sum(_exact_task_var(p, nn, k)))) / 80

    assert se(m) <= target < se(m - 1) or m == k
    assert r.inputs["se_at_value"] == pytest.approx(se(m))
    # the large-n approximation of statistics.md is close once n >> k
    assert r.inputs["approximation"] == pytest.approx(m, rel=0.35)


def test_samples_needed_se_by_monte_carlo():
    # at the returned n, the sd of the benchmark score over re-sampling is the target
    p = np.array([0.05, 0.1, 0.3, 0.6] * 25)
    n_pilot = np.full(100, 100)
    c_pilot = np.round(p * 100).astype(np.int64)
    target = 0.01
    m = passatk.samples_needed(n_pilot, c_pilot, 5, target).value
    rng = np.random.default_rng(1)
    c = rng.binomial(m, p, size=(4000, 100))
    scores = passatk.pass_at_k(np.full(c.shape, m), c, np.full(c.shape, 5)).mean(axis=1)
    assert np.std(scores) == pytest.approx(target, rel=0.06)


def test_exact_variance_against_fractions_vectorized():
    from fractions import Fraction

    p = np.array([0.1, 0.25, 0.5, 0.9])
    n = np.array([3, 7, 12, 30])
    for k in (1, 2, 3):
        got = _exact_task_var(p, n, k)
        want = [float(naive.hoeffding_var(int(ni), k, Fraction(pi))) for pi, ni in zip(p, n,
                                                                                      strict=True)]
        np.testing.assert_allclose(got, want, rtol=1e-11)


def test_simulate_shapes_seeds_and_truths():
    s1 = passatk.simulate(500, 8, 1.0, 3.0, seed=42)
    s2 = passatk.simulate(500, 8, 1.0, 3.0, seed=np.random.default_rng(42))
    np.testing.assert_array_equal(s1.c, s2.c)
    assert s1.n.shape == s1.c.shape == s1.p.shape == (500,)
    assert np.all((s1.c >= 0) & (s1.c <= 8))
    many = passatk.simulate(100, [5, 10] * 50, 2.0, 2.0, seed=1, n_benchmarks=30)
    assert many.c.shape == (30, 100) and np.all(many.c[:, 0::2] <= 5)
    assert many.true_pass_at_k(1).shape == (30,)
    # population pass@k under Beta(a, b) equals the exact beta moment
    for k in (1, 2, 7):
        want = 1 - naive.beta_moment(1, 3, k)
        assert s1.population_pass_at_k(k) == pytest.approx(float(want), rel=1e-14)
    # and the simulated counts agree with it (law of large numbers)
    big = passatk.simulate(200_000, 4, 1.0, 3.0, seed=3)
    est = passatk.pass_at_k(big.n, big.c, np.full(big.n.shape, 2)).mean()
    assert est == pytest.approx(big.population_pass_at_k(2), abs=0.005)
    assert est == pytest.approx(big.true_pass_at_k(2), abs=0.005)
    d = s1.to_dict()
    assert d["a"] == 1.0 and len(d["c"]) == 500


@pytest.mark.parametrize(
    ("args", "kwargs", "exc", "match"),
    [
        ((0, 5, 1.0, 1.0), {}, ValueError, "n_tasks must satisfy"),
        ((5, [1, 2], 1.0, 1.0), {}, ValueError, "one per task"),
        ((5, 0, 1.0, 1.0), {}, ValueError, "n must satisfy 1 <= n"),
        ((5, 5, -1.0, 1.0), {}, ValueError, "a must be"),
        ((5, 5.5, 1.0, 1.0), {}, TypeError, "n must be integers"),
        ((5, 5, 1.0, 1.0), {"seed": "x"}, TypeError, "seed must be"),
    ],
)
def test_simulate_validation(args, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        passatk.simulate(*args, **kwargs)


def test_truths_with_rates_at_the_edges():
    from passatk._results import Simulation

    sim = Simulation(n=np.array([5, 5]), c=np.array([5, 0]), p=np.array([1.0, 0.0]), a=1.0,
                     b=1.0)
    assert sim.true_pass_at_k(3) == 0.5
    assert sim.population_pass_at_k(1) == pytest.approx(0.5, rel=1e-15)
