"""Tests of the command line's output helpers: formats, atomic writes, the progress bar."""

from __future__ import annotations

import csv
import io
import json
import os

import pytest

from passatk._output import Progress, atomic_path, render, write_text

RECORDS = [
    {"group": {"model": "a"}, "metric": "pass@k", "k": 1, "value": 0.125, "se": 0.5 / 3,
     "tasks": 8, "samples": 80},
    {"group": {"model": "bbbbbb"}, "metric": "pass@k", "k": 100, "value": None, "se": float("nan"),
     "tasks": 8, "samples": 80},
]


def test_table_is_aligned():
    lines = render(RECORDS, "table").splitlines()
    assert lines[0].split() == ["model", "metric", "k", "value", "se", "tasks", "samples"]
    assert len({len(line) for line in lines}) == 1  # numeric last column: right-aligned
    assert lines[1].split() == ["a", "pass@k", "1", "0.1250", "0.1667", "8", "80"]
    assert lines[2].split() == ["bbbbbb", "pass@k", "100", "-", "-", "8", "80"]
    # columns start at the same offset on every line
    assert lines[0].index("metric") == lines[1].index("pass@k") == lines[2].index("pass@k")


def test_json_is_strict_and_full_precision():
    out = json.loads(render(RECORDS, "json"))
    assert out[0] == RECORDS[0]
    assert out[1]["value"] is None and out[1]["se"] is None
    assert "NaN" not in render(RECORDS, "json")


def test_csv_round_trips_floats():
    rows = list(csv.DictReader(io.StringIO(render(RECORDS, "csv"))))
    assert float(rows[0]["se"]) == RECORDS[0]["se"]
    assert rows[1]["value"] == "" and rows[1]["model"] == "bbbbbb"


def test_markdown():
    lines = render(RECORDS, "markdown").splitlines()
    assert lines[0] == "| model | metric | k | value | se | tasks | samples |"
    assert lines[1] == "|:--|:--|--:|--:|--:|--:|--:|"
    assert lines[2] == "| a | pass@k | 1 | 0.1250 | 0.1667 | 8 | 80 |"


def test_unknown_format():
    with pytest.raises(ValueError, match="unknown output format 'xml'"):
        render(RECORDS, "xml")


def test_write_text_atomic(tmp_path):
    target = tmp_path / "out.txt"
    write_text("new\n", target)
    assert target.read_text() == "new\n"
    assert os.listdir(tmp_path) == ["out.txt"]


def test_failed_write_keeps_old_file_and_leaves_no_temp(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old\n")
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        with open(tmp, "w") as fh:
            fh.write("partial")
        raise RuntimeError("boom")
    assert target.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["out.txt"]


def test_write_into_missing_directory_is_oserror(tmp_path):
    with pytest.raises(OSError):
        write_text("x", tmp_path / "missing" / "out.txt")


class _Tty(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize(("tty", "enabled", "drawn"), [(True, True, True), (False, True, False),
                                                       (True, False, False)])
def test_progress_only_on_a_tty_and_not_quiet(tty, enabled, drawn):
    stream = _Tty(tty)
    progress = Progress(stream, enabled=enabled, delay=0.0)
    progress(50, 100)
    assert ("50.0%" in stream.getvalue()) is drawn
    progress.close()


def test_progress_waits_for_delay():
    stream = _Tty(True)
    progress = Progress(stream, delay=60.0)
    progress(1, 2)
    assert stream.getvalue() == ""


def test_written_file_gets_normal_permissions(tmp_path):
    umask = os.umask(0o022)
    try:
        write_text("x", tmp_path / "new.txt")
        assert (tmp_path / "new.txt").stat().st_mode & 0o777 == 0o644
        old = tmp_path / "old.txt"
        old.write_text("y")
        old.chmod(0o640)
        write_text("z", old)
        assert old.stat().st_mode & 0o777 == 0o640
    finally:
        os.umask(umask)
