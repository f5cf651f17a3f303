"""TRL integration: exact pass@k / pass^k of every step, and pass@k advantages, in GRPOTrainer.

Tested with TRL 1.16.0 (``TESTED_TRL``). TRL has no advantage hook, so :class:`PassAtKMixin`
overrides two methods of ``trl.GRPOTrainer``:

* ``_calculate_rewards``: calls TRL's and keeps its result, the rewards of *all* processes
  (gathered: TRL spreads one prompt's completions over processes, so per-process pass@k would
  be wrong). The reward of a completion is TRL's weighted sum over reward functions, NaN when
  every function returned None (unscorable), as TRL logs ``reward``.
* ``_generate_and_score_completions``: calls TRL's, logs ``group_metrics`` of those rewards
  (one group per prompt: TRL's ``view(-1, num_generations)``) into TRL's own metrics, and, with
  ``passatk_advantages=`` an estimator, replaces ``output["advantages"]`` by
  :func:`passatk.rl.advantages` of the gathered rewards, this process's slice. Unscorable
  completions get advantage 0, as TRL gives them.

``PassAtKGRPOTrainer`` is ``PassAtKMixin`` on ``trl.GRPOTrainer``; it is built on first use,
so this module imports without TRL:

>>> from passatk.rl import trl as passatk_trl
>>> passatk_trl.TESTED_TRL
('>=1.16.0', '<1.17')
"""

from __future__ import annotations

import importlib

from ._advantages import advantages
from ._metrics import group_metrics

TESTED_TRL = (">=1.16.0", "<1.17")
"""The TRL versions this integration is tested with."""
_OVERRIDDEN = ("_calculate_rewards", "_generate_and_score_completions")


class PassAtKMixin:
    """pass@k logging and advantages for a ``trl.GRPOTrainer`` (put it first in the bases).

    Keyword arguments (all others go to the trainer):

    passatk_k : sequence of int, optional
        The budgets logged; default 1, 2, 4, ... up to ``num_generations``.
    passatk_metrics : sequence of str
        ``group_metrics`` names; default ``("pass@k", "pass^k")``.
    passatk_threshold : float, optional
        A completion is correct when its reward is ``>= threshold``; without it the rewards
        must be 0 or 1 (bool, 0/1), else ``group_metrics`` raises naming the completion.
    passatk_prefix : str
        Prefix of the logged names (``"passatk/pass@4"``); default ``"passatk/"``.
    passatk_advantages : str, optional
        An estimator of :func:`passatk.rl.advantages` (``"pkpo-loo1"``, ...) to replace TRL's
        group-mean advantages; None keeps TRL's.
    passatk_advantages_k : int or "n"
        Its k; default ``"n"`` (pass@num_generations).
    passatk_normalize : str
        Its ``normalize``; default ``"none"`` (keep TRL's ``scale_rewards="none"``).
    passatk_short_groups : {"zero", "raise"}
        A prompt with fewer scored completions than k (reward functions returned None):
        advantage 0 (default; ``passatk/short_groups`` logs the fraction of such prompts)
        or ValueError.

    The logged means average the prompts that have k scored completions
    (``short_groups="exclude"`` of :func:`passatk.rl.group_metrics`).
    """

    def __init__(self, *args, passatk_k=None, passatk_metrics=("pass@k", "pass^k"),
                 passatk_threshold=None, passatk_prefix="passatk/", passatk_advantages=None,
                 passatk_advantages_k="n", passatk_normalize="none",
                 passatk_short_groups="zero", **kwargs):
        for name in _OVERRIDDEN:
            if not callable(getattr(super(), name, None)):
                version = importlib.import_module("trl").__version__
                raise TypeError(f"PassAtKMixin needs trl.GRPOTrainer.{name} (tested with TRL "
                                f"{TESTED_TRL[0]},{TESTED_TRL[1]}); TRL {version} lacks it")
        if passatk_advantages is not None:  # bad options fail here, not at the first step
            advantages([0.0, 1.0], k=passatk_advantages_k, estimator=passatk_advantages,
                       normalize=passatk_normalize, short_groups="zero")
        if passatk_short_groups not in ("zero", "raise"):
            raise ValueError("passatk_short_groups must be 'zero' or 'raise', "
                             f"got {passatk_short_groups!r}")
        super().__init__(*args, **kwargs)
        self.passatk_k = passatk_k
        self.passatk_metrics = tuple(passatk_metrics)
        self.passatk_threshold = passatk_threshold
        self.passatk_prefix = passatk_prefix
        self.passatk_advantages = passatk_advantages
        self.passatk_advantages_k = passatk_advantages_k
        self.passatk_normalize = passatk_normalize
        self.passatk_short_groups = passatk_short_groups
        self.passatk_rewards = None  # the last step's gathered rewards, (prompts, generations)

    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
        torch = importlib.import_module("torch")
        per_func = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
        weights = self.reward_weights.to(per_func.device).unsqueeze(0)
        rewards = (per_func * weights).nansum(dim=1)
        rewards[torch.isnan(per_func).all(dim=1)] = torch.nan  # unscorable, as TRL marks it
        mode = "train" if self.model.training else "eval"
        n = self.num_generations if mode == "train" else self.num_generations_eval
        self.passatk_rewards = rewards.detach().view(-1, n)
        return per_func

    def _generate_and_score_completions(self, inputs):
        torch = importlib.import_module("torch")
        out = super()._generate_and_score_completions(inputs)
        mode = "train" if self.model.training else "eval"
        dense = self.passatk_rewards
        self._passatk_log(dense, self._metrics[mode])
        if self.passatk_advantages is not None:
            adv = advantages(dense, k=self.passatk_advantages_k,
                             estimator=self.passatk_advantages,
                             normalize=self.passatk_normalize,
                             short_groups=self.passatk_short_groups)
            adv = torch.nan_to_num(adv.reshape(-1), nan=0.0)  # unscorable: 0, as TRL does
            start = self.accelerator.process_index * len(inputs)
            local = out["advantages"]
            out["advantages"] = adv[start:start + len(inputs)].to(local.device, local.dtype)
        return out

    def _passatk_log(self, dense, metrics):
        n = dense.shape[1]
        ks = self.passatk_k or [1 << i for i in range(n.bit_length()) if (1 << i) < n] + [n]
        res = group_metrics(dense, k=ks, metrics=self.passatk_metrics,
                            threshold=self.passatk_threshold, short_groups="exclude")
        for name, value in res.mean.items():
            metrics[self.passatk_prefix + name].append(value)
        if self.passatk_advantages is not None:
            k = n if self.passatk_advantages_k == "n" else self.passatk_advantages_k
            scored = (~dense.isnan()).sum(dim=1)
            short = ((scored < k) & (scored > 0)).float().mean().item()
            metrics[self.passatk_prefix + "short_groups"].append(short)


def __getattr__(name):
    if name != "PassAtKGRPOTrainer":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    trl = importlib.import_module("trl")
    cls = type("PassAtKGRPOTrainer", (PassAtKMixin, trl.GRPOTrainer), {
        "__doc__": "``trl.GRPOTrainer`` with :class:`PassAtKMixin`: pass@k logging and "
                   "optionally passatk's advantages.",
        "__module__": __name__,
    })
    globals()[name] = cls
    return cls
