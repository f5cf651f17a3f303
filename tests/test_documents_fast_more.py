"""The msgspec fast path (``_docfast``, ``_docfast_kinds``) of LiveCodeBench, OpenCompass,
CRUXEval, code_eval and MultiPL-E documents against the exact path (``_jsondoc`` and the
stdlib ``json``): identical counts, stored numbers, notes, skips and errors on the same files,
whatever the formatting and the block size; what the fast path cannot prove (duplicates, bad
records, malformed JSON) is read on the exact path."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_documents_fast import _FIXTURE, STYLES, TINY, _both, _dup_field, _proved, _write

TASKS = ["HumanEval/0", "HumanEval/1", "HumanEval/10", "HumanEval/2"]
FLAGS = [[True, False, True], [False, False], [True, True, False, False], [True] * 5]
_CODE = 'def f():\n    return "}}, {\\"graded_list\\": [" + \'"passed": true\'  # \u00e9\n'


def _meta(x: bool, error: str = "TimeoutException()") -> str:
    return json.dumps({} if x else {"error": error, "error_code": -3})


def _lcb(error=None):
    return [{"question_title": f"p{i}", "question_content": '"difficulty": "hard"',
             "platform": "leetcode", "question_id": t if i % 2 else 3000 + i,
             "contest_id": "c1", "contest_date": f"2024-0{1 + i}-0{1 + i}T00:00:00",
             "starter_code": "", "difficulty": ["easy", "medium", "hard", "Easy"][i],
             "output_list": ["out"] * len(p), "code_list": [_CODE] * len(p),
             "graded_list": [[x, int(x), float(x)][j % 3] for j, x in enumerate(p)],
             "pass@1": sum(p) / len(p) if i != 2 else 1,
             "metadata": [_meta(x, error or f"E{j}") for j, x in enumerate(p)]}
            for i, (t, p) in enumerate(zip(TASKS, FLAGS, strict=True))]


def _opencompass(as_list=False, error=None):
    details = [{"task_id": t, "completion": _CODE, "passed": [x, int(x), float(x)][j % 3],
                "result": "passed" if x else (error or f"failed: E{j}")}
               for t, p in zip(TASKS, FLAGS, strict=True) for j, x in enumerate(p)]
    return {"humaneval_pass@1": 50.0, "model": "m",
            "details": details if as_list else {str(i): d for i, d in enumerate(details)}}


def _cruxeval():
    return {"raw_generations": {f"sample_{i}": [_CODE] * len(p) for i, p in enumerate(FLAGS)},
            "raw_scored_generations": {f"sample_{i}": [[x, int(x), float(x)][j % 3]
                                                      for j, x in enumerate(p)]
                                       for i, p in enumerate(FLAGS)},
            "pass_at_1": 50.0, "pass_at_5": 75.0}


def _code_eval(error=None):
    return {t: [[j, {"task_id": t, "completion_id": j, "passed": [x, int(x), float(x)][j % 3],
                     "result": "passed" if x else (error or f"failed: E{j}")}]
                for j, x in enumerate(p)] for t, p in zip(TASKS, FLAGS, strict=True)}


def _multipl_e(error=None):
    t, p = TASKS[2], FLAGS[2]
    return {"name": t, "language": "py", "temperature": 0.2, "prompt": _CODE, "tests": _CODE,
            "results": [{"program": _CODE, "timestamp": 1, "stdout": "", "status":
                         "OK" if x else "Exception", "exit_code": 0 if x else 1,
                         "stderr": "" if x else (error or f"E{j}")} for j, x in enumerate(p)]}


KINDS = {"livecodebench": ("m_eval_all.json", _lcb),
         "opencompass": ("oc.json", _opencompass),
         "opencompass-list": ("oc.json", lambda **kw: _opencompass(True, **kw)),
         "cruxeval": ("cx.json", _cruxeval),
         "code-eval": ("humaneval-python-details.json", _code_eval),
         "multipl-e": ("HumanEval_10.results.json", _multipl_e)}


def _kind(kind: str) -> str:
    return kind.removesuffix("-list")


def _same(path, monkeypatch, kind, block=None, **options):
    fast, exact = _both(path, monkeypatch, block, **options)
    assert fast == exact
    assert _proved(path, block) == _kind(kind)
    return fast


# ------------------------------------------------------------------ proved: same results
@pytest.mark.parametrize("style", sorted(STYLES))
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_odd_but_valid_documents(tmp_path, monkeypatch, kind, style):
    name, make = KINDS[kind]
    path = tmp_path / name
    _write(path, STYLES[style](make()))
    for block in (None, TINY, 7):
        fast = _same(path, monkeypatch, kind, block)
        assert fast[0] != "error" and fast[0]


@pytest.mark.parametrize("kind", sorted(set(KINDS) - {"cruxeval"}))  # no error texts
def test_the_broken_harness_note(tmp_path, monkeypatch, kind):
    """Every failed sample carries one error text: the same note on both paths."""
    name, make = KINDS[kind]
    path = tmp_path / name
    _write(path, json.dumps(make(error="ModuleNotFoundError: numpy")))
    fast = _same(path, monkeypatch, kind, TINY)
    assert any("ModuleNotFoundError" in note for note in fast[4])
    _write(path, json.dumps(make()))  # different texts: no note
    fast = _same(path, monkeypatch, kind, TINY)
    assert not any("every failed sample" in note for note in fast[4])


def test_multipl_e_directory_note_and_groups(tmp_path, monkeypatch):
    run = tmp_path / "run"
    run.mkdir()
    for i, t in enumerate(TASKS):
        doc = _multipl_e(error="Traceback: SyntaxError")
        doc["name"] = t
        doc["results"] = doc["results"][: 1 + i]
        _write(run / f"p{i}.results.json", json.dumps(doc, indent=i))
    fast, exact = _both(run, monkeypatch, TINY, by=("language", "path:dir"))
    assert fast == exact and any("SyntaxError" in note for note in fast[4])
    assert {r["language"] for r in fast[0]} == {"py"}


@pytest.mark.parametrize("filters", [
    {"since": "2024-02-02"}, {"until": "2024-03-03"}, {"since": "2024-02-01", "until":
                                                       "2024-03-31"},
    {"difficulty": "easy"}, {"difficulty": ["medium", "hard"]}, None])
def test_livecodebench_filters_and_stored_numbers(tmp_path, monkeypatch, filters):
    path = tmp_path / "m_eval_all.json"
    _write(path, json.dumps(_lcb(), indent=2))
    fast = _same(path, monkeypatch, "livecodebench", TINY, filters=filters)
    assert fast[2]  # the stored pass@1 of every kept problem
    fast = _same(path, monkeypatch, "livecodebench", None, filters=filters, by=("path:dir",))


@pytest.mark.parametrize("date", ['"24-01-01"', "20240101", "null", '"2024-01-01"'])
@pytest.mark.parametrize("skip_bad", [False, True])
def test_livecodebench_bad_dates_under_a_filter(tmp_path, monkeypatch, date, skip_bad):
    """A bad date matters only when filtering by date: then it is the exact path's skip or
    error, located at the problem."""
    problems = _lcb()
    text = json.dumps(problems).replace('"2024-03-03T00:00:00"', date)
    if date == "null":
        text = text.replace(', "contest_date": "2024-04-04T00:00:00"', "")
    path = tmp_path / "m_eval_all.json"
    _write(path, text)
    for filters in ({"since": "2024-01-01"}, {"difficulty": "hard"}, None):
        fast, exact = _both(path, monkeypatch, TINY, filters=filters, skip_bad=skip_bad)
        assert fast == exact


@pytest.mark.parametrize("kind,by", [
    ("livecodebench", ("platform",)), ("livecodebench", ("difficulty", "path:dir")),
    ("opencompass", ("model",)), ("opencompass-list", ("completion",)),
    ("cruxeval", ("path:dir",)), ("code-eval", ("path:dir",)),
    ("multipl-e", ("temperature",))])
def test_group_fields(tmp_path, monkeypatch, kind, by):
    """Record fields in ``by`` take the exact loop of the reader, on the same skeleton."""
    name, make = KINDS[kind]
    path = tmp_path / name
    _write(path, json.dumps(make(), indent=1))
    fast, exact = _both(path, monkeypatch, TINY, by=by)
    assert fast == exact and fast[0] != "error"
    assert _proved(path, TINY) == _kind(kind)


def test_big_documents_and_gzip(tmp_path, monkeypatch):
    import gzip

    doc = _code_eval()
    doc = {f"T/{i}": [[j, {**r, "task_id": f"T/{i}", "result": "x" * (i % 7)}]
                      for j, (_, r) in enumerate(items * 5)]
           for i, items in enumerate(list(doc.values()) * 300)}
    path = tmp_path / "humaneval-python-details.json.gz"
    path.write_bytes(gzip.compress(json.dumps(doc, indent=1).encode()))
    for block in (None, 1 << 12):
        fast = _same(path, monkeypatch, "code-eval", block)
        assert len(fast[0]) == 1200


# ------------------------------------------------------------------ unproved: the exact path
@pytest.mark.parametrize("kind,name,value", [
    ("livecodebench", "question_id", '"x"'), ("livecodebench", "graded_list", "[true]"),
    ("livecodebench", "contest_date", '"2020-01-01"'), ("livecodebench", "difficulty", '"hard"'),
    ("livecodebench", "metadata", "[]"), ("livecodebench", "pass@1", "0.5"),
    ("opencompass", "task_id", '"x"'), ("opencompass", "passed", "true"),
    ("opencompass", "result", '"E"'), ("opencompass-list", "passed", "false"),
    ("code-eval", "passed", "true"), ("code-eval", "task_id", '"HumanEval/0"'),
    ("code-eval", "result", '"passed"'), ("multipl-e", "status", '"OK"'),
    ("multipl-e", "exit_code", "0"), ("multipl-e", "stderr", '""')])
@pytest.mark.parametrize("escaped", [False, True])
def test_duplicate_fields_are_errors(tmp_path, monkeypatch, kind, name, value, escaped):
    path = tmp_path / KINDS[kind][0]
    _write(path, _dup_field(kind, name, value, escaped, KINDS))
    for block in (None, TINY):
        fast, exact = _both(path, monkeypatch, block, skip_bad=True, strict_json=True)
        assert fast == exact and fast[0] == "error" and "duplicate key" in fast[1]
        assert _proved(path, block) is None


@pytest.mark.parametrize("kind,old,new", [
    ("opencompass", '"1": {', '"5": {"task_id": "T", "passed": true}, "1": {'),
    ("cruxeval", '"sample_2": [true', '"sample_0": [], "sample_2": [true'),
    ("code-eval", '"HumanEval/2": [', '"HumanEval/0": [[0, {"passed": true}]], '
                                      '"HumanEval/2": ['),
    ("livecodebench", '"pass@1": 1, ', '"pass@1": 1, "question_id": 5, ')])
def test_duplicate_keys_are_errors(tmp_path, monkeypatch, kind, old, new):
    name, make = KINDS[kind]
    text = json.dumps(make())
    path = tmp_path / name
    _write(path, text.replace(old, new, 1))
    assert text != text.replace(old, new, 1)
    for block in (None, TINY):
        fast, exact = _both(path, monkeypatch, block, skip_bad=True, strict_json=True)
        assert fast == exact and fast[0] == "error" and "duplicate key" in fast[1]


_BAD = {
    "livecodebench": [('"graded_list": [true', '"graded_list": [0.5'),
                      ('"graded_list": [true', '"graded_list": [], "x": [true'),
                      ('"graded_list": [true', '"graded_list": ["1", true'),
                      ('"question_id": 3002', '"question_id": 1.5'),
                      ('"question_id": 3002, ', ""), ('"metadata": [', '"metadata": [{}, '),
                      ('"metadata": [', '"metadata": 7, "m": ['),
                      ('"difficulty": "Easy"', '"difficulty": 3'),
                      ('"pass@1": 1, ', '"pass@1": {"a": 1, "a": 2}, '),
                      ('"pass@1": 1, ', '"pass@1": 1e999, '), ('{"question_title": "p3"', '7')],
    "opencompass": [('"passed": true', '"passed": 2'), ('"passed": 1', '"passed": "yes"'),
                    ('"passed": true, ', ""), ('"task_id": "HumanEval/2"', '"task_id": null'),
                    ('"result": "passed"', '"result": ["x"]'), ('{"task_id": "HumanEval/2"',
                                                                '[{"task_id": "HumanEval/2"')],
    "cruxeval": [('[true, 1, 1.0, true, 1]', '[true, 2]'), ('[true, 1, 1.0, true, 1]', '[]'),
                 ('[true, 1, 1.0, true, 1]', '{"a": 1}'), ('[true, 1, 1.0, true, 1]', 'true')],
    "code-eval": [('"passed": 1.0', '"passed": 0.5'), ('"task_id": "HumanEval/2"',
                                                       '"task_id": "HumanEval/9"'),
                  ('"passed": true, ', ""), ("[4, {", "[4, 5, {"), ("[4, {", '[4, "x"], [5, {'),
                  ('"HumanEval/2": [', '"HumanEval/2": 7, "T": ['),
                  ('"HumanEval/2": [', '"HumanEval/2": [], "T": [')],
    "multipl-e": [('"status": "OK"', '"status": 1'), ('"exit_code": 0', '"exit_code": false'),
                  ('"exit_code": 0', '"exit_code": 0.0'), ('"status": "OK", ', ""),
                  ('"stderr": ""', '"stderr": {"a": 1}'), ('{"program"', '7, {"program"')],
}


def _replace_later(text: str, old: str, new: str) -> str:
    """``text`` with ``new`` for the last ``old`` (the first member stays good: detection)."""
    at = text.rindex(old)
    return text[:at] + new + text[at + len(old):]


@pytest.mark.parametrize("kind,case", [(k, i) for k, cases in _BAD.items()
                                       for i in range(len(cases))])
@pytest.mark.parametrize("skip_bad", [False, True])
def test_bad_records(tmp_path, monkeypatch, kind, case, skip_bad):
    name, make = KINDS[kind]
    old, new = _BAD[kind][case]
    path = tmp_path / name
    text = json.dumps(make())
    _write(path, _replace_later(text, old, new))
    assert old in text
    for block in (None, TINY):
        fast, exact = _both(path, monkeypatch, block, skip_bad=skip_bad)
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
            "nan": data.replace(b": false", b": NaN").replace(b"true", b"NaN", 2),
            "comma": data[:-1] + b", " + data[-1:],
            "control": data.replace(b"\\n", b"\n", 2)}[damage]
    path = tmp_path / name
    path.write_bytes(data)
    for block in (None, TINY):
        fast, exact = _both(path, monkeypatch, block)
        assert fast == exact
        assert fast[0] == "error" or damage in ("nan", "control")  # NaN, \n in strings


def test_code_eval_keys_other_probes_read_stay_exact(tmp_path, monkeypatch):
    doc = _code_eval()
    doc["name"] = doc.pop("HumanEval/2")
    path = tmp_path / "humaneval-python-details.json"
    _write(path, json.dumps(doc))
    fast, exact = _both(path, monkeypatch)
    assert fast == exact and _proved(path) is None


# ------------------------------------------------------------------ hypothesis
_TEXT = st.text(alphabet='ab"\\\n{}[],: \u00e9\U0001f600', max_size=8)
_FLAG = st.sampled_from([True, False, 1, 0, 1.0, 0.0]) | st.sampled_from([0.5, 2, None, "1"])
_ID = st.sampled_from(["T/0", "T/1", "passed", "task_id"]) | st.integers(0, 3)


@settings(max_examples=40, deadline=None, suppress_health_check=_FIXTURE)
@given(problems=st.lists(st.fixed_dictionaries(
    {"question_id": _ID, "graded_list": st.lists(_FLAG, max_size=4)},
    optional={"contest_date": st.sampled_from(["2024-01-01T00:00", "2023-05-05", "x"]),
              "difficulty": st.sampled_from(["easy", "Hard", "medium"]),
              "pass@1": st.sampled_from([0.5, 1, "x", None]),
              "metadata": st.lists(st.sampled_from(['{"error": "E"}', "{}", "[", "difficulty"]),
                                   max_size=4),
              "code_list": st.lists(_TEXT, max_size=2)}), min_size=1, max_size=5),
       indent=st.sampled_from([None, 2]), block=st.sampled_from([7, 64, None]),
       since=st.sampled_from([None, "2024-01-01"]), skip_bad=st.booleans())
def test_hypothesis_livecodebench(tmp_path, monkeypatch, problems, indent, block, since,
                                  skip_bad):
    problems[0]["graded_list"] = problems[0].get("graded_list") or [True]
    path = tmp_path / "m_eval_all.json"
    _write(path, json.dumps(problems, indent=indent))
    fast, exact = _both(path, monkeypatch, block, skip_bad=skip_bad,
                        filters=None if since is None else {"since": since})
    assert fast == exact


@settings(max_examples=40, deadline=None, suppress_health_check=_FIXTURE)
@given(details=st.lists(st.fixed_dictionaries(
    {"task_id": _ID, "passed": _FLAG},
    optional={"result": st.sampled_from(["passed", "failed: E", "result", None]) | _TEXT,
              "completion": _TEXT}), min_size=1, max_size=6),
       as_list=st.booleans(), indent=st.sampled_from([None, 1]),
       block=st.sampled_from([7, 64, None]), skip_bad=st.booleans())
def test_hypothesis_opencompass(tmp_path, monkeypatch, details, as_list, indent, block,
                                skip_bad):
    path = tmp_path / "oc.json"
    doc = {"details": details if as_list else {str(i): d for i, d in enumerate(details)},
           "x_pass@1": 10}
    _write(path, json.dumps(doc, indent=indent))
    fast, exact = _both(path, monkeypatch, block, skip_bad=skip_bad)
    assert fast == exact


@settings(max_examples=40, deadline=None, suppress_health_check=_FIXTURE)
@given(tasks=st.dictionaries(st.sampled_from(["T/0", "T/1", "passed", "x"]), st.lists(
    st.tuples(st.integers(0, 3) | _TEXT, st.fixed_dictionaries(
        {"passed": _FLAG}, optional={"task_id": _ID, "result": st.sampled_from(
            ["passed", "failed: E", None]) | _TEXT})), min_size=1, max_size=4),
    min_size=1, max_size=4),
       indent=st.sampled_from([None, 2]), block=st.sampled_from([7, 64, None]),
       skip_bad=st.booleans())
def test_hypothesis_code_eval(tmp_path, monkeypatch, tasks, indent, block, skip_bad):
    path = tmp_path / "humaneval-python-details.json"
    _write(path, json.dumps(tasks, indent=indent))
    fast, exact = _both(path, monkeypatch, block, skip_bad=skip_bad)
    assert fast == exact


@settings(max_examples=30, deadline=None, suppress_health_check=_FIXTURE)
@given(scored=st.dictionaries(st.sampled_from(["sample_0", "sample_1", "sample_10"]),
                              st.lists(_FLAG, max_size=4), min_size=1, max_size=3),
       results=st.lists(st.fixed_dictionaries(
           {"status": st.sampled_from(["OK", "Exception", "status"])},
           optional={"exit_code": st.sampled_from([0, 1, None, True]),
                     "stderr": st.sampled_from(["E", "", "stderr", None]) | _TEXT}),
           min_size=1, max_size=5),
       indent=st.sampled_from([None, 2]), block=st.sampled_from([7, 64, None]),
       skip_bad=st.booleans())
def test_hypothesis_cruxeval_and_multipl_e(tmp_path, monkeypatch, scored, results, indent,
                                           block, skip_bad):
    cx = tmp_path / "cx.json"
    _write(cx, json.dumps({"raw_scored_generations": scored, "pass_at_1": 5}, indent=indent))
    mpe = tmp_path / "mpe" / "p.results.json"
    mpe.parent.mkdir(exist_ok=True)
    _write(mpe, json.dumps({"name": "T", "language": "py", "results": results}, indent=indent))
    for path in (cx, mpe.parent):
        fast, exact = _both(path, monkeypatch, block, skip_bad=skip_bad)
        assert fast == exact


# ------------------------------------------------------------------ many members at a time
def _spy_pieces(monkeypatch) -> list:
    from passatk.archives.harnesses import _docpieces

    read = _docpieces.Pieces.read
    used = []

    def spy(self, buf, pos, seen):
        after = read(self, buf, pos, seen)
        used.append(after > pos)
        return after

    monkeypatch.setattr(_docpieces.Pieces, "read", spy)
    return used


@pytest.mark.parametrize("kind", ["opencompass", "opencompass-list", "multipl-e",
                                  "livecodebench", "cruxeval"])
@pytest.mark.parametrize("style", ["default", "indent2", "crlf", "compact"])
def test_small_members_are_decoded_many_at_a_time(tmp_path, monkeypatch, kind, style):
    name, make = KINDS[kind]
    doc = make()
    if kind.startswith("opencompass"):
        details = list(doc["details"].values() if isinstance(doc["details"], dict)
                       else doc["details"]) * 40
        doc["details"] = details if kind.endswith("list") else {
            str(i): d for i, d in enumerate(details)}
    elif kind == "multipl-e":
        doc["results"] *= 40
    elif kind == "cruxeval":
        doc["raw_scored_generations"] = {f"sample_{i}": flags for i, flags in enumerate(
            list(doc["raw_scored_generations"].values()) * 40)}
    else:
        doc *= 40
    path = tmp_path / name
    _write(path, STYLES[style](doc))
    used = _spy_pieces(monkeypatch)
    fast = _same(path, monkeypatch, kind)
    assert any(used) and fast[0] != "error"


_PIECES = {
    "opencompass": ("oc.json", "}, ", lambda: {"details": {
        str(i): {"task_id": f"T/{i % 7}", "passed": i % 3 == 0, "result": "x"}
        for i in range(300)}}),
    "cruxeval": ("cx.json", "], ", lambda: {"raw_scored_generations": {
        f"sample_{i}": [True, False][: 1 + i % 2] for i in range(300)}, "pass_at_1": 5}),
}


@pytest.mark.parametrize("where", [0.3, 0.5, 0.9])
@pytest.mark.parametrize("kind,dup", [
    ("opencompass", '"7": {"task_id": "T/0", "passed": true}, '), ("opencompass", '"7": {}, '),
    ("opencompass", '"299": 1, '), ("cruxeval", '"sample_7": [true], '),
    ("cruxeval", '"sample_7": [], '), ("cruxeval", '"sample_7": [1], "sample_7": [0], '),
    ("cruxeval", '"sample_299": "x", ')])
def test_a_duplicate_key_inside_a_piece_is_an_error(tmp_path, monkeypatch, where, kind, dup):
    name, closer, make = _PIECES[kind]
    text = json.dumps(make())
    at = text.index('"', int(len(text) * where))
    at = text.index('"', text.index(closer, at))  # a key's opening quote
    path = tmp_path / name
    _write(path, text[:at] + dup + text[at:])
    fast, exact = _both(path, monkeypatch, skip_bad=True)
    assert fast == exact and fast[0] == "error" and "duplicate key" in fast[1]
    assert _proved(path) is None
    monkeypatch.undo()
    _write(path, text)
    used = _spy_pieces(monkeypatch)
    _same(path, monkeypatch, kind)
    assert any(used)


def test_raw_generations_is_checked_for_syntax_not_duplicate_keys(tmp_path, monkeypatch):
    """CRUXEval's ``raw_generations`` is read by no reader: the fast path checks its syntax
    and UTF-8 (the same errors as the exact path); a key given twice inside it keeps its last
    value on both paths, and strict_json refuses it (docs/robustness.md)."""
    text = json.dumps(_cruxeval())
    path = tmp_path / "cx.json"
    scored = text.index('"raw_scored_generations"')
    for data in (text[:scored].replace("]", ", ]", 1).encode() + text[scored:].encode(),
                 text.encode().replace(b'"sample_1": ["', b'"sample_1": ["\xff', 1)):
        assert data != text.encode()
        path.write_bytes(data)
        fast, exact = _both(path, monkeypatch)
        assert fast == exact and fast[0] == "error"
    _write(path, text.replace('"sample_1": [', '"sample_0": [], "sample_1": [', 1))
    fast, exact = _both(path, monkeypatch)
    assert fast == exact and fast[0] != "error" and _proved(path) == "cruxeval"
    fast, exact = _both(path, monkeypatch, strict_json=True)
    assert fast == exact and fast[0] == "error" and "duplicate key" in fast[1]
