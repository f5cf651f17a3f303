"""The stdlib reader of per-sample tables judges each distinct combination of the fields read
once (``tables._Memo``): the Counts, skips and errors must be those of judging and adding
every row in order (``_MEMO_ROWS = 0``), whatever the types, missing fields, unhashable values
and the number of combinations kept. CSV and Parquet are read here as without pyarrow."""

from __future__ import annotations

import json
import os

import pytest
from corpus import outcome
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from passatk.archives import ArchiveError, read_counts
from passatk.archives.harnesses import tables

SETTINGS = settings(max_examples=int(os.environ.get("MEMO_EXAMPLES", 80)), deadline=None,
                    database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _all_ways(path, monkeypatch, **kw):
    """The outcome with the memo (kept whole, and full after 1 and 3 combinations) and row
    by row."""
    monkeypatch.setattr(tables, "ARROW", False)
    got = [outcome(path, **kw)]
    for limit in (1, 3):
        monkeypatch.setattr(tables, "_MEMO_ROWS", limit)
        got.append(outcome(path, **kw))
    monkeypatch.setattr(tables, "_MEMO_ROWS", 0)
    want = outcome(path, **kw)
    monkeypatch.undo()
    return got, want


VALUES = st.one_of(st.sampled_from([True, False, 1, 0, 1.0, 0.0, -0.0, 0.5, -0.5, 2, None, "1",
                                    "true", "T/1", "", [True, False], [], {"a": 1}]),
                   st.sampled_from(["T/1", "T/2", "x"]))
MISSING = object()


@st.composite
def jsonl_rows(draw) -> list[dict]:
    rows = []
    for _ in range(draw(st.integers(1, 30))):
        row = {}
        for field, values in (("task_id", st.one_of(st.sampled_from(["T/1", "T/2", "T/3"]),
                                                     VALUES)),
                              ("passed", st.one_of(st.sampled_from([True, False]), VALUES)),
                              ("model", st.one_of(st.sampled_from(["a", "b"]), VALUES)),
                              ("split", st.sampled_from(["s", "s", "t", MISSING])),
                              ("filter", st.sampled_from(["f", "g", MISSING]))):
            value = draw(st.one_of(values, st.just(MISSING)) if draw(st.integers(0, 9)) == 0
                         else values)
            if value is not MISSING:
                row[field] = value
        rows.append(row)
    return rows


@SETTINGS
@given(rows=jsonl_rows(), by=st.sampled_from([[], ["model"], ["split"]]),
       skip_bad=st.booleans(), threshold=st.sampled_from([None, 0.5]))
def test_judged_once_reads_as_row_by_row(tmp_path_factory, monkeypatch, rows, by, skip_bad,
                                         threshold):
    path = tmp_path_factory.mktemp("m") / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    got, want = _all_ways(str(path), monkeypatch, by=by, skip_bad=skip_bad,
                          threshold=threshold)
    assert got == [want] * 3


@pytest.mark.parametrize("rows", [
    # 1, True and 1.0 are equal as dict keys, not as task ids or group values
    [{"task_id": 1, "passed": True}, {"task_id": True, "passed": True},
     {"task_id": 1.0, "passed": True}],
    [{"task_id": "T", "model": 1, "passed": 1}, {"task_id": "T", "model": True, "passed": 1.0},
     {"task_id": "T", "model": 1, "passed": True}],
    # a list of samples is not hashable: judged for each row, kept in order
    [{"task_id": "T", "passed": [True, False]}, {"task_id": "U", "passed": True},
     {"task_id": "T", "passed": [True]}],
    # a run column missing from later rows is None there
    [{"task_id": "T", "passed": True, "split": "a"}, {"task_id": "T", "passed": False}],
    [{"task_id": "T", "passed": True}, {"task_id": "T", "passed": "yes"},
     {"task_id": "T", "passed": "yes"}],
    # -0.0 and 0.0 are one key; an error shows each row's own value
    [{"task_id": 0.0, "passed": True}, {"task_id": -0.0, "passed": True},
     {"task_id": "T", "passed": -0.0}, {"task_id": "T", "passed": 0.0}],
])
@pytest.mark.parametrize("skip_bad", [False, True])
def test_odd_rows_read_as_row_by_row(tmp_path, monkeypatch, rows, skip_bad):
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    for by in ([], ["model"]):
        got, want = _all_ways(str(path), monkeypatch, by=by, skip_bad=skip_bad)
        assert got == [want] * 3


def test_a_csv_table_is_judged_once_per_spelling(tmp_path, monkeypatch):
    """CSV values are all text: the same spelling is judged once, others apart."""
    path = tmp_path / "t.csv"
    path.write_text("task_id,passed,model\n" + "".join(
        f"T/{i % 7},{['1', 'true', ' 0', 'False', '1.0'][i % 5]},m{i % 3}\n" for i in range(400)))
    calls = []
    real = tables._sample_row
    monkeypatch.setattr(tables, "ARROW", False)
    monkeypatch.setattr(tables, "_sample_row", lambda *a: calls.append(1) or real(*a))
    counts = read_counts(path, by=["model"])
    assert counts.samples == 400 and len(calls) == 7 * 5 * 3
    monkeypatch.undo()
    got, want = _all_ways(str(path), monkeypatch, by=["model"])
    assert got == [want] * 3


def test_a_parquet_table_reads_as_row_by_row(tmp_path, monkeypatch):
    """Parquet through the stdlib reader: typed values, lists of samples."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    n = 300
    for passed in ([i % 3 == 0 for i in range(n)], [float(i % 2) for i in range(n)],
                   [[True, i % 2 == 0] for i in range(n)]):
        path = tmp_path / "t.parquet"
        pq.write_table(pa.table({"task_id": [f"T/{i % 11}" for i in range(n)],
                                 "model": [i % 4 for i in range(n)], "passed": passed}), path)
        for by in ([], ["model"]):
            got, want = _all_ways(str(path), monkeypatch, by=by)
            assert got == [want] * 3 and want[0] != "error"


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="lists /proc/self/fd")
@pytest.mark.parametrize("name, text", [
    ("t.csv", "task_id,passed\nT,1\nT,maybe\nU,0\n"),
    ("t.jsonl", '{"task_id": "T", "passed": true}\n{"task_id": "T", "passed": "maybe"}\n'),
])
def test_a_bad_row_closes_the_file_at_once(tmp_path, name, text, monkeypatch):
    """The error's traceback holds the reading frames; the file is closed all the same (not
    left to the garbage collector, whose order of finalizers may close the file object
    first and warn)."""
    path = tmp_path / name
    path.write_text(text)
    monkeypatch.setattr(tables, "ARROW", False)
    with pytest.raises(ArchiveError, match=":3:" if name.endswith("csv") else ":2:") as got:
        read_counts(path)
    opened = [os.readlink(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd")
              if os.path.exists(f"/proc/self/fd/{fd}")]
    assert str(path) not in opened and got.value is not None
