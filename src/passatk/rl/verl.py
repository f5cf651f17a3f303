"""verl adapter for ``passatk.rl.advantages`` (work in progress on branch rl)."""
