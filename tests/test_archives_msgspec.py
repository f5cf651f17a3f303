"""The msgspec views of the JSON Lines readers against the standard library on the same files.

The reference is ``json`` line by line (``io.lines.decode`` made to fail, so that every block
goes line by line through ``json.loads``). Both must give identical counts, groups, skips,
notes and errors (message and ``file:line``), for generated files (hypothesis) and for odd
but valid ones: BOM, CRLF, blank lines, escapes, duplicate keys (the last value counts),
names inside values, numbers as ``1.0``, long lines, compressed files and byte ranges.
"""

from __future__ import annotations

import gzip
import json
import os

import pytest
from corpus import same
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from passatk.archives import ArchiveError, read_counts
from passatk.archives import context as _common
from passatk.archives.engine.plan import plan_ranges
from passatk.archives.io import lines as _decode
from passatk.archives.options import Options
from passatk.archives.parts import counts_of
from passatk.archives.pipeline import Unit, _parts_of, read_part

NAMES = {"humaneval": "x_results.jsonl", "lm-eval": "samples_he_2024-01-01T00-00-00.jsonl",
         "qwen-math": "test_qwen_e-1.jsonl", "samples": "s.jsonl", "counts": "c.jsonl"}


class Spy:
    """Counts the records msgspec decoded (proved) and the blocks it refused."""

    def __init__(self, monkeypatch) -> None:
        self.proved = self.refused = 0
        monkeypatch.setattr(_decode, "decode", self._wrap(_decode.decode))

    def _wrap(self, fn):
        def spy(*args):
            out = fn(*args)
            if out is None:
                self.refused += 1
            else:
                self.proved += len(out)
            return out
        return spy


def _outcome(path, **kw):
    try:
        return read_counts(path, **kw)
    except ArchiveError as e:
        return f"ArchiveError: {e}"


def _exact(monkeypatch, path, **kw):
    with monkeypatch.context() as m:
        m.setattr(_decode, "decode", lambda dec, block: None)
        return _outcome(path, **kw)


def check(monkeypatch, path, fmt, **kw) -> Spy:
    """Read ``path`` by the fast and the exact path, with and without skip_bad: identical."""
    spy = None
    for skip_bad in (False, True):
        with monkeypatch.context() as m:
            spy = spy or Spy(m)
            fast = _outcome(path, format=fmt, skip_bad=skip_bad, **kw)
        slow = _exact(monkeypatch, path, format=fmt, skip_bad=skip_bad, **kw)
        if isinstance(fast, str) or isinstance(slow, str):
            assert fast == slow
        else:
            same(fast, slow)
    return spy


@pytest.fixture(params=["default", "tiny"])
def blocks(request, monkeypatch):
    """Default block sizes, or tiny ones: many blocks, lines longer than a block."""
    if request.param == "tiny":
        monkeypatch.setattr(_decode, "BLOCK", 64)
    return request.param


# ------------------------------------------------------------------ generated files
_TEXT = st.one_of(
    st.text(max_size=12),
    st.sampled_from([":", " :x", '":', "passed", "task_id", "result", "pass@1", "score", "\\",
                     '\\"', "a\\\\", "é", "\u2028", "\U0001f600", '{"a": 1}', "failed: x"]))
_FLAG = st.one_of(st.booleans(), st.sampled_from([1, 0, 1.0, 0.0, -0.0]))
_ODD_FLAG = st.sampled_from([0.5, 2, "true", None, [True]])
_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20), _TEXT,
                    st.floats(allow_nan=False, allow_infinity=False))
_VALUE = st.recursive(_SCALAR, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(_TEXT, inner, max_size=3)), max_leaves=6)


def _key_text(draw, key: str) -> str:
    text = json.dumps(key)
    if draw(st.integers(0, 9)) == 0 and key:  # spell one character with a \\u escape
        i = draw(st.integers(0, len(key) - 1))
        text = json.dumps(key[:i]) [:-1] + f"\\u{ord(key[i]):04x}" + json.dumps(key[i + 1:])[1:]
    return text


@st.composite
def _line(draw, fields: list[tuple[str, object]]) -> str:
    """One record: ``fields`` in a drawn order, maybe one missing, one extra or duplicated, in
    a drawn layout; or (rarely) something that is not a record at all."""
    kind = draw(st.integers(0, 39))
    if kind == 0:
        return draw(st.sampled_from(["{oops", "[1, 2]", '"x"', "{}", " ", "\x0c", "null",
                                     '{"a": NaN}', '{"a": 1e400}', '{"a": "\\ud800"}']))
    pairs = list(fields)
    if kind == 1:
        pairs.pop(draw(st.integers(0, len(pairs) - 1)))
    if kind == 2:
        pairs.append((draw(st.sampled_from(["extra", "model", "meta"])), draw(_VALUE)))
    if kind == 3:  # a duplicate key (json and msgspec keep the last value)
        pairs.append((draw(st.sampled_from(pairs))[0], draw(_SCALAR)))
    if kind == 4:  # a duplicate key inside a nested object
        pairs.append(("meta", {"k": 1, "z": 2}))
    pairs = draw(st.permutations(pairs))
    colon = draw(st.sampled_from([": ", ":", " : ", "\t:", " :\t"]))
    comma = draw(st.sampled_from([", ", ",", " ,  "]))
    ascii_only = draw(st.booleans())
    body = comma.join(_key_text(draw, k) + colon + json.dumps(v, ensure_ascii=ascii_only)
                      for k, v in pairs)
    text = "{" + body + "}"
    if kind == 4:
        text = text.replace('"z": 2', '"k": 2')
    return text


@st.composite
def _file(draw, line) -> bytes:
    lines = draw(st.lists(line, min_size=1, max_size=25))
    if draw(st.booleans()):  # blank lines
        for _ in range(draw(st.integers(1, 3))):
            lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from(["", "  ", "\t"])))
    end = draw(st.sampled_from(["\n", "\r\n"]))
    data = end.join(lines) + draw(st.sampled_from(["", end]))
    bom = b"\xef\xbb\xbf" if draw(st.integers(0, 9)) == 0 else b""
    return bom + data.encode("utf-8", "surrogatepass")


@st.composite
def _humaneval(draw):
    task = draw(st.sampled_from(["T/0", "T/1", "HumanEval/2", 3, "é/1", "passed", "T\\u0030"]))
    passed = draw(st.one_of(_FLAG, _FLAG, _FLAG, _ODD_FLAG))
    return draw(_line([("task_id", task), ("completion", draw(_TEXT)),
                       ("result", draw(st.sampled_from(["passed", "failed: x", "", ":", 7]))),
                       ("passed", passed)]))


@st.composite
def _lm_eval(draw):
    n = draw(st.integers(1, 4))
    c = draw(st.integers(0, n))
    resps = [[f"r{j}" for j in range(n)]] if draw(st.booleans()) else [[f"r{j}"] for j in range(n)]
    value = c / n if draw(st.integers(0, 9)) else 0.3
    return draw(_line([("doc_id", draw(st.integers(0, 5))),
                       ("doc", {"task_id": "x", "prompt": draw(_TEXT), "n": [1, {"a": 2}]}),
                       ("resps", resps), ("filtered_resps", resps),
                       ("filter", draw(st.sampled_from(["create_test", "strict"]))),
                       ("metrics", ["pass@1"]), ("pass@1", value)]))


@st.composite
def _qwen(draw):
    score = draw(st.lists(st.one_of(_FLAG, _FLAG, _ODD_FLAG), min_size=0, max_size=4))
    return draw(_line([("idx", draw(st.integers(0, 5))), ("question", draw(_TEXT)),
                       ("gt", "1"), ("pred", ["1"] * len(score)), ("score", score)]))


@st.composite
def _samples(draw):
    return draw(_line([("task_id", draw(st.sampled_from(["T/0", "T/1", 2]))),
                       ("passed", draw(st.one_of(_FLAG, _FLAG, _ODD_FLAG, st.lists(_FLAG)))),
                       ("model", draw(st.sampled_from(["a", "b"])))]))


@st.composite
def _counts(draw):
    n = draw(st.integers(0, 5))
    return draw(_line([("task_id", draw(st.sampled_from(["T/0", "T/1", "T/2", 3]))),
                       ("n", n), ("c", draw(st.sampled_from([0, 1, n, n + 1, 1.0])))]))


_FORMATS = {"humaneval": _humaneval, "lm-eval": _lm_eval, "qwen-math": _qwen,
            "samples": _samples, "counts": _counts}


@pytest.mark.parametrize("fmt", list(_FORMATS))
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_generated_files_read_alike(tmp_path, monkeypatch, blocks, fmt, data):
    path = tmp_path / NAMES[fmt]
    path.write_bytes(data.draw(_file(_FORMATS[fmt]())))
    spy = check(monkeypatch, str(path), fmt, by=("model",) if fmt == "samples" else ())
    event(f"fast path proved records: {spy.proved > 0}")


# ------------------------------------------------------------------ odd but valid files
def _he(task="T/0", passed=True, result="passed", completion="x", sep=(", ", ": "),
        order=("task_id", "completion", "result", "passed")) -> str:
    rec = {"task_id": task, "completion": completion, "result": result, "passed": passed}
    return json.dumps({k: rec[k] for k in order}, separators=sep)


def _compact(**kw) -> str:
    return _he(sep=(",", ":"), **kw)


ODD = {
    "bom": "\ufeff" + "\n".join(_compact(task=f"T/{i % 3}", passed=i % 2 == 0)
                                for i in range(20)) + "\n",
    "crlf": "\r\n".join(_compact(task=f"T/{i % 3}") for i in range(20)) + "\r\n",
    "blank lines": "\n\n" + "\n \n".join(_compact(task=f"T/{i}") for i in range(5)) + "\n\t\n",
    "unicode escapes": "\n".join(_compact(task="T/\u00e9", completion="\u2028\U0001f600 \\u",
                                          result="failed: \u00e9") for _ in range(6)),
    "raw unicode": "\n".join(json.dumps({"task_id": "T/é", "completion": "ü", "result": "x",
                                         "passed": False}, ensure_ascii=False)
                             for _ in range(6)),
    "escaped field name": _compact() + "\n" + _compact().replace('"passed":', '"pass\\u0065d":'),
    "escaped duplicate": _compact() + "\n" + _compact().replace(
        '"passed":true', '"passed":true,"pass\\u0065d":false'),
    "name in a value": "\n".join(_compact(result="passed", completion="passed") for _ in range(5)),
    "colon text": "\n".join(_compact(completion=":", result=" :") for _ in range(5)),
    "duplicate key": _compact() + "\n" + _compact().replace('"passed":true',
                                                            '"passed":true,"passed":false'),
    "duplicate completion": _compact() + "\n" + _compact().replace(
        '"completion":"x"', '"completion":"x","completion":"y"'),
    "numbers as 1.0": "\n".join(_compact(passed=p) for p in (1.0, 0.0, 1, 0, -0.0, True)),
    "not a flag": "\n".join(_compact(passed=p) for p in (1.0, 0.5)),
    "other key order": "\n".join(_he(order=("passed", "task_id", "result", "completion"))
                                 for _ in range(5)),
    "integer task ids": "\n".join(_compact(task=t) for t in (1, "1", 2, 10**18)),
    "extra field": "\n".join(_compact() [:-1] + ',"model":"m"}' for _ in range(5)),
    "no result": "\n".join(json.dumps({"task_id": "T/0", "completion": "", "passed": True})
                           for _ in range(5)),
    "one shared error": "\n".join(_compact(passed=i % 2 == 0, result="failed: no setitimer")
                                  for i in range(10)),
}


@pytest.mark.parametrize("case", list(ODD))
def test_odd_human_eval_files_read_alike(tmp_path, monkeypatch, blocks, case):
    path = tmp_path / "odd_results.jsonl"
    path.write_bytes(ODD[case].encode())
    spy = check(monkeypatch, str(path), "humaneval")
    if case not in ("duplicate key", "duplicate completion", "escaped duplicate",
                    "not a flag") and blocks == "default":
        assert spy.proved > 0  # the fast path read these itself


def test_duplicate_keys_keep_the_last_value(tmp_path):
    path = tmp_path / "dup_results.jsonl"
    path.write_text("\n".join([_compact()] * 3 + [ODD["duplicate key"].split("\n")[1]]))
    assert read_counts(path).c.tolist() == [3]  # "passed": true, "passed": false
    nested = tmp_path / "samples_he_2024-01-01T00-00-00.jsonl"
    nested.write_text('{"doc_id": 0, "pass@1": 0, "doc": {"a": 1, "a": 2}, "resps": [["x"]], '
                      '"pass@1": 1}\n')
    assert read_counts(nested).c.tolist() == [1]


@pytest.mark.parametrize("fmt", ["lm-eval", "qwen-math", "samples", "counts"])
def test_odd_line_files_read_alike(tmp_path, monkeypatch, blocks, fmt):
    rows = {"lm-eval": [{"doc_id": i, "doc": {"q": ":"}, "resps": [["a", "b"]],
                         "filter": "f", "pass@1": (i % 3) / 2} for i in range(9)],
            "qwen-math": [{"idx": i, "gt": "1", "score": [True, 1.0, 0]} for i in range(9)],
            "samples": [{"task_id": f"T/{i % 2}", "passed": i % 3 == 0} for i in range(9)],
            "counts": [{"task_id": f"T/{i}", "n": 3, "c": i % 4} for i in range(9)]}[fmt]
    lines = [json.dumps(r, ensure_ascii=False) for r in rows]
    lines[2] = lines[2].replace('": ', '" :', 1)  # a blank before a colon
    lines[3] = lines[3].replace('{"', '{"x\\u00e9": "\\u00e9", "', 1)
    lines[5] = "\t"
    path = tmp_path / NAMES[fmt]
    path.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(lines).encode() + b"\r\n")
    spy = check(monkeypatch, str(path), fmt)
    assert spy.proved > 0
    lines[7] = lines[7].replace('{"', '{"pass@1": 0, "idx": 1, "task_id": 1, "n": 1, "', 1)
    path.write_bytes("\n".join(lines).encode())
    check(monkeypatch, str(path), fmt)


@pytest.mark.parametrize("size", [-1, 0])
def test_lines_near_the_record_cap(tmp_path, monkeypatch, size):
    monkeypatch.setenv("PASSATK_MAX_RECORD_BYTES", "64K")
    base = _compact(completion="")
    long = _compact(completion="y" * ((64 << 10) + size - len(base)))
    assert len(long) == (64 << 10) + size
    for fmt, name in (("humaneval", "l_results.jsonl"), ("samples", "s.jsonl")):
        path = tmp_path / name
        path.write_text("\n".join([base, long, base]) + "\n")
        check(monkeypatch, str(path), fmt)
    path.write_text("\n".join([base, long + " " * 8, base]) + "\n")
    with pytest.raises(ArchiveError, match=r"s.jsonl:2: record longer than 65536 bytes"):
        read_counts(path, format="samples")


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_compressed_files_read_alike(tmp_path, monkeypatch, suffix):
    lines = [_compact(task=f"T/{i % 7}", passed=i % 3 == 0) for i in range(3000)]
    lines[1234] = _he(task="T/1", order=("passed", "task_id", "result", "completion"))
    data = ("\n".join(lines) + "\n").encode()
    path = tmp_path / f"z_results.jsonl{suffix}"
    if suffix == ".gz":
        path.write_bytes(gzip.compress(data))
    else:
        zstandard = pytest.importorskip("zstandard")
        path.write_bytes(zstandard.ZstdCompressor().compress(data))
    assert check(monkeypatch, str(path), "humaneval").proved >= 3000


@pytest.mark.parametrize("fmt", ["humaneval", "samples"])
@pytest.mark.parametrize("split", [333, 5000])
def test_byte_ranges_read_alike(tmp_path, monkeypatch, fmt, split):
    lines = [_compact(task=f"T/{i % 7}", passed=i % 3 == 0) for i in range(600)]
    lines[100] = _compact(passed=0.5)  # a bad record: its line number must survive the cut
    lines[200] = ""
    lines[300] = _compact().replace('"passed":true', '"passed":0.5,"passed":false')
    path = str(tmp_path / NAMES[fmt])
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    opts = Options(skip_bad=True, format=fmt, named=frozenset({os.path.normpath(path)}))
    units = [Unit((path,), s, e) for s, e in plan_ranges(os.path.getsize(path), split)]
    parts = _parts_of(units, [read_part(u, opts) for u in units], opts)
    ranged = counts_of(parts, opts, [path])
    same(ranged, read_counts(path, format=fmt, skip_bad=True))
    same(ranged, _exact(monkeypatch, path, format=fmt, skip_bad=True))
    assert [r.location for r in ranged.skipped.records] == [f"{path}:101"]  # 301: the last
    # value of its duplicate key counts


# ------------------------------------------------------------------ the reference itself
def test_exact_path_helper_really_is_exact(tmp_path, monkeypatch):
    """The reference of these tests reads by json alone (else a fast path is compared with
    itself)."""
    path = tmp_path / "e_results.jsonl"
    path.write_text("\n".join(_compact(task=f"T/{i}") for i in range(50)) + "\n")
    with monkeypatch.context() as m:
        spy = Spy(m)
        _exact(m, str(path))
        assert spy.proved == 0
    calls = []
    real = _common.parse_json_line
    monkeypatch.setattr(_common, "parse_json_line", lambda *a: calls.append(1) or real(*a))
    _exact(monkeypatch, str(path))
    assert len(calls) == 50
