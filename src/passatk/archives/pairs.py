"""Pair the groups of two runs for a paired comparison (``passatk compare``)."""

from typing import NamedTuple

from passatk.archives.counts import Counts, GroupCounts
from passatk.errors import HintedError, Option


class RunPair(NamedTuple):
    """One group of run A and its counterpart in run B, with the group to report."""

    group: dict
    a: GroupCounts
    b: GroupCounts


def group_label(group: dict) -> str:
    """``field=value`` pairs joined by commas, or ``"all"`` for the ungrouped run."""
    return ",".join(f"{k}={v}" for k, v in group.items()) or "all"


def pair_runs(a: Counts, b: Counts) -> list[RunPair]:
    """Match the groups of run A and run B, for :func:`passatk.compare` one pair at a time.

    Groups pair by equal fields. When the runs have different groups and one group each (two
    single-model runs), that one pair is returned, reported as the group
    ``{"a": label of A, "b": label of B}``. Groups that cannot be paired one to one raise a
    :class:`passatk.errors.HintedError` naming ``by`` and ``merge``.

    Examples
    --------
    >>> from passatk.archives import Counts, pair_runs
    >>> a = Counts.from_rows([("t/0", 10, 3), ("t/1", 10, 5)])
    >>> b = Counts.from_rows([("t/0", 10, 4), ("t/1", 10, 5)])
    >>> [(p.group, p.a.c.tolist(), p.b.c.tolist()) for p in pair_runs(a, b)]
    [({}, [3, 5], [4, 5])]
    """
    for name, counts in (("a", a), ("b", b)):
        if not isinstance(counts, Counts):
            raise TypeError(f"{name} must be a Counts (from read_counts), got "
                            f"{type(counts).__name__}")
    groups_a, groups_b = ({tuple(g.group.items()): g for g in x.iter_groups()} for x in (a, b))
    if set(groups_a) == set(groups_b):
        return [RunPair(dict(key), ga, groups_b[key]) for key, ga in groups_a.items()]
    if len(groups_a) == 1 and len(groups_b) == 1:
        (ka, ga), (kb, gb) = *groups_a.items(), *groups_b.items()
        return [RunPair({"a": group_label(dict(ka)), "b": group_label(dict(kb))}, ga, gb)]
    only_a = "; ".join(group_label(dict(k)) for k in groups_a if k not in groups_b) or "-"
    only_b = "; ".join(group_label(dict(k)) for k in groups_b if k not in groups_a) or "-"
    raise HintedError(
        f"runs A and B have different groups (only in A: {only_a}; only in B: {only_b}); "
        "choose ", Option("by"), " fields that both runs share, or ", Option("merge", True),
        " to pool the shards of a run")
