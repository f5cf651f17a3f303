"""LiveCodeBench ``*_eval.json`` ([metrics, results, metadata]) as its runner dumps it."""

from __future__ import annotations

import gzip
import json
import random
from fractions import Fraction
from math import comb

import pytest

from passatk import cli
from passatk.archives import ArchiveError, detect_format, read_counts

CODES = [True, False, -1, -2, -3, -4]


def estimator(n: int, c: int, k: int) -> float:
    """LiveCodeBench's pass@k, exactly (then rounded once)."""
    return float(1 - Fraction(comb(n - c, k), comb(n, k)))


def generations(seed: int, problems: int = 7, n: int = 5) -> dict:
    rng = random.Random(seed)
    out = {}
    for i in range(problems):
        tests = rng.randint(1, 4)
        out[i] = [[True] * tests if rng.random() < 0.4 else
                  [rng.choice(CODES) for _ in range(tests)] for _ in range(n)]
    return out


def eval_file(results: dict, ks=(1, 5)) -> list:
    """``[metrics, results, metadata]`` as ``codegen_metrics`` returns it (int keys)."""
    n = {i: len(g) for i, g in results.items()}
    c = {i: sum(all(t is True for t in gen) for gen in g) for i, g in results.items()}
    detail = {f"pass@{k}": {i: estimator(n[i], c[i], k) for i in results} for k in ks}
    metrics = {f"pass@{k}": sum(detail[f"pass@{k}"].values()) / len(results) for k in ks}
    metrics["detail"] = detail
    metrics.update({f"pass@{k}_stderr": 0.01 for k in ks})
    metadata = [[json.dumps({"execution time": 0.5}) for _ in g] for g in results.values()]
    return [metrics, results, metadata]


def recount(results: dict) -> dict:
    return {str(i): (len(g), sum(all(t is True for t in gen) for gen in g))
            for i, g in results.items()}


def rows(counts) -> dict:
    return {t: (int(n), int(c)) for t, n, c in zip(counts.task, counts.n, counts.c,
                                                      strict=True)}


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("style", ["indent", "one-line", "gzip"])
def test_counts_and_check(tmp_path, seed, style, capsys):
    results = generations(seed)
    text = json.dumps(eval_file(results), indent=4 if style == "indent" else None)
    path = tmp_path / ("m_eval.json.gz" if style == "gzip" else "m_eval.json")
    if style == "gzip":
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    assert detect_format(path) == "livecodebench-eval"
    counts = read_counts(path)
    assert rows(counts) == recount(results)
    assert len(counts.stored) == 2 + 2 * len(results)
    assert cli.main(["check", str(path)]) == 0


def test_check_finds_a_changed_detail(tmp_path, capsys):
    results = generations(9)
    doc = eval_file(results)
    doc[0]["detail"]["pass@1"][3] += 0.1
    path = tmp_path / "m_eval.json"
    path.write_text(json.dumps(doc, indent=4))
    assert cli.main(["check", str(path)]) == 1
    assert '$[0].detail["pass@1"]["3"]' in capsys.readouterr().out


def test_bad_results_are_located(tmp_path):
    results = generations(1)
    results[2][1] = [True, 1]
    path = tmp_path / "m_eval.json"
    path.write_text(json.dumps(eval_file(results)))
    with pytest.raises(ArchiveError) as info:
        read_counts(path)
    assert str(info.value) == (f'{path}: $[1]["2"][1][1]: a test result must be true, false or '
                               "a negative error code, got 1")
    results[2][1] = []
    path.write_text(json.dumps(eval_file(results)))
    with pytest.raises(ArchiveError, match=r'\$\[1\]\["2"\]\[1\]: a generation has no test'):
        read_counts(path)
    counts = read_counts(path, skip_bad=True)
    assert counts.skipped.count == 1 and "2" not in counts.task.tolist()


def test_a_list_of_another_shape_is_named_by_shape(tmp_path):
    path = tmp_path / "m_eval.json"
    path.write_text(json.dumps([{"detail": {}}, {"0": [[True]]}]))
    with pytest.raises(ArchiveError) as info:
        read_counts(path)
    assert "a JSON list of 2 values (object, object)" in str(info.value)
    assert "Streamed" not in str(info.value)
    other = tmp_path / "x.json"
    other.write_text(json.dumps([{"a": 1}, {"b": 2}, []]))
    with pytest.raises(ArchiveError) as info:
        read_counts(other)
    assert "(top level: a JSON list of 3 values (object, object, list))" in str(info.value)


def test_a_walk_leaves_it_beside_eval_all(tmp_path):
    results = generations(2)
    (tmp_path / "m_eval.json").write_text(json.dumps(eval_file(results)))
    alone = read_counts(tmp_path)
    assert rows(alone) == recount(results)
    (tmp_path / "m_eval_all.json").write_text(json.dumps(
        [{"question_id": str(i), "graded_list": [all(t is True for t in gen) for gen in g]}
         for i, g in results.items()]))
    both = read_counts(tmp_path)
    assert both.files == (str(tmp_path / "m_eval_all.json"),)
    assert rows(both) == recount(results)
