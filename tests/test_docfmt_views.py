"""The typed views of CRUXEval and OpenCompass (``harnesses/_typed.member``): the same counts,
stored numbers, skips, notes and errors as the plain decode and the streamed skeleton, clean
documents and broken ones alike; a view never takes a document that an earlier probe claims."""

from __future__ import annotations

import json

import pytest
from test_document_views import _set, read_alike

from passatk.archives import ArchiveError, read_counts
from passatk.archives import detect as _detect
from passatk.archives.harnesses._typed import Member
from passatk.archives.io import documents

TASKS = ["HumanEval/0", "HumanEval/1", "HumanEval/10"]
FLAGS = [[True, False, True], [False], [True, True, False, False]]


def _crux():
    return {"raw_generations": {t: ["x = '}]'"] * len(p) for t, p in zip(TASKS, FLAGS,
                                                                         strict=True)},
            "raw_scored_generations": {t: list(p) for t, p in zip(TASKS, FLAGS, strict=True)},
            "pass_at_1": 41.5, "pass_at_5": 60.0, "model": "m"}


def _oc():
    samples = [(t, x) for t, p in zip(TASKS, FLAGS, strict=True) for x in p]
    return {"humaneval_pass@1": 50.0, "type": "gen", "details": {
        str(i): {"prompt": "\"}]", "task_id": t, "passed": x,
                 "result": "passed" if x else "failed: no numpy"}
        for i, (t, x) in enumerate(samples)}}


DOCS = {"cruxeval": ("crux.json", _crux), "opencompass": ("humaneval.json", _oc)}
DAMAGE = {
    "cruxeval": [None, (("raw_scored_generations", "HumanEval/1"), [0.5]),
                 (("raw_scored_generations", "HumanEval/1"), "yes"),
                 (("raw_scored_generations", "HumanEval/0", 1), None),
                 (("raw_scored_generations", "HumanEval/10"), []),
                 (("pass_at_1",), True), (("pass_at_5",), 10 ** 400),
                 (("model",), {"name": "m"})],
    "opencompass": [None, (("details", "1", "passed"), 0.5), (("details", "2"), 3),
                    (("details", "0", "task_id"), None), (("details", "3", "task_id"), 7),
                    (("humaneval_pass@1",), "x"), (("details", "4", "passed"), float("nan"))],
}
CASES = [(kind, i) for kind, damages in DAMAGE.items() for i in range(len(damages))]


def _snapshot(path, **options):
    try:
        c = read_counts(path, **options)
    except ArchiveError as e:
        return "error", str(e)
    return c.to_rows(), c.metric, c.stored, c.skipped, c.notes, c.group_dicts


@pytest.mark.parametrize("kind,case", CASES)
@pytest.mark.parametrize("by", [None, ["model"]])
def test_typed_plain_and_streamed_read_alike(tmp_path, monkeypatch, kind, case, by):
    name, make = DOCS[kind]
    doc = make()
    if DAMAGE[kind][case] is not None:
        _set(doc, *DAMAGE[kind][case])
    path = tmp_path / name
    path.write_text(json.dumps(doc, indent=1))
    options = {"skip_bad": True} if case else {}
    options.update({"by": by} if by and kind == "cruxeval" else {})
    typed = _snapshot(path, **options)
    if case == 0:
        assert isinstance(_detect.load_document(str(path)).view, Member)
        assert typed[0] and typed[2]
    read_alike(monkeypatch, _snapshot, path, typed, **options)


def test_opencompass_group_fields_of_the_details_read_the_plain_document(tmp_path):
    doc = _oc()
    for i, d in doc["details"].items():
        d["model"] = f"m{int(i) % 2}"
    path = tmp_path / "humaneval.json"
    path.write_text(json.dumps(doc))
    counts = read_counts(path, by=["model"])
    assert counts.group_dicts == [{"model": "m0"}, {"model": "m1"}]
    assert sum(counts.n.tolist()) == 8
    assert [(s.group, s.value) for s in counts.stored] == [
        ((("model", "m0"),), 0.5), ((("model", "m1"),), 0.5)]


@pytest.mark.parametrize("extra,fmt", [
    ({"eval": {"T/0": [{"status": "pass"}]}}, "bigcodebench"),
    ({"raw_scored_generations": {"T/0": ["x"]}}, "cruxeval"),
    ({"info": {"agent_info": 3}, "tasks": [], "simulations": []}, "tau2-bench"),
    ({"name": "HumanEval_0", "results": []}, "multipl-e"),
])
def test_a_view_leaves_a_document_an_earlier_probe_claims(tmp_path, extra, fmt):
    path = tmp_path / "x.json"
    path.write_text(json.dumps({**_oc(), **extra}))
    doc = _detect.load_document(str(path))
    assert not (isinstance(doc, documents.Typed) and doc.format == "opencompass")
    assert _detect.detect_format(path) == fmt
