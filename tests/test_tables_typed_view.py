"""Per-sample JSON Lines tables past their first block are decoded by a typed msgspec view: a
column that changes how the table is read, a bad line or a value of another type there must
stop or count exactly as in the first block (read line by line by ``json``)."""

from __future__ import annotations

import json

import pytest

from passatk.archives import ArchiveError, read_counts

ROWS = 30_000  # about 1.4 MB: many blocks of 512 KiB


def _write(path, rows, extra=None, at=ROWS - 5):
    lines = [json.dumps(r) for r in rows]
    if extra is not None:
        lines.insert(at, extra)
    path.write_text("\n".join(lines) + "\n")
    return path


def _rows(flag="correct"):
    return [{"task_id": f"T/{i % 7}", flag: i % 3 == 0, "text": "x" * (i % 50)}
            for i in range(ROWS)]


def test_a_late_column_that_changes_the_flag_column_stops_at_its_line(tmp_path):
    path = _write(tmp_path / "t.jsonl", _rows(), json.dumps({"task_id": "T/1", "passed": False,
                                                             "correct": True}))
    with pytest.raises(ArchiveError, match=rf"t\.jsonl:{ROWS - 4}: this record brings "
                                           r"column\(s\) \['passed'\]"):
        read_counts(path)
    mapped = read_counts(path, passed="correct")
    assert mapped.samples == ROWS + 1


@pytest.mark.parametrize("extra, message", [
    ('{"task_id": "T/1", "correct": 0.5}', "must be a pass flag"),
    ('{"task_id": "T/1", "correct": true', "malformed JSON"),
    ('["T/1", true]', "must be a JSON object"),
    ('{"task_id": "T/1", "correct": true, "split": "b"}', 'differ in column "split"'),
])
def test_a_late_bad_line_is_named_and_skipped_alone(tmp_path, extra, message):
    path = _write(tmp_path / "t.jsonl", _rows(), extra)
    with pytest.raises(ArchiveError, match=rf"t\.jsonl:{ROWS - 4}: .*{message}"):
        read_counts(path)
    if "split" not in extra:
        skipped = read_counts(path, skip_bad=True)
        assert skipped.samples == ROWS and skipped.skipped.count == 1


def test_a_late_filter_column_gives_the_rows_without_it_a_null_filter(tmp_path):
    path = _write(tmp_path / "t.jsonl", _rows(), json.dumps({"task_id": "T/1", "correct": True,
                                                             "filter": "strict"}))
    counts = read_counts(path)
    assert counts.group_dicts == [{"filter": None}, {"filter": "strict"}]
    assert counts.samples == ROWS + 1
    whole = {(g, t): (n, c) for g, t, n, c in zip(counts.group.tolist(), counts.task.tolist(),
                                                   counts.n.tolist(), counts.c.tolist(),
                                                   strict=True)}
    rows = _rows()
    assert whole[(0, "T/1")] == (sum(r["task_id"] == "T/1" for r in rows),
                                 sum(r["task_id"] == "T/1" and r["correct"] for r in rows))
    assert whole[(1, "T/1")] == (1, 1)
