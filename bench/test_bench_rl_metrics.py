"""Speed of ``rl.group_metrics`` (issue 7), against verl's validation bootstrap in the same run.

Run: python -m pytest bench/test_bench_rl_metrics.py --benchmark-enable -p no:randomly -s

Workload, the validation ladder: 500 prompts x 64 rollouts, binary scores (a per-prompt
success rate from Beta(0.5, 0.5)), 5 answer classes per prompt (the right one and four
wrong ones), k = 1, 2, 4, ..., 64.

* ``ladder``: pass@k, pass^k, best@k, worst@k, mean@n, std@n, G-Pass@k at tau = 0.25, 0.5,
  0.75, 1.0 and mG-Pass@k. Target 10 ms. ``+maj``: maj@k as well. Target 100 ms.
  Inputs: ``dense`` (500, 64) float32; ``uuid``: 1-D with verl's object array of uuid4
  strings (factorization included).
* ``verl``: ``estimator="verl"`` for best@k, worst@k and maj@k (exact bootstrap moments).
* ``n=8``: one group of 8 scores, default metrics, the whole call. Target 20 us.
* Baseline: a faithful per-group Python loop of verl's ``process_validation_metrics``:
  mean@N, std@N, then for k = 2, 4, ..., N a 1,000-resample with-replacement bootstrap of
  max, min and (with answers) the majority vote. It is O(seconds) per 10 prompts, so it runs
  on the first ``BASE_G`` prompts and its time is scaled to 500 (it is a per-prompt loop,
  linear in prompts). The ladder must be >= 1,000x faster.

With ``--benchmark-disable`` (the default) every row still runs once and checks its values;
the targets are asserted on the best of a few wall-clock runs only with --benchmark-enable.
"""

import uuid
from collections import defaultdict

import numpy as np
import pytest
from _timing import best_of

from passatk import rl

G, N = 500, 64
BASE_G = 10  # prompts the bootstrap baseline runs on; scaled to G
LADDER = ("pass@k", "pass^k", "best@k", "worst@k", "mean@n", "std@n", "g-pass@k", "mg-pass@k")
_MEDIANS = {}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    p = rng.beta(0.5, 0.5, size=(G, 1))
    correct = rng.random((G, N)) < p
    wrong = rng.integers(1, 5, size=(G, N))
    classes = np.where(correct, 0, wrong)
    answers = np.array([[f"p{g}-a{c}" for c in row] for g, row in enumerate(classes)],
                       dtype=object)
    uids = np.array([str(uuid.uuid4()) for _ in range(G)], dtype=object)
    return {"dense": correct.astype(np.float32), "answers": answers,
            "flat": correct.astype(np.float32).reshape(-1), "uids": np.repeat(uids, N),
            "flat_answers": answers.reshape(-1)}


def verl_bootstrap_loop(scores, index, answers=None, n_bootstrap=1000, seed=42):
    """verl's validation metrics, re-implemented loop for loop: one prompt at a time."""
    by_prompt = defaultdict(list)
    for i, uid in enumerate(index):
        by_prompt[uid].append(i)
    out = defaultdict(list)
    for members in by_prompt.values():
        vals = [float(scores[i]) for i in members]
        preds = None if answers is None else [answers[i] for i in members]
        for name, value in _one_prompt(vals, preds, n_bootstrap, seed).items():
            out[name].append(value)
    return {name: float(np.mean(v)) for name, v in out.items()}


def _one_prompt(vals, preds, n_bootstrap, seed):
    n_resps = len(vals)
    metric = {f"mean@{n_resps}": np.mean(vals), f"std@{n_resps}": np.std(vals)}
    ks, k = [], 2
    while k < n_resps:
        ks.append(k)
        k *= 2
    ks.append(n_resps)
    for k in ks:
        # One bootstrap serves max and min; maj@k has its own, as in verl.
        (bm, bs), (wm, ws) = _bootstrap(vals, k, (np.max, np.min), n_bootstrap, seed)
        metric[f"best@{k}/mean"], metric[f"best@{k}/std"] = bm, bs
        metric[f"worst@{k}/mean"], metric[f"worst@{k}/std"] = wm, ws
        if preds is not None:
            vote = list(zip(vals, preds, strict=True))
            [(mm, ms)] = _bootstrap(vote, k, (_majority,), n_bootstrap, seed)
            metric[f"maj@{k}/mean"], metric[f"maj@{k}/std"] = mm, ms
    return metric


def _bootstrap(data, k, reduce_fns, n_bootstrap, seed):
    # verl reseeds the legacy global RNG on every call; a RandomState draws the same stream
    # without touching the process's global state.
    rng = np.random.RandomState(seed)
    got = [[] for _ in reduce_fns]
    for _ in range(n_bootstrap):
        idx = rng.choice(len(data), size=k, replace=True)
        sample = [data[i] for i in idx]
        for out, fn in zip(got, reduce_fns, strict=True):
            out.append(fn(sample))
    return [(np.mean(v), np.std(v)) for v in got]


def _majority(sample):
    """The most frequent answer (ties to the first drawn), worth its first rollout's score."""
    votes = defaultdict(list)
    for val, pred in sample:
        votes[pred].append(val)
    top = max(votes, key=lambda a: len(votes[a]))
    return votes[top][0]


def _best_of(fn, reps=10):
    return best_of(fn, reps)


def _run(benchmark, name, fn, *, group, target=None, baseline=False, scale=1.0, rounds=None):
    benchmark.extra_info.update(group=group, row=name, baseline=baseline, scale=scale)
    fn()  # warm up: numba's cache load, the lru caches
    if rounds is None:
        benchmark(fn)
    else:
        benchmark.pedantic(fn, rounds=rounds, iterations=1)
    stats = getattr(benchmark, "stats", None)
    if stats is None:
        return
    _MEDIANS[name] = (group, stats.stats.median * scale, baseline)
    if target is not None:
        assert _best_of(fn) < target, name


@pytest.mark.parametrize("which", ["dense", "uuid"])
def test_ladder(benchmark, data, which):
    args = (data["dense"],) if which == "dense" else (data["flat"], data["uids"])
    res = rl.group_metrics(*args, metrics=LADDER)
    assert res.names[:7] == tuple(f"pass@{k}" for k in (1, 2, 4, 8, 16, 32, 64))
    assert np.isfinite(res.matrix).all()
    _run(benchmark, f"ladder {which}", lambda: rl.group_metrics(*args, metrics=LADDER),
         group="rl-ladder", target=10e-3)


@pytest.mark.parametrize("which", ["dense", "uuid"])
def test_ladder_with_maj(benchmark, data, which):
    if which == "dense":
        args, answers = (data["dense"],), data["answers"]
    else:
        args, answers = (data["flat"], data["uids"]), data["flat_answers"]
    metrics = (*LADDER, "maj@k")
    res = rl.group_metrics(*args, metrics=metrics, answers=answers)
    assert np.isfinite(res.values["maj@64"]).all()
    _run(benchmark, f"ladder+maj {which}",
         lambda: rl.group_metrics(*args, metrics=metrics, answers=answers),
         group="rl-ladder+maj", target=100e-3)


def test_verl_estimator(benchmark, data):
    kw = dict(metrics=["best@k", "worst@k", "maj@k"], answers=data["answers"],
              estimator="verl")
    _run(benchmark, "verl-estimator dense", lambda: rl.group_metrics(data["dense"], **kw),
         group="rl-ladder+maj")


def test_verl_estimator_agrees_with_the_bootstrap(data):
    # The exact moments against the loop itself, on a few prompts: the bootstrap's mean is
    # within its Monte Carlo error (std / sqrt(1000), times 5) of the exact value.
    g = 4
    scores, index = data["flat"][:g * N], data["uids"][:g * N]
    answers = data["flat_answers"][:g * N]
    loop = verl_bootstrap_loop(scores, index, answers)
    res = rl.group_metrics(scores, index, k=[2, 8, 64], metrics=["best@k", "maj@k"],
                           answers=answers, estimator="verl")
    for name in ("best@2", "best@8", "best@64", "maj@2", "maj@8", "maj@64"):
        exact = res.mean[name]
        spread = res.mean[f"{name}/std"] / np.sqrt(1000)
        assert abs(loop[f"{name}/mean"] - exact) <= 5 * spread + 1e-12, name


def test_baseline_verl_bootstrap(benchmark, data):
    n = BASE_G * N
    _run(benchmark, "loop verl bootstrap",
         lambda: verl_bootstrap_loop(data["flat"][:n], data["uids"][:n]),
         group="rl-ladder", baseline=True, scale=G / BASE_G, rounds=3)


def test_baseline_verl_bootstrap_with_maj(benchmark, data):
    n = BASE_G * N
    _run(benchmark, "loop verl bootstrap+maj",
         lambda: verl_bootstrap_loop(data["flat"][:n], data["uids"][:n],
                                     data["flat_answers"][:n]),
         group="rl-ladder+maj", baseline=True, scale=G / BASE_G, rounds=3)


def test_call_overhead_one_group_of_eight(benchmark):
    scores = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0])
    _run(benchmark, "n=8 one group", lambda: rl.group_metrics(scores), group="rl-metrics-n=8",
         target=20e-6)


def test_baseline_one_group_of_eight_loop(benchmark):
    scores = [1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0]
    _run(benchmark, "loop n=8 verl bootstrap",
         lambda: verl_bootstrap_loop(scores, ["a"] * 8), group="rl-metrics-n=8",
         baseline=True, rounds=5)


def test_zz_summary():
    if not _MEDIANS:
        pytest.skip("run with --benchmark-enable for the medians and ratios")
    base = {grp: med for grp, med, is_base in _MEDIANS.values() if is_base}
    lines = ["", f"{'call':<28} {'median':>12} {'loop/x':>10}"]
    for name, (grp, med, is_base) in _MEDIANS.items():
        ratio = "" if is_base or grp not in base else f"{base[grp] / med:10.0f}"
        shown = f"{med * 1e3:9.3f} ms" if med >= 1e-3 else f"{med * 1e6:9.1f} us"
        lines.append(f"{name:<28} {shown:>12} {ratio:>10}")
    print("\n".join(lines))
