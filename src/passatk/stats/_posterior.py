"""The hierarchical Beta-binomial posterior behind ``score(metric="posterior")``.

Model: c_i ~ Binomial(n_i, p_i), p_i ~ Beta(a, b) independently, with a weakly informative
hyperprior on mu = a / (a + b) and kappa = a + b: mu ~ Uniform(0, 1) and
ln kappa ~ Normal(HYPER_LOC, HYPER_SCALE^2). The hyperparameters are integrated out on a
2-D quadrature grid over (logit mu, ln kappa) that is re-centred on the posterior mass
a few times, so no MCMC is needed. Two estimands are reported:

- population pass@k: 1 - B(a, b + k) / B(a, b), the expected pass@k of a new task;
- pass@k on these tasks: (1/N) sum_i [1 - (1 - p_i)^k] with p_i from its posterior
  Beta(a + c_i, b + n_i - c_i), mixed over the hyperparameter posterior.

Intervals are equal-tailed: weighted quantiles over the grid for the population value, and
quantiles of a normal mixture (one normal per node: given (a, b) the mean over tasks is a
sum of independent terms) for the task-set value.
"""

from __future__ import annotations

import math

import numpy as np

from . import _kernels as SK

HYPER_LOC = math.log(2.0)
HYPER_SCALE = 2.0
_U_BOX = (-12.0, 12.0)
_V_BOX = (-8.0, 12.0)
_SIDE = 49  # nodes per axis
_PASSES = 4


def describe() -> str:
    """The model, as written into the ``estimand`` of the posterior rows."""
    return (f"hierarchical Beta-binomial: p_i ~ Beta(a, b), mu = a/(a+b) ~ U(0,1), "
            f"ln(a+b) ~ N({HYPER_LOC:.3g}, {HYPER_SCALE:g}^2), integrated by 2-D quadrature")


def _nodes(ubox, vbox):
    u = np.linspace(ubox[0], ubox[1], _SIDE)
    v = np.linspace(vbox[0], vbox[1], _SIDE)
    uu, vv = np.meshgrid(u, v, indexing="ij")
    uu, vv = uu.ravel(), vv.ravel()
    mu = 1.0 / (1.0 + np.exp(-uu))
    kappa = np.exp(vv)
    return uu, vv, mu * kappa, (1.0 - mu) * kappa


def _log_prior(uu, vv):
    # uniform mu has density mu (1 - mu) in u = logit mu; normal ln kappa
    log_mu = -np.logaddexp(0.0, -uu)
    log_1mu = -np.logaddexp(0.0, uu)
    return log_mu + log_1mu - 0.5 * ((vv - HYPER_LOC) / HYPER_SCALE) ** 2


def _weights(logpost):
    w = np.exp(logpost - np.max(logpost))
    return w / np.sum(w)


def _zoom(uu, vv, w, ubox, vbox):
    """A box around the posterior mass: mean +/- 7 sd, at least 4 old grid steps wide."""
    boxes = []
    for x, box in ((uu, ubox), (vv, vbox)):
        m = float(np.sum(w * x))
        sd = math.sqrt(max(float(np.sum(w * (x - m) ** 2)), 0.0))
        step = (box[1] - box[0]) / (_SIDE - 1)
        half = max(7.0 * sd, 4.0 * step)
        full = _U_BOX if box is ubox else _V_BOX
        boxes.append((max(m - half, full[0]), min(m + half, full[1])))
    return boxes


_LAST: dict = {}  # the grid of the last data set: every k of a row group shares it


def _grid(n_u, c_u, w_u):
    """Nodes (a, b) and weights of the hyperparameter posterior, re-centred _PASSES times."""
    key = (n_u.tobytes(), c_u.tobytes(), w_u.tobytes())
    hit = _LAST.get("key")
    if hit == key:
        return _LAST["grid"]
    ubox, vbox = _U_BOX, _V_BOX
    for i in range(_PASSES):
        uu, vv, a, b = _nodes(ubox, vbox)
        ll = SK.hier_nodes(a, b, n_u, c_u, w_u, 1)[0]
        w = _weights(ll + _log_prior(uu, vv))
        if i < _PASSES - 1:
            ubox, vbox = _zoom(uu, vv, w, ubox, vbox)
    _LAST.clear()
    _LAST.update(key=key, grid=(a, b, w))
    return a, b, w


def fit(n, c, k):
    """Quadrature nodes and weights, with per-node moments, for counts (n, c) and budget k.

    Returns (w, mean, var, pop): node weights, the task-set pass@k mean and variance given
    each node, and the population pass@k at each node.
    """
    pairs, counts = np.unique(np.column_stack([n, c]), axis=0, return_counts=True)
    n_u = pairs[:, 0].astype(np.float64)
    c_u = pairs[:, 1].astype(np.float64)
    w_u = counts.astype(np.float64)
    a, b, w = _grid(n_u, c_u, w_u)
    _, mean, var, pop = SK.hier_nodes(a, b, n_u, c_u, w_u, k)
    return w, mean, var, pop


def _weighted_quantiles(x, w, probs):
    order = np.argsort(x, kind="stable")
    xs, cw = x[order], np.cumsum(w[order])
    cw /= cw[-1]
    mid = cw - 0.5 * w[order] / np.sum(w)  # mid-point rule for the discrete CDF
    return [float(np.interp(p, mid, xs)) for p in probs]


def summary(n, c, k, confidence, population):
    """(mean, posterior sd, low, high) of the chosen estimand."""
    w, mean, var, pop = fit(n, c, k)
    alpha = 1.0 - confidence
    if population:
        m = float(np.sum(w * pop))
        sd = math.sqrt(max(float(np.sum(w * (pop - m) ** 2)), 0.0))
        lo, hi = _weighted_quantiles(pop, w, (alpha / 2, 1 - alpha / 2))
        return m, sd, max(lo, 0.0), min(hi, 1.0)
    m = float(np.sum(w * mean))
    sd = math.sqrt(max(float(np.sum(w * (var + (mean - m) ** 2))), 0.0))
    keep = w > 1e-14
    ww, mm, ss = w[keep] / np.sum(w[keep]), mean[keep], np.sqrt(var[keep])
    span = 10.0 * sd + 1e-12
    ends = [SK.normal_mixture_ppf(p, ww, mm, ss, m - span, m + span)
            for p in (alpha / 2, 1 - alpha / 2)]
    return m, sd, max(ends[0], 0.0), min(ends[1], 1.0)


def _lbeta(a, b):
    from ._dist import _lgamma

    return _lgamma(a) + _lgamma(b) - _lgamma(a + b)


def edge_shares(n, c):
    """(observed, predicted) share of tasks at c = 0 or c = n under the fitted model.

    The prediction is the posterior mean over the hyperparameter grid of
    mean_i [B(a, b + n_i) + B(a + n_i, b)] / B(a, b), the Beta-binomial's mass at both ends.
    """
    pairs, counts = np.unique(np.column_stack([n, c]), axis=0, return_counts=True)
    a, b, w = _grid(pairs[:, 0].astype(np.float64), pairs[:, 1].astype(np.float64),
                    counts.astype(np.float64))
    keep = w > 1e-12 * w.max()
    a, b, w = a[keep], b[keep], w[keep] / np.sum(w[keep])
    sizes, mult = np.unique(n, return_counts=True)
    lb0 = _lbeta(a, b)
    pred = 0.0
    for m, cnt in zip(sizes.tolist(), mult.tolist(), strict=True):
        ends = np.exp(_lbeta(a, b + m) - lb0) + np.exp(_lbeta(a + m, b) - lb0)
        pred += cnt * float(np.sum(w * ends))
    obs = float(np.mean((c == 0) | (c == n)))
    return obs, pred / n.size


def misfit_reason(n, c, value, sd, unbiased, se=0.0, edges=True):
    """Why the Beta-binomial posterior should not be trusted on these counts, or None.

    Two posterior predictive checks: the share of all-or-nothing tasks (c = 0 or c = n)
    against the share the fitted model predicts (more than 3 binomial SEs apart), and the
    posterior mean against the unbiased sample estimate (more than 3 sqrt(sd^2 + se^2)
    apart, with se the sample estimate's SE for the population value, 0 for these tasks).
    """
    notes = []
    if edges and int(n.max()) > 1:
        obs, pred = edge_shares(n, c)
        tol = 3.0 * math.sqrt(max(pred * (1.0 - pred), 1e-12) / n.size)
        if abs(obs - pred) > tol:
            notes.append(f"{100 * obs:.1f}% of the tasks have c = 0 or c = n where the fitted "
                         f"Beta-binomial predicts {100 * pred:.1f}%")
    scale = math.sqrt(sd * sd + se * se)
    if unbiased is not None and scale > 0 and abs(value - unbiased) > 3.0 * scale:
        notes.append(f"the posterior mean {value:.4g} is {abs(value - unbiased) / scale:.1f} "
                     f"SE from the unbiased estimate {unbiased:.4g}")
    if not notes:
        return None
    return ("the Beta population does not fit these counts (" + "; ".join(notes)
            + "): this posterior is biased and its interval under-covers; use the "
              "frequentist rows (metric='pass@k') or see docs/statistics.md")
