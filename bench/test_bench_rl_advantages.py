"""Speed of ``rl.advantages`` (issue 7), against per-group Python loops timed in the same run.

Run: python -m pytest bench/test_bench_rl_advantages.py --benchmark-enable -p no:randomly -s

Workload: 512 groups x 16 rollouts (8,192 float32 scores), k = 4, one estimator per call.

* ``uuid``: groups as verl hands them, a numpy object array of uuid4 strings (contiguous);
  ``uuid-shuffled``: the same, rollouts in random order. Factorization included. Target 1 ms.
* ``int``: int64 group ids; ``dense``: a (512, 16) array. Target 200 us.
* ``n=8``: one group of 8 float64 scores, the whole call. Target 20 us.
* Baselines, faithful per-group Python loops of the analytic advantages: Chen et al.'s Pass@k
  Training (per-sample loop, binary rewards) and PKPO s_loo-1 (O(n) per group).

With ``--benchmark-disable`` (the default) the targets are still asserted, on the best of 30
wall-clock runs; ``-s`` prints the medians and ratios.
"""

import math
import uuid
from collections import defaultdict

import numpy as np
import pytest
from _timing import best_of

from passatk import rl

G, N, K = 512, 16, 4
_MEDIANS = {}


def _best_of(fn, reps=30):
    return best_of(fn, reps)


@pytest.fixture(scope="module")
def batch():
    rng = np.random.default_rng(0)
    labels = [str(uuid.uuid4()) for _ in range(G)]
    index = np.array([g for g in labels for _ in range(N)], dtype=object)
    continuous = rng.random(G * N).astype(np.float32)
    binary = (rng.random(G * N) < rng.beta(0.5, 0.5, G * N)).astype(np.float32)
    perm = rng.permutation(G * N)
    ints = np.repeat(np.arange(G, dtype=np.int64), N)
    return {"index": index, "continuous": continuous, "binary": binary, "perm": perm,
            "ints": ints}


def chen_loop(scores, index, k):
    """Pass@k Training (Chen et al. 2025), as its reference code: per group, per sample."""
    groups = defaultdict(list)
    for i, idx in enumerate(index):
        groups[idx].append(i)
    out = np.zeros(len(scores), dtype=np.float32)
    for members in groups.values():
        rewards = [float(scores[i]) for i in members]
        n = len(rewards)
        neg = sum(1 for r in rewards if r == 0.0)
        r_group = 1 - math.comb(neg, k) / math.comb(n, k)
        sigma = math.sqrt(r_group * (1 - r_group))
        for i, r in zip(members, rewards, strict=True):
            if sigma == 0:
                out[i] = 0.0
            elif r == 1.0:
                out[i] = (1 - r_group) / sigma
            else:
                out[i] = (1 - r_group - math.comb(neg - 1, k - 1) / math.comb(n - 1, k - 1)) / sigma
    return out


def pkpo_loo1_loop(scores, index, k):
    """PKPO s_loo-1 per group in Python: sort, then sum_{j<i} C(j-1, k-2)(g_i - g_j) / C(n, k)
    by a running sum (O(n) per group)."""
    groups = defaultdict(list)
    for i, idx in enumerate(index):
        groups[idx].append(i)
    out = np.zeros(len(scores), dtype=np.float32)
    for members in groups.values():
        order = sorted(members, key=lambda i: scores[i])
        z = [float(scores[i]) for i in order]
        n, total = len(z), math.comb(len(z), k)
        acc = cum = 0.0
        for p in range(n):
            if p:
                cum += math.comb(p - 1, k - 2) / total
                acc += (z[p] - z[p - 1]) * cum
            out[order[p]] = acc
    return out


def _run(benchmark, name, fn, target=None, group=None, baseline=False):
    # Saved runs carry the group and its in-run baseline, for bench/compare.py's ratios.
    group = group or "rl-advantages " + name.split()[-1 if baseline else 0]
    benchmark.extra_info.update(group=group, row=name, baseline=baseline)
    fn()  # warm up (numba compile or cache load)
    benchmark(fn)
    stats = getattr(benchmark, "stats", None)
    if stats is not None:
        _MEDIANS[name] = stats.stats.median
    if target is not None:
        assert _best_of(fn) < target, name


@pytest.mark.parametrize("which", ["uuid", "uuid-shuffled", "int", "dense"])
def test_pkpo_loo1(benchmark, batch, which):
    scores, index = batch["continuous"], batch["index"]
    want = pkpo_loo1_loop(scores, index, K)
    args = {
        "uuid": (scores, index),
        "uuid-shuffled": (scores[batch["perm"]], index[batch["perm"]]),
        "int": (scores, batch["ints"]),
        "dense": (scores.reshape(G, N), None),
    }[which]
    got = rl.advantages(*args, k=K, estimator="pkpo-loo1").reshape(-1)
    if which == "uuid-shuffled":
        want = want[batch["perm"]]
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7)
    target = 1e-3 if which.startswith("uuid") else 200e-6
    _run(benchmark, f"pkpo-loo1 {which}",
         lambda: rl.advantages(*args, k=K, estimator="pkpo-loo1"), target)


@pytest.mark.parametrize("which", ["uuid", "int", "dense"])
def test_passk_training_binary(benchmark, batch, which):
    scores, index = batch["binary"], batch["index"]
    args = {"uuid": (scores, index), "int": (scores, batch["ints"]),
            "dense": (scores.reshape(G, N), None)}[which]
    got = rl.advantages(*args, k=K, estimator="passk-training").reshape(-1)
    np.testing.assert_allclose(got, chen_loop(scores, index, K), rtol=2e-6, atol=1e-7)
    target = 1e-3 if which == "uuid" else 200e-6
    _run(benchmark, f"passk-training {which}",
         lambda: rl.advantages(*args, k=K, estimator="passk-training"), target)


def test_baseline_pkpo_loo1_loop(benchmark, batch):
    _run(benchmark, "loop pkpo-loo1",
         lambda: pkpo_loo1_loop(batch["continuous"], batch["index"], K), baseline=True)


def test_baseline_chen_loop(benchmark, batch):
    _run(benchmark, "loop passk-training", lambda: chen_loop(batch["binary"], batch["index"], K),
         baseline=True)


def test_call_overhead_one_group_of_eight(benchmark):
    scores = np.random.default_rng(1).random(8)
    _run(benchmark, "n=8 one group", lambda: rl.advantages(scores, k=K), 20e-6, group="rl-n=8")


def test_baseline_one_group_of_eight_loop(benchmark):
    scores = np.random.default_rng(1).random(8).astype(np.float32)
    index = np.array(["a"] * 8, dtype=object)
    np.testing.assert_allclose(rl.advantages(scores, k=K), pkpo_loo1_loop(scores, index, K),
                               rtol=2e-6, atol=1e-7)
    _run(benchmark, "loop n=8 one group", lambda: pkpo_loo1_loop(scores, index, K),
         group="rl-n=8", baseline=True)


def test_zz_summary():
    if not _MEDIANS:
        pytest.skip("run with --benchmark-enable for the medians and ratios")
    lines = ["", f"{'call':<28} {'median':>10} {'loop/x':>8}"]
    for name, median in _MEDIANS.items():
        est = name.removeprefix("loop ").split()[0]
        base = _MEDIANS.get(f"loop {est}") or _MEDIANS.get(f"loop {name}")
        ratio = f"{base / median:8.0f}" if base and not name.startswith("loop") else ""
        lines.append(f"{name:<28} {median * 1e6:8.1f}us {ratio:>8}")
    print("\n".join(lines))
