"""The msgspec fast path of the whole-document readers (``_docfast``) against the exact path
(``_jsondoc`` and the stdlib ``json``): identical counts, stored numbers, notes, skips and
errors on the same files, whatever the formatting and the block size; a document the fast path
cannot prove (duplicates, bad records, malformed JSON) is read on the exact path."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from passatk.archives import ArchiveError, read_counts, write_archive
from passatk.archives.harnesses import _docfast

TASKS = ["HumanEval/0", "HumanEval/1", "HumanEval/10", "HumanEval/2"]
FLAGS = [[True, False, True], [False], [True, True, False, False], [True] * 5]
TINY = 64  # a block size that cuts every member of these files
_FIXTURE = [HealthCheck.function_scoped_fixture]


def _snapshot(path, **options):
    try:
        c = read_counts(path, **options)
    except ArchiveError as e:
        return "error", str(e)
    return (c.to_rows(), c.metric, c.stored, c.skipped, c.notes)


def _both(path, monkeypatch, block=None, **options):
    """(fast path, exact path) results of ``read_counts`` on ``path``."""
    with monkeypatch.context() as m:
        if block:
            m.setattr(_docfast, "BLOCK", block)
        fast = _snapshot(path, **options)
    with monkeypatch.context() as m:
        m.setattr(_docfast, "fast_load", _refuse)
        exact = _snapshot(path, **options)
    return fast, exact


def _refuse(file, block=None):
    raise _docfast.Unproved


def _proved(path, block=None) -> str | None:
    """The summary kind the fast path proves for ``path``, or None when it is unproved."""
    try:
        doc = _docfast.fast_load(str(path), block)
    except _docfast.Unproved:
        return None
    if getattr(doc, "summary", None) is not None:  # a list of trials, code_eval's tasks
        return doc.summary.kind
    return next(v.summary.kind for v in doc.values() if getattr(v, "summary", None))


def _same(path, monkeypatch, kind, block=None, **options):
    fast, exact = _both(path, monkeypatch, block, **options)
    assert fast == exact
    assert _proved(path, block) == kind
    return fast


# ------------------------------------------------------------------ documents
def _evalplus(version=3, plus=True):
    ev = {t: [{"task_id": t, "solution": f"def f():\n    return {j}  # \"}}], \"{t}\": [{{\n",
               "base_status": "pass" if x else "fail",
               "plus_status": ("pass" if j % 2 else "fail") if plus else None,
               "base_fail_tests": [] if x else [[j, "x"]], "plus_fail_tests": []}
              for j, x in enumerate(p)] for t, p in zip(TASKS, FLAGS, strict=True)}
    doc = {"date": "2024-11-30 00:00", "hash": "abc", "eval": ev}
    if version == 3:
        doc["pass_at_k"] = {"base": {"pass@1": 0.5}, "plus": {"pass@1": 0.25}}
    return doc


def _bigcodebench(error=None):
    return {"date": "2024", "eval": {
        t: [{"task_id": t, "solution": "def task_func():\n    return '}], \"x\": [{'\n",
             "status": "pass" if x else "fail",
             "details": {} if x else ({"ALL": error} if error else {"test_a": "Traceback..."})}
            for x in p] for t, p in zip(TASKS, FLAGS, strict=True)}}


def _taubench():
    return [{"task_id": i, "reward": 1.0 if x else 0.0, "trial": j,
             "info": {"reward_info": {"reward": 1.0 if x else 0.0, "actions": []},
                      "task": {"user_id": "u", "instruction": "}, {\"reward\": 1}, {"}},
             "traj": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None}]}
            for i, p in enumerate(FLAGS) for j, x in enumerate(p)]


def _evalplus_v1(plus=True):
    ev = {t: {"nfiles": len(p), "base": [["success" if x else "failed", [x, "}], \"T\": {"]]
                                          for x in p],
              "plus": [["success" if x and j % 2 else "timed out", [x]] for j, x in enumerate(p)]
              if plus else [], "files": [f"s/{t}/{j}.py" for j in range(len(p))]}
          for t, p in zip(TASKS, FLAGS, strict=True)}
    return {"date": 0, "hash": 0, "eval": ev}


KINDS = {"evalplus-v1": ("eval_results.json", _evalplus_v1),
         "evalplus": ("eval_results.json", _evalplus), "bigcodebench":
         ("m_eval_results.json", _bigcodebench), "tau-bench": ("tau.json", _taubench)}

STYLES = {
    "default": lambda d: json.dumps(d),
    "indent2": lambda d: json.dumps(d, indent=2),
    "indent4": lambda d: json.dumps(d, indent=4),
    "compact": lambda d: json.dumps(d, separators=(",", ":")),
    "crlf": lambda d: json.dumps(d, indent=2).replace("\n", "\r\n"),
    "bom": lambda d: "\ufeff" + json.dumps(d, indent=1),
    "unicode": lambda d: json.dumps(d, ensure_ascii=False).replace("return", "retürn \u2028"),
    "escapes": lambda d: json.dumps(d).replace("return", "\\u00e9\\ud83d\\ude00 return"),
    "tabs": lambda d: json.dumps(d, indent="\t") + "\n\n",
}


def _write(path, text: str) -> None:
    path.write_bytes(text.encode("utf-8"))


# ------------------------------------------------------------------ every format
@pytest.mark.parametrize("fmt,name,version", [
    ("evalplus", "eval_results.json", 1), ("evalplus", "eval_results.json", 2),
    ("evalplus", "eval_results.json", 3), ("bigcodebench", "m_eval_results.json", 3),
    ("tau-bench", "tau.json", 3), ("livecodebench", "m_eval_all.json", 3),
    ("opencompass", "oc.json", 3), ("cruxeval", "cx.json", 3),
    ("code-eval", "humaneval-python-details.json", 3), ("multipl-e", "mpe", 3)])
def test_every_document_format_reads_the_same(tmp_path, monkeypatch, fmt, name, version):
    path = tmp_path / name
    written = write_archive(path, TASKS, FLAGS, format=fmt, evalplus_version=version,
                            plus=FLAGS if fmt == "evalplus" else None)
    kind = "evalplus-v1" if fmt == "evalplus" and version == 1 else fmt
    for block in (None, TINY):
        fast, exact = _both(path, monkeypatch, block)
        assert fast == exact and fast[0] != "error"
        assert {_proved(w, block) for w in written if not w.endswith("_pass_at_k.json")} == {kind}


@pytest.mark.parametrize("style", sorted(STYLES))
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_odd_but_valid_documents(tmp_path, monkeypatch, kind, style):
    name, make = KINDS[kind]
    path = tmp_path / name
    _write(path, STYLES[style](make()))
    for block in (None, TINY, 7):
        _same(path, monkeypatch, kind, block)


def test_numbers_as_floats_and_big_ids(tmp_path, monkeypatch):
    path = tmp_path / "tau.json"
    trials = [{"task_id": 10**30, "reward": 1}, {"task_id": "7", "reward": 1.0e0},
              {"task_id": 7, "reward": 0.9999995}, {"task_id": 7, "reward": 1.000001},
              {"task_id": 7, "reward": 1.0000011}, {"task_id": 3, "reward": -0.0}]
    _write(path, json.dumps(trials).replace("1.0, ", "1.0e0, "))
    fast = _same(path, monkeypatch, "tau-bench", TINY)
    assert {r["task_id"]: (r["n"], r["c"]) for r in fast[0]} == {
        str(10**30): (1, 1), "7": (4, 3), "3": (1, 0)}


def test_gzip_and_long_members(tmp_path, monkeypatch):
    doc = _evalplus()
    doc["eval"]["HumanEval/1"][0]["solution"] = "x" * 300_000 + "\\\"}], \"T\": [{" * 1000
    path = tmp_path / "eval_results.json.gz"
    path.write_bytes(gzip.compress(json.dumps(doc, indent=2).encode()))
    for block in (None, TINY, 1 << 12):
        _same(path, monkeypatch, "evalplus", block)


def test_bigcodebench_error_note_and_sidecar(tmp_path, monkeypatch):
    path = tmp_path / "m_eval_results.json"
    _write(path, json.dumps(_bigcodebench(error="ModuleNotFoundError: no numpy")))
    _write(tmp_path / "m_pass_at_k.json", json.dumps({"pass@1": 0.5, "model": "m"}))
    fast = _same(path, monkeypatch, "bigcodebench", TINY)
    assert any("ModuleNotFoundError" in note for note in fast[4]) and fast[2]


def test_group_fields_from_the_document_and_the_path(tmp_path, monkeypatch):
    path = tmp_path / "run-a" / "eval_results.json"
    path.parent.mkdir()
    _write(path, json.dumps({"model": "m", **_evalplus()}))
    fast = _same(path, monkeypatch, "evalplus", by=("model", "path:dir"))
    assert {r["model"] for r in fast[0]} == {"m"}
    tau = tmp_path / "run-a" / "tau.json"
    _write(tau, json.dumps(_taubench()))
    _same(tau, monkeypatch, "tau-bench", by=("path:dir",))
    _same(tau, monkeypatch, "tau-bench", by=("trial",))  # a record field: the exact loop


# ------------------------------------------------------------------ unproved: the exact path
def _dup_field(kind: str, name: str, value: str, escaped: bool = False, kinds=None) -> str:
    """A document (of ``kinds``, default this module's KINDS) whose third record holds
    ``name`` twice."""
    text = json.dumps((kinds or KINDS)[kind][1](), indent=1)
    key = f'"{name}": '
    at = -1
    for _ in range(3):
        at = text.index(key, at + 1)
    spelled = json.dumps(name) if not escaped else f'"{name[:-1]}\\u{ord(name[-1]):04x}"'
    return text[:at] + f"{spelled}: {value}, " + text[at:]


@pytest.mark.parametrize("kind,name,value", [
    ("evalplus-v1", "base", "[]"), ("evalplus-v1", "nfiles", "4"),
    ("evalplus", "base_status", '"fail"'), ("evalplus", "plus_status", '"pass"'),
    ("evalplus", "task_id", '"HumanEval/0"'), ("bigcodebench", "status", '"fail"'),
    ("bigcodebench", "details", "{}"), ("tau-bench", "reward", "0.0"),
    ("tau-bench", "task_id", "1")])
@pytest.mark.parametrize("escaped", [False, True])
def test_duplicate_fields_are_errors(tmp_path, monkeypatch, kind, name, value, escaped):
    path = tmp_path / KINDS[kind][0]
    _write(path, _dup_field(kind, name, value, escaped))
    for block in (None, TINY):
        fast, exact = _both(path, monkeypatch, block, strict_json=True)
        assert fast == exact and fast[0] == "error" and "duplicate key" in fast[1]
        assert _proved(path, block) is None


def test_duplicate_all_in_details_is_an_error(tmp_path, monkeypatch):
    path = tmp_path / "m_eval_results.json"
    text = json.dumps(_bigcodebench(error="E")).replace('{"ALL": "E"}', '{"ALL": "E", "ALL": 1}',
                                                        1)
    _write(path, text)
    fast, exact = _both(path, monkeypatch, strict_json=True)
    assert fast == exact and "duplicate key" in fast[1]


@pytest.mark.parametrize("kind", ["evalplus", "bigcodebench"])
@pytest.mark.parametrize("where", ["adjacent", "apart", "empty first", "no fields"])
def test_duplicate_task_keys_are_errors(tmp_path, monkeypatch, kind, where):
    name, make = KINDS[kind]
    sample = '{"base_status": "pass"}' if kind == "evalplus" else '{"status": "pass"}'
    member = {"adjacent": f'"HumanEval/1": [{sample}], ', "apart": f'"HumanEval/2": [{sample}], ',
              "empty first": '"HumanEval/2": [], ', "no fields": '"HumanEval/2": [{}], '}[where]
    text = json.dumps(make())
    path = tmp_path / name
    _write(path, text.replace('"HumanEval/1": [', member + '"HumanEval/1": [', 1))
    for block in (None, TINY):
        fast, exact = _both(path, monkeypatch, block, skip_bad=True)
        assert fast == exact and fast[0] == "error" and "duplicate key" in fast[1]


def test_duplicate_top_level_keys_are_errors(tmp_path, monkeypatch):
    path = tmp_path / "eval_results.json"
    _write(path, json.dumps(_evalplus())[:-1] + ', "date": "again"}')
    fast, exact = _both(path, monkeypatch)
    assert fast == exact and "duplicate key" in fast[1]


_BAD_V1 = {
    "bad status": ('["failed", [false', '["fail", [false'),
    "null status": ('["failed", [false', '[null, [false'),
    "bool status": ('["failed", [false', '[false, [false'),
    "three items": ('["failed", [false, "}], \\"T\\": {"]]', '["failed", [false], 1]'),
    "nfiles differs": ('"nfiles": 4', '"nfiles": 5'),
    "nfiles as 4.0": ('"nfiles": 4', '"nfiles": 4.0'),
    "files short": ('"s/HumanEval/2/3.py"', '"x", "y"'),
    "plus short": ('["timed out", [false]]]', ']'),
    "base empty": ('"base": [["success", [true', '"base": [], "b": [["success", [true'),
    "base missing": ('"base": [["success", [true', '"b": [["success", [true'),
    "plus not a list": ('"plus": [', '"plus": 1, "p": ['),
}


@pytest.mark.parametrize("case", sorted(_BAD_V1))
@pytest.mark.parametrize("skip_bad", [False, True])
def test_bad_evalplus_v1_records(tmp_path, monkeypatch, case, skip_bad):
    old, new = _BAD_V1[case]
    path = tmp_path / "eval_results.json"
    _write(path, _replace_later(json.dumps(_evalplus_v1()), old, new))
    fast, exact = _both(path, monkeypatch, TINY, skip_bad=skip_bad)
    assert fast == exact
    proved = case in ("null status", "nfiles as 4.0")
    assert _proved(path, TINY) == ("evalplus-v1" if proved else None)


def test_evalplus_v1_base_only(tmp_path, monkeypatch):
    path = tmp_path / "eval_results.json"
    _write(path, json.dumps(_evalplus_v1(plus=False)))
    fast = _same(path, monkeypatch, "evalplus-v1", TINY)
    assert {dict(g)["metric_set"] for g in (tuple(r.items()) for r in fast[0])} == {"base"}


_BAD_EVALPLUS = {
    "bad status": ('"base_status": "pass"', '"base_status": "passed"'),
    "null status": ('"base_status": "pass"', '"base_status": null'),
    "missing status": ('"base_status": "pass", ', ""),
    "task_id differs": ('"task_id": "HumanEval/1"', '"task_id": "HumanEval/9"'),
    "int task_id": ('"task_id": "HumanEval/1"', '"task_id": 1'),
    "empty task": ('"HumanEval/10": [', '"HumanEval/10": [], "HumanEval/11": ['),
    "not a list": ('"HumanEval/10": [', '"HumanEval/10": 5, "HumanEval/11": ['),
    "sample not an object": ('"HumanEval/10": [', '"HumanEval/10": [1, '),
    "status is a number": ('"plus_status": "pass"', '"plus_status": 1'),
}


@pytest.mark.parametrize("case", sorted(_BAD_EVALPLUS))
@pytest.mark.parametrize("skip_bad", [False, True])
def test_bad_evalplus_records(tmp_path, monkeypatch, case, skip_bad):
    old, new = _BAD_EVALPLUS[case]
    path = tmp_path / "eval_results.json"
    _write(path, _replace_later(json.dumps(_evalplus()), old, new))
    fast, exact = _both(path, monkeypatch, TINY, skip_bad=skip_bad)
    assert fast == exact
    assert (fast[0] != "error") == skip_bad or case == "null status"
    assert _proved(path, TINY) == ("evalplus" if case == "null status" else None)


def _replace_later(text: str, old: str, new: str) -> str:
    """``text`` with ``new`` for the last ``old`` (the first member stays good: detection)."""
    at = text.rindex(old)
    return text[:at] + new + text[at + len(old):]


@pytest.mark.parametrize("old,new", [
    ('"status": "fail"', '"status": "error"'), ('"status": "fail", ', ""),
    ('"details": {}', '"details": [1]'), ('"details": {}', '"details": {"ALL": {"a": 1}}')])
@pytest.mark.parametrize("skip_bad", [False, True])
def test_bad_bigcodebench_records(tmp_path, monkeypatch, old, new, skip_bad):
    path = tmp_path / "m_eval_results.json"
    _write(path, _replace_later(json.dumps(_bigcodebench()), old, new))
    fast, exact = _both(path, monkeypatch, TINY, skip_bad=skip_bad)
    assert fast == exact


@pytest.mark.parametrize("old,new", [
    ('"reward": 1.0', '"reward": "1.0"'), ('"reward": 1.0', '"reward": 1e999'),
    ('"reward": 1.0', '"reward": true'), ('"task_id": 1', '"task_id": null'),
    ('"reward": 1.0, ', ""), ('{"task_id": 2', '7, {"task_id": 2')])
@pytest.mark.parametrize("skip_bad", [False, True])
def test_bad_taubench_trials(tmp_path, monkeypatch, old, new, skip_bad):
    path = tmp_path / "tau.json"
    _write(path, _replace_later(json.dumps(_taubench()), old, new))
    fast, exact = _both(path, monkeypatch, TINY, skip_bad=skip_bad)
    assert fast == exact


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("damage", ["truncated", "trailing", "bad utf-8", "nan", "comma",
                                    "control"])
def test_malformed_documents_give_the_exact_error(tmp_path, monkeypatch, kind, damage):
    name, make = KINDS[kind]
    data = json.dumps(make(), indent=1).encode()
    at = len(data) * 2 // 3
    data = {"truncated": data[:at], "trailing": data + b" x",
            "bad utf-8": data[:at] + b'"\xff", ' + data[at:],
            "nan": data.replace(b": 0.0", b": NaN").replace(b"\"fail\"", b"NaN", 1),
            "comma": data.replace(b"]", b", ]", 1),
            "control": data.replace(b"\\n", b"\n", 1)}[damage]
    path = tmp_path / name
    path.write_bytes(data)
    for block in (None, TINY):
        fast, exact = _both(path, monkeypatch, block)
        assert fast == exact


def test_a_member_over_the_cap_is_the_exact_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PASSATK_MAX_RECORD_BYTES", "1K")
    path = tmp_path / "eval_results.json"
    doc = _evalplus()
    doc["eval"]["HumanEval/2"] = doc["eval"]["HumanEval/2"] * 10
    _write(path, json.dumps(doc, indent=1))
    fast, exact = _both(path, monkeypatch, TINY)
    assert fast == exact and "record longer than 1024 bytes" in fast[1]


# ------------------------------------------------------------------ stdin
def test_a_large_document_on_stdin_is_read_in_one_pass(tmp_path):
    """Past the kept start of a pipe the exact path cannot read a document twice; the fast
    path reads it once."""
    path = tmp_path / "eval_results.json"
    doc = _evalplus()
    samples = [{k: v for k, v in s.items() if k != "task_id"} for s in doc["eval"]["HumanEval/2"]]
    doc["eval"] = {f"T/{i}": samples for i in range(1500)}
    _write(path, json.dumps(doc, indent=1))
    assert path.stat().st_size > (64 << 10) + (1 << 20)  # more than a pipe keeps
    code = ("import json, sys\nfrom passatk.archives import read_counts\n"
            "from passatk.archives.harnesses import _docfast\n"
            "if sys.argv[1] == 'exact':\n"
            "    def refuse(file, block=None):\n        raise _docfast.Unproved\n"
            "    _docfast.fast_load = refuse\n"
            "print(json.dumps(read_counts('-').to_rows(), sort_keys=True))")
    runs = {}
    for how in ("fast", "exact"):
        with open(path, "rb") as f:
            runs[how] = subprocess.run(
                [sys.executable, "-c", code, how], stdin=f, capture_output=True, text=True,
                timeout=120, env={**os.environ, "PASSATK_MAX_RECORD_BYTES": "64K"})
    assert runs["fast"].returncode == 0, runs["fast"].stderr
    assert json.loads(runs["fast"].stdout) == json.loads(
        json.dumps(read_counts(path).to_rows(), sort_keys=True))
    assert runs["exact"].returncode == 1 and "already read past its start" in runs["exact"].stderr


# ------------------------------------------------------------------ hypothesis
_STATUS = st.sampled_from(["pass", "fail", "timeout", None, "error", 1])
_SOLUTION = st.text(alphabet='ab"\\\n{}[],: \u00e9\U0001f600', max_size=12)


@st.composite
def _evalplus_docs(draw):
    tasks = draw(st.lists(st.sampled_from(["T/0", "T/1", "T/2", "T/10", "base_status"]),
                          min_size=1, max_size=4))
    ev = []
    for t in tasks:
        samples = []
        for _ in range(draw(st.integers(0, 4))):
            s = {"solution": draw(_SOLUTION), "base_status": draw(_STATUS)}
            if draw(st.booleans()):
                s["plus_status"] = draw(_STATUS)
            if draw(st.integers(0, 3)):
                s["task_id"] = t if draw(st.integers(0, 5)) else "T/9"
            samples.append(s)
        ev.append((t, samples))
    return ev


def _serialize_pairs(ev, indent, ascii_only, dup_field):
    def member(t, samples):
        parts = []
        for s in samples:
            text = json.dumps(s, indent=indent, ensure_ascii=ascii_only)
            if dup_field and "base_status" in s:
                text = text.replace('"base_status"', '"base_status": "pass", "base_status"', 1)
            parts.append(text)
        return json.dumps(t) + ": [" + ", ".join(parts) + "]"
    return '{"date": "d", "eval": {' + ",\n ".join(member(t, s) for t, s in ev) + "}}"


@settings(max_examples=60, deadline=None, suppress_health_check=_FIXTURE)
@given(ev=_evalplus_docs(), indent=st.sampled_from([None, 1, 2]), ascii_only=st.booleans(),
       dup=st.integers(0, 6), block=st.sampled_from([7, 64, 500, None]),
       skip_bad=st.booleans())
def test_hypothesis_evalplus(tmp_path, monkeypatch, ev, indent, ascii_only, dup, block,
                             skip_bad):
    path = tmp_path / "eval_results.json"
    _write(path, _serialize_pairs(ev, indent, ascii_only, dup == 0))
    fast, exact = _both(path, monkeypatch, block, skip_bad=skip_bad)
    assert fast == exact


@settings(max_examples=60, deadline=None, suppress_health_check=_FIXTURE)
@given(trials=st.lists(st.fixed_dictionaries(
    {"task_id": st.integers(0, 3) | st.sampled_from(["a", "b"]),
     "reward": st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(
         [1, 0, 1.0, 0.9999999, 1.000002])},
    optional={"info": st.dictionaries(st.sampled_from(["reward", "task_id", "x"]),
                                      st.integers(0, 2) | _SOLUTION, max_size=2),
              "traj": st.lists(_SOLUTION, max_size=2)}), min_size=1, max_size=6),
       indent=st.sampled_from([None, 2]), block=st.sampled_from([7, 64, None]))
def test_hypothesis_taubench(tmp_path, monkeypatch, trials, indent, block):
    path = tmp_path / "tau.json"
    _write(path, json.dumps(trials, indent=indent))
    fast, exact = _both(path, monkeypatch, block)
    assert fast == exact
    assert _proved(path, block) == "tau-bench"


_DETAILS = (st.just({}) | st.none() | st.fixed_dictionaries(
    {}, optional={"ALL": st.sampled_from(["E", "failed:", "ALL", "F"]) | st.none()
                  | st.integers(0, 1), "test_a": _SOLUTION}) | st.sampled_from([[], "x"]))


@settings(max_examples=60, deadline=None, suppress_health_check=_FIXTURE)
@given(ev=st.dictionaries(st.sampled_from(["T/0", "T/1", "T/10", "status"]), st.lists(
    st.fixed_dictionaries({"status": st.sampled_from(["pass", "fail", "fail", "timeout"])},
                          optional={"details": _DETAILS, "solution": _SOLUTION}),
    min_size=1, max_size=5), min_size=1, max_size=4),
       indent=st.sampled_from([None, 2]), block=st.sampled_from([7, 64, None]))
def test_hypothesis_bigcodebench(tmp_path, monkeypatch, ev, indent, block):
    path = tmp_path / "m_eval_results.json"
    _write(path, json.dumps({"eval": ev}, indent=indent))
    fast, exact = _both(path, monkeypatch, block)
    assert fast == exact


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_keys_with_escapes_and_unicode(tmp_path, monkeypatch, kind):
    name, make = KINDS[kind]
    text = json.dumps(make(), ensure_ascii=False)
    if kind == "tau-bench":
        text = text.replace('"trial"', '"tr\\"i\\u00e9l\\/"').replace('"info"', '"ïnfo"')
    else:
        text = text.replace('"HumanEval/1"', '"Human\\"Eval\\/\\u00e9/1"').replace(
            '"HumanEval/2"', '"HumanEvalé/2"')
    path = tmp_path / name
    _write(path, text)
    for block in (None, TINY, 5):
        _same(path, monkeypatch, kind, block)


def test_a_key_with_a_control_character_is_the_exact_error(tmp_path, monkeypatch):
    path = tmp_path / "eval_results.json"
    _write(path, json.dumps(_evalplus()).replace('"HumanEval/1"', '"Human\tEval/1"'))
    fast, exact = _both(path, monkeypatch)
    assert fast == exact and fast[0] == "error"


@pytest.mark.parametrize("style", ["default", "indent2", "crlf", "compact"])
def test_taubench_trials_are_decoded_in_batches(tmp_path, monkeypatch, style):
    """Many trials per typed decode, cut at the separator learned from the first two; a
    separator inside a string or a nested list cannot cut (the piece does not decode). On one
    line (no indent) the trials' separator is also that of nested lists: one at a time."""
    trials = _taubench() * 30
    for i, t in enumerate(trials):
        t["traj"].append({"role": "user", "content": "}, {" if i % 3 else "},\n  {"})
        t["traj"].append([{"a": 1}, {"b": 2}])
    path = tmp_path / "tau.json"
    _write(path, STYLES[style](trials))
    batches = []
    real = _docfast._Batch.read

    def spy(self, buf, pos, summary):
        after = real(self, buf, pos, summary)
        batches.append(after > pos)
        return after

    monkeypatch.setattr(_docfast._Batch, "read", spy)
    fast = _same(path, monkeypatch, "tau-bench")
    assert any(batches) == (style in ("indent2", "crlf"))
    assert sum(r["n"] for r in fast[0]) == len(trials)


def test_a_duplicate_reward_inside_a_batch_is_an_error(tmp_path, monkeypatch):
    trials = _taubench() * 20
    text = json.dumps(trials, indent=2)
    at = text.index('"reward"', len(text) // 2)
    path = tmp_path / "tau.json"
    _write(path, text[:at] + '"reward": 1.0, ' + text[at:])
    fast, exact = _both(path, monkeypatch, strict_json=True)
    assert fast == exact and "duplicate key" in fast[1]


@pytest.mark.parametrize("where", ["sample", "task", "top"])
def test_deep_nesting_is_the_exact_paths_error(tmp_path, monkeypatch, where):
    """msgspec gives up on deep nesting with RecursionError (found by the fuzz test): the
    document goes to the exact path, which reports it in one located error."""
    deep = "[" * 5000 + "]" * 5000
    doc = json.dumps(_evalplus())
    if where == "sample":
        text = doc.replace('"base_status"', f'"x": {deep}, "base_status"', 1)
    elif where == "task":
        text = doc.replace('"eval": {', f'"eval": {{"T/9": {deep}, ', 1)
    else:
        text = doc[:-1] + f', "x": {deep}}}'
    path = tmp_path / "eval_results.json"
    _write(path, text)
    fast, exact = _both(path, monkeypatch)
    assert fast == exact
