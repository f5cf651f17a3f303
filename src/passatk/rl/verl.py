"""verl adapter: every ``passatk.rl.advantages`` estimator with verl's estimator signature.

verl calls an advantage estimator as ``fn(token_level_rewards=(bs, L) tensor,
response_mask=(bs, L) tensor, index=(bs,) array of uid strings, config=AlgoConfig)`` and takes
``(advantages, returns)``, both ``(bs, L)``. The functions here sum the token-level rewards per
rollout (as verl's outcome estimators do), group by ``index``, compute the advantages in one
call, and broadcast them over the mask. verl itself is not needed to use them; only
:func:`register` imports it.

verl hands torch tensors; numpy arrays work the same way:

>>> import numpy as np
>>> rewards = np.zeros((4, 3), np.float32)
>>> rewards[[0, 2], -1] = 1.0
>>> mask = np.array([[1, 1, 0], [1, 0, 0], [1, 1, 1], [1, 1, 1]], np.float32)
>>> adv, ret = pkpo_loo1(rewards, mask, np.array(["a", "a", "b", "b"], dtype=object), k=2)
>>> adv
array([[1., 1., 0.],
       [0., 0., 0.],
       [1., 1., 1.],
       [0., 0., 0.]], dtype=float32)
"""

import numpy as np

from ._advantages import ESTIMATORS, advantages
from ._groups import factorize

_VERL_EPSILON = 1e-6


def _adapter(estimator):
    def fn(token_level_rewards, response_mask, index, epsilon=_VERL_EPSILON, config=None,
           *, k=None, normalize="none", **kwargs):
        name = estimator
        if epsilon != _VERL_EPSILON:
            raise ValueError(f"epsilon must be verl's default {_VERL_EPSILON}, got {epsilon!r}")
        if name == "grpo-passk" and config is not None:
            if not config.get("norm_adv_by_std_in_grpo", True):
                name = "pkpo-loo1"  # verl's grpo_passk without its std division
        scores = token_level_rewards.sum(-1)  # per rollout, in the rewards' dtype, as verl does
        k = _group_size(index, len(scores)) if k is None else k
        adv = advantages(scores, index, k=k, estimator=name, normalize=normalize)
        adv = adv[..., None] * response_mask
        return adv, adv

    fn.__name__ = fn.__qualname__ = estimator.replace("-", "_")
    fn.__doc__ = (
        f"``rl.advantages(..., estimator={estimator!r})`` with verl's estimator signature.\n\n"
        "``k=None`` takes k = the group size (pass@n, as verl's grpo_passk); the groups must\n"
        "then all have one size. Returns ``(advantages, returns)``, both ``(bs, L)``: the\n"
        "per-rollout advantage times ``response_mask``."
    )
    return fn


def _group_size(index, size):
    codes, labels = factorize(index, size, name="index")
    counts = set(np.bincount(codes, minlength=len(labels)).tolist())
    if len(counts) != 1:
        raise ValueError(
            f"k=None means k = the group size, but groups have sizes {sorted(counts)}; pass k"
        )
    return counts.pop()


pkpo = _adapter("pkpo")
pkpo_loo = _adapter("pkpo-loo")
pkpo_loo1 = _adapter("pkpo-loo1")
passk_training = _adapter("passk-training")
maxk_training = _adapter("maxk-training")
grpo_passk = _adapter("grpo-passk")


def make_estimator(estimator="pkpo-loo1", *, k=None, normalize="none"):
    """One estimator with ``k`` and ``normalize`` bound, in verl's signature.

    >>> fn = make_estimator("passk-training", k=2)
    >>> fn.__name__
    'passatk_passk_training_k2'
    """
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {sorted(ESTIMATORS)}, got {estimator!r}")
    base = _adapter(estimator)

    def fn(token_level_rewards, response_mask, index, epsilon=_VERL_EPSILON, config=None,
           **kwargs):
        return base(token_level_rewards, response_mask, index, epsilon, config,
                    k=k, normalize=normalize)

    suffix = "" if k is None else f"_k{k}"
    fn.__name__ = fn.__qualname__ = "passatk_" + estimator.replace("-", "_") + suffix
    fn.__doc__ = base.__doc__
    return fn


def register(*, k=None, normalize="none", estimators=None, prefix="passatk_"):
    """Register estimators in verl's registry as ``prefix + name`` (e.g. ``passatk_pkpo_loo1``).

    Then ``algorithm.adv_estimator=passatk_pkpo_loo1`` selects one. Needs verl importable
    (``verl.trainer.ppo.core_algos.register_adv_est``); raises ImportError otherwise. Returns
    the registered names.
    """
    try:
        from verl.trainer.ppo.core_algos import register_adv_est
    except ImportError as exc:
        raise ImportError(f"passatk.rl.verl.register needs verl installed: {exc}") from exc
    names = []
    for estimator in estimators or ESTIMATORS:
        fn = make_estimator(estimator, k=k, normalize=normalize)
        name = prefix + estimator.replace("-", "_")
        register_adv_est(name)(fn)
        names.append(name)
    return names
