"""passatk.leaderboard: pairs as compare gives them, adjustments, rank intervals, groups."""

import itertools

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

import passatk
from passatk.archives import Counts


def _runs(rng, m=5, tasks=60, n=10, shift=0.05, drop=0):
    base = rng.beta(1.2, 1.0, tasks)
    runs = {}
    for i in range(m):
        p = np.clip(base + shift * i + rng.normal(0, 0.05, tasks), 0, 1)
        ids = np.array([f"t{j}" for j in range(tasks)], dtype=object)
        keep = np.ones(tasks, bool)
        if drop:
            keep[rng.choice(tasks, drop, replace=False)] = False
        runs[f"m{i}"] = (ids[keep], np.full(keep.sum(), n), rng.binomial(n, p)[keep])
    return runs


@pytest.mark.parametrize("drop", [0, 7])
@pytest.mark.parametrize("k", [1, 3])
def test_pairs_agree_with_compare(drop, k):
    rng = np.random.default_rng(drop + 10 * k)
    runs = _runs(rng, drop=drop)
    lb = passatk.leaderboard(runs, k=k, unmatched="exclude" if drop else "raise")
    assert len(lb.pairs) == 10
    for p in lb.pairs:
        ta, na, ca = runs[p.model_a]
        tb, nb, cb = runs[p.model_b]
        res = passatk.compare(na, ca, nb, cb, k=k, task_ids_a=ta, task_ids_b=tb,
                              unmatched="exclude", n_resamples=2, seed=0)
        r = res[0]
        assert p.tasks == r.tasks
        assert p.only_a == len(res.only_in_a) and p.only_b == len(res.only_in_b)
        assert p.diff == pytest.approx(r.diff, rel=1e-12, abs=1e-15)
        assert p.se == pytest.approx(r.se, rel=1e-9)
        assert p.p_value == pytest.approx(r.p_value, rel=1e-9)
        assert (p.ci_low, p.ci_high) == pytest.approx((r.ci_low, r.ci_high), rel=1e-9)


@pytest.mark.parametrize("adjust,method", [("holm", "holm"), ("bh", "fdr_bh")])
def test_adjustment_matches_statsmodels(adjust, method):
    rng = np.random.default_rng(3)
    lb = passatk.leaderboard(_runs(rng, m=6, shift=0.02), k=1, adjust=adjust)
    raw = np.array([p.p_value for p in lb.pairs])
    want = multipletests(raw, alpha=0.05, method=method)[1]
    np.testing.assert_allclose([p.p_adjusted for p in lb.pairs], want, rtol=1e-12)
    assert [p.significant for p in lb.pairs] == list(want < 0.05)


def test_model_rows_are_the_score_rows():
    rng = np.random.default_rng(4)
    runs = _runs(rng)
    lb = passatk.leaderboard(runs, k=[1, 5])
    for r in lb.rows:
        t, n, c = runs[r.model]
        s = next(x for x in passatk.score(n, c, k=[1, 5], task_ids=t) if x.k == r.k)
        assert (r.value, r.se, r.ci_low, r.ci_high, r.ci_method, r.tasks) == (
            s.value, s.se, s.ci_low, s.ci_high, s.ci_method, s.tasks)
    for k in (1, 5):
        vals = [r.value for r in lb.rows if r.k == k]
        assert vals == sorted(vals, reverse=True)


def _naive_ranks(lb, k, alpha):
    names = [r.model for r in lb.rows if r.k == k]
    above = dict.fromkeys(names, 0)
    below = dict.fromkeys(names, 0)
    holm = dict(zip([(p.model_a, p.model_b) for p in lb.pairs if p.k == k],
                    multipletests([p.p_value for p in lb.pairs if p.k == k],
                                  method="holm")[1], strict=True))
    sig = set()
    for (a, b), ph in holm.items():
        d = next(p.diff for p in lb.pairs if p.k == k and (p.model_a, p.model_b) == (a, b))
        if ph < alpha:
            win, lose = (a, b) if d > 0 else (b, a)
            below[win] += 1
            above[lose] += 1
            sig.add(frozenset((a, b)))
    m = len(names)
    ranks = {x: (1 + above[x], m - below[x]) for x in names}
    # maximal sets without a significant pair, by brute force over all subsets
    free = [set(s) for r in range(1, m + 1) for s in itertools.combinations(names, r)
            if not any(frozenset(pr) in sig for pr in itertools.combinations(s, 2))]
    maximal = {frozenset(s) for s in free if not any(s < t for t in free)}
    return ranks, maximal


@pytest.mark.parametrize("seed", range(6))
def test_rank_intervals_and_groups_by_brute_force(seed):
    rng = np.random.default_rng(100 + seed)
    lb = passatk.leaderboard(_runs(rng, m=7, shift=0.03, tasks=80), k=1, adjust="bh")
    ranks, maximal = _naive_ranks(lb, 1, 0.05)
    assert lb.rank_adjust == "holm"
    for r in lb.rows:
        assert (r.rank_low, r.rank_high) == ranks[r.model]
        assert r.groups and all(r.model in lb.groups[1][g - 1] for g in r.groups)
    assert {frozenset(g) for g in lb.groups[1]} == maximal


def test_counts_with_groups_and_a_mapping_of_counts():
    rows = []
    rng = np.random.default_rng(5)
    for model, p in (("x", 0.8), ("y", 0.5), ("z", 0.2)):
        for t in range(30):
            rows.append(({"model": model}, f"task/{t}", 5, int(rng.binomial(5, p))))
    counts = Counts.from_rows(rows)
    lb = passatk.leaderboard(counts, k=1)
    assert lb.models == ["model=x", "model=y", "model=z"]
    assert [(r.rank_low, r.rank_high) for r in lb.rows] == [(1, 1), (2, 2), (3, 3)]
    one = {g.group["model"]: Counts.from_rows(
        [(t, n, c) for t, n, c in zip(g.task, g.n, g.c, strict=True)])
        for g in counts.iter_groups()}
    lb2 = passatk.leaderboard(one, k=1)
    assert lb2.models == ["x", "y", "z"]
    assert [p.p_value for p in lb2.pairs] == [p.p_value for p in lb.pairs]


def test_max_t_is_simultaneous_and_above_holm_raw():
    rng = np.random.default_rng(6)
    lb = passatk.leaderboard(_runs(rng, m=5, shift=0.03), k=1, adjust="max-t", seed=1,
                             n_resamples=4000)
    crit = lb.critical_values[1]
    # between the one-pair and the Bonferroni critical values of t
    from scipy import stats as ss

    df = lb.pairs[0].df
    assert ss.t.ppf(0.975, df) < crit < ss.t.ppf(1 - 0.025 / 10, df) + 0.1
    for p in lb.pairs:
        assert p.p_adjusted >= p.p_value - 1e-12
        assert p.sim_low == pytest.approx(max(p.diff - crit * p.se, -1))
        assert p.significant == (p.p_adjusted < 0.05)


def test_matrix_and_latex():
    rng = np.random.default_rng(7)
    lb = passatk.leaderboard(_runs(rng, m=3), k=1)
    names, d = lb.matrix(1)
    assert names == lb.models
    i, j = names.index("m0"), names.index("m1")
    p = next(x for x in lb.pairs if {x.model_a, x.model_b} == {"m0", "m1"})
    sign = 1 if p.model_a == "m0" else -1
    assert d[i, j] == pytest.approx(sign * p.diff) and d[j, i] == pytest.approx(-sign * p.diff)
    assert np.isnan(d[i, i])
    tex = lb.to_latex()
    assert tex.startswith("\\begin{tabular}") and "\\toprule" in tex and "\\bottomrule" in tex
    assert "pass@k" in tex and tex.count("\\\\") == 4
    d = lb.to_dict()
    assert d["kind"] == "leaderboard" and len(d["pairs"]) == 3 and d["groups"]["1"]


def test_latex_escapes_names():
    runs = {"a_b & 50%": (["t0", "t1"], [4, 4], [4, 3]), "c": (["t0", "t1"], [4, 4], [0, 1])}
    tex = passatk.leaderboard(runs).to_latex()
    assert "a\\_b \\& 50\\%" in tex


def test_errors():
    good = (["t0", "t1"], [4, 4], [1, 2])
    with pytest.raises(ValueError, match="at least 2 models"):
        passatk.leaderboard({"a": good})
    with pytest.raises(TypeError, match="runs must be"):
        passatk.leaderboard([good, good])
    with pytest.raises(TypeError, match="run 'a' must be"):
        passatk.leaderboard({"a": 3, "b": good})
    with pytest.raises(ValueError, match="lacks 1 of 3 tasks"):
        passatk.leaderboard({"a": good, "b": (["t0", "t1", "t2"], [4] * 3, [1] * 3)})
    with pytest.raises(ValueError, match="max-t"):
        passatk.leaderboard({"a": good, "b": (["t0", "t1", "t2"], [4] * 3, [1] * 3)},
                            unmatched="exclude", adjust="max-t")
    with pytest.raises(ValueError, match="adjust must be one of"):
        passatk.leaderboard({"a": good, "b": good}, adjust="bonferroni")
    with pytest.raises(ValueError, match="model 'a'"):
        passatk.leaderboard({"a": good, "b": good}, k=5)


def test_identical_models_are_tied_never_ordered():
    good = (["t0", "t1", "t2"], [4] * 3, [1, 2, 3])
    lb = passatk.leaderboard({"b": good, "a": good})
    assert [r.model for r in lb.rows] == ["a", "b"]
    assert lb.rows[0].tied == ("b",) and lb.rows[1].tied == ("a",)
    assert all((r.rank_low, r.rank_high) == (1, 2) for r in lb.rows)
    p = lb.pairs[0]
    assert p.p_value == 1.0 and p.diff == 0.0 and p.reason and not p.significant


def test_forest_plot_is_paper_sized_with_the_legend_off_the_data(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib

    from passatk import plot

    before = dict(matplotlib.rcParams)
    rng = np.random.default_rng(8)
    lb = passatk.leaderboard(_runs(rng, m=6, shift=0.06), k=[1, 3])
    ax = plot.plot_forest(lb, k=3)
    fig = ax.figure
    w, h = fig.get_size_inches()
    assert w == plot.WIDTH and plot.HEIGHT <= h <= 4
    labels = [t.get_text() for t in ax.get_yticklabels()]
    top = int(np.argmax(ax.get_yticks()))
    assert len(labels) == 6 and labels[top].startswith(lb.models[0])  # the best on top
    fig.canvas.draw()
    leg = ax.get_legend().get_window_extent()
    assert leg.y1 <= ax.get_window_extent().y0  # below the axes, not on the data
    plot.save(fig, str(tmp_path / "f.png"))
    assert (tmp_path / "f.png").read_bytes()[:4] == b"\x89PNG"
    assert dict(matplotlib.rcParams) == before
    own = plot.figure(5, 3).subplots()
    assert plot.plot_forest(lb, ax=own) is own
    with pytest.raises(ValueError, match="k=7"):
        plot.plot_forest(lb, k=7)
