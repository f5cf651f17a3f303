"""Per-rollout advantages that optimize pass@k, for whole batches of groups in one call.

Formulas and citations: docs/advantages.md. The kernels are in ``passatk._adv_kernels``.
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _adv_kernels as K
from .._validation import show
from ._groups import coerce_scores, layout

if TYPE_CHECKING:
    from .._types import AdvEstimator, AdvShortGroups, NanRule, Normalize

EPS = 1e-6
"""The epsilon of ``std + eps`` in GRPO-style normalizations (verl's default)."""

# name -> (kernel code, smallest k, rollouts a group needs beyond k)
ESTIMATORS = {
    "pkpo": (K.EST_PKPO, 1, 0),
    "pkpo-loo": (K.EST_PKPO_LOO, 1, 1),
    "pkpo-loo1": (K.EST_PKPO_LOO1, 2, 0),
    "passk-training": (K.EST_MAXK, 1, 0),
    "maxk-training": (K.EST_MAXK, 1, 0),
    "grpo-passk": (K.EST_GRPO_PASSK, 2, 0),
}
NORMALIZE = {"none": K.NORM_NONE, "group-std": K.NORM_GROUP, "batch-std": K.NORM_BATCH}
SHORT_GROUPS = ("raise", "zero")


def advantages(
    scores: Any, groups: Any = None, *, k: Any, estimator: AdvEstimator = "pkpo-loo1",
    normalize: Normalize = "none", nan: NanRule = "raise", short_groups: AdvShortGroups = "raise",
) -> Any:
    """Per-rollout advantages for pass@k (or max@k) optimization, every group in one call.

    Parameters
    ----------
    scores : array_like or torch.Tensor
        1-D ``(N,)`` scores with ``groups``, or dense 2-D ``(G, n)`` with one group per row
        and NaN for an unscorable rollout. Lists, numpy arrays of any real or bool dtype, and
        torch tensors (CPU, or CUDA by one copy to the host). Binary (0/1, bool) or continuous.
    groups : sequence of hashables, numpy array or torch tensor, optional
        1-D input only: one group label per rollout (ints, str, uuid, bytes, ...), in any
        order. None: the whole 1-D input is one group.
    k : int or "n"
        The k of pass@k: ``1 <= k <= n`` for every group (``k <= n - 1`` for "pkpo-loo",
        ``k >= 2`` for "pkpo-loo1" and "grpo-passk"). ``"n"``: each group at its own
        number of scored rollouts (pass@n, as verl's ``grpo_passk``), so groups may be
        ragged.
    estimator : str
        "pkpo" (PKPO s), "pkpo-loo" (s_loo), "pkpo-loo1" (s_loo-1, the default),
        "passk-training" (Chen et al. 2025), "maxk-training" (its max@k form; the two agree
        everywhere, the first name is for binary rewards), or "grpo-passk" (verl's, which
        divides by the group's std + 1e-6 itself and takes ``normalize="none"`` only).
    normalize : {"none", "group-std", "batch-std"}
        Divide by the sample std (n - 1) of the group's scores + 1e-6 (GRPO), or of all scores
        in the batch (Dr. GRPO keeps "none"). A group, or a batch, whose scores are all equal
        gets exactly 0.
    nan : {"raise", "drop"}
        NaN in 1-D scores raises ValueError, or with "drop" is a hole as in dense input.
    short_groups : {"raise", "zero"}
        A group with too few scored rollouts for k raises ValueError naming it, or with
        "zero" gets advantage exactly 0 (no learning signal) for every scored rollout.

    Returns
    -------
    numpy.ndarray or torch.Tensor
        The advantages, in the shape, float dtype and device of ``scores`` (int and bool give
        float64, or torch's default dtype). Holes are NaN.

    Examples
    --------
    >>> advantages([1, 0, 0, 0], k=2)
    array([0.5, 0. , 0. , 0. ])
    >>> advantages([[1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0]], k=2, estimator="passk-training")
    array([[ 1.        , -0.33333333, -0.33333333, -0.33333333],
           [ 0.        ,  0.        ,  0.        ,  0.        ]])
    >>> advantages([1, 0, 1, 0, 0], [0, 0, 1, 1, 1], k="n")  # ragged: k = 2, then 3
    array([1., 0., 1., 0., 0.])
    """
    code, k = _check_estimator(estimator, k, normalize)
    if short_groups not in SHORT_GROUPS:
        raise ValueError(f"short_groups must be one of {SHORT_GROUPS}, got {short_groups!r}")
    norm = NORMALIZE[normalize]
    s = coerce_scores(scores)
    lay = layout(s.values, groups, nan=nan)
    short = _short_groups(lay, k, estimator, short_groups == "raise")
    flat = s.values.reshape(-1)
    holes = lay.order.size != flat.size
    out = np.full(flat.size, np.nan) if holes else np.empty(flat.size)
    batch_scale = _batch_scale(flat[lay.order]) if norm == K.NORM_BATCH else 1.0
    for k_g, order, offsets in _runs(lay, k, short):
        K.advantages_groups(flat, order, offsets, k_g, code, True, norm, batch_scale, EPS, out)
    if short.any():
        out[_subset(lay, short)[0]] = 0.0
    return s.restore(out.reshape(s.shape))


def _subset(lay, keep):
    """The CSR ``(order, offsets)`` of the groups where ``keep`` is true."""
    n = lay.n[keep]
    offsets = np.zeros(n.size + 1, np.int64)
    np.cumsum(n, out=offsets[1:])
    starts = lay.offsets[:-1][keep]
    idx = np.repeat(starts - offsets[:-1], n) + np.arange(offsets[-1])
    return lay.order[idx], offsets


def _runs(lay, k, short):
    """``(k, order, offsets)`` for each kernel call: one call for an int k, one per
    distinct group size for ``k="n"``; short groups are left out."""
    scored = (lay.n > 0) & ~short
    if k != "n":
        if scored.all():
            yield k, lay.order, lay.offsets
        elif scored.any():
            yield (k, *_subset(lay, scored))
        return
    for size in np.unique(lay.n[scored]).tolist():
        yield (size, *_subset(lay, scored & (lay.n == size)))


def _check_estimator(estimator, k, normalize):
    if not isinstance(estimator, str) or estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {sorted(ESTIMATORS)}, got {show(estimator)}")
    if not isinstance(normalize, str) or normalize not in NORMALIZE:
        raise ValueError(f"normalize must be one of {sorted(NORMALIZE)}, got {show(normalize)}")
    if estimator == "grpo-passk" and normalize != "none":
        raise ValueError(
            "estimator 'grpo-passk' divides by the group std itself; "
            f"normalize must be 'none', got {normalize!r}"
        )
    code, k_min, extra = ESTIMATORS[estimator]
    if isinstance(k, str) and k == "n":
        if extra:
            raise ValueError(f"estimator {estimator!r} needs k <= n - {extra}, so k='n' is "
                             "not possible; pass an int k")
        return code, k
    if isinstance(k, bool):
        raise TypeError("k must be an int, got bool")
    try:
        k = operator.index(k)
    except TypeError:
        raise TypeError(f"k must be an int or 'n', got {type(k).__name__} {show(k)}") from None
    if k < k_min:
        raise ValueError(f"k must be >= {k_min} for estimator {estimator!r}, got k={show(k)}")
    return code, k


def _short_groups(lay, k, estimator, strict):
    """Groups with a scored rollout but n < k (n < k + 1 for pkpo-loo; for ``k="n"``,
    n below the estimator's smallest k): a bool mask, or ValueError when ``strict``."""
    _, k_min, extra = ESTIMATORS[estimator]
    n = lay.n
    need = np.maximum(n, k_min) + extra if k == "n" else k + extra
    short = (n < need) & (n > 0)
    if strict and short.any():
        g = int(np.flatnonzero(short)[0])
        rule = f"k <= n - {extra}" if extra else "k <= n"
        if k == "n":
            rule = f"{rule} and k >= {k_min}"
        label = lay.labels[g : g + 1].tolist()[0]  # the Python value, not np.str_(...)
        raise ValueError(
            f"estimator {estimator!r} needs {rule}, but k={show(k)} and group {show(label)} "
            f"(first rollout at scores[{_fmt(lay.position(lay.first[g]))}]) has n={int(n[g])} "
            "scored rollouts; short_groups='zero' gives such groups advantage 0"
        )
    return short


def _fmt(pos):
    return ", ".join(map(str, pos)) if isinstance(pos, tuple) else str(pos)


def _batch_scale(scored):
    """1 / (sample std + eps) of every scored rollout, summed in sorted order; 0 if all equal."""
    if scored.size < 2:
        return 0.0
    z = np.sort(scored)
    if z[0] == z[-1]:
        return 0.0
    mean = z.sum() / z.size
    std = np.sqrt(((z - mean) ** 2).sum() / (z.size - 1))
    return 1.0 / (std + EPS)
