"""Plainly correct slow oracles for passatk.rl: brute force over every k-subset, exactly.

Every function takes the scored rollouts of one group (Python floats, no NaN) and returns
an exact :class:`fractions.Fraction` (floats convert exactly), so a test can measure the
kernels' error against the definition itself. Keep n <= 8 or so: the cost is C(n, k)
(or n**k with replacement).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

# ---------------------------------------------------------------- metrics (group_metrics)


def _subsets(n, k):
    return itertools.combinations(range(n), k)


def _mean(values):
    values = list(values)
    return sum(values, Fraction(0)) / len(values)


def pass_at_k(correct, k):
    """Share of k-subsets with at least one correct rollout."""
    return _mean(Fraction(int(any(correct[i] for i in s))) for s in _subsets(len(correct), k))


def pass_hat_k(correct, k):
    """Share of k-subsets whose rollouts are all correct."""
    return _mean(Fraction(int(all(correct[i] for i in s))) for s in _subsets(len(correct), k))


def best_at_k(scores, k):
    """Mean over k-subsets of the largest score."""
    return _mean(max(Fraction(scores[i]) for i in s) for s in _subsets(len(scores), k))


def worst_at_k(scores, k):
    """Mean over k-subsets of the smallest score."""
    return _mean(min(Fraction(scores[i]) for i in s) for s in _subsets(len(scores), k))


def g_pass_at_k(correct, k, tau):
    """Share of k-subsets with at least ceil(tau k) correct (tau a Fraction)."""
    need = math.ceil(Fraction(tau) * k)
    hits = (int(sum(correct[i] for i in s) >= need) for s in _subsets(len(correct), k))
    return _mean(Fraction(h) for h in hits)


def mg_pass_at_k(correct, k):
    """(2/k) sum_{i=ceil(k/2)+1}^{k} G-Pass@k_{i/k}, each term by enumeration."""
    total = sum((g_pass_at_k(correct, k, Fraction(i, k))
                 for i in range(math.ceil(k / 2) + 1, k + 1)), Fraction(0))
    return Fraction(2, k) * total


def _majority_value(scores, answers, idx):
    """Ties split equally; each winning answer is worth the mean score of its drawn
    rollouts (the expected score of the one a vote would pick); no votes at all score 0."""
    drawn = {}
    for i in idx:
        if answers[i] is not None:
            drawn.setdefault(answers[i], []).append(Fraction(scores[i]))
    if not drawn:
        return Fraction(0)
    top = max(len(v) for v in drawn.values())
    winners = [v for v in drawn.values() if len(v) == top]
    return sum((_mean(v) for v in winners), Fraction(0)) / len(winners)


def maj_at_k(scores, answers, k):
    """Mean over k-subsets of the majority answer's value."""
    return _mean(_majority_value(scores, answers, s) for s in _subsets(len(scores), k))


def _verl_vote(scores, answers, seq):
    """One bootstrap draw as verl scores it: the most frequent answer, ties to the one
    drawn first, worth the score of its first drawn rollout. A draw with no answer at all
    scores 0 (passatk's rule; verl would count None as an answer)."""
    counts = {}
    first = {}
    for i in seq:
        a = answers[i]
        if a is None:
            continue
        counts[a] = counts.get(a, 0) + 1
        first.setdefault(a, i)
    if not counts:
        return Fraction(0)
    win = max(counts, key=counts.get)  # dict order: the first drawn among the tied
    return Fraction(scores[first[win]])


def _moments(values):
    values = list(values)
    mu = _mean(values)
    return mu, _mean((v - mu) ** 2 for v in values)


def verl_best_at_k(scores, k):
    """(mean, variance) of max over k draws with replacement, over all n**k sequences."""
    seqs = itertools.product(range(len(scores)), repeat=k)
    return _moments(max(Fraction(scores[i]) for i in s) for s in seqs)


def verl_worst_at_k(scores, k):
    """(mean, variance) of min over k draws with replacement."""
    seqs = itertools.product(range(len(scores)), repeat=k)
    return _moments(min(Fraction(scores[i]) for i in s) for s in seqs)


def verl_maj_at_k(scores, answers, k):
    """(mean, variance) of verl's majority vote over k draws with replacement."""
    seqs = itertools.product(range(len(scores)), repeat=k)
    return _moments(_verl_vote(scores, answers, s) for s in seqs)


def mean_std_at_n(scores):
    """(mean, population variance) of the scores."""
    return _moments(Fraction(v) for v in scores)


# ---------------------------------------------------------------- advantages (rl.advantages)
# Brute force over every k-subset, in exact rationals (Fraction of each float score); only the
# final square root of the max@k Training sigma is in floating point.


def _adv_best(scores, k):
    """E[max of k drawn without replacement], exactly."""
    subsets = list(itertools.combinations([Fraction(x) for x in scores], k))
    return sum(max(s) for s in subsets) / len(subsets)


def _adv_s(scores, k):
    """PKPO s_i: sum over k-subsets S holding i of max(S), over C(n, k)."""
    n = len(scores)
    g = [Fraction(x) for x in scores]
    out = []
    for i in range(n):
        total = sum(max(g[j] for j in s) for s in itertools.combinations(range(n), k) if i in s)
        out.append(Fraction(total) / math.comb(n, k))
    return out


def _adv_without(scores, i):
    return list(scores[:i]) + list(scores[i + 1 :])


def adv_pkpo(scores, k):
    return _adv_s(scores, k)


def adv_pkpo_loo(scores, k):
    n = len(scores)
    s = _adv_s(scores, k)
    return [s[i] - k * _adv_best(_adv_without(scores, i), k) / (n - 1) for i in range(n)]


def adv_pkpo_loo1(scores, k):
    n = len(scores)
    s = _adv_s(scores, k)
    return [s[i] - Fraction(k, n) * _adv_best(_adv_without(scores, i), k - 1) for i in range(n)]


def adv_maxk_training(scores, k):
    """((n/k) s_i - best@k) / sigma, sigma^2 = Var of the max over k-subsets; 0 if sigma = 0."""
    n = len(scores)
    maxima = [max(s) for s in itertools.combinations([Fraction(x) for x in scores], k)]
    mean = sum(maxima) / len(maxima)
    var = sum((m - mean) ** 2 for m in maxima) / len(maxima)
    if var == 0:
        return [0.0] * n
    out = []
    for s in _adv_s(scores, k):
        num = Fraction(n, k) * s - mean
        out.append(math.copysign(math.sqrt(num * num / var), num))  # no underflow of var
    return out


def adv_passk_training_binary(correct, k):
    """Chen et al. (2025), analytic: A_pos = (1 - R) / sigma and
    A_neg = (1 - R - C(N_neg - 1, k - 1) / C(n - 1, k - 1)) / sigma, sigma = sqrt(R (1 - R))."""
    n = len(correct)
    neg = n - sum(1 for x in correct if x)
    r = 1 - Fraction(math.comb(neg, k), math.comb(n, k))
    if r * (1 - r) == 0:
        return [0.0] * n
    sigma = math.sqrt(r * (1 - r))
    a_pos = float(1 - r) / sigma
    a_neg = float(1 - r - Fraction(math.comb(neg - 1, k - 1), math.comb(n - 1, k - 1))) / sigma
    return [a_pos if x else a_neg for x in correct]


def adv_group_std(values, scores, eps=1e-6):
    """GRPO's division by the group's sample std + eps; exactly 0 for an all-equal group."""
    g = [Fraction(x) for x in scores]
    if len(set(g)) == 1:
        return [0.0] * len(g)
    mean = sum(g) / len(g)
    std = math.sqrt(sum((x - mean) ** 2 for x in g) / (len(g) - 1))
    return [float(v) / (std + eps) for v in values]


def verl_grpo_passk_numpy(scores, index, eps=1e-6):
    """verl's grpo_passk, step for step, in float32 numpy: per group, the arg-max gets
    (r_max - r_second_max) / (std + eps), std with n - 1; everyone else 0."""
    import numpy as np

    scores = np.asarray(scores, np.float32)
    out = np.zeros_like(scores)
    members = {}
    for i, label in enumerate(index):
        members.setdefault(label, []).append(i)
    for idx in members.values():
        rewards = scores[idx]
        order = np.argsort(-rewards, kind="stable")
        adv = rewards[order[0]] - rewards[order[1]]
        adv = adv / (np.std(rewards, ddof=1, dtype=np.float32) + np.float32(eps))
        out[idx[order[0]]] = adv
    return out
