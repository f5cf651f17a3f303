"""A drop-in for verl's ``process_validation_metrics``: its nested output and key names, exact.

verl 0.9's ``metric_utils.process_validation_metrics`` groups the validation samples by data
source and uid, and for every numeric variable of ``infos_dict`` reports, per prompt, mean@n,
std@n (ddof 0) and, for k = 2, 4, ..., n, best@k, worst@k and maj@k as the mean and std of
1,000 bootstrap draws with replacement; the result averages the prompts that have each key.
:func:`validation_metrics` gives the same structure with the same keys, computed exactly by
:func:`passatk.rl.group_metrics`, without touching any random number generator.
"""

from __future__ import annotations

import numpy as np

from ._metrics import NONE_ANSWERS, group_metrics

ESTIMATORS = ("verl", "unbiased")


def validation_metrics(data_sources, sample_uids, infos_dict, seed=42,
                       expected_acc_counts=None, *, estimator="verl", none_answers="skip"):
    """verl's ``{data_source: {variable: {metric: value}}}`` validation metrics, exactly.

    Parameters
    ----------
    data_sources, sample_uids : sequence
        Per sample, as verl passes them.
    infos_dict : mapping of str to sequence
        Per variable (``"acc"``, ``"score"``, ``"pred"``, ...), one value per sample; None
        values are left out, and variables whose values are strings are not metrics (verl's
        rules). ``"pred"`` holds the answers for maj@k.
    seed : int
        Accepted for verl's signature; nothing is sampled.
    expected_acc_counts : mapping of (data_source, uid) to int, optional
        verl's option: missing sessions count as ``acc = 0``, and ``acc_success_only``
        keeps the observed ones.
    estimator : {"verl", "unbiased"}
        "verl": the exact mean and std of verl's bootstrap (keys ``best@k/mean`` and
        ``best@k/std``, as verl), so a dashboard does not jump. "unbiased": the unbiased
        best@k, worst@k and maj@k over k-subsets drawn without replacement, under
        ``.../mean`` only (there is no bootstrap std).
    none_answers : {"skip", "vote", "abstain"}
        maj@k of a prompt with a None pred: none (verl 0.9's rule, the default), None as an
        answer (verl <= 0.6), or None never votes (passatk's rule). With "skip", a prompt
        whose preds do not match its values one for one also has no maj@k, as in verl 0.9.

    Examples
    --------
    >>> out = validation_metrics(["math"] * 4, ["u1", "u1", "u2", "u2"],
    ...                          {"acc": [1.0, 0.0, 1.0, 1.0], "pred": ["7", "5", "7", "7"]})
    >>> list(out["math"]["acc"])  # doctest: +NORMALIZE_WHITESPACE
    ['mean@2', 'std@2', 'best@2/mean', 'best@2/std', 'worst@2/mean', 'worst@2/std',
     'maj@2/mean', 'maj@2/std']
    >>> [out["math"]["acc"][key] for key in ("mean@2", "best@2/mean", "maj@2/std")]
    [0.75, 0.875, 0.25]
    """
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {ESTIMATORS}, got {estimator!r}")
    if none_answers not in NONE_ANSWERS:
        raise ValueError(f"none_answers must be one of {NONE_ANSWERS}, got {none_answers!r}")
    grouped = _group(data_sources, sample_uids, infos_dict)
    if expected_acc_counts:
        _expect_acc(grouped, expected_acc_counts)
    out = {}
    for source, uid2vars in grouped.items():
        per_var = {}
        for var in _variables(uid2vars):
            lists = {key: v[var] for key, v in uid2vars.items() if var in v}
            preds = {key: v.get("pred") for key, v in uid2vars.items()}
            metrics = _one_variable(source, var, lists, preds, estimator, none_answers)
            if metrics:
                per_var[var] = metrics
        out[source] = per_var
    return out


def _group(data_sources, sample_uids, infos_dict):
    size = len(data_sources)
    if len(sample_uids) != size:
        raise ValueError(f"sample_uids has {len(sample_uids)} entries but data_sources has {size}")
    for var, values in infos_dict.items():
        if len(values) != size:
            raise ValueError(f"infos_dict[{var!r}] has {len(values)} values but there are "
                             f"{size} samples")
    grouped = {}
    for i, (source, uid) in enumerate(zip(data_sources, sample_uids, strict=True)):
        grouped.setdefault(source, {}).setdefault(uid, []).append(i)
    columns = {var: list(values) for var, values in infos_dict.items()}
    return {source: {uid: {var: [col[i] for i in idx] for var, col in columns.items()}
                     for uid, idx in uids.items()}
            for source, uids in grouped.items()}


def _expect_acc(grouped, expected):
    """verl's ``expected_acc_counts``: for sources that have acc, pad it with 0.0."""
    with_acc = {source for source, uids in grouped.items()
                if any(v is not None for var2vals in uids.values()
                       for v in var2vals.get("acc", []))}
    for (source, uid), count in expected.items():
        if source not in with_acc:
            continue
        var2vals = grouped[source].setdefault(uid, {})
        observed = [v for v in var2vals.get("acc", []) if v is not None]
        var2vals["acc_success_only"] = observed
        var2vals["acc"] = observed + [0.0] * max(count - len(observed), 0)


def _variables(uid2vars):
    seen = {}
    for var2vals in uid2vars.values():
        seen.update(dict.fromkeys(var2vals))
    return list(seen)


def _ladder(n):
    """verl's k: 2, 4, ... below n, and n (none for n <= 1)."""
    if n <= 1:
        return []
    return [k for k in (1 << i for i in range(1, n.bit_length())) if k < n] + [n]


def _one_variable(source, var, lists, preds, estimator, none_answers):
    """The mean over prompts of each per-prompt metric of one variable of one source."""
    uids, values, answers = [], [], []
    for uid, raw in lists.items():
        vals = [v for v in raw if v is not None]
        if not vals or isinstance(vals[0], str):
            continue
        uids.append(uid)
        values.append(vals)
        answers.append(_answers(preds.get(uid), raw, vals, none_answers))
    per_key = {}
    sizes = np.array([len(v) for v in values], np.int64)
    for n in dict.fromkeys(sizes.tolist()):
        rows = np.flatnonzero(sizes == n)
        _bucket(source, var, n, [values[r] for r in rows], [answers[r] for r in rows],
                estimator, none_answers, per_key)
    return {key: float(np.mean(np.concatenate(parts))) for key, parts in per_key.items()}


def _answers(pred, raw, vals, none_answers):
    """The preds maj@k uses for one prompt, or None when the prompt has no maj@k."""
    if pred is None:
        return None
    if none_answers == "skip":  # verl 0.9: one pred per kept value, and none of them None
        if len(pred) != len(vals) or any(p is None for p in pred):
            return None
        return list(pred)
    return [p for p, v in zip(pred, raw, strict=False) if v is not None] \
        if len(pred) == len(raw) else None


def _bucket(source, var, n, values, answers, estimator, none_answers, per_key):
    """Per-prompt metrics of the prompts with n values, appended to ``per_key``."""
    count = len(values)
    flat = _scores(source, var, values)
    groups = np.repeat(np.arange(count), n)
    ks = _ladder(n)
    put = per_key.setdefault
    res = group_metrics(flat, groups, k=ks or [1], metrics=["mean@n", "std@n"])
    put(f"mean@{n}", []).append(res.values["mean@n"])
    if not ks:
        return
    put(f"std@{n}", []).append(res.values["std@n"])
    order = group_metrics(flat, groups, k=ks, metrics=["best@k", "worst@k"],
                          estimator=estimator)
    voted = [i for i, a in enumerate(answers) if a is not None]
    maj = None
    if voted:
        sub = np.isin(groups, voted)
        flat_answers = [a for i in voted for a in answers[i]]
        maj = group_metrics(flat[sub], groups[sub], k=ks, metrics=["maj@k"],
                            answers=flat_answers, estimator=estimator,
                            none_answers="vote" if none_answers == "vote" else "abstain")
    for k in ks:
        for head in ("best", "worst"):
            _put(per_key, f"{head}@{k}", order, estimator)
        if maj is not None:
            _put(per_key, f"maj@{k}", maj, estimator)


def _put(per_key, name, res, estimator):
    per_key.setdefault(f"{name}/mean", []).append(res.values[name])
    if estimator == "verl":
        per_key.setdefault(f"{name}/std", []).append(res.values[f"{name}/std"])


def _scores(source, var, values):
    try:
        return np.array([float(v) for vals in values for v in vals])
    except (TypeError, ValueError) as exc:
        raise TypeError(f"infos_dict[{var!r}] of data source {source!r} must hold numbers "
                        f"(or None, or only strings): {exc}") from None
