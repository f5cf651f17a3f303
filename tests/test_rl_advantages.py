"""rl.advantages against brute-force enumeration over every k-subset (tests/naive_rl.py)."""

import math
import sys
import threading
import types
import uuid
from fractions import Fraction

import naive_rl
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from passatk import _adv_kernels as K
from passatk import rl
from passatk.rl._advantages import ESTIMATORS

ORACLES = {
    "pkpo": naive_rl.adv_pkpo,
    "pkpo-loo": naive_rl.adv_pkpo_loo,
    "pkpo-loo1": naive_rl.adv_pkpo_loo1,
    "maxk-training": naive_rl.adv_maxk_training,
    "passk-training": naive_rl.adv_maxk_training,
}
CENTRED = ["pkpo-loo1", "passk-training", "maxk-training", "grpo-passk"]


def _k_range(estimator, n):
    _, k_min, extra = ESTIMATORS[estimator]
    return range(k_min, n - extra + 1)


def _cases(n, rng):
    yield rng.integers(0, 2, n).astype(float)  # binary: closed forms
    yield rng.choice([-1.0, 0.0, 0.25, 0.5, 1.0], n)  # ties, a penalty
    yield rng.random(n)  # continuous
    yield np.full(n, 0.5)  # all equal
    yield np.ones(n)  # all correct


def _general_path(scores, k, estimator):
    """The sorted-group kernel with the binary closed forms switched off."""
    n = len(scores)
    out = np.empty(n)
    code = ESTIMATORS[estimator][0]
    K.advantages_groups(
        np.asarray(scores, float), np.arange(n), np.array([0, n]), k, code, False,
        K.NORM_NONE, 1.0, 1e-6, out,
    )
    return out


@pytest.mark.parametrize("estimator", sorted(ORACLES))
def test_every_estimator_matches_enumeration(estimator):
    rng = np.random.default_rng(7)
    for n in range(1, 9):
        for k in _k_range(estimator, n):
            for scores in _cases(n, rng):
                want = np.array([float(x) for x in ORACLES[estimator](list(scores), k)])
                got = rl.advantages(scores, k=k, estimator=estimator)
                np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13, err_msg=f"{n} {k}")
                got = _general_path(scores, k, estimator)
                np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13, err_msg=f"{n} {k}")


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from([0.0, 1.0, 0.5, -1.0, 0.125, 3.0]) | st.floats(-2, 2)
             | st.floats(-1e300, 1e300) | st.floats(-1e-300, 1e-300), min_size=1, max_size=7),
    st.sampled_from(sorted(ORACLES)),
    st.data(),
)
def test_random_groups_match_enumeration(scores, estimator, data):
    ks = _k_range(estimator, len(scores))
    if not ks:
        return
    k = data.draw(st.sampled_from(list(ks)))
    want = np.array([float(x) for x in ORACLES[estimator](scores, k)])
    got = rl.advantages(np.array(scores), k=k, estimator=estimator)
    # Rounding errors scale with the scores, as in any floating-point sum of them.
    scale = max(1.0, np.abs(want).max(), np.abs(scores).max())
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14 * scale)


def test_passk_training_is_chen_et_al_closed_form():
    rng = np.random.default_rng(3)
    for n in range(1, 9):
        for k in range(1, n + 1):
            for _ in range(3):
                correct = rng.integers(0, 2, n).astype(bool)
                want = naive_rl.adv_passk_training_binary(list(correct), k)
                got = rl.advantages(correct, k=k, estimator="passk-training")
                np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_grpo_passk_general_k_is_loo1_over_std_plus_eps():
    rng = np.random.default_rng(5)
    for n in range(2, 9):
        for k in range(2, n + 1):
            for scores in _cases(n, rng):
                loo1 = naive_rl.adv_pkpo_loo1(list(scores), k)
                want = naive_rl.adv_group_std(loo1, list(scores))
                got = rl.advantages(scores, k=k, estimator="grpo-passk")
                np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)


def _verl_batch(rng, groups=64, n=8, shuffle=True):
    labels = [str(uuid.uuid4()) for _ in range(groups)]
    index = np.array([g for g in labels for _ in range(n)], dtype=object)
    scores = rng.choice([0.0, 0.5, 1.0, 0.3, 0.7], groups * n).astype(np.float32)
    scores[: 2 * n] = rng.random(2 * n).astype(np.float32)
    if shuffle:
        perm = rng.permutation(groups * n)
        index, scores = index[perm], scores[perm]
    return scores, index


@pytest.mark.parametrize("shuffle", [False, True])
def test_grpo_passk_within_float32_ulps_of_verl(shuffle):
    scores, index = _verl_batch(np.random.default_rng(11), shuffle=shuffle)
    want = naive_rl.verl_grpo_passk_numpy(scores, index)
    got = rl.advantages(scores, index, k=8, estimator="grpo-passk")
    assert got.dtype == np.float32
    np.testing.assert_array_max_ulp(got, want, maxulp=4)


def _verl_grpo_passk_torch(token_level_rewards, response_mask, index, epsilon=1e-6):
    """verl's compute_grpo_passk_outcome_advantage, step for step (torch, float32)."""
    import torch

    scores = token_level_rewards.sum(dim=-1)
    advantages = torch.zeros_like(scores)
    id2scores, id2indices = {}, {}
    for i in range(scores.shape[0]):
        id2scores.setdefault(index[i], []).append(scores[i])
        id2indices.setdefault(index[i], []).append(i)
    for idx in id2scores:
        rewards = torch.stack(id2scores[idx])
        topk, topk_idx = torch.topk(rewards, 2)
        i_max = id2indices[idx][topk_idx[0].item()]
        advantages[i_max] = (topk[0] - topk[1]) / (torch.std(rewards) + epsilon)
    advantages = advantages.unsqueeze(-1) * response_mask
    return advantages, advantages


def test_verl_adapter_with_torch_tensors_as_verl_passes_them():
    torch = pytest.importorskip("torch")
    scores, index = _verl_batch(np.random.default_rng(2))
    bs, length = len(scores), 12
    rewards = torch.zeros(bs, length)
    lengths = torch.from_numpy(np.random.default_rng(3).integers(1, length + 1, bs))
    rewards[torch.arange(bs), lengths - 1] = torch.from_numpy(scores)
    mask = (torch.arange(length)[None, :] < lengths[:, None]).to(torch.int64)
    want, _ = _verl_grpo_passk_torch(rewards, mask, index)
    got, returns = rl.verl.grpo_passk(rewards, mask, index)
    assert got.shape == (bs, length) and got.dtype == torch.float32 and returns is got
    np.testing.assert_array_max_ulp(got.numpy(), want.numpy(), maxulp=4)
    for name in ("pkpo", "pkpo_loo1", "passk_training", "maxk_training"):
        adv, _ = getattr(rl.verl, name)(rewards, mask, index, k=4)
        flat = rl.advantages(rewards.sum(-1), index, k=4, estimator=name.replace("_", "-"))
        assert torch.equal(adv, flat[:, None] * mask)
    adv, _ = rl.verl.pkpo_loo(rewards, mask, index, k=7)
    want = rl.advantages(scores, index, k=7, estimator="pkpo-loo")
    np.testing.assert_array_equal(adv[:, 0].numpy(), want)


def test_verl_adapter_options():
    scores, index = _verl_batch(np.random.default_rng(4), groups=4, n=4)
    rewards, mask = scores[:, None], np.ones((16, 1), np.float32)

    class Config(dict):
        pass

    raw, _ = rl.verl.grpo_passk(rewards, mask, index, config=Config(norm_adv_by_std_in_grpo=False))
    np.testing.assert_array_equal(raw[:, 0], rl.advantages(scores, index, k=4))
    fn = rl.verl.make_estimator("maxk-training", k=2, normalize="group-std")
    np.testing.assert_array_equal(
        fn(rewards, mask, index)[0][:, 0],
        rl.advantages(scores, index, k=2, estimator="maxk-training", normalize="group-std"),
    )
    ragged, _ = rl.verl.pkpo(rewards[:-1], mask[:-1], index[:-1])  # k=None: each group's n
    np.testing.assert_array_equal(
        ragged[:, 0], rl.advantages(scores[:-1], index[:-1], k="n", estimator="pkpo"))
    with pytest.raises(ValueError, match="epsilon"):
        rl.verl.pkpo(rewards, mask, index, epsilon=1e-8)
    with pytest.raises(ValueError, match="estimator"):
        rl.verl.make_estimator("grpo")


def test_verl_register_without_verl_says_so(monkeypatch):
    for name in ("verl", "verl.trainer", "verl.trainer.ppo", "verl.trainer.ppo.core_algos"):
        monkeypatch.setitem(sys.modules, name, None)  # importing them now raises ImportError
    with pytest.raises(ImportError, match="needs verl installed"):
        rl.verl.register(k=4)


def test_verl_register_uses_verls_registry(monkeypatch):
    registry = {}

    def register_adv_est(name):
        def decorator(fn):
            registry[name] = fn
            return fn

        return decorator

    core_algos = types.ModuleType("verl.trainer.ppo.core_algos")
    core_algos.register_adv_est = register_adv_est
    for name in ("verl", "verl.trainer", "verl.trainer.ppo"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    monkeypatch.setitem(sys.modules, "verl.trainer.ppo.core_algos", core_algos)
    names = rl.verl.register(k=2, normalize="group-std", estimators=["pkpo-loo1", "pkpo"])
    assert names == ["passatk_pkpo_loo1", "passatk_pkpo"] and sorted(registry) == sorted(names)
    scores, index = _verl_batch(np.random.default_rng(6), groups=3, n=4)
    adv, _ = registry["passatk_pkpo"](
        token_level_rewards=scores[:, None], response_mask=np.ones((12, 1), np.float32),
        index=index, config=None,
    )
    want = rl.advantages(scores, index, k=2, estimator="pkpo", normalize="group-std")
    np.testing.assert_array_equal(adv[:, 0], want)


@pytest.mark.parametrize("normalize", ["group-std", "batch-std"])
def test_normalize_matches_oracle(normalize):
    rng = np.random.default_rng(9)
    groups = [rng.choice([0.0, 0.25, 1.0], 6) for _ in range(5)] + [np.full(6, 0.25)]
    raw = [naive_rl.adv_pkpo(list(g), 3) for g in groups]
    if normalize == "group-std":
        pairs = zip(raw, groups, strict=True)
        want = np.concatenate([naive_rl.adv_group_std(r, list(g)) for r, g in pairs])
    else:
        flat = np.concatenate(groups)
        want = np.array([float(x) for r in raw for x in r]) / (np.std(flat, ddof=1) + 1e-6)
    got = rl.advantages(np.array(groups), k=3, estimator="pkpo", normalize=normalize)
    np.testing.assert_allclose(got.ravel(), want, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize(
    "estimator,normalize",
    [(e, m) for e in sorted(ESTIMATORS) for m in ("none", "group-std")
     if e != "grpo-passk" or m == "none"],
)
def test_all_equal_groups_give_exact_zero(estimator, normalize):
    for value in (0.0, 1.0, 0.3, -2.0):
        scores = np.full((3, 6), value)
        got = rl.advantages(scores, k=3, estimator=estimator, normalize=normalize)
        if estimator in CENTRED or normalize == "group-std":
            assert np.all(got == 0.0) and not np.signbit(got).any()
        else:
            want = ORACLES[estimator](list(scores[0]), 3)
            np.testing.assert_allclose(got[0], [float(x) for x in want], rtol=1e-15, atol=0)


def test_batch_of_equal_scores_under_batch_std_is_zero():
    got = rl.advantages(np.ones((2, 4)), k=2, estimator="pkpo", normalize="batch-std")
    assert np.all(got == 0.0)


def test_maxk_zero_when_every_subset_has_the_same_max():
    # n - c < k: every 2-subset of [0, 1, 1] holds a 1, so sigma = 0.
    for estimator in ("maxk-training", "passk-training"):
        got = rl.advantages([0.0, 1.0, 1.0], k=2, estimator=estimator)
        np.testing.assert_array_equal(got, 0.0)
        got = rl.advantages([0.2, 0.9, 0.9], k=2, estimator=estimator)
        np.testing.assert_array_equal(got, 0.0)


def _exact_binary(n, c, k, estimator):
    """(correct, incorrect) advantages in rationals; for max@k, (None, 1 - pass@k)."""
    def rho(m, c, j):
        return 1 - Fraction(math.comb(m - c, j), math.comb(m, j))

    if estimator == "pkpo-loo1":
        return Fraction(k, n) * (1 - rho(n - 1, c - 1, k - 1)), Fraction(0)
    if estimator == "pkpo":
        return Fraction(k, n), Fraction(k, n) * rho(n - 1, c, k - 1)
    if estimator == "pkpo-loo":
        a1 = Fraction(k, n) - Fraction(k, n - 1) * rho(n - 1, c - 1, k)
        a0 = Fraction(k, n) * rho(n - 1, c, k - 1) - Fraction(k, n - 1) * rho(n - 1, c, k)
        return a1, a0
    return None, 1 - rho(n, c, k)


@pytest.mark.parametrize(
    "n,c,k",
    [(3000, 5, 1500), (4000, 3990, 7), (2048, 1, 2048), (5000, 2500, 2500), (5000, 2500, 10),
     (3000, 2990, 5)],
)
def test_large_n_binary_closed_forms_are_exact_to_rounding(n, c, k):
    scores = np.zeros(n)
    scores[:c] = 1.0
    for estimator in ("pkpo", "pkpo-loo1", "pkpo-loo"):
        if k > n - ESTIMATORS[estimator][2]:
            continue
        want = [float(x) for x in _exact_binary(n, c, k, estimator)]
        got = rl.advantages(scores, k=k, estimator=estimator)
        np.testing.assert_allclose(got[[0, -1]], want, rtol=1e-11, atol=0)
        general = _general_path(scores, k, estimator)
        np.testing.assert_allclose(general[[0, -1]], want, rtol=3e-11, atol=0)
    _, q = _exact_binary(n, c, k, "maxk")
    got = rl.advantages(scores, k=k, estimator="passk-training")
    if 0 < q < 1:
        a_pos = math.sqrt(q / (1 - q))
        np.testing.assert_allclose(got[[0, -1]], [a_pos, -c / (n - c) * a_pos], rtol=1e-11)
    else:
        np.testing.assert_array_equal(got, 0.0)
    np.testing.assert_allclose(_general_path(scores, k, "maxk-training"), got, rtol=1e-11, atol=0)


def test_large_n_continuous_matches_exact_integer_sums():
    # Scores are multiples of 1/64, so the oracle is exact in integers: C(n, k) s_i =
    # C(i-1, k-1) g_i + sum_{j>i} C(j-2, k-2) g_j, and for s_loo-1 the sum over j < i.
    rng = np.random.default_rng(1)
    n, k = 1200, 500
    ints = np.sort(rng.integers(0, 64, n))
    scores = ints / 64.0
    c = [math.comb(i - 1, k - 1) for i in range(1, n + 1)]
    d = [math.comb(j - 2, k - 2) if j >= 2 else 0 for j in range(1, n + 1)]
    total, suffix = math.comb(n, k) * 64, [0] * (n + 1)
    for j in range(n - 1, -1, -1):
        suffix[j] = suffix[j + 1] + d[j] * int(ints[j])
    want = [float(Fraction(c[i] * int(ints[i]) + suffix[i + 1], total)) for i in range(n)]
    perm = rng.permutation(n)
    got = rl.advantages(scores[perm], k=k, estimator="pkpo")
    np.testing.assert_allclose(got, np.array(want)[perm], rtol=1e-12, atol=1e-300)
    loo1 = rl.advantages(scores[perm], k=k, estimator="pkpo-loo1")
    pref_c, pref_cg, want1 = 0, 0, []
    for i in range(n):
        want1.append(float(Fraction(int(ints[i]) * pref_c - pref_cg, total)))
        pref_c += d[i + 1] if i + 1 < n else 0
        pref_cg += (d[i + 1] if i + 1 < n else 0) * int(ints[i])
    np.testing.assert_allclose(loo1, np.array(want1)[perm], rtol=1e-11, atol=1e-300)
    # max@k Training in integers: best = B / (64 T), var = V / (64^2 T^3), T = C(n, k).
    t = math.comb(n, k)
    b = sum(ci * int(g) for ci, g in zip(c, ints, strict=True))
    var = Fraction(sum(ci * (int(g) * t - b) ** 2 for ci, g in zip(c, ints, strict=True)),
                   4096 * t**3)
    num = [Fraction(n * (c[i] * int(ints[i]) + suffix[i + 1]) - k * b, 64 * k * t)
           for i in range(n)]
    want2 = np.array([float(x) for x in num]) / math.sqrt(var)
    maxk = rl.advantages(scores[perm], k=k, estimator="maxk-training")
    np.testing.assert_allclose(maxk, want2[perm], rtol=1e-11, atol=1e-13)


def test_identities():
    rng = np.random.default_rng(4)
    g = rng.random(9)
    np.testing.assert_allclose(rl.advantages(g, k=1, estimator="pkpo"), g / 9, rtol=1e-15,
                               atol=1e-16 * g.max())
    top = rl.advantages(g, k=9, estimator="pkpo-loo1")
    second, best = np.sort(g)[-2:]
    np.testing.assert_allclose(top[np.argmax(g)], best - second, rtol=1e-14)
    assert np.count_nonzero(top) == 1
    s = rl.advantages(g, k=4, estimator="pkpo")
    best4 = float(naive_rl._adv_best(list(g), 4))
    np.testing.assert_allclose(s.sum(), 4 * best4, rtol=1e-14)
    base = rl.advantages(g, k=4, estimator="maxk-training")
    np.testing.assert_allclose(
        rl.advantages(3.0 * g - 7.0, k=4, estimator="maxk-training"), base, rtol=1e-12, atol=1e-13
    )


def test_types_dtypes_and_shapes():
    assert rl.advantages(np.array([1, 0, 1], np.int8), k=2).dtype == np.float64
    assert rl.advantages(np.array([1.0, 0.0], np.float32), k=2).dtype == np.float32
    assert rl.advantages(np.array([1.0, 0.0], np.float16), k=2).dtype == np.float16
    out = rl.advantages([True, False, False], k=2)
    assert isinstance(out, np.ndarray) and out.dtype == np.float64
    np.testing.assert_array_equal(out, rl.advantages([1.0, 0.0, 0.0], k=2))
    assert rl.advantages(np.zeros((0,)), k=2).shape == (0,)


def test_torch_in_torch_out():
    torch = pytest.importorskip("torch")
    x = torch.tensor([[1.0, 0.0, 0.5, 0.0], [0.0, 0.0, 1.0, 1.0]], requires_grad=True)
    out = rl.advantages(x, k=2, estimator="maxk-training")
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float32 and out.shape == x.shape
    assert not out.requires_grad and out.device == x.device
    want = rl.advantages(x.detach().numpy().astype(np.float64), k=2, estimator="maxk-training")
    np.testing.assert_array_equal(out.numpy(), want.astype(np.float32))
    assert rl.advantages(torch.tensor([1, 0, 0]), k=2).dtype == torch.get_default_dtype()
    bf = rl.advantages(torch.tensor([1.0, 0.0], dtype=torch.bfloat16), k=2)
    assert bf.dtype == torch.bfloat16
    groups = torch.tensor([5, 5, 9, 9])
    got = rl.advantages(torch.tensor([1.0, 0.0, 0.0, 1.0]), groups, k=2)
    assert got.tolist() == [1.0, 0.0, 0.0, 1.0]


def test_cuda_tensor_comes_back_on_its_device():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device here")
    x = torch.tensor([[1.0, 0.0, 0.5, 0.0], [0.0, 0.0, 1.0, 1.0]], device="cuda")
    out = rl.advantages(x, k=2, estimator="maxk-training")
    assert out.device == x.device and out.dtype == torch.float32
    assert torch.equal(out.cpu(), rl.advantages(x.cpu(), k=2, estimator="maxk-training"))


def test_dense_holes_and_nan_drop():
    dense = np.array([[1.0, np.nan, 0.0, 0.5], [np.nan] * 4, [0.0, 1.0, np.nan, 1.0]])
    got = rl.advantages(dense, k=2, estimator="pkpo")
    assert np.isnan(got[np.isnan(dense)]).all()
    row0 = rl.advantages([1.0, 0.0, 0.5], k=2, estimator="pkpo")
    np.testing.assert_array_equal(got[0, [0, 2, 3]], row0)
    row2 = rl.advantages([0.0, 1.0, 1.0], k=2, estimator="pkpo")
    np.testing.assert_array_equal(got[2, [0, 1, 3]], row2)
    flat = np.array([1.0, np.nan, 0.0, 1.0])
    with pytest.raises(ValueError, match=r"scores\[1\] is NaN"):
        rl.advantages(flat, ["a", "a", "b", "b"], k=1, estimator="pkpo")
    got = rl.advantages(flat, ["a", "a", "b", "b"], k=1, nan="drop", estimator="pkpo")
    np.testing.assert_array_equal(got, [1.0, np.nan, 0.0, 0.5])


@pytest.mark.parametrize("kind", ["uuid", "bytes", "str-array", "object", "int", "list"])
def test_group_label_kinds_agree(kind):
    rng = np.random.default_rng(8)
    codes = rng.integers(0, 20, 300)
    scores = rng.random(300)
    names = {
        "uuid": [uuid.UUID(int=int(c) + 1) for c in range(20)],
        "bytes": [b"g%d" % c for c in range(20)],
        "str-array": [f"prompt-{c}" for c in range(20)],
        "object": [f"prompt-{c}" for c in range(20)],
        "int": list(range(100, 120)),
        "list": [(c, "x") for c in range(20)],
    }[kind]
    groups = [names[c] for c in codes]
    if kind == "str-array":
        groups = np.array(groups)
    elif kind in ("object", "int"):
        groups = np.array(groups, dtype=object if kind == "object" else np.int64)
    want = np.empty(300)
    for c in np.unique(codes):
        sel = codes == c
        want[sel] = rl.advantages(scores[sel], k=2, estimator="maxk-training")
    got = rl.advantages(scores, groups, k=2, estimator="maxk-training")
    np.testing.assert_array_equal(got, want)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 5), st.sampled_from([0.0, 0.5, 1.0, -1.0, 0.25])),
             min_size=1, max_size=60),
    st.sampled_from(sorted(ESTIMATORS)),
    st.sampled_from(["none", "group-std", "batch-std"]),
    st.randoms(use_true_random=False),
)
def test_order_independent_and_group_by_group(rows, estimator, normalize, rnd):
    if estimator == "grpo-passk":
        normalize = "none"
    groups = np.array([g for g, _ in rows])
    scores = np.array([s for _, s in rows])
    k = ESTIMATORS[estimator][1]
    sizes = np.bincount(groups)
    if sizes[sizes > 0].min() < k + ESTIMATORS[estimator][2]:
        with pytest.raises(ValueError, match="needs k <= n"):
            rl.advantages(scores, groups, k=k, estimator=estimator)
        return
    got = rl.advantages(scores, groups, k=k, estimator=estimator, normalize=normalize)
    perm = list(range(len(rows)))
    rnd.shuffle(perm)
    relabel = {g: f"label-{g}-{rnd.random()}" for g in set(groups.tolist())}
    shuffled = rl.advantages(
        scores[perm], [relabel[g] for g in groups[perm]], k=k, estimator=estimator,
        normalize=normalize,
    )
    np.testing.assert_array_equal(shuffled, got[perm])
    if normalize != "batch-std":
        for g in set(groups.tolist()):
            sel = groups == g
            alone = rl.advantages(scores[sel], k=k, estimator=estimator, normalize=normalize)
            np.testing.assert_array_equal(got[sel], alone)


def test_eight_threads_give_identical_results():
    rng = np.random.default_rng(12)
    scores = rng.choice([0.0, 0.25, 1.0], (2000, 16))
    want = {e: rl.advantages(scores, k=4, estimator=e) for e in ESTIMATORS}
    results, barrier = [None] * 8, threading.Barrier(8)

    def work(t):
        barrier.wait()
        results[t] = {e: rl.advantages(scores, k=4, estimator=e) for e in ESTIMATORS}

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        for e in ESTIMATORS:
            np.testing.assert_array_equal(r[e], want[e])


def test_errors_name_the_rule_and_position():
    with pytest.raises(ValueError, match=r"k must be >= 1 .*got k=0"):
        rl.advantages([1, 0], k=0, estimator="pkpo")
    with pytest.raises(ValueError, match=r"k must be >= 2 for estimator 'pkpo-loo1'"):
        rl.advantages([1, 0], k=1)
    with pytest.raises(TypeError, match="k must be an int"):
        rl.advantages([1, 0], k=True)
    with pytest.raises(TypeError, match="k must be an int"):
        rl.advantages([1, 0], k=2.0)
    with pytest.raises(ValueError, match=r"group 'b' \(first rollout at scores\[1\]\) has n=2"):
        rl.advantages([1, 0, 0, 1, 1], ["a", "b", "a", "b", "a"], k=3)
    with pytest.raises(ValueError, match=r"group 'b' \(first rollout at scores\[1\]\)"):
        rl.advantages([1, 0, 0, 1, 1], np.array(["a", "b", "a", "b", "a"]), k=3)
    with pytest.raises(ValueError, match=r"needs k <= n - 1.*scores\[1, 0\]\) has n=3"):
        rl.advantages([[1, 0, 1, 0], [1, 0, np.nan, 1]], k=3, estimator="pkpo-loo")
    with pytest.raises(ValueError, match="normalize must be 'none'"):
        rl.advantages([1, 0], k=2, estimator="grpo-passk", normalize="group-std")
    with pytest.raises(ValueError, match="estimator must be one of"):
        rl.advantages([1, 0], k=2, estimator="grpo")
    with pytest.raises(ValueError, match="normalize must be one of"):
        rl.advantages([1, 0], k=2, normalize="std")
    with pytest.raises(ValueError, match="groups has length 1 but scores have 2"):
        rl.advantages([1, 0], ["a"], k=1, estimator="pkpo")
    with pytest.raises(TypeError, match=r"groups\[1\] is not hashable \(list\)"):
        rl.advantages([1, 0], ["a", ["b"]], k=1, estimator="pkpo")
    with pytest.raises(TypeError, match=r"scores\[2\] must be a real number"):
        rl.advantages([1, 0, "1"], k=1, estimator="pkpo")
    with pytest.raises(ValueError, match=r"scores\[1\] is inf"):
        rl.advantages([1.0, np.inf], k=1, estimator="pkpo")


@pytest.mark.parametrize("estimator", ["pkpo", "pkpo-loo1", "maxk-training", "grpo-passk"])
def test_k_n_is_each_group_at_its_own_size(estimator):
    """Ragged groups, interleaved: each group equals a call on it alone with k = its n."""
    rng = np.random.default_rng(11)
    sizes = [2, 7, 3, 8, 2, 5]
    labels = np.repeat(np.arange(len(sizes)), sizes)
    perm = rng.permutation(labels.size)
    labels = labels[perm]
    scores = rng.choice([0.0, 0.5, 1.0], labels.size)
    got = rl.advantages(scores, labels, k="n", estimator=estimator)
    for g, n in enumerate(sizes):
        mine = labels == g
        want = rl.advantages(scores[mine], k=n, estimator=estimator)
        np.testing.assert_array_equal(got[mine], want)
    dense = np.array([[1.0, 0.0, np.nan, 1.0], [0.0, 1.0, 1.0, 0.0]])
    got = rl.advantages(dense, k="n", estimator=estimator)
    np.testing.assert_array_equal(got[0, [0, 1, 3]], rl.advantages([1.0, 0.0, 1.0], k=3,
                                                                   estimator=estimator))
    assert np.isnan(got[0, 2])


def test_short_groups_zero_and_empty_batches():
    scores = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 1.0], np.float32)
    groups = ["a", "a", "a", "b", "c", "c"]
    got = rl.advantages(scores, groups, k=2, short_groups="zero")
    assert got.dtype == np.float32 and got[3] == 0.0 and not np.signbit(got[3])
    keep = [0, 1, 2, 4, 5]
    np.testing.assert_array_equal(got[keep], rl.advantages(scores[keep], [groups[i] for i in keep],
                                                           k=2))
    with pytest.raises(ValueError, match=r"group 'b' \(first rollout at scores\[3\]\) has n=1"):
        rl.advantages(scores, groups, k=2)
    with pytest.raises(ValueError, match=r"k='n' and group 'b'.*short_groups='zero'"):
        rl.advantages(scores, groups, k="n")
    np.testing.assert_array_equal(rl.advantages(scores, groups, k="n", short_groups="zero")[3:4],
                                  [0.0])
    with pytest.raises(ValueError, match="k='n' is not possible"):
        rl.advantages(scores, groups, k="n", estimator="pkpo-loo")
    with pytest.raises(ValueError, match="short_groups must be one of"):
        rl.advantages(scores, groups, k=2, short_groups="drop")
    for k in (2, "n"):
        empty = rl.advantages(np.zeros(0, np.float32), np.array([], dtype=object), k=k)
        assert empty.shape == (0,) and empty.dtype == np.float32
        assert rl.advantages(np.zeros((0, 4)), k=k).shape == (0, 4)
