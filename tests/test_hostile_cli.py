"""Command-line arguments and labels from hostile input (reliability audit W7/S1, C7, M4;
reproducers r19, r21, r15)."""

from __future__ import annotations

import json

import pytest

from passatk._output import printable, render
from passatk.cli import MAX_KS, MAX_RESAMPLES, main

EVIL = "evil\x1b[31mRED\x1b[0m\nfake_row  pass@k  1  0.9999\r\x9b2J\u202e"


@pytest.fixture
def evil_counts(tmp_path):
    path = tmp_path / "counts.jsonl"
    rows = [{"task_id": "T/0", "n": 10, "c": 3, "model": EVIL},
            {"task_id": "T/1", "n": 10, "c": 5, "model": "ok"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_control_characters_in_labels_are_escaped(capsys, evil_counts, fmt):
    assert main(["score", str(evil_counts), "--by", "model", "-q", "--format", fmt]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\r" not in out and "\x9b" not in out and "\u202e" not in out
    lines = out.splitlines()
    assert len(lines) == (3 if fmt == "table" else 4)  # header (+ rule) + 2 rows, none forged
    assert "evil\\u001b[31mRED\\u001b[0m\\u000afake_row" in out
    assert not any(line.startswith("fake_row") for line in lines)


def test_json_and_csv_keep_the_label_exactly(capsys, evil_counts):
    assert main(["score", str(evil_counts), "--by", "model", "-q", "--format", "json"]) == 0
    labels = {r["group"]["model"] for r in json.loads(capsys.readouterr().out)["rows"]}
    assert labels == {EVIL, "ok"}


def test_printable_escapes_column_names_and_keeps_text():
    text = render([{"group": {"a\x07b": "π ü 漢"}, "k": 1}], "table")
    assert "a\\u0007b" in text and "π ü 漢" in text and "\x07" not in text
    assert printable("tab\there") == "tab\\u0009here"


def _archive(tmp_path):
    path = tmp_path / "s_results.jsonl"
    assert main(["simulate", "-o", str(path), "--tasks", "5", "--n", "4", "-q"]) == 0
    return path


def test_huge_k_range_is_a_usage_error(capsys, tmp_path):
    path = _archive(tmp_path)
    capsys.readouterr()
    assert main(["score", str(path), "-k", "1-1000000000"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"at most {MAX_KS} are allowed" in err[0]
    assert "1000000000 values" in err[0]


def test_huge_resamples_is_a_usage_error(capsys, tmp_path):
    path = _archive(tmp_path)
    capsys.readouterr()
    assert main(["score", str(path), "--ci", "bootstrap", "--resamples", "100000000000"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"must be at most {MAX_RESAMPLES}" in err[0]


def test_memory_error_is_one_line(capsys, tmp_path, monkeypatch):
    path = _archive(tmp_path)
    capsys.readouterr()
    import passatk

    def boom(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(passatk, "score", boom)
    assert main(["score", str(path)]) == 2
    assert capsys.readouterr().err == ("passatk: error: out of memory; use fewer values of k, "
                                       "fewer resamples or smaller inputs\n")


def test_plot_default_k_is_a_ladder_for_large_n(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from passatk import plot

    path = tmp_path / "counts.csv"
    path.write_text("task_id,n,c\nT/0,1000000,3\nT/1,1000000,500000\n")
    seen = []
    draw = plot.plot_pass_at_k
    monkeypatch.setattr(plot, "plot_pass_at_k", lambda rows, *a, **kw: draw(seen.extend(rows)
                                                                            or rows, *a, **kw))
    assert main(["plot", str(path), "-o", str(tmp_path / "out.png"), "-q"]) == 0
    ks = [r.k for r in seen]
    assert ks[:4] == [1, 2, 5, 10] and ks[-1] == 10**6 and len(ks) == 19


def test_plot_default_k_is_every_k_for_small_n(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from passatk import plot

    path = tmp_path / "counts.csv"
    path.write_text("task_id,n,c\nT/0,200,3\nT/1,200,50\n")
    seen = []
    draw = plot.plot_pass_at_k
    monkeypatch.setattr(plot, "plot_pass_at_k", lambda rows, *a, **kw: draw(seen.extend(rows)
                                                                            or rows, *a, **kw))
    assert main(["plot", str(path), "-o", str(tmp_path / "out.png"), "-q"]) == 0
    assert [r.k for r in seen] == list(range(1, 201))
