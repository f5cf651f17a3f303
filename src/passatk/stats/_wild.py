"""The wild cluster bootstrap for a mean with clustered tasks (Cameron, Gelbach & Miller
2008), null imposed (WCR), inverted into an interval; Rademacher weights, or Webb's
six-point weights below 12 clusters (Webb 2014).

For the mean of y over N tasks in G clusters, the CR1 t statistic of H0: mu = mu0 is
t(mu0) = (ybar - mu0) / se with the CR1 se of the sample. Under H0 the bootstrap draws a
weight v_g per cluster and sets y*_i = mu0 + v_g (y_i - mu0). Only the cluster sums
matter: with S_g = sum_(i in g) (y_i - ybar), n_g the cluster sizes and delta = ybar - mu0,
the cluster sums of y* - mu0 are u_g = v_g (S_g + n_g delta), and t* is their CR1 t
statistic. The p-value is P*(|t*| >= |t|) and the interval {mu0 : p(mu0) > alpha} is found
by bisection on each side. With few patterns (2^G or 6^G at most ``n_resamples``) every
pattern is enumerated, so the p-value is exact for the bootstrap law.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

#: below this many clusters the six-point weights replace Rademacher's (Webb 2014)
WEBB_BELOW = 12
_WEBB = np.array([-math.sqrt(1.5), -1.0, -math.sqrt(0.5), math.sqrt(0.5), 1.0, math.sqrt(1.5)])
_RADEMACHER = np.array([-1.0, 1.0])


def weights_name(g: int) -> str:
    return "Webb six-point" if g < WEBB_BELOW else "Rademacher"


def _draws(g, n_resamples, rng):
    """(B, G) weights: every pattern when there are at most n_resamples, else random ones."""
    pts = _WEBB if g < WEBB_BELOW else _RADEMACHER
    if pts.size**g <= n_resamples:
        return np.array(list(itertools.product(pts, repeat=g)))
    return pts[rng.integers(0, pts.size, size=(n_resamples, g))]


class WildBootstrap:
    """The bootstrap law of the CR1 t statistic of a clustered mean, for any mu0."""

    def __init__(self, y, cinv, n_resamples, rng):
        y = np.asarray(y, dtype=np.float64)
        self.size = y.size
        self.mean = float(np.mean(y))
        self.g = int(cinv.max()) + 1
        self.sums = np.bincount(cinv, weights=y - self.mean, minlength=self.g)
        self.counts = np.bincount(cinv, minlength=self.g).astype(np.float64)
        self.se = math.sqrt(self.g / (self.g - 1) * float(np.sum(self.sums**2))) / self.size
        self.v = _draws(self.g, n_resamples, rng)
        self.weights = weights_name(self.g)

    def p_value(self, mu0):
        """P*(|t*| >= |t(mu0)|) under H0: mu = mu0."""
        delta = self.mean - mu0
        t = delta / self.se
        u = self.v * (self.sums + self.counts * delta)[None, :]  # (B, G) sums of y* - mu0
        tot = u.sum(axis=1)
        r = u - self.counts[None, :] * (tot / self.size)[:, None]
        se = np.sqrt(self.g / (self.g - 1) * np.sum(r * r, axis=1)) / self.size
        with np.errstate(divide="ignore", invalid="ignore"):
            ts = np.abs(np.where(se > 0, tot / self.size / se, 0.0))
        return float(np.mean(ts >= abs(t) * (1.0 - 1e-12)))

    def interval(self, confidence, low, high):
        """(lo, hi, reason): the mu0 in [low, high] that the test at 1 - confidence keeps."""
        alpha = 1.0 - confidence
        ends = []
        why = []
        for bound in (low, high):
            inside, outside = self.mean, bound
            if self.p_value(bound) > alpha:
                ends.append(bound)
                why.append(f"{bound:g}")
                continue
            for _ in range(44):  # the range is at most 2 wide: 2 / 2**44 ~ 1e-13
                mid = 0.5 * (inside + outside)
                if self.p_value(mid) > alpha:
                    inside = mid
                else:
                    outside = mid
            ends.append(inside)
        text = None
        if why:
            text = (f"the wild cluster bootstrap with {self.g} clusters cannot exclude "
                    f"{' or '.join(why)}: its interval reaches the end of the range")
        return ends[0], ends[1], text


#: resamples x clusters of one wild bootstrap law (its cost per evaluated mu0)
WILD_WORK = 4_000_000


def wild_fields(y, cinv, confidence, n_resamples, rng, low, high, with_p=False):
    """The wild_* fields of a row (a dict) and a reason, or ({}, None) below 2 clusters.

    The resamples are capped at WILD_WORK / G (at least 999); ``wild_resamples`` says how
    many patterns were used.
    """
    g = int(cinv.max()) + 1
    if g < 2:
        return {}, None
    wb = WildBootstrap(y, cinv, min(n_resamples, max(999, WILD_WORK // g)), rng)
    if wb.se == 0.0:
        return {}, None
    lo, hi, why = wb.interval(confidence, low, high)
    out = {"wild_low": lo, "wild_high": hi, "wild_weights": wb.weights,
           "wild_resamples": int(wb.v.shape[0])}
    if with_p:
        out["wild_p_value"] = wb.p_value(0.0)
    return out, why


FEW_CLUSTERS = 20
PAIRS_BOOT_MIN = 10


def few_clusters_reason(g: int) -> str | None:
    """The warning of a row with G < 20 clusters (None from 20 on)."""
    if g >= FEW_CLUSTERS:
        return None
    return (f"only {g} clusters: the CR1 standard error and its t interval on {g - 1} df "
            f"under-cover below about {FEW_CLUSTERS} clusters (docs/statistics.md); "
            f"wild_low/wild_high is the wild cluster bootstrap interval "
            f"({weights_name(g)} weights)")
