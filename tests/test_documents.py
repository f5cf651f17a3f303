"""JSON documents (io/documents.py): the streamed skeleton against json.loads (same value for
every valid document, an error for every invalid one, whatever the block size), and the
whole-document path's errors, located."""

from __future__ import annotations

import gzip
import json
import os
import random
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from passatk.archives import ArchiveError, read_counts
from passatk.archives.io import documents
from passatk.archives.io.documents import StreamedDict, StreamedList, decode

load_document = documents._skeleton  # the streamed path, whatever the size

_TEXT = st.text(alphabet='ab"\\/\n\t{}[],: \u00e9\u2028\U0001f600', max_size=6)
_SCALARS = st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(
    allow_nan=False, allow_infinity=False) | _TEXT
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(_TEXT, inner, max_size=3), max_leaves=8)
_KEYS = st.sampled_from(["eval", "details", "results", "raw_scored_generations", "date", "x"])
_DOCS = (st.dictionaries(_KEYS, _VALUES | st.dictionaries(_TEXT, _VALUES, max_size=4)
                         | st.lists(_VALUES, max_size=4), max_size=4)
         | st.lists(_VALUES, max_size=5) | _SCALARS)


_FIXTURE = [HealthCheck.function_scoped_fixture]


def _expected(data: bytes):
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
        return True, json.loads(text)
    except (ValueError, RecursionError):
        return False, None


def _materialize(value):
    if isinstance(value, StreamedDict):
        return {k: _materialize(v) for k, v in value.items()}
    if isinstance(value, StreamedList):
        return [_materialize(v) for v in value]
    if isinstance(value, dict):
        return {k: _materialize(v) for k, v in value.items()}
    return value


def _got(path):
    try:
        return True, _materialize(load_document(str(path)))
    except ArchiveError:
        return False, None


def _dump(doc, rnd: random.Random) -> bytes:
    indent = rnd.choice([None, 0, 2])
    seps = rnd.choice([(",", ":"), (", ", ": "), (" ,", " :  ")])
    return json.dumps(doc, indent=indent, separators=seps, ensure_ascii=rnd.random() < 0.5
                      ).encode()


@settings(max_examples=300, deadline=None, suppress_health_check=_FIXTURE)
@given(doc=_DOCS, seed=st.integers(0, 2**32), block=st.sampled_from([1, 2, 3, 7, 64, 1 << 22]))
def test_valid_documents_read_as_json_loads(tmp_path, monkeypatch, doc, seed, block):
    monkeypatch.setattr(documents, "BLOCK", block)
    data = _dump(doc, random.Random(seed))
    path = tmp_path / "d.json"
    path.write_bytes(data)
    assert _got(path) == (True, json.loads(data))


@settings(max_examples=400, deadline=None, suppress_health_check=_FIXTURE)
@given(doc=_DOCS, seed=st.integers(0, 2**32), block=st.sampled_from([1, 3, 7, 1 << 22]))
def test_corrupted_documents_fail_or_read_as_json_loads(tmp_path, monkeypatch, doc, seed, block):
    monkeypatch.setattr(documents, "BLOCK", block)
    rnd = random.Random(seed)
    data = bytearray(_dump(doc, rnd))
    for _ in range(rnd.randint(1, 3)):
        pos = rnd.randrange(len(data) + 1)
        op = rnd.random()
        byte = rnd.choice(b'{}[],:"\\ 0a\n')
        if op < 0.4 and pos < len(data):
            del data[pos]
        elif op < 0.7:
            data.insert(pos, byte)
        elif pos < len(data):
            data[pos] = byte
    path = tmp_path / "d.json"
    path.write_bytes(bytes(data))
    ok, value = _expected(bytes(data))
    if not bytes(data).strip():
        ok = False
    assert _got(path) == (ok, value)


_BAD = [
    ('{"eval": {"T": [1]}\n "x": 1}', r":2: malformed JSON"),
    ('{"eval": {"T": [1],}}', r":1: malformed JSON"),
    ('{"eval": {"T": [1]}} x', r":1: malformed JSON: extra data"),
    ('{"eval": {"T": [1]', r":1: malformed JSON"),
    ('{\n"eval": {"T": [1, tru]}}', r":2: malformed JSON"),
    ("  \n", r"empty file"),
]


@pytest.mark.parametrize("bom", ["", "\ufeff"])
@pytest.mark.parametrize("text, match", _BAD)
def test_bad_structure_is_located(tmp_path, text, match, bom):
    """The same line with a BOM (offsets count from after it: a newline in the 3 bytes
    before the fault was missed once)."""
    path = tmp_path / "d.json"
    path.write_text(bom + text, encoding="utf-8")
    with pytest.raises(ArchiveError, match=match):
        _materialize(load_document(str(path)))


@pytest.mark.parametrize("text, match", _BAD)
def test_bad_whole_documents_are_located(tmp_path, text, match):
    path = tmp_path / "d.json"
    path.write_text(text)
    with pytest.raises(ArchiveError, match=match.replace("extra data", "Extra data")):
        documents.load(str(path))


def test_a_key_given_twice_keeps_its_last_value(tmp_path):
    text = '{"eval": {"T": [1], "T": [2]}, "x": 1, "x": 2}'
    path = tmp_path / "d.json"
    path.write_text(text)
    assert documents.load(str(path)) == json.loads(text)
    assert _materialize(load_document(str(path))) == json.loads(text)


def test_nan_and_infinity_read_as_the_stdlib_reads_them(tmp_path, monkeypatch):
    text = '{"x": [NaN, Infinity, -Infinity, 1], "eval": {"a": NaN, "b": [1]}, "y": 2}'
    path = tmp_path / "d.json"
    path.write_text(text)
    assert repr(documents.load(str(path))) == repr(json.loads(text))
    for block in (1, 3, 1 << 22):
        monkeypatch.setattr(documents, "BLOCK", block)
        assert repr(_materialize(load_document(str(path)))) == repr(json.loads(text))
    assert repr(decode("d.json", text.encode())) == repr(json.loads(text))


def test_deep_nesting_is_an_error_not_a_crash(tmp_path):
    path = tmp_path / "d.json"
    path.write_text('{"eval": ' + "[" * 100_000 + "]" * 100_000 + "}")
    for load in (documents.load, load_document):
        with pytest.raises(ArchiveError, match=r"nested too deeply|malformed"):
            _materialize(load(str(path)))


def test_a_member_over_the_cap_is_an_error_with_its_line(tmp_path, monkeypatch):
    monkeypatch.setenv("PASSATK_MAX_RECORD_BYTES", "1K")
    path = tmp_path / "eval_results.json"
    path.write_text('{"eval": {\n"T/0": [{"base_status": "pass"}],\n"T/1": ['
                    + ", ".join(['{"base_status": "fail"}'] * 100) + "]}}")
    with pytest.raises(ArchiveError, match=r"eval_results.json:3: record longer than 1024"):
        read_counts(path)


def test_evalplus_document_is_streamed_with_the_same_counts(tmp_path):
    ev = {f"T/{t}": [{"task_id": f"T/{t}", "base_status": "pass" if (t + j) % 3 else "fail",
                      "plus_status": "pass" if j % 2 else "fail", "solution": "x\\\"" * j}
                     for j in range(5)] for t in range(40)}
    path = tmp_path / "eval_results.json"
    path.write_text(json.dumps({"date": "d", "eval": ev, "model": "m"}, indent=1))
    counts = read_counts(path, by=["model"])
    base = [sum((t + j) % 3 != 0 for j in range(5)) for t in range(40)]
    assert counts.groups == ((("model", "m"), ("metric_set", "base")),
                             (("model", "m"), ("metric_set", "plus")))
    assert counts.c[:40].tolist() == base


@pytest.mark.parametrize("form", ["plain", "bom", "gzip", "zstd"])
def test_a_local_document_is_mapped_only_when_plain_and_reads_the_same(tmp_path, monkeypatch,
                                                                         form):
    """A local uncompressed document without a BOM is decoded from its mapped pages; a
    compressed one or one with a BOM is read through the decompressor; the counts agree."""
    ev = {f"T/{t}": [{"task_id": f"T/{t}", "base_status": "pass" if (t * j) % 3 else "fail",
                      "plus_status": "pass" if j % 2 else None} for j in range(4)]
          for t in range(30)}
    data = json.dumps({"date": "d", "eval": ev}).encode()
    plain = tmp_path / "plain" / "eval_results.json"
    plain.parent.mkdir()
    plain.write_bytes(data)
    path = tmp_path / ("eval_results.json" + {"gzip": ".gz", "zstd": ".zst"}.get(form, ""))
    if form == "gzip":
        data = gzip.compress(data)
    elif form == "zstd":
        data = pytest.importorskip("zstandard").ZstdCompressor().compress(data)
    path.write_bytes(b"\xef\xbb\xbf" + data if form == "bom" else data)
    mapped = []
    monkeypatch.setattr(documents, "_mapped", lambda f, real=documents._mapped: mapped.append(
        m := real(f)) or m)
    assert read_counts(path).to_rows() == read_counts(plain, format="evalplus").to_rows()
    assert [m is not None for m in mapped] == [form == "plain", True]
    assert b'"base_status"' in mapped[-1] and b'"nowhere"' not in mapped[-1]  # whole needles


def test_an_empty_local_document_is_not_mapped(tmp_path):
    (path := tmp_path / "eval_results.json").write_bytes(b"")
    assert documents._mapped(str(path)) is None
    with pytest.raises(ArchiveError, match="empty file"):
        read_counts(path)


def test_a_top_level_over_the_cap_is_streamed(tmp_path, monkeypatch):
    """code_eval's result dict maps every task to its samples at the top level."""
    monkeypatch.setenv("PASSATK_MAX_RECORD_BYTES", "1K")
    doc = {f"T/{t}": [[j, {"task_id": f"T/{t}", "passed": j % 2 == 0, "result": "x" * 20}]
                      for j in range(4)] for t in range(30)}
    path = tmp_path / "code_eval_results.json"
    path.write_text(json.dumps(doc))
    skeleton = load_document(str(path))
    assert isinstance(skeleton, StreamedDict) and len(path.read_bytes()) > 1024
    assert _materialize(skeleton) == doc
    counts = read_counts(path, format="code_eval")
    assert len(counts) == 30 and counts.c.tolist() == [2] * 30


def test_a_large_document_on_stdin_is_read(tmp_path):
    """Past the threshold a pipe is copied to a temporary file and streamed from there (the
    pipe keeps only its start, and a streamed document is read more than once)."""
    path = tmp_path / "eval_results.json"
    samples = [{"base_status": "pass" if j % 3 else "fail", "plus_status": "pass"}
               for j in range(4)]
    path.write_text(json.dumps({"eval": {f"T/{i}": samples for i in range(6000)}}, indent=1))
    assert path.stat().st_size > 2 * (64 << 10) + (1 << 20)  # past the threshold and the kept start
    code = ("import json, tempfile, os\nfrom passatk.archives import read_counts\n"
            "rows = read_counts('-').to_rows()\n"
            "print(json.dumps([rows, [f for f in os.listdir(tempfile.gettempdir()) if "
            "f.endswith('.json') and f.startswith('tmp')]]))")
    with open(path, "rb") as f:
        run = subprocess.run([sys.executable, "-c", code], stdin=f, capture_output=True,
                             text=True, timeout=120,
                             env={**os.environ, "PASSATK_MAX_RECORD_BYTES": "64K",
                                  "TMPDIR": str(tmp_path)})
    assert run.returncode == 0, run.stderr
    rows, left = json.loads(run.stdout)
    assert rows == json.loads(json.dumps(read_counts(path).to_rows()))
    assert left == []  # the copy is anonymous and gone


def test_an_endless_pipe_that_is_no_json_stops_at_once(tmp_path):
    """/dev/zero past the threshold: the copy of a pipe is made as it is read and checked, so
    the first byte that is no JSON stops it (it once filled the disk) and the copy goes."""
    code = ("import tempfile, os\nfrom passatk.archives import read_counts, ArchiveError\n"
            "try:\n    read_counts('/dev/zero', format='evalplus')\n"
            "except ArchiveError as e:\n    print(e)\n"
            "print(os.listdir(tempfile.gettempdir()))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, env={**os.environ, "PASSATK_MAX_RECORD_BYTES": "64K",
                                          "TMPDIR": str(tmp_path)})
    assert run.returncode == 0, run.stderr
    first, left = run.stdout.splitlines()
    assert first == "/dev/zero:1: malformed JSON: Expecting value (column 1)"
    assert left == "[]"


@pytest.mark.parametrize("block", [1, 7, 1 << 22])
def test_a_lone_surrogate_streamed_in_small_blocks_reads_as_json_loads(tmp_path, monkeypatch,
                                                                      block):
    # msgspec refuses the lone surrogate long before the value ends; more bytes mend that
    monkeypatch.setattr(documents, "BLOCK", block)
    text = '{"x": 1, "raw_scored_generations": {"k": {"\\ud83d\\ud00bb": [1, 2, 3, 4, 5, 6, ' \
           + ", ".join(["null"] * 40) + ']}}}'
    path = tmp_path / "d.json"
    path.write_text(text)
    assert _got(path) == (True, json.loads(text))


def test_the_reader_does_not_parse_a_streamed_document_again(tmp_path, monkeypatch):
    """Detection's pass keeps where each member of a streamed container is: the reader decodes
    them without splitting the document again (past INDEXED members, it splits it again)."""
    ev = {f"T/{t}": [{"base_status": "pass" if (t + j) % 3 else "fail", "plus_status": "pass",
                      "solution": "x" * 50} for j in range(4)] for t in range(60)}
    path = tmp_path / "eval_results.json"
    path.write_text(json.dumps({"date": "d", "eval": ev, "pass_at_k": {"base": {}}}))
    whole = read_counts(path)
    monkeypatch.setenv("PASSATK_MAX_RECORD_BYTES", "4K")  # streamed past 8 KiB
    splits = []
    real = documents._Cursor.value
    monkeypatch.setattr(documents._Cursor, "value", lambda cur: splits.append(1) or real(cur))
    documents.load(str(path))
    detection = len(splits)
    for indexed, again in ((documents.INDEXED, False), (5, True)):
        monkeypatch.setattr(documents, "INDEXED", indexed)
        splits.clear()
        counts = read_counts(path)
        assert len(splits) == detection or again
        assert (len(splits) >= 2 * detection) is again
        assert (counts.groups, counts.n.tolist(), counts.c.tolist()) == (
            whole.groups, whole.n.tolist(), whole.c.tolist())
