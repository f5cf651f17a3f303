"""``passatk.plot``: a one-panel paper figure drawn from the rows of ``passatk.score``."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import passatk

pytest.importorskip("matplotlib")

from passatk import plot
from passatk.archives import example_path

N = [10, 10, 10, 10]
C = [0, 1, 9, 10]


def _grouped(k):
    rows = []
    for name, c in (("a", C), ("b", [2, 3, 4, 10])):
        rows += [dataclasses.replace(r, group={"model": name})
                 for r in passatk.score(N, c, k, interval="t").rows]
    return rows


def test_defaults_are_a_column_wide_panel_with_8pt_text():
    ax = plot.plot_pass_at_k(passatk.score(N, C, range(1, 11), interval="t"))
    fig = ax.figure
    assert fig.get_size_inches().tolist() == [3.5, 2.6]
    assert len(fig.axes) == 1
    ax.figure.canvas.draw()
    assert {t.get_fontsize() for t in ax.get_xticklabels() + ax.get_yticklabels()} == {8.0}
    assert ax.xaxis.label.get_fontsize() == 9.0
    assert ax.get_title() == ""


def test_one_ungrouped_curve_has_no_legend_and_a_caption():
    result = passatk.score(N, C, range(1, 11), interval="t")
    ax = plot.plot_pass_at_k(result)
    assert ax.get_legend() is None
    assert len(ax.get_lines()) == 1  # no plug-in unless asked
    assert plot.caption(result) == "band: 95% t interval, within [0, 1]"


def test_groups_get_a_legend_that_names_the_band():
    ax = plot.plot_pass_at_k(_grouped([1, 2, 5]))
    (legend,) = ax.figure.legends  # the figure's, outside the axes
    assert [t.get_text() for t in legend.get_texts()] == ["a", "b"]
    assert legend.get_title().get_text() == "band: 95% t interval"


def test_plugin_overlay_only_when_the_rows_hold_it():
    result = passatk.score(N, C, [1, 2, 5], metric=["pass@k", "plugin"], interval="t")
    ax = plot.plot_pass_at_k(result)
    exact, plugin = ax.get_lines()
    assert plugin.get_linestyle() == "--"
    assert plugin.get_ydata().tolist() == [r.value for r in result.rows if r.metric == "plugin"]
    assert exact.get_ydata().tolist() == [r.value for r in result.rows if r.metric == "pass@k"]
    assert [t.get_text() for t in ax.figure.legends[0].get_texts()] == [
        "pass@k", "plug-in 1-(1-c/n)^k (biased)"]


def test_band_is_clipped_to_the_unit_interval():
    rows = passatk.score(N, C, [1, 2], interval="t").rows
    wide = [dataclasses.replace(r, ci_low=-0.3, ci_high=1.2) for r in rows]
    ax = plot.plot_pass_at_k(wide)
    (band,) = ax.collections
    ys = np.concatenate([p.vertices[:, 1] for p in band.get_paths()])
    assert ys.min() == 0.0 and ys.max() == 1.0


def test_log_k_ticks_are_integers():
    ax = plot.plot_pass_at_k(passatk.score([50] * 4, [1, 5, 20, 40], range(1, 51),
                                           interval="t"), log_k=True)
    ax.figure.canvas.draw()
    labels = [t.get_text() for t in ax.get_xticklabels() if 1 <= t.get_position()[0] <= 50]
    assert labels == ["1", "2", "5", "10", "20", "50"]


def test_linear_k_ticks_are_integers():
    ax = plot.plot_pass_at_k(passatk.score(N, C, range(1, 11), interval="t"))
    ax.figure.canvas.draw()
    ticks = [x for x in ax.get_xticks() if 1 <= x <= 10]
    assert ticks and all(float(x).is_integer() for x in ticks)


def test_draws_into_the_callers_axes_without_restyling_it():
    fig = plot.figure(7, 3)
    left, right = fig.subplots(1, 2)
    right.tick_params(labelsize=13)
    assert plot.plot_pass_at_k(_grouped([1, 2]), right) is right
    assert not left.get_lines() and len(right.get_lines()) == 2
    fig.canvas.draw()
    assert {t.get_fontsize() for t in right.get_yticklabels()} == {13.0}


@pytest.mark.parametrize(("name", "magic"), [("f.pdf", b"%PDF"), ("f.svg", b"<?xml"),
                                             ("f.png", b"\x89PNG")])
def test_save_by_extension_png_at_300_dpi(tmp_path, name, magic):
    ax = plot.plot_pass_at_k(passatk.score(N, C, [1, 2], interval="t"), width=2, height=1)
    plot.save(ax.figure, str(tmp_path / name))
    data = (tmp_path / name).read_bytes()
    assert data.startswith(magic)
    if name.endswith(".png"):
        import struct

        width, height = struct.unpack(">II", data[16:24])
        assert (width, height) == (600, 300)


def test_bad_arguments():
    with pytest.raises(ValueError, match="nothing to plot"):
        plot.plot_pass_at_k([])
    with pytest.raises(ValueError, match=r"width must be a number of inches in \(0, 100\]"):
        plot.figure(width=0)
    with pytest.raises(TypeError, match="height must be a number of inches"):
        plot.figure(height="2")
    assert math.isclose(plot.figure(1, 1).get_size_inches()[0], 1.0)


def test_cli_plot_flags(cli, tmp_path):
    path = example_path()
    target = tmp_path / "p.png"
    code, out, err = cli(["plot", path, "-o", target, "--width", "2", "--height", "1.5",
                          "--plugin", "--log-k", "-q"])
    assert (code, out, err) == (0, "", "")
    import struct

    assert struct.unpack(">II", target.read_bytes()[16:24]) == (600, 450)
    tau = tmp_path / "trials.json"
    assert cli(["simulate", "-o", tau, "--archive-format", "tau-bench", "-q"]).code == 0
    assert cli(["plot", tau, "-o", tmp_path / "t.png", "--plugin"]) == (
        2, "", "passatk: error: --plugin overlays the plug-in estimate of pass@k, not of "
               "pass^k\n")
    assert cli(["plot", path, "-o", tmp_path / "w.png", "--width", "0"]).code == 2
