"""The zero-one inflated Beta-binomial posterior behind ``metric="posterior"`` and
``"posterior-population"`` when tasks have more than one sample.

RLVR archives hold many tasks that are never solved and many that are always solved; a
single Beta cannot hold those point masses beside a U-shaped middle, and its posterior was
biased (the audit's P1 and P2). The model here has them:

    p_i = 0 with weight w0,  p_i = 1 with weight w1,  p_i ~ Beta(a, b) with weight wB,

with (w0, w1, wB) ~ Dirichlet(1, 1, 1), mu = a / (a + b) ~ U(0, 1) and
ln(a + b) ~ N(HYPER_LOC, HYPER_SCALE^2) as in the Beta-only model. A task with 0 < c < n
comes from the Beta; one at c = 0 (c = n) from the point mass at 0 (1) or from the Beta.
The four hyperparameters are integrated on a grid over (logit mu, ln kappa, w0, w1) that is
re-centred on the posterior mass a few times. The per-(n, c) Beta-binomial terms come from
the kernel of the Beta-only model, one distinct (n, c) at a time.
"""

from __future__ import annotations

import math

import numpy as np

from . import _kernels as SK
from ._posterior import _U_BOX, _V_BOX, HYPER_LOC, HYPER_SCALE, _log_prior

_PASSES = ((21, 12), (21, 12), (25, 16), (33, 24))  # (nodes per (u, v) axis, per w axis)


def describe() -> str:
    return (f"zero-one inflated Beta-binomial: p_i = 0 (weight w0), 1 (w1) or ~ Beta(a, b) "
            f"(w_B), (w0, w1, w_B) ~ Dirichlet(1, 1, 1), mu = a/(a+b) ~ U(0,1), "
            f"ln(a+b) ~ N({HYPER_LOC:.3g}, {HYPER_SCALE:g}^2), integrated on a 4-D grid")


class _Data:
    def __init__(self, n, c):
        pairs, counts = np.unique(np.column_stack([n, c]), axis=0, return_counts=True)
        self.n = pairs[:, 0].astype(np.float64)
        self.c = pairs[:, 1].astype(np.float64)
        self.m = counts.astype(np.float64)
        self.size = float(np.sum(self.m))
        self.zero = self.c == 0
        self.full = self.c == self.n
        self.mid = ~(self.zero | self.full)


def _terms(a, b, d, k):
    """Per node and distinct (n, c): the Beta-binomial log-likelihood (no binomial
    coefficient), and the mean and variance of pass@k under Beta(a + c, b + n - c)."""
    one = np.ones(1)
    ll = np.empty((a.size, d.n.size))
    mu = np.empty_like(ll)
    va = np.empty_like(ll)
    pop = None
    for j in range(d.n.size):
        lj, mj, vj, pop = SK.hier_nodes(a, b, d.n[j:j + 1], d.c[j:j + 1], one, k)
        ll[:, j], mu[:, j], va[:, j] = lj, mj, vj
    return ll, mu, va, pop


def _nodes(box, side_uv, side_w):
    """Grid nodes: (u, v) with ends, and the spike weights as r = w0 + w1 and q = w0 / r
    at cell midpoints (no node on the simplex's edge; the uniform Dirichlet has density
    proportional to r in (r, q))."""
    u = np.linspace(*box[0], side_uv)
    v = np.linspace(*box[1], side_uv)
    uu, vv = (x.ravel() for x in np.meshgrid(u, v, indexing="ij"))
    mid = (np.arange(side_w) + 0.5) / side_w
    r = box[2][0] + (box[2][1] - box[2][0]) * mid
    q = box[3][0] + (box[3][1] - box[3][0]) * mid
    rr, qq = (x.ravel() for x in np.meshgrid(r, q, indexing="ij"))
    return uu, vv, rr, qq


def _loglik(ll, d, w0, w1):
    """(G, W) log-likelihood over (u, v) nodes x (w0, w1) nodes."""
    wb = 1.0 - w0 - w1
    with np.errstate(divide="ignore"):
        lw0, lw1, lwb = np.log(w0), np.log(w1), np.log(wb)
    out = np.sum(d.m[d.mid]) * lwb[None, :] + (ll[:, d.mid] @ d.m[d.mid])[:, None]
    for j in np.flatnonzero(d.zero | d.full):
        lp = lw0 if d.zero[j] else lw1
        out = out + d.m[j] * np.logaddexp(lp[None, :], lwb[None, :] + ll[:, j:j + 1])
    return out


def _zoom(x, w, lo, hi, step):
    m = float(np.sum(w * x))
    sd = math.sqrt(max(float(np.sum(w * (x - m) ** 2)), 0.0))
    half = max(7.0 * sd, 4.0 * step)
    return max(m - half, lo), min(m + half, hi)


_CACHE: dict = {}


def _grid(d):
    """Nodes a, b, w0, w1 (as a (G, W) product) and normalized posterior weights."""
    key = (d.n.tobytes(), d.c.tobytes(), d.m.tobytes())
    if _CACHE.get("key") == key:
        return _CACHE["grid"]
    box = [_U_BOX, _V_BOX, (0.0, 1.0), (0.0, 1.0)]
    for i, (suv, sw) in enumerate(_PASSES):
        uu, vv, rr, qq = _nodes(box, suv, sw)
        w0, w1 = rr * qq, rr * (1.0 - qq)
        mu = 1.0 / (1.0 + np.exp(-uu))
        kappa = np.exp(vv)
        a, b = mu * kappa, (1.0 - mu) * kappa
        ll = _terms(a, b, d, 1)[0]
        lp = (_loglik(ll, d, w0, w1) + _log_prior(uu, vv)[:, None]
              + np.log(rr)[None, :])
        wt = np.exp(lp - np.max(lp))
        wt /= np.sum(wt)
        if i == len(_PASSES) - 1:
            break
        steps = [(bx[1] - bx[0]) / s for bx, s in zip(box, (suv, suv, sw, sw), strict=True)]
        full = [_U_BOX, _V_BOX, (0.0, 1.0), (0.0, 1.0)]
        margins = [(uu, wt.sum(axis=1)), (vv, wt.sum(axis=1)), (rr, wt.sum(axis=0)),
                   (qq, wt.sum(axis=0))]
        box = [_zoom(x, mw, f[0], f[1], st) for (x, mw), f, st in zip(margins, full, steps,
                                                                        strict=True)]
    grid = (a, b, w0, w1, wt)
    _CACHE.clear()
    _CACHE.update(key=key, grid=grid)
    return grid


def _task_set(mu, va, ll, d, w0, w1):
    """(G, W) mean and variance of the task-set pass@k given the hyperparameters."""
    wb = 1.0 - w0 - w1
    mean = (mu[:, d.mid] @ d.m[d.mid])[:, None] + np.zeros((1, w0.size))
    var = (va[:, d.mid] @ d.m[d.mid])[:, None] + np.zeros((1, w0.size))
    for j in np.flatnonzero(d.zero | d.full):
        lik = wb[None, :] * np.exp(ll[:, j:j + 1])
        spike = (w0 if d.zero[j] else w1)[None, :]
        with np.errstate(invalid="ignore", divide="ignore"):
            pi = np.where(spike + lik > 0, spike / (spike + lik), 0.0)
        m1, v1 = mu[:, j:j + 1], va[:, j:j + 1]
        if d.zero[j]:
            mj = (1.0 - pi) * m1
            e2 = (1.0 - pi) * (v1 + m1 * m1)
        else:
            mj = pi + (1.0 - pi) * m1
            e2 = pi + (1.0 - pi) * (v1 + m1 * m1)
        mean = mean + d.m[j] * mj
        var = var + d.m[j] * np.maximum(e2 - mj * mj, 0.0)
    return mean / d.size, var / d.size**2


def summary(n, c, k, confidence, population):
    """(mean, posterior sd, low, high) of the chosen estimand under the spike model."""
    from ._posterior import _weighted_quantiles

    d = _Data(n, c)
    a, b, w0, w1, wt = _grid(d)
    ll, mu, va, pop = _terms(a, b, d, k)
    alpha = 1.0 - confidence
    keep = wt > 1e-14 * wt.max()
    if population:
        val = (w1[None, :] + (1.0 - w0 - w1)[None, :] * pop[:, None])[keep]
        ww = wt[keep] / np.sum(wt[keep])
        m = float(np.sum(ww * val))
        sd = math.sqrt(max(float(np.sum(ww * (val - m) ** 2)), 0.0))
        lo, hi = _weighted_quantiles(val, ww, (alpha / 2, 1 - alpha / 2))
        return m, sd, max(lo, 0.0), min(hi, 1.0)
    mean, var = _task_set(mu, va, ll, d, w0, w1)
    ww, mm, ss = wt[keep] / np.sum(wt[keep]), mean[keep], np.sqrt(var[keep])
    m = float(np.sum(ww * mm))
    sd = math.sqrt(max(float(np.sum(ww * (ss * ss + (mm - m) ** 2))), 0.0))
    span = 10.0 * sd + 1e-12
    ends = [SK.normal_mixture_ppf(p, ww, mm, ss, m - span, m + span)
            for p in (alpha / 2, 1 - alpha / 2)]
    return m, sd, max(ends[0], 0.0), min(ends[1], 1.0)
