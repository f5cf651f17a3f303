"""bench/compare.py: ratios to the in-run baseline, and the 25% regression flag."""

import importlib.util
import json
from pathlib import Path

import pytest

_PATH = Path(__file__).parents[1] / "bench" / "compare.py"
_spec = importlib.util.spec_from_file_location("bench_compare", _PATH)
compare = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(compare)


def _run(folder, number, name, rows):
    benchmarks = [{"fullname": row, "stats": {"median": median},
                   "extra_info": {"group": group, "baseline": base}}
                  for row, (median, group, base) in rows.items()]
    path = folder / "Linux-CPython-3.11-64bit" / f"{number:04d}_{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"benchmarks": benchmarks}))
    return path


def test_ratio_is_taken_within_the_run():
    run = {"benchmarks": [
        {"fullname": "ours", "stats": {"median": 3.0}, "extra_info": {"group": "A"}},
        {"fullname": "floor", "stats": {"median": 1.5},
         "extra_info": {"group": "A", "baseline": True}},
        {"fullname": "alone", "stats": {"median": 9.0}, "extra_info": {"group": "B"}}]}
    assert compare.ratios(run) == {"ours": 2.0, "floor": 1.0}


def test_a_slower_machine_is_not_a_regression(tmp_path, capsys):
    _run(tmp_path, 1, "kernel", {"ours": (2.0, "A", False), "floor": (1.0, "A", True)})
    _run(tmp_path, 2, "kernel", {"ours": (4.4, "A", False), "floor": (2.0, "A", True)})
    assert compare.main(["--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "ours" in out and "+10.0%" in out and "REGRESSION" not in out


def test_a_ratio_that_grew_over_the_threshold_is_flagged(tmp_path, capsys):
    _run(tmp_path, 1, "kernel", {"ours": (2.0, "A", False), "floor": (1.0, "A", True)})
    _run(tmp_path, 2, "kernel", {"ours": (2.6, "A", False), "floor": (1.0, "A", True)})
    _run(tmp_path, 1, "stats", {"s": (1.0, "S", False), "f": (1.0, "S", True)})
    assert compare.main(["--dir", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "+30.0%  REGRESSION" in out
    assert out.strip().endswith("1 regression(s) over 25%")


def test_keep_prunes_old_runs(tmp_path):
    paths = [_run(tmp_path, i, "kernel", {"x": (1.0, "A", True)}) for i in range(1, 5)]
    assert compare.main(["--dir", str(tmp_path), "--keep", "2"]) == 0
    assert [p.exists() for p in paths] == [False, False, True, True]


@pytest.mark.parametrize("argv", [["one.json"], ["--threshold", "x"]])
def test_usage_errors_exit_2(argv):
    assert compare.main(argv) == 2
