"""Per-rollout advantages that optimize pass@k (work in progress on branch rl)."""


def advantages(scores, groups=None, *, k, estimator="pkpo-loo1", normalize="none"):
    """Per-rollout advantages; not implemented yet on this branch."""
    raise NotImplementedError("rl.advantages is being written (issue 7)")
