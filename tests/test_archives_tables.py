"""Count tables and per-sample tables: JSON Lines, CSV, Parquet; column mapping; bad input."""

from __future__ import annotations

import gzip

import pytest

from passatk.archives import ArchiveError, Counts, read_counts, write_archive, write_counts

FLAGS = [[True, False, True], [False, False], [True]]
TASKS = ["HumanEval/0", "HumanEval/1", "HumanEval/2"]


def _rows(counts):
    return list(zip(counts.task.tolist(), counts.n.tolist(), counts.c.tolist(), strict=True))


EXPECTED = [("HumanEval/0", 3, 2), ("HumanEval/1", 2, 0), ("HumanEval/2", 1, 1)]


@pytest.mark.parametrize("name", ["c.csv", "c.tsv", "c.jsonl", "c.csv.gz", "c.jsonl.gz"])
@pytest.mark.parametrize("kind", ["counts", "samples"])
def test_written_tables_round_trip(tmp_path, name, kind):
    path = tmp_path / name
    write_archive(path, TASKS, FLAGS, format=kind)
    assert _rows(read_counts(path)) == EXPECTED
    assert _rows(read_counts(path, format=kind)) == EXPECTED


@pytest.mark.parametrize("kind", ["counts", "samples"])
def test_parquet_round_trip(tmp_path, kind):
    pytest.importorskip("pyarrow")
    path = tmp_path / "t.parquet"
    write_archive(path, TASKS, FLAGS, format=kind)
    assert _rows(read_counts(path)) == EXPECTED


def test_parquet_columns_groups_and_errors(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "s.parquet"
    pq.write_table(pa.table({"problem": ["a", "a", "b"], "model": ["m", "m", "m"],
                             "score": [0.9, 0.2, 0.5], "junk": ["x", "y", "z"]}), path)
    counts = read_counts(path, task="problem", reward="score", threshold=0.5, by=["model"])
    assert counts.group_dicts == [{"model": "m"}]
    assert _rows(counts) == [("a", 2, 1), ("b", 1, 1)]
    pq.write_table(pa.table({"task_id": ["a", "b"], "n": [3, 2], "c": [1, 5]}), path)
    with pytest.raises(ArchiveError) as info:
        read_counts(path)
    assert str(info.value) == f"{path}:2: c must be <= n, got c=5 > n=2 for task 'b'"


def test_count_table_literal_csv_with_groups(tmp_path):
    path = tmp_path / "counts.csv"
    path.write_text("model,temperature,task_id,n,c\n"
                    "a,0.2,HumanEval/0,200,37\n"
                    "a,0.2,HumanEval/1,200,0\n"
                    "b,0.2,HumanEval/0,100,100\n")
    counts = read_counts(path, by=["model", "temperature"])
    assert counts.groups == ((("model", "a"), ("temperature", "0.2")),
                             (("model", "b"), ("temperature", "0.2")))
    assert counts.group.tolist() == [0, 0, 1]
    assert _rows(counts) == [("HumanEval/0", 200, 37), ("HumanEval/1", 200, 0),
                             ("HumanEval/0", 100, 100)]
    # without by, the same task of two groups is pooled; the duplicate rule is per file and group
    with pytest.raises(ArchiveError) as info:
        read_counts(path)
    assert str(info.value) == (f"{path}:4: duplicate row for task 'HumanEval/0' "
                               "(first at line 2)")


@pytest.mark.parametrize("column", ["task_id", "task", "id"])
def test_task_column_names(tmp_path, column):
    path = tmp_path / "c.jsonl"
    path.write_text(f'{{"{column}": "x", "n": 4, "c": 1, "source": "s"}}\n')
    assert _rows(read_counts(path)) == [("x", 4, 1)]


def test_column_mapping_for_counts_and_samples(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("problem,total,correct\np1,10,3\np2,5,5\n")
    assert _rows(read_counts(path, task="problem", n="total", c="correct")) == [
        ("p1", 10, 3), ("p2", 5, 5)]
    path = tmp_path / "s.jsonl"
    path.write_text('{"q": 1, "ok": 1}\n{"q": 1, "ok": 0}\n{"q": 2, "ok": true}\n')
    assert _rows(read_counts(path, task="q", passed="ok")) == [("1", 2, 1), ("2", 1, 1)]


@pytest.mark.parametrize("flag", ["true", "false", "True", "FALSE", "1", "0"])
def test_csv_flags(tmp_path, flag):
    path = tmp_path / "s.csv"
    path.write_text(f"task_id,passed\nt,{flag}\n")
    assert read_counts(path).c.tolist() == [int(flag.lower() in ("true", "1"))]


def test_reward_threshold(tmp_path):
    path = tmp_path / "rl.jsonl"
    path.write_text('{"task_id": "t", "reward": 0.5}\n{"task_id": "t", "reward": 0.49}\n'
                    '{"task_id": "t", "reward": 1}\n')
    assert _rows(read_counts(path, threshold=0.5)) == [("t", 3, 2)]
    with pytest.raises(ArchiveError) as info:
        read_counts(path)
    assert str(info.value) == (f'{path}: column "reward" holds rewards: give threshold= '
                               "(a sample passes when reward >= threshold)")


def test_write_counts_round_trip(tmp_path):
    counts = Counts.from_rows([({"model": "a"}, "t1", 10, 3), ({"model": "b"}, "t1", 4, 4)])
    for name in ("out.csv", "out.jsonl"):
        write_counts(tmp_path / name, counts)
        back = read_counts(tmp_path / name, by=["model"])
        assert back.groups == counts.groups and _rows(back) == _rows(counts)


BAD_COUNTS = [
    ("task_id,n,c\nt,3,4\n", "2: c must be <= n, got c=4 > n=3 for task 't'"),
    ("task_id,n,c\nt,3,1\nu,2,2\nt,5,1\n", "4: duplicate row for task 't' (first at line 2)"),
    ("task_id,n,c\nt,3,x\n", "2: column \"c\" must be an integer, got 'x'"),
    ("task_id,n,c\nt,3.5,1\n", "2: column \"n\" must be an integer, got '3.5'"),
    ("task_id,n,c\nt,0,0\n", '2: column "n" must be >= 1, got 0'),
    ("task_id,n,c\nt,3,-1\n", '2: column "c" must be >= 0, got -1'),
    ("task_id,n,c\nt,3\n", "2: row has 2 fields, the header has 3"),
    ("task_id,n,c\n,3,1\n", '2: column "task_id" is empty'),
]


@pytest.mark.parametrize(("text", "message"), BAD_COUNTS)
def test_bad_count_tables(tmp_path, text, message):
    path = tmp_path / "c.csv"
    path.write_text(text)
    with pytest.raises(ArchiveError) as info:
        read_counts(path)
    assert str(info.value) == f"{path}:{message}"


@pytest.mark.parametrize(("text", "message"), [
    ('{"task_id": "t", "n": 3, "c": true}\n', "1: column \"c\" must be an integer, got True"),
    ('{"task_id": "t", "n": 3, "c": 1}\n{"task_id": "u", "n": 3}\n', '2: missing column "c"'),
    ('{"task_id": "t", "passed": "yes"}\n',
     "1: column \"passed\" must be a pass flag (true/false, 1/0, 1.0/0.0), got 'yes'"),
    ('{"task_id": "t", "passed": 2}\n',
     '1: column "passed" must be a pass flag (true/false, 1/0, 1.0/0.0), got 2; give '
     'threshold= to read it as a reward'),
    ('{"task_id": "t", "passed": true}\n{"task_id": "t", "passed": tru}\n',
     "2: malformed JSON: Expecting value (column 28)"),
])
def test_bad_jsonl_tables(tmp_path, text, message):
    path = tmp_path / "t.jsonl"
    path.write_text(text)
    with pytest.raises(ArchiveError) as info:
        read_counts(path)
    assert str(info.value) == f"{path}:{message}"


def test_reward_must_be_finite_number(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("task_id,reward\nt,0.5\nt,nan\n")
    with pytest.raises(ArchiveError) as info:
        read_counts(path, threshold=0.5)
    assert str(info.value) == f"{path}:3: column \"reward\" must be finite, got 'nan'"


def test_skip_bad_in_tables(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("task_id,n,c\nt,3,4\nu,2,1\nu,2,1\n")
    counts = read_counts(path, skip_bad=True)
    assert _rows(counts) == [("u", 2, 1)]
    assert [str(r) for r in counts.skipped.records] == [
        f"{path}:2: c must be <= n, got c=4 > n=3 for task 't'",
        f"{path}:4: duplicate row for task 'u' (first at line 3)",
    ]


def test_empty_and_undetectable_tables(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("")
    with pytest.raises(ArchiveError) as info:
        read_counts(path)
    assert str(info.value) == f"{path}: empty file (no records)"
    path.write_text("task_id,n,c\n")
    with pytest.raises(ArchiveError) as info:
        read_counts(path)
    assert str(info.value) == f"{path}: empty file (no records)"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(ArchiveError) as info:
        read_counts(path)
    assert str(info.value).startswith(f"{path}: cannot detect the format: the table has neither")
    gz = tmp_path / "g.csv.gz"
    gz.write_bytes(gzip.compress(b"task_id,n,c\nt,2,1\n"))
    assert _rows(read_counts(gz)) == [("t", 2, 1)]


def test_missing_group_column(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("task_id,n,c\nt,2,1\n")
    with pytest.raises(ArchiveError) as info:
        read_counts(path, by=["model"])
    assert str(info.value) == f"{path}:1: missing column \"model\" (columns: ['task_id', 'n', 'c'])"


def test_parquet_batches_and_row_numbers(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow")
    from passatk.archives.harnesses import tables

    monkeypatch.setattr(tables, "PARQUET_BATCH", 3)
    path = tmp_path / "s.parquet"
    flags = [[True, False, True, True], [False] * 5, [True]]
    write_archive(path, TASKS, flags, format="samples")
    assert _rows(read_counts(path)) == [("HumanEval/0", 4, 3), ("HumanEval/1", 5, 0),
                                        ("HumanEval/2", 1, 1)]
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"task_id": ["a"] * 7, "passed": [1, 0, 1, 1, 0, 2, 1]}), path)
    with pytest.raises(ArchiveError) as info:
        read_counts(path)
    assert str(info.value) == (f'{path}:6: column "passed" must be a pass flag '
                               "(true/false, 1/0, 1.0/0.0), got 2; give threshold= to read it "
                               "as a reward")
