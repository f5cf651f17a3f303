"""Planning functions and the simulator."""

import math

import naive_stats as naive
import numpy as np
import pytest
from scipy import stats as ss
from statsmodels.stats.power import TTestPower

import passatk
from passatk.stats import _plan as PL
from passatk.stats import paired_sd
from passatk.stats._task import _exact_task_var


@pytest.mark.parametrize("effect", [0.05, 0.1, 0.15, 0.3, 0.5, 1.0, 2.0])
@pytest.mark.parametrize("alpha,power", [(0.05, 0.8), (0.05, 0.9), (0.01, 0.8), (0.1, 0.5)])
def test_tasks_needed_is_the_noncentral_t_solution_of_statsmodels(effect, alpha, power):
    # issue 11 (D6): the t test of compare, not z. statsmodels solves for a real N; the
    # answer is the smallest integer N whose power reaches the target
    sd = 0.2
    r = passatk.tasks_needed(effect * sd, sd, alpha=alpha, power=power)
    tp = TTestPower()
    n = r.value
    assert tp.power(effect_size=effect, nobs=n, alpha=alpha) >= power - 1e-9
    if n > 2:
        assert tp.power(effect_size=effect, nobs=n - 1, alpha=alpha) < power + 1e-9
    real = tp.solve_power(effect_size=effect, alpha=alpha, power=power)
    assert n == max(math.ceil(real - 1e-6), 2)
    z = ss.norm.ppf(1 - alpha / 2) + ss.norm.ppf(power)
    assert r.inputs["z_approximation"] == pytest.approx((z / effect) ** 2, rel=1e-12)


def test_tasks_needed_power_by_simulation():
    delta, sd = 0.3, 0.3  # the z formula says 8 tasks (power 0.68); the t answer is 10
    r = passatk.tasks_needed(delta, sd)
    assert r.value == 10
    rng = np.random.default_rng(0)
    d = rng.normal(delta, sd, size=(20000, r.value))
    t = d.mean(axis=1) / (d.std(axis=1, ddof=1) / math.sqrt(r.value))
    power = np.mean(np.abs(t) > ss.t.ppf(0.975, r.value - 1))
    assert 0.8 - 0.009 <= power  # 3 Monte Carlo SE below the target at most
    assert passatk.tasks_needed(-delta, sd).value == r.value  # sign of delta is irrelevant


@pytest.mark.parametrize("n_tasks", [2, 5, 10, 20, 164, 1000])
@pytest.mark.parametrize("alpha,power", [(0.05, 0.8), (0.01, 0.9)])
def test_mde_matches_statsmodels(n_tasks, alpha, power):
    sd = 0.25
    mde = passatk.min_detectable_effect(n_tasks, sd, alpha=alpha, power=power).value
    # statsmodels' solve_power stops at a relative tolerance near 1e-5 (and fails at N = 2),
    # so the check is the power at the answer
    assert _nct_power(mde / sd, n_tasks, alpha) == pytest.approx(power, abs=1e-9)
    if n_tasks > 2:
        want = TTestPower().solve_power(nobs=n_tasks, alpha=alpha, power=power) * sd
        assert mde == pytest.approx(want, rel=1e-4)


def _nct_power(effect, n_tasks, alpha):
    """Two-sided t-test power by scipy's nct; where it gives nan, by scipy's quad over the
    chi distribution of S = sqrt(V / df) (T = (Z + ncp) / S)."""
    from scipy import integrate

    df, ncp = n_tasks - 1, effect * math.sqrt(n_tasks)
    crit = ss.t.ppf(1 - alpha / 2, df)
    out = ss.nct.sf(crit, df, ncp) + ss.nct.cdf(-crit, df, ncp)
    if not math.isnan(out):
        return out
    scale = 1 / math.sqrt(df)
    def f(x):
        return (ss.norm.cdf(ncp - crit * x) + ss.norm.cdf(-ncp - crit * x)) * ss.chi.pdf(
            x, df, scale=scale)
    return integrate.quad(f, 0, 60, points=[ncp / crit], limit=500, epsabs=1e-13)[0]


@pytest.mark.parametrize("effect", [0.01, 0.2, 1.0, 4.0, 18.5])
@pytest.mark.parametrize("n_tasks", [2, 3, 8, 30, 500, 100000])
@pytest.mark.parametrize("alpha", [0.05, 0.01])
def test_power_matches_statsmodels(effect, n_tasks, alpha):
    got = PL._t_power(effect, n_tasks, alpha)
    assert got == pytest.approx(_nct_power(effect, n_tasks, alpha), abs=1e-9)
    sm_power = TTestPower().power(effect_size=effect, nobs=n_tasks, alpha=alpha)
    assert math.isnan(sm_power) or got == pytest.approx(sm_power, abs=1e-9)


def test_samples_needed_with_all_or_nothing_pilot():
    # issue 11 (D7): c = 0 or c = n must not mean zero variance
    r = passatk.samples_needed([10] * 100, [0] * 50 + [10] * 50, 1, 0.001)
    p = 0.5 / 11  # Jeffreys posterior mean at c = 0 (and 1 - p at c = n)
    want = math.ceil(2 * 50 * p * (1 - p) / (100**2 * 0.001**2))  # Var phat = p q / n
    assert r.value == want and r.inputs["boundary_tasks"] == 100
    inner = passatk.samples_needed([10] * 100, [0] * 49 + [1] + [10] * 50, 1, 0.001)
    assert inner.inputs["boundary_tasks"] == 99


def test_paired_sd_is_the_sd_of_the_differences():
    rng = np.random.default_rng(5)
    n = np.full(30, 10)
    ca, cb = rng.binomial(10, 0.6, 30), rng.binomial(10, 0.5, 30)
    ids = [f"t{i}" for i in range(30)]
    perm = rng.permutation(30)
    r = paired_sd(n, ca, n[perm], cb[perm], k=2, task_ids_a=ids,
                  task_ids_b=[ids[i] for i in perm])
    d = naive_pass(ca, 10, 2) - naive_pass(cb, 10, 2)
    assert r.value == pytest.approx(np.std(d, ddof=1), rel=1e-12)
    row = passatk.compare(n, ca, n, cb, k=2, seed=0, n_resamples=100)[0]
    assert r.value == pytest.approx(row.se * math.sqrt(30), rel=1e-12)
    with pytest.raises(ValueError, match="k=11 exceeds n"):
        paired_sd(n, ca, n, cb, k=11)


def naive_pass(c, n, k):
    return np.array([float(1 - naive.p0(n, int(x), k)) for x in c])


@pytest.mark.parametrize(
    ("func", "args", "kwargs", "exc", "match"),
    [
        ("tasks_needed", (0.0, 0.2), {}, ValueError, "delta must be a finite number > 0"),
        ("tasks_needed", (0.1, -1.0), {}, ValueError, "sd must be"),
        ("tasks_needed", (0.1, 0.2), {"power": 1.0}, ValueError, "power must satisfy"),
        ("tasks_needed", ("0.1", 0.2), {}, TypeError, "delta must be a number"),
        ("min_detectable_effect", (0, 0.2), {}, ValueError, "n_tasks must satisfy"),
        ("min_detectable_effect", (1, 0.2), {}, ValueError, "n_tasks must satisfy n_tasks >= 2"),
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
    edge = (c0 == 0) | (c0 == n0)
    p = np.where(edge, (c0 + 0.5) / (n0 + 1), c0 / n0)  # Jeffreys at the boundary (issue 11)
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
        ((5, 5.5, 1.0, 1.0), {}, TypeError, "n must be an integer or an array of integers"),
        ((5, 5, 1.0, 1.0), {"seed": "x"}, TypeError, "seed must be"),
    ],
)
def test_simulate_validation(args, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        passatk.simulate(*args, **kwargs)


def test_truths_with_rates_at_the_edges():
    from passatk.stats import Simulation

    sim = Simulation(n=np.array([5, 5]), c=np.array([5, 0]), p=np.array([1.0, 0.0]), a=1.0,
                     b=1.0)
    assert sim.true_pass_at_k(3) == 0.5
    assert sim.population_pass_at_k(1) == pytest.approx(0.5, rel=1e-15)


def test_tasks_needed_for_a_vanishing_effect_is_a_clear_error_not_a_hang():
    # r09 of the reliability audit: 1e-300 overflowed; 1e-10 looped for minutes
    for delta in (1e-300, 1e-10):
        with pytest.raises(ValueError, match=r"too small to plan for: .* more than 2\*\*53"):
            passatk.tasks_needed(delta, 0.2)
    big = passatk.tasks_needed(1e-6, 0.2).value  # about 3e11 tasks, against scipy's nct

    def power(n):
        crit = ss.t.ppf(0.975, n - 1)
        return ss.nct.sf(crit, n - 1, 5e-6 * math.sqrt(n)) + ss.nct.cdf(-crit, n - 1,
                                                                      5e-6 * math.sqrt(n))

    assert power(big) >= 0.8 - 1e-9
    assert power(int(big * (1 - 1e-5))) < 0.8


# --- issue 25 item 6: samples_needed is no longer linear in k, and k is capped --------------

from fractions import Fraction  # noqa: E402

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from passatk.stats._task import _exact_var_at_n  # noqa: E402


@pytest.mark.parametrize(("n", "k"), [(1, 1), (7, 1), (3, 2), (10, 10), (31, 30), (100, 40),
                                      (210, 200), (10_000, 10), (500, 60)])
@pytest.mark.parametrize("p", [1e-9, 0.01, 0.3, 0.5, 0.9, 1 - 1e-6])
def test_windowed_variance_against_fractions(n, k, p):
    q = 1.0 - p
    want = float(sum(
        Fraction(math.comb(k, j) * math.comb(n - k, k - j), math.comb(n, k))
        * (Fraction(q) ** (2 * k - j) - Fraction(q) ** (2 * k)) for j in range(1, k + 1)))
    got = float(_exact_var_at_n(np.array([q]), n, k)[0])
    if want == 0.0:
        assert got == 0.0
    else:
        assert abs(got - want) <= 1e-12 * want


@settings(max_examples=40, deadline=None)
@given(k=st.integers(1, 400), extra=st.integers(0, 5_000),
       q=st.lists(st.floats(1e-6, 1 - 1e-6), min_size=1, max_size=5))
def test_windowed_variance_matches_the_full_sum(k, extra, q):
    n = k + extra
    q = np.array(q)
    full = _exact_task_var(1.0 - q, n, k)
    got = _exact_var_at_n(q, n, k)
    ok = full > 1e-250
    # the full sum loses ~1e-10 to lgamma cancellation at large n; the window keeps ~1e-14
    np.testing.assert_allclose(got[ok], full[ok], rtol=1e-8)


def test_samples_needed_large_k_is_the_smallest_sufficient_n():
    n0, c0, k, target = np.full(50, 40), np.arange(50) % 39 + 1, 50_000, 0.004
    r = passatk.samples_needed(n0, c0, k, target)
    q = 1.0 - c0 / n0

    def se(m):
        return math.sqrt(float(np.sum(_exact_var_at_n(q, m, k)))) / 50

    assert r.value == k or se(r.value) <= target < se(r.value - 1)
    assert r.inputs["se_at_value"] == pytest.approx(se(r.value), rel=1e-12)


@pytest.mark.parametrize("k", [PL.MAX_PLAN_K + 1, 2**53, 2**64])
def test_samples_needed_caps_k(k):
    with pytest.raises(ValueError, match=r"k must satisfy k <= 1,000,000 for samples_needed"):
        passatk.samples_needed([10], [2], k, 0.01)


@pytest.mark.parametrize("target", [2**1000, 2**1100, 10**400])
def test_samples_needed_huge_target_is_a_value_error_or_an_answer(target):
    # issue 25 item 5: 2**1000 raised OverflowError (eps**2); beyond the float range it is a
    # ValueError naming target_se
    try:
        float(target)
    except OverflowError:
        with pytest.raises(ValueError, match="target_se"):
            passatk.samples_needed([10] * 3, [2] * 3, 3, target)
    else:
        r = passatk.samples_needed([10] * 3, [2] * 3, 3, target)
        assert r.value == 3 and r.inputs["approximation"] == 0.0


def test_samples_needed_tiny_target_is_a_value_error():
    with pytest.raises(ValueError, match=r"target_se=1e-300 cannot be reached"):
        passatk.samples_needed([10] * 3, [2] * 3, 3, 1e-300)


# --- issue 22: achieved power and planning without a pilot ---------------------------------


@pytest.mark.parametrize("n_tasks", [2, 5, 10, 50, 164, 1000])
@pytest.mark.parametrize("effect", [0.05, 0.3, 1.0])
@pytest.mark.parametrize("alpha", [0.05, 0.01])
def test_achieved_power_matches_statsmodels(n_tasks, effect, alpha):
    r = passatk.stats.achieved_power(n_tasks, effect * 0.2, 0.2, alpha=alpha)
    want = TTestPower().power(effect_size=effect, nobs=n_tasks, alpha=alpha)
    if math.isnan(want):  # statsmodels' nct underflows where the power is 1 to 1e-12
        assert r.value > 1 - 1e-9
    else:
        assert r.value == pytest.approx(want, abs=1e-9)
    # the planners agree with each other: the power at tasks_needed reaches the target
    if n_tasks == 2:
        need = passatk.tasks_needed(effect * 0.2, 0.2, alpha=alpha).value
        assert passatk.stats.achieved_power(need, effect * 0.2, 0.2, alpha=alpha).value >= 0.8


def test_paired_sd_from_rates_by_simulation():
    rng = np.random.default_rng(11)
    p, rho, n, sb, tasks = 0.5, 0.7, 8, 0.1, 200_000
    z1, z2 = rng.normal(size=(2, tasks))
    pa = p + sb * z1
    pb = p + sb * (rho * z1 + math.sqrt(1 - rho**2) * z2)
    d = rng.binomial(n, pa) / n - rng.binomial(n, pb) / n
    r = passatk.stats.paired_sd_from_rates(p, rho, n, between_sd=sb)
    assert r.value == pytest.approx(np.std(d), rel=0.01)
    worst = passatk.stats.paired_sd_from_rates(p, rho, n)
    assert worst.value >= r.value and worst.inputs["between_sd"] == pytest.approx(0.5)


@pytest.mark.parametrize(("args", "kwargs", "match"), [
    ((0.0, 0.5, 4), {}, "baseline"), ((1.0, 0.5, 4), {}, "baseline"),
    ((0.5, 1.5, 4), {}, "rho"), ((0.5, 0.5, 0), {}, "samples_per_task"),
    ((0.5, 0.5, 4), {"between_sd": 0.9}, "between_sd")])
def test_paired_sd_from_rates_validation(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        passatk.stats.paired_sd_from_rates(*args, **kwargs)
