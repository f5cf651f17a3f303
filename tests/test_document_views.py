"""Whole JSON documents three ways, the same result: the typed msgspec view of a format
(detection hands it to the reader), the plain decode (views off), and the streamed skeleton
(a small record cap): identical counts, stored numbers, skips, notes and errors, clean
documents and broken ones alike."""

from __future__ import annotations

import gzip
import json

import pytest

from passatk.archives import ArchiveError, read_counts
from passatk.archives import detect as _detect
from passatk.archives.io import documents

TASKS = ["HumanEval/0", "HumanEval/1", "HumanEval/10"]
FLAGS = [[True, False, True], [False], [True, True, False, False]]


def _evalplus(version=3):
    ev = {t: [{"task_id": t, "solution": f"def f():\n    return {j}  # \"}}], \"{t}\": [{{\n",
               "base_status": "pass" if x else "fail",
               "plus_status": "pass" if j % 2 else "fail",
               "base_fail_tests": [] if x else [[j, "x"]], "plus_fail_tests": []}
              for j, x in enumerate(p)] for t, p in zip(TASKS, FLAGS, strict=True)}
    doc = {"date": "2024-11-30 00:00", "hash": "abc", "eval": ev}
    if version == 3:
        doc["pass_at_k"] = {"base": {"pass@1": 0.5}, "plus": {"pass@1": 0.25}}
    return doc


def _tau2():
    sims = [{"id": f"{t}-{j}", "task_id": t, "trial": j, "termination_reason": "user_stop",
             "reward_info": {"reward": 1.0 if x else 0.0}, "messages": [{"content": "}]"}]}
            for t, p in zip(TASKS, FLAGS, strict=True) for j, x in enumerate(p)]
    return {"timestamp": "t", "info": {"num_trials": 4, "agent_info": {"llm": "m"},
                                       "environment_info": {"domain_name": "airline"}},
            "tasks": [{"id": t} for t in TASKS], "simulations": sims}


def _inspect():
    samples = [{"id": t, "epoch": j + 1, "scores": {"match": {"value": "C" if x else "I"}},
                "messages": [{"role": "user", "content": "\"}]"}]}
               for t, p in zip(TASKS, FLAGS, strict=True) for j, x in enumerate(p)]
    return {"version": 2, "status": "success", "eval": {"task": "mbpp", "model": "m"},
            "results": {}, "samples": samples}


def _lcb_eval():
    results = {str(i): [[True, True] if x else [True, -1] for x in p]
               for i, p in enumerate(FLAGS)}
    detail = {str(i): sum(p) / len(p) for i, p in enumerate(FLAGS)}
    return [{"pass@1": 0.5, "detail": {"pass@1": detail}}, results, [["{}"] for _ in FLAGS]]


def _set(doc, path, value):
    for key in path[:-1]:
        doc = doc[key]
    doc[path[-1]] = value


DOCS = {"evalplus": ("eval_results.json", _evalplus), "tau2": ("results.json", _tau2),
        "inspect": ("log.json", _inspect), "lcb-eval": ("m_eval.json", _lcb_eval)}
DAMAGE = {
    "evalplus": [None, (("eval", "HumanEval/1", 0, "base_status"), "passed"),
                 (("eval", "HumanEval/1", 0, "task_id"), "HumanEval/9"),
                 (("eval", "HumanEval/1"), []), (("eval", "HumanEval/1"), {"a": 1}),
                 (("eval", "HumanEval/0", 1, "plus_status"), None), (("date",), {"d": 1}),
                 (("pass_at_k", "base", "pass@1"), "x")],
    "tau2": [None, (("simulations", 2, "reward_info", "reward"), float("nan")),
             (("simulations", 1, "reward_info"), None), (("simulations", 0, "task_id"), None),
             (("info", "agent_info"), 3), (("simulations", 3, "termination_reason"),
                                           "infrastructure_error")],
    "inspect": [None, (("samples", 1, "scores", "match", "value"), "P"),
                (("samples", 0, "scores"), {}), (("eval", "model"), 5),
                (("status",), "error")],
    "lcb-eval": [None, ((1, "1", 0, 0), 3), ((1, "2"), []), ((0, "detail"), 2)],
}
CASES = [(kind, i) for kind, damages in DAMAGE.items() for i in range(len(damages))]


def _snapshot(path, **options):
    try:
        c = read_counts(path, **options)
    except ArchiveError as e:
        return "error", str(e)
    return c.to_rows(), c.metric, c.stored, c.skipped, c.notes


def _plain(file, only=None):
    return documents.load(file)  # no typed view


def read_alike(monkeypatch, snapshot, path, typed, **options):
    """``snapshot`` of the read without typed views, then with every document streamed,
    equals ``typed``."""
    with monkeypatch.context() as m:
        m.setattr(_detect, "load_document", _plain)
        assert snapshot(path, **options) == typed
    with monkeypatch.context() as m:
        m.setattr(documents, "WHOLE_BYTES", 0)  # every document streamed
        m.setattr(documents, "BLOCK", 64)
        assert snapshot(path, **options) == typed


@pytest.mark.parametrize("kind,case", CASES)
@pytest.mark.parametrize("compress", [False, True])
def test_typed_plain_and_streamed_read_alike(tmp_path, monkeypatch, kind, case, compress):
    name, make = DOCS[kind]
    doc = make()
    damage = DAMAGE[kind][case]
    if damage is not None:
        _set(doc, *damage)
    text = json.dumps(doc, indent=1).encode()
    path = tmp_path / (name + ".gz" if compress else name)
    path.write_bytes(gzip.compress(text) if compress else text)
    options = {"skip_bad": True} if case else {}
    typed = _snapshot(path, **options)
    if case == 0:
        assert isinstance(_detect.load_document(str(path)), documents.Typed)
    read_alike(monkeypatch, _snapshot, path, typed, **options)


def test_a_group_field_outside_the_view_reads_the_plain_document(tmp_path):
    doc = _evalplus()
    doc["model"] = "m1"
    path = tmp_path / "eval_results.json"
    path.write_text(json.dumps(doc))
    counts = read_counts(path, by=["model", "date"])
    assert counts.groups[0] == (("model", "m1"), ("date", "2024-11-30 00:00"),
                                ("metric_set", "base"))
    assert counts.n.tolist()[:3] == [3, 1, 4]


def test_a_key_given_twice_keeps_its_last_value_on_every_path(tmp_path, monkeypatch):
    text = ('{"eval": {"T/0": [{"base_status": "fail"}], "T/0": [{"base_status": "pass", '
            '"base_status": "fail"}, {"base_status": "pass"}]}}')
    path = tmp_path / "eval_results.json"
    path.write_text(text)
    assert read_counts(path).to_rows()[0]["c"] == 1  # as json.loads reads it
    monkeypatch.setattr(_detect, "load_document", _plain)
    assert read_counts(path).to_rows()[0]["c"] == 1
