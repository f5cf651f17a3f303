"""Duplicate keys: by default the last value counts, as ``json`` reads it; ``strict_json=True``
(``--strict-json``) refuses any key given twice, naming ``file:line`` or the JSON path, for
every JSON reader (io/strict.py, one check for all formats)."""

from __future__ import annotations

import gzip
import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from passatk.archives import ArchiveError, read_counts, write_archive
from passatk.archives.io.strict import duplicate_key

HE = '{"task_id": "T/0", "completion": "", "result": "passed", "passed": true}'
LINES = {  # (file name, good line, the same record with a key given twice: its last value)
    "humaneval": ("d_results.jsonl", HE, HE[:-1] + ', "passed": false}'),
    "humaneval-nested": ("n_results.jsonl", HE, HE[:-1] + ', "meta": {"a": 1, "a": 2}}'),
    "lm-eval": ("samples_t_2024-01-01T00-00-00.jsonl",
                '{"doc_id": 0, "resps": [["a"]], "pass@1": 1.0}',
                '{"doc_id": 0, "resps": [["a"]], "pass@1": 1.0, "pass@1": 0.0}'),
    "qwen-math": ("test_qwen_e-1.jsonl", '{"idx": 0, "gt": "1", "score": [true]}',
                  '{"idx": 0, "gt": "1", "score": [true], "score": [false, false]}'),
    "counts": ("c.jsonl", '{"task_id": "T", "n": 10, "c": 3}',
               '{"task_id": "T", "n": 10, "c": 3, "c": 9}'),
    "samples": ("s.jsonl", '{"task_id": "T", "passed": true, "model": "m"}',
                '{"task_id": "T", "passed": true, "model": "m", "passed": false}'),
}


def _stdlib_counts(lines: list[str], fmt: str) -> tuple[int, int]:
    """(n, c) summed over the file by json.loads (the last value of a key counts)."""
    n = c = 0
    for line in map(json.loads, lines):
        if fmt.startswith("humaneval") or fmt == "samples":
            n, c = n + 1, c + line["passed"]
        elif fmt == "lm-eval":
            n, c = n + 1, c + round(line["pass@1"])
        elif fmt == "qwen-math":
            n, c = n + len(line["score"]), c + sum(line["score"])
        else:
            n, c = n + line["n"], c + line["c"]
    return n, c


@pytest.mark.parametrize("fmt", list(LINES))
def test_last_value_counts_and_strict_json_names_the_line(tmp_path, fmt):
    name, good, dup = LINES[fmt]
    lines = [good, good, dup, good] if fmt not in ("counts", "lm-eval", "qwen-math") else [dup]
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    counts = read_counts(path)
    assert (int(counts.n.sum()), int(counts.c.sum())) == _stdlib_counts(lines, fmt)
    line = lines.index(dup) + 1
    key = "a" if fmt.endswith("nested") else {"counts": "c", "lm-eval": "pass@1",
                                                "qwen-math": "score"}.get(fmt, "passed")
    where = "in \\$.meta" if fmt.endswith("nested") else "at the top level"
    with pytest.raises(ArchiveError, match=rf"{name}:{line}: duplicate key '{key}' {where} "
                       r"\(strict_json refuses a key given twice\)$"):
        read_counts(path, strict_json=True)
    path.write_text("\n".join([good] * (1 if fmt == "counts" else 3)) + "\n")  # no duplicate
    assert read_counts(path, strict_json=True).n.tolist() == read_counts(path).n.tolist()


@pytest.mark.parametrize("fmt", ["evalplus", "cruxeval", "opencompass", "bigcodebench"])
def test_strict_json_names_the_json_path_in_documents(tmp_path, fmt):
    path = tmp_path / "doc"
    path.mkdir()
    files = write_archive(path / "r.json" if fmt != "evalplus" else path / "eval_results.json",
                          ["T/0", "T/1"], [[True, False], [True]], format=fmt)
    file = files[0]
    want = read_counts(file, strict_json=True)  # as written: no key twice
    with open(file) as f:
        text = f.read()
    with open(file, "w") as f:  # a field no reader reads, holding a key twice
        f.write('{"meta": {"x": [{"a": 1, "a": 2}]}, ' + text.lstrip()[1:])
    assert read_counts(file).n.tolist() == want.n.tolist()
    with pytest.raises(ArchiveError, match=r": duplicate key 'a' in \$\.meta\.x\[0\] "
                       r"\(strict_json refuses a key given twice\)$"):
        read_counts(file, strict_json=True)


def test_strict_json_reads_compressed_lines_and_byte_ranges(tmp_path):
    name, good, dup = LINES["humaneval"]
    lines = [good] * 3000 + [dup] + [good] * 10
    path = tmp_path / (name + ".gz")
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    with pytest.raises(ArchiveError, match=r"\.gz:3001: duplicate key 'passed'"):
        read_counts(path, strict_json=True)
    plain = tmp_path / name
    plain.write_text("\n".join(lines) + "\n")
    with pytest.raises(ArchiveError, match=r"d_results\.jsonl:3001: duplicate key 'passed'"):
        read_counts(plain, strict_json=True, workers=2, split_bytes=1 << 16)
    assert read_counts(plain, workers=2, split_bytes=1 << 16).c.tolist() == [3010]


def test_strict_json_is_a_bool(tmp_path):
    with pytest.raises(TypeError, match="strict_json must be a bool, got 1"):
        read_counts(tmp_path, strict_json=1)


def test_cli_strict_json(tmp_path, cli):
    name, good, dup = LINES["humaneval"]
    path = tmp_path / name
    path.write_text("\n".join([good, dup]) + "\n")
    rc, out, err = cli(["score", str(path), "-q", "--format", "json"])
    assert rc == 0 and json.loads(out)["rows"][0]["value"] == 0.5, err
    for command in (["score"], ["check"]):
        rc, out, err = cli([*command, str(path), "-q", "--strict-json"])
        assert rc == 2 and err.strip() == (
            f"passatk: error: {path}:2: duplicate key 'passed' at the top level (strict_json "
            "refuses a key given twice)"), err


_KEY = st.sampled_from(["a", "b", "passed", "é", "a\\u0062"])
_JSON = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=3)),
                     lambda inner: st.one_of(st.lists(inner, max_size=3),
                                             st.lists(st.tuples(_KEY, inner), max_size=4)),
                     max_leaves=12)


def _text(value) -> str:
    """JSON text of ``value``, where a list of (key, value) pairs is an object (keys kept
    as drawn, so that one may be given twice, escaped or not)."""
    if isinstance(value, list) and value and all(isinstance(p, tuple) for p in value):
        return "{" + ", ".join(f'"{k}": {_text(v)}' for k, v in value) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(map(_text, value)) + "]"
    return json.dumps(value)


def _has_duplicate(value) -> bool:
    if isinstance(value, list) and value and all(isinstance(p, tuple) for p in value):
        keys = [json.loads(f'"{k}"') for k, _ in value]
        return len(set(keys)) < len(keys) or any(_has_duplicate(v) for _, v in value)
    return isinstance(value, list) and any(map(_has_duplicate, value))


@settings(max_examples=300, deadline=None)
@given(_JSON)
def test_duplicate_key_finds_exactly_the_keys_given_twice(value):
    """Against a plain recursive count of the keys of each object (escapes decoded)."""
    assert (duplicate_key(_text(value).encode()) is not None) == _has_duplicate(value)


def test_a_document_past_the_cap_is_refused_not_held(tmp_path, monkeypatch):
    monkeypatch.setenv("PASSATK_MAX_RECORD_BYTES", "1K")
    path = tmp_path / "eval_results.json"
    write_archive(path, [f"T/{i}" for i in range(40)], [[True]] * 40, format="evalplus")
    assert os.path.getsize(path) > 1024
    with pytest.raises(ArchiveError, match=r"longer than 1024 bytes cannot be checked whole"):
        read_counts(path, strict_json=True)
