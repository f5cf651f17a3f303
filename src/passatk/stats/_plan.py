"""Planning (``tasks_needed``, ``min_detectable_effect``, ``samples_needed``,
``paired_sd``) and ``simulate``.

Power of the paired (one-sample) t test, by the noncentral t distribution.

With N tasks, the test statistic of ``compare`` is T = mean(D) / (sd(D) / sqrt(N)) on
N - 1 df. Under a true mean difference delta it is noncentral t with df = N - 1 and
noncentrality lambda = delta sqrt(N) / sigma_D. Writing T = (Z + lambda) / S with
S = sqrt(V / df), V ~ chi^2_df, the two-sided power at critical value c is

    power = E_S[ Phi(lambda - c S) + Phi(-lambda - c S) ],

an integral over the density of S, computed by Gauss-Legendre quadrature on the range
that holds its mass (this is what statsmodels' ``TTestPower`` computes with scipy's nct).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from numpy.typing import ArrayLike

from .._limits import MAX_N, MAX_SIMULATED
from .._types import CompareMetric, TaskMetric
from .._validation import (
    RngLike,
    check_n,
    choice,
    count_arrays,
    finite_float,
    grouped,
    int_array,
    normalize_rng,
    positive_int,
    show,
)
from ._common import _show
from ._compare import _compare_iv, _match_runs
from ._dist import norm_ppf, t_ppf
from ._results import PlanResult, Simulation
from ._task import _exact_var_at_n, _theta

_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(120)
_erfc = np.frompyfunc(math.erfc, 1, 1)


def _phi(x):
    return 0.5 * np.asarray(_erfc(-np.asarray(x) / math.sqrt(2.0)), dtype=np.float64)


def _s_range(df):
    sd = 1.0 / math.sqrt(2.0 * df)
    lo = max(0.0, 1.0 - 14.0 * sd)
    hi = 1.0 + 14.0 * sd if df >= 8 else 1.0 + 14.0 * sd + 6.0
    return lo, hi


def _t_power(effect, n_tasks, alpha):
    """Two-sided power of the one-sample t test: effect = delta / sigma_D, N = n_tasks."""
    df = n_tasks - 1
    lam = effect * math.sqrt(n_tasks)
    crit = t_ppf(1.0 - alpha / 2.0, df)
    lo, hi = _s_range(df)
    # Phi(lambda - c s) steps from 1 to 0 over a width 1/c around s0 = lambda / c: cut the
    # range there so that each piece is smooth at the scale of its nodes
    s0, width = abs(lam) / crit, 1.0 / crit
    cuts = {lo, hi, *(min(max(s0 + j * width, lo), hi) for j in (-8, -2, 2, 8))}
    edges = sorted(cuts)
    s = np.concatenate([0.5 * (b - a) * _NODES + 0.5 * (b + a)
                        for a, b in itertools.pairwise(edges)])
    w = np.concatenate([0.5 * (b - a) * _WEIGHTS
                        for a, b in itertools.pairwise(edges)])
    # density of S = sqrt(chi2_df / df), up to its constant: normalizing over the same nodes
    # avoids the cancellation of lgamma(df / 2) against df log(df) at large df
    with np.errstate(divide="ignore"):
        logd = (df - 1.0) * np.log(s) - 0.5 * df * s * s
    dens = w * np.exp(logd - logd.max())
    tails = _phi(lam - crit * s) + _phi(-lam - crit * s)
    return float(min(np.sum(dens * tails) / np.sum(dens), 1.0))


_MAX_TASKS = 2.0**53


def _tasks_for_power(effect, alpha, target):
    """The smallest N >= 2 whose two-sided t test has power >= target."""
    root = (norm_ppf(1 - alpha / 2) + norm_ppf(target)) / effect
    if not root * root < _MAX_TASKS:  # also catches an overflow to inf
        raise ValueError(f"delta / sd = {effect!r} is too small to plan for: the paired t "
                         f"test would need more than 2**53 tasks")
    # power grows with N: bracket the answer around the z formula, then bisect
    hi = max(math.ceil(root * root), 2)
    while _t_power(effect, hi, alpha) < target:
        hi *= 2
    lo = max(hi // 4, 1)
    while lo > 1 and _t_power(effect, lo, alpha) >= target:
        lo //= 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _t_power(effect, mid, alpha) >= target:
            hi = mid
        else:
            lo = mid
    return hi


def _effect_for_power(n_tasks, alpha, target):
    """The effect delta / sigma_D that the t test on N tasks detects with power ``target``."""
    lo, hi = 0.0, 1.0
    while _t_power(hi, n_tasks, alpha) < target:
        lo, hi = hi, 2.0 * hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if _t_power(mid, n_tasks, alpha) < target:
            lo = mid
        else:
            hi = mid
    return hi


def _plan_iv_common(alpha, power):
    for name, v in (("alpha", alpha), ("power", power)):
        if isinstance(v, bool) or not isinstance(v, int | float | np.floating):
            raise TypeError(f"{name} must be a float, got {type(v).__name__}")
        if not 0.0 < v < 1.0:
            raise ValueError(f"{name} must satisfy 0 < {name} < 1, got {name}={show(v)}")
    return float(alpha), float(power)


def _positive(v, name):
    x = finite_float(v, name)
    if not x > 0:
        raise ValueError(f"{name} must be a finite number > 0, got {name}={show(v)}")
    return x


def _power_iv(x, name, sd, alpha, power):
    """Validate (delta or n_tasks, sd, alpha, power) of the power-analysis functions."""
    if name == "n_tasks":
        x = positive_int(x, name, 2)  # a t test needs 2 tasks
        if x >= MAX_N:
            raise ValueError(f"n_tasks must be < 2**53, got {x if x < 10**30 else 'more'}")
    else:
        if isinstance(x, int | float | np.integer | np.floating) and not isinstance(x, bool):
            x = abs(x)  # the sign of the difference does not matter to a two-sided test
        x = _positive(x, name)
    sd = _positive(sd, "sd")
    alpha, power = _plan_iv_common(alpha, power)
    return x, sd, alpha, power


def tasks_needed(delta: float, sd: float, *, alpha: float = 0.05,
                 power: float = 0.8) -> PlanResult:
    """Tasks needed to detect a mean difference ``delta`` with the paired t test of ``compare``.

    The smallest N whose two-sided t test on N - 1 df has the requested power, from the
    noncentral t distribution (noncentrality delta sqrt(N) / sd); it equals
    ``ceil(TTestPower().solve_power(...))`` of statsmodels. ``sd`` is sigma_D, the standard
    deviation of the per-task differences (see :func:`paired_sd`). The normal-theory
    closed form (z_{1-alpha/2} + z_{power})^2 sd^2 / delta^2 (Miller 2024), which comes out
    a few tasks short at small N, is reported in ``inputs["z_approximation"]``.

    Examples
    --------
    >>> import passatk
    >>> passatk.tasks_needed(0.03, 0.2).value
    351
    >>> passatk.tasks_needed(0.3, 0.3).value       # the z formula says 8
    10
    """
    delta, sd, alpha, power = _power_iv(delta, "delta", sd, alpha, power)
    z = norm_ppf(1 - alpha / 2) + norm_ppf(power)
    value = _tasks_for_power(delta / sd, alpha, power)
    approx = (z * sd / delta) ** 2
    return PlanResult(quantity="tasks", value=value,
                      inputs={"delta": delta, "sd": sd, "alpha": alpha, "power": power,
                              "z_approximation": approx},
                      note="smallest N with power >= target for the two-sided paired t test "
                           "(noncentral t, N - 1 df)")


def min_detectable_effect(n_tasks: int, sd: float, *, alpha: float = 0.05,
                          power: float = 0.8) -> PlanResult:
    """Minimum difference that the paired t test on ``n_tasks`` tasks detects with ``power``.

    Solved on the noncentral t distribution (N - 1 df); the normal-theory value
    (z_{1-alpha/2} + z_{power}) sd / sqrt(N) is in ``inputs["z_approximation"]``.
    Needs at least 2 tasks.

    Examples
    --------
    >>> import passatk
    >>> round(passatk.min_detectable_effect(164, 0.3).value, 4)
    0.066
    """
    n_tasks, sd, alpha, power = _power_iv(n_tasks, "n_tasks", sd, alpha, power)
    z = norm_ppf(1 - alpha / 2) + norm_ppf(power)
    return PlanResult(quantity="min_detectable_effect",
                      value=sd * _effect_for_power(n_tasks, alpha, power),
                      inputs={"n_tasks": n_tasks, "sd": sd, "alpha": alpha, "power": power,
                              "z_approximation": z * sd / math.sqrt(n_tasks)},
                      note="two-sided paired t test (noncentral t, N - 1 df)")


def achieved_power(n_tasks: int, delta: float, sd: float, *, alpha: float = 0.05) -> PlanResult:
    """Power of the two-sided paired t test on ``n_tasks`` tasks for a true difference
    ``delta`` (noncentral t, N - 1 df; statsmodels' ``TTestPower().power``).

    Examples
    --------
    >>> import passatk
    >>> round(passatk.stats.achieved_power(10, 0.3, 0.3).value, 4)
    0.8031
    """
    n_tasks, sd, alpha, _ = _power_iv(n_tasks, "n_tasks", sd, alpha, 0.5)
    if isinstance(delta, int | float | np.integer | np.floating) and not isinstance(delta, bool):
        delta = abs(delta)
    delta = _positive(delta, "delta")
    z = norm_ppf(1 - alpha / 2)
    approx = 0.5 * math.erfc(-(delta * math.sqrt(n_tasks) / sd - z) / math.sqrt(2.0))
    return PlanResult(quantity="power", value=_t_power(delta / sd, n_tasks, alpha),
                      inputs={"n_tasks": n_tasks, "delta": delta, "sd": sd, "alpha": alpha,
                              "z_approximation": approx},
                      note="two-sided paired t test (noncentral t, N - 1 df)")


def paired_sd_from_rates(baseline: float, rho: float, samples_per_task: int, *,
                         between_sd: float | None = None) -> PlanResult:
    """sigma_D for planning without a pilot, from a baseline pass rate, the correlation of
    the two models' per-task rates and the samples per task (pass@1).

    With per-task rates of mean p = ``baseline``, between-task sd sigma_b = ``between_sd``
    and correlation rho between the models, and n samples per task drawn independently,
    sigma_D^2 = 2 (1 - rho) sigma_b^2 + 2 (p (1 - p) - sigma_b^2) / n (equal variances in
    both models, a small difference). Without ``between_sd`` the sigma_b^2 in
    [0, p (1 - p)] that gives the largest sigma_D is used (the conservative choice): all of
    p (1 - p) between tasks when rho < 1 - 1/n, else none.

    Examples
    --------
    >>> import passatk
    >>> r = passatk.stats.paired_sd_from_rates(0.5, 0.8, 1)
    >>> round(r.value, 4), r.inputs["between_sd"]
    (0.7071, 0.0)
    >>> round(passatk.stats.paired_sd_from_rates(0.5, 0.8, 10, between_sd=0.3).value, 4)
    0.2608
    """
    p = _positive(baseline, "baseline")
    if not p < 1.0:
        raise ValueError(f"baseline must satisfy 0 < baseline < 1, got baseline={baseline!r}")
    if isinstance(rho, bool) or not isinstance(rho, int | float | np.integer | np.floating):
        raise TypeError(f"rho must be a number, got {type(rho).__name__}")
    if not -1.0 <= rho <= 1.0:
        raise ValueError(f"rho must satisfy -1 <= rho <= 1, got rho={rho!r}")
    n = positive_int(samples_per_task, "samples_per_task")
    total = p * (1.0 - p)
    if between_sd is None:
        sb2 = total if (1.0 - rho) > 1.0 / n else 0.0
    else:
        sb = float(between_sd) if not isinstance(between_sd, bool) else -1.0
        if not 0.0 <= sb <= math.sqrt(total):
            raise ValueError(f"between_sd must satisfy 0 <= between_sd <= sqrt(baseline (1 - "
                             f"baseline)) = {math.sqrt(total):.4g}, got {between_sd!r}")
        sb2 = sb * sb
    var = 2.0 * (1.0 - rho) * sb2 + 2.0 * (total - sb2) / n
    return PlanResult(quantity="sd", value=math.sqrt(var),
                      inputs={"baseline": p, "rho": float(rho), "samples_per_task": n,
                              "between_sd": math.sqrt(sb2)},
                      note="sigma_D^2 = 2 (1 - rho) sigma_b^2 + 2 (p (1 - p) - sigma_b^2) / n")


def paired_sd(n_a: ArrayLike, c_a: ArrayLike, n_b: ArrayLike, c_b: ArrayLike, k: int = 1, *,
              task_ids_a: ArrayLike | None = None, task_ids_b: ArrayLike | None = None,
              metric: CompareMetric = "pass@k") -> PlanResult:
    """The sd of the per-task differences D_i from a pilot pair of runs (``sd`` for planning).

    sigma_D = sd(thetahat_A,i - thetahat_B,i, ddof=1) over matched tasks (matched like
    :func:`compare`, which must not find unmatched tasks). Pass it as ``sd`` to
    :func:`tasks_needed` and :func:`min_detectable_effect`.

    Examples
    --------
    >>> from passatk.stats import paired_sd
    >>> r = paired_sd([10] * 4, [9, 7, 5, 8], [10] * 4, [6, 7, 2, 4])
    >>> round(r.value, 4), r.inputs["tasks"]
    (0.1732, 4)
    """
    a = _compare_iv(n_a, c_a, n_b, c_b, k, task_ids_a, task_ids_b, metric)
    metric = a.metric
    k = positive_int(k, "k")
    n_a, c_a, n_b, c_b, *_rest = _match_runs(a.n_a, a.c_a, a.n_b, a.c_b, a.ids_a, a.ids_b,
                                             None, "raise", "raise")
    if n_a.size < 2:
        raise ValueError(f"paired_sd needs at least 2 matched tasks, got {n_a.size}")
    short = np.flatnonzero((n_a < k) | (n_b < k))
    if short.size:
        raise ValueError(f"k={k} exceeds n for {short.size} of {n_a.size} matched tasks "
                         f"(task positions {_show(short)})")
    d = _theta(metric, n_a, c_a, k) - _theta(metric, n_b, c_b, k)
    return PlanResult(quantity="sd", value=float(np.std(d, ddof=1)),
                      inputs={"tasks": int(n_a.size), "k": k, "metric": metric,
                              "mean_difference": float(np.mean(d))},
                      note="sample sd (ddof=1) of the paired per-task differences")


#: the largest k that samples_needed plans for (its cost grows like k)
MAX_PLAN_K = 1_000_000
_MAX_SAMPLES = 2**52


def _samples_iv(n, c, k, target_se, metric):
    n, c = count_arrays(n, c)
    k = positive_int(k, "k")
    if k > MAX_PLAN_K:
        raise ValueError(f"k must satisfy k <= {MAX_PLAN_K:,} for samples_needed, got "
                         f"k={grouped(k)}: the exact variance costs O(k) per candidate n")
    eps = _positive(target_se, "target_se")
    choice(metric, "metric", ("pass@k", "pass^k"))
    return n, c, k, eps, metric


def _smallest_n(se_at, k, eps):
    """The smallest n >= k with se_at(n) <= eps: doubling, then bisection (at most ~106 steps)."""
    lo, hi = k, k
    while se_at(hi) > eps:
        lo, hi = hi, hi * 2
        if hi > _MAX_SAMPLES:
            raise ValueError(f"target_se={eps!r} cannot be reached with n < 2**52 samples "
                             f"per task")
    if se_at(lo) <= eps:
        hi = lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if se_at(mid) <= eps:
            hi = mid
        else:
            lo = mid
    return hi


def samples_needed(n: ArrayLike, c: ArrayLike, k: int, target_se: float, *,
                   metric: TaskMetric = "pass@k") -> PlanResult:
    """Samples per task needed for a fixed-benchmark SE of at most ``target_se``.

    The success rates p_i = c_i / n_i of pilot counts are plugged into the exact variance
    of the estimator (Hoeffding's U-statistic form, see docs/statistics.md), and the
    smallest common n with (1/N^2) sum_i Var_i(n) <= target_se^2 is found by doubling and
    bisection (at most about 106 evaluations). Each evaluation sums only the window of the
    U-statistic's terms that holds all but e^-50 of the variance, O(sqrt(k)) per distinct
    rate; k is capped at :data:`MAX_PLAN_K`.
    A pilot task with c_i = 0 or c_i = n_i would say its variance is 0; it gets the
    Jeffreys posterior mean p_i = (c_i + 1/2) / (n_i + 1) instead, and
    ``inputs["boundary_tasks"]`` counts such tasks.
    The large-n approximation n >= sum_i k^2 q_i^(2k-2) p_i q_i / (N^2 eps^2) is reported in
    ``inputs["approximation"]``.

    Examples
    --------
    >>> import passatk
    >>> r = passatk.samples_needed([20] * 100, [2] * 100, 10, 0.01)
    >>> r.value
    140
    >>> passatk.samples_needed([10] * 100, [0] * 50 + [10] * 50, 1, 0.001).value > 1
    True
    """
    n, c, k, eps, metric = _samples_iv(n, c, k, target_se, metric)
    edge = (c == 0) | (c == n)
    # c = 0 or c = n would plug in p = 0 or 1, a variance of 0 (D7 of the audit): those
    # tasks get the Jeffreys posterior mean (c + 1/2) / (n + 1) instead
    p = np.where(edge, (c + 0.5) / (n + 1.0), c / np.maximum(n, 1))
    size = n.size
    q = 1.0 - p if metric == "pass@k" else p
    q_u, mult = np.unique(q, return_counts=True)

    def se_at(m):
        return math.sqrt(float(np.sum(mult * _exact_var_at_n(q_u, m, k)))) / size

    value = _smallest_n(se_at, k, eps)
    approx = float(np.sum(k * k * q ** (2 * k - 2) * p * q)) / size**2 / eps / eps
    return PlanResult(quantity="samples_per_task", value=int(value),
                      inputs={"tasks": size, "k": k, "target_se": eps, "metric": metric,
                              "approximation": approx, "se_at_value": se_at(value),
                              "boundary_tasks": int(np.count_nonzero(edge))},
                      note="exact estimator variance at p_i = c_i / n_i from the pilot, "
                           "(c_i + 1/2) / (n_i + 1) where c_i is 0 or n_i")


def _count(s: int) -> str:
    return f"{s:,}" if s < 10**30 else show(s)


def _simulate_iv(n_tasks, n, a, b, rng, seed, n_benchmarks):
    n_tasks = positive_int(n_tasks, "n_tasks")
    nn = int_array(n, "n")
    if nn.size not in (1, n_tasks):
        raise ValueError(f"n must be one int or one per task ({n_tasks}), got {nn.size}")
    check_n(nn)
    a = _positive(a, "a")
    b = _positive(b, "b")
    rng = normalize_rng(rng, seed)
    shape = (n_tasks,) if n_benchmarks is None else (
        positive_int(n_benchmarks, "n_benchmarks"), n_tasks)
    if math.prod(shape) > MAX_SIMULATED:
        raise ValueError(f"n_tasks x n_benchmarks must be at most {MAX_SIMULATED:,} (each draw "
                         f"is held in memory), got {' x '.join(_count(s) for s in shape)}")
    return n_tasks, nn, a, b, rng, shape


def simulate(n_tasks: int, n: ArrayLike, a: float, b: float, *, rng: RngLike = None,
             seed: RngLike = None, n_benchmarks: int | None = None) -> Simulation:
    """Simulate benchmark counts: p_i ~ Beta(a, b), then c_i ~ Binomial(n_i, p_i).

    Parameters
    ----------
    n_tasks : int
    n : int or array_like of int
        Samples per task (one value, or one per task).
    a, b : float
        Beta parameters of the task success rates.
    rng, seed : as in :func:`passatk.score` (``seed`` is an alias of ``rng``)
    n_benchmarks : int, optional
        Draw this many independent benchmarks at once (leading axis).

    Returns
    -------
    Simulation
        ``.n``, ``.c``, ``.p`` arrays, with ``true_pass_at_k(k)`` (mean over the drawn tasks)
        and ``population_pass_at_k(k)`` (the expectation under Beta(a, b)).

    Examples
    --------
    >>> import passatk
    >>> sim = passatk.simulate(1000, 10, 2.0, 2.0, seed=0)
    >>> sim.c.shape, bool((sim.c <= 10).all())
    ((1000,), True)
    >>> round(sim.population_pass_at_k(1), 6)
    0.5
    """
    n_tasks, nn, a, b, rng, shape = _simulate_iv(n_tasks, n, a, b, rng, seed, n_benchmarks)
    p = rng.beta(a, b, size=shape)
    nfull = np.broadcast_to(nn if nn.size == n_tasks else nn[0], shape).astype(np.int64)
    c = rng.binomial(nfull, p).astype(np.int64)
    return Simulation(n=np.ascontiguousarray(nfull), c=c, p=p, a=a, b=b)
