"""verl adapter: every ``passatk.rl.advantages`` estimator with verl's estimator signature.

verl calls an advantage estimator as ``fn(token_level_rewards=(bs, L) tensor,
response_mask=(bs, L) tensor, index=(bs,) array of uid strings, config=AlgoConfig)`` and takes
``(advantages, returns)``, both ``(bs, L)``. The estimators here sum the token-level rewards
per rollout (as verl's outcome estimators do), group by ``index``, compute the advantages in
one call, and broadcast them over the mask. verl itself is not needed to call them; only
:func:`register` imports it. In a verl run, the ``verl.plugins`` entry point
(:mod:`passatk.rl.verl_plugin`) registers them in every process: docs/advantages.md.

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

import sys
from dataclasses import dataclass

import numpy as np

from ._advantages import ESTIMATORS, NORMALIZE, SHORT_GROUPS, advantages
from ._verl_validation import validation_metrics

__all__ = [
    "Estimator",
    "grpo_passk",
    "make_estimator",
    "maxk_training",
    "names",
    "passk_training",
    "pkpo",
    "pkpo_loo",
    "pkpo_loo1",
    "register",
    "validation_metrics",
]

_VERL_EPSILON = 1e-6
_NAN = ("raise", "drop")
_OPTIONS = ("k", "normalize", "nan", "short_groups")
NAMED_KS = (*range(1, 65), 128, 256, 512, 1024)
"""The k of the ``passatk_<estimator>_k<k>`` names that :func:`register` adds."""
CONFIG_KEY = "passatk"
"""verl's ``algorithm.passatk`` section (``+algorithm.passatk.k=4`` on the command line)."""


@dataclass(frozen=True, slots=True)
class Estimator:
    """One passatk estimator in verl's signature, with its options bound.

    Call it as verl does: ``est(token_level_rewards=..., response_mask=..., index=uids,
    config=algorithm_config)``; returns ``(advantages, returns)``, the same ``(bs, L)``
    tensor twice (as verl's outcome estimators), in the rewards' dtype and device.

    Options (keyword arguments of the call, else those bound here, else verl's
    ``algorithm.passatk`` section, else the default): ``k`` (an int, or ``"n"``: each
    group at its own size, the default), ``normalize``, ``nan`` (``"raise"``, or
    ``"drop"``: the rollout is left out of its group and gets advantage 0) and
    ``short_groups`` (``"raise"`` or ``"zero"``). A k bound here that differs from the
    config's is an error. Equal options make equal estimators, so registering one twice
    is harmless.

    >>> make_estimator("pkpo", k=4) == make_estimator("pkpo", k=4)
    True
    """

    estimator: str
    k: object = None
    normalize: str | None = None
    nan: str | None = None
    short_groups: str | None = None
    name: str = ""

    @property
    def __name__(self):
        return self.name or "passatk_" + self.estimator.replace("-", "_")

    def __call__(self, token_level_rewards, response_mask, index=None, epsilon=_VERL_EPSILON,
                 config=None, reward_baselines=None, *, k=None, normalize=None, nan=None,
                 short_groups=None):
        if epsilon != _VERL_EPSILON:
            raise ValueError(f"epsilon must be verl's default {_VERL_EPSILON}, got {epsilon!r}")
        if index is None:
            raise ValueError(f"{self.__name__} needs index: verl's uid of every rollout")
        given = {"k": k, "normalize": normalize, "nan": nan, "short_groups": short_groups}
        opts = self._options(given, config)
        name = self.estimator
        if name == "grpo-passk" and config is not None:
            if not config.get("norm_adv_by_std_in_grpo", True):
                name = "pkpo-loo1"  # verl's grpo_passk without its std division
        scores = token_level_rewards.sum(-1)  # per rollout, in the rewards' dtype, as verl does
        try:
            adv = advantages(scores, index, k=opts["k"], estimator=name,
                             normalize=opts["normalize"], nan=opts["nan"],
                             short_groups=opts["short_groups"])
        except ValueError as exc:
            raise ValueError(f"{self.__name__}: {exc}{_hint(str(exc))}") from None
        if opts["nan"] == "drop":
            adv = _zero_nan(adv)  # a dropped rollout has no signal; verl's loss needs finite
        adv = adv[..., None] * response_mask
        return adv, adv

    def _options(self, given, config):
        section = _section(config)
        out = {}
        for key in _OPTIONS:
            bound, conf = getattr(self, key), section.get(key)
            if bound is not None and conf is not None and bound != conf:
                raise ValueError(
                    f"{self.__name__} has {key}={bound!r} bound (by its name or "
                    f"make_estimator) but verl's algorithm.{CONFIG_KEY}.{key} is {conf!r}"
                )
            value = next((v for v in (given[key], bound, conf) if v is not None), None)
            out[key] = _default(key, value)
        return out


def _hint(message):
    """What to set in verl's config for the errors a verl user can act on."""
    if "is NaN" in message:
        return f" (verl: +algorithm.{CONFIG_KEY}.nan=drop)"
    if "short_groups='zero'" in message:
        return f" (verl: +algorithm.{CONFIG_KEY}.short_groups=zero)"
    if "k='n' is not possible" in message:
        return f" (verl: a name ending in _k<k>, or +algorithm.{CONFIG_KEY}.k)"
    return ""


def _default(key, value):
    if value is None:
        return {"k": "n", "normalize": "none", "nan": "raise", "short_groups": "raise"}[key]
    return value


def _section(config):
    """verl's ``algorithm.passatk`` mapping (DictConfig, AlgoConfig or dict), checked."""
    if config is None:
        return {}
    section = config.get(CONFIG_KEY)
    if section is None:
        return {}
    keys = list(section.keys())
    bad = [key for key in keys if key not in _OPTIONS]
    if bad:
        raise ValueError(f"algorithm.{CONFIG_KEY}.{bad[0]} is not an option; "
                         f"choose from {_OPTIONS}")
    return {key: section.get(key) for key in keys}


def _zero_nan(adv):
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(adv, torch.Tensor):
        return torch.nan_to_num(adv, nan=0.0)
    return np.nan_to_num(adv, nan=0.0)


def _check(estimator, k, normalize, nan, short_groups):
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {sorted(ESTIMATORS)}, got {estimator!r}")
    if k is not None and k != "n" and (isinstance(k, bool) or not isinstance(k, int)):
        raise TypeError(f"k must be an int, 'n' or None, got {type(k).__name__} {k!r}")
    for key, value, allowed in (("normalize", normalize, tuple(NORMALIZE)),
                                ("nan", nan, _NAN), ("short_groups", short_groups, SHORT_GROUPS)):
        if value is not None and value not in allowed:
            raise ValueError(f"{key} must be one of {allowed}, got {value!r}")


def make_estimator(estimator="pkpo-loo1", *, k=None, normalize=None, nan=None,
                   short_groups=None):
    """One estimator with its options bound, in verl's signature (an :class:`Estimator`).

    Options left None come from verl's ``algorithm.passatk`` config section at each call,
    else the defaults (``k="n"``, ``normalize="none"``, ``nan="raise"``,
    ``short_groups="raise"``).

    >>> fn = make_estimator("passk-training", k=2)
    >>> fn.__name__
    'passatk_passk_training_k2'
    """
    _check(estimator, k, normalize, nan, short_groups)
    suffix = "" if k is None else f"_k{k}"
    name = "passatk_" + estimator.replace("-", "_") + suffix
    return Estimator(estimator, k, normalize, nan, short_groups, name)


pkpo = Estimator("pkpo")
pkpo_loo = Estimator("pkpo-loo")
pkpo_loo1 = Estimator("pkpo-loo1")
passk_training = Estimator("passk-training")
maxk_training = Estimator("maxk-training")
grpo_passk = Estimator("grpo-passk")


def names(estimators=None, prefix="passatk_", ks=NAMED_KS):
    """``{name: (estimator, k)}`` that :func:`register` adds: ``prefix + estimator`` with k
    unbound, and ``prefix + estimator + "_k<k>"`` for each k in ``ks`` the estimator takes.

    >>> sorted(names(["pkpo-loo1"], ks=(1, 2, 4)))
    ['passatk_pkpo_loo1', 'passatk_pkpo_loo1_k2', 'passatk_pkpo_loo1_k4']
    """
    out = {}
    for estimator in estimators or ESTIMATORS:
        if estimator not in ESTIMATORS:
            raise ValueError(f"estimator must be one of {sorted(ESTIMATORS)}, got {estimator!r}")
        base = prefix + estimator.replace("-", "_")
        out[base] = (estimator, None)
        k_min = ESTIMATORS[estimator][1]
        out.update({f"{base}_k{k}": (estimator, k) for k in ks if k >= k_min})
    return out


def register(*, k=None, normalize=None, nan=None, short_groups=None, estimators=None,
             prefix="passatk_", ks=NAMED_KS):
    """Register estimators in verl's registry; returns the names, e.g. ``passatk_pkpo_loo1``.

    Without ``k``, each estimator is registered under ``prefix + name`` (k from verl's
    ``algorithm.passatk.k``, else each group at its own size) and under ``..._k<k>`` for
    every k in ``ks``. With ``k``, only under ``prefix + name``, with k bound. Registering
    the same estimators again is a no-op; a name that verl already holds for a different
    function raises ValueError. Needs verl (``verl.trainer.ppo.core_algos``); raises
    ImportError otherwise. A verl run does not need this call: passatk's ``verl.plugins``
    entry point registers the defaults in every process.
    """
    try:
        from verl.trainer.ppo import core_algos
    except ImportError as exc:
        raise ImportError(f"passatk.rl.verl.register needs verl installed: {exc}") from exc
    _check("pkpo", k, normalize, nan, short_groups)  # the options; names() checks estimators
    table = names(estimators, prefix, () if k is not None else ks)
    registry = getattr(core_algos, "ADV_ESTIMATOR_REGISTRY", {})
    fns = {name: Estimator(estimator, k if k is not None else k_name, normalize, nan,
                           short_groups, name)
           for name, (estimator, k_name) in table.items()}
    for name, fn in fns.items():  # all checked before any is registered
        held = registry.get(name)
        if held is not None and held != fn:
            raise ValueError(
                f"verl already has an advantage estimator named {name!r} ({held!r}); "
                f"passatk would register {fn!r}. Choose k by the name (passatk_<estimator>_k4) "
                f"or by algorithm.{CONFIG_KEY}.k, or register under another prefix"
            )
    for name, fn in fns.items():
        core_algos.register_adv_est(name)(fn)
    return list(fns)
