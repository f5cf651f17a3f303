"""Under merge=True: one input named twice is read once, and overlapping shards are refused."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest

from passatk import cli
from passatk.archives import ArchiveError, read_counts, write_archive


def records(seed: int, tasks: int = 10, samples: int = 1) -> list:
    rng = random.Random(seed)
    return [{"task_id": f"HumanEval/{t}", "prompt": "def f():", "source_codes": ["pass"],
             "is_solved": rng.random() < 0.5} for t in range(tasks) for _ in range(samples)]


def write(path, recs) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return str(path)


def recount(recs) -> dict:
    out: dict = {}
    for r in recs:
        n, c = out.get(r["task_id"], (0, 0))
        out[r["task_id"]] = (n + 1, c + r["is_solved"])
    return out


def rows(counts) -> dict:
    return {t: (int(n), int(c)) for t, n, c in zip(counts.task, counts.n, counts.c,
                                                      strict=True)}


# ------------------------------------------------------------------ one input, two names
def _child_counts(args: list[str], stdin_path: str) -> list:
    code = ("import sys; from passatk.archives import read_counts; "
            "print(read_counts(sys.argv[1:], merge=True).n.tolist())")
    with open(stdin_path, "rb") as f:
        out = subprocess.run([sys.executable, "-c", code, *args], stdin=f, capture_output=True,
                             text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_a_file_named_twice_is_read_once(tmp_path):
    path = tmp_path / "s_results.jsonl"
    write_archive(path, ["a", "b"], [[True, False] * 5, [True] * 10])
    link = tmp_path / "link.jsonl"
    link.symlink_to(path)
    url = "file://" + str(path)
    for names in ([path, url], [url, path], [path, link, url], [url, "file://" + str(link)]):
        assert read_counts(names, merge=True).n.tolist() == [10, 10], names
    for names in ([str(path), "-"], ["-", str(path)], [str(path), "/dev/stdin"],
                  ["-", url]):
        assert _child_counts(names, str(path)) == [10, 10], names
    copy = tmp_path / "copy_results.jsonl"
    copy.write_bytes(path.read_bytes())  # the same bytes, but another file
    assert read_counts([path, copy], merge="allow-duplicates").n.tolist() == [20, 20]


def test_remote_spellings_of_one_object(tmp_path):
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("memory")
    body = b'{"task_id": "t", "passed": true}\n{"task_id": "t", "passed": false}\n'
    for key in ("/bk/a/s_results.jsonl", "/bk/b/s_results.jsonl"):
        with fs.open(key, "wb") as f:
            f.write(body)
    try:
        one = ["memory://bk/a/s_results.jsonl", "memory:///bk/a/s_results.jsonl"]
        assert read_counts(one, merge=True).n.tolist() == [2]
        two = ["memory://bk/a/s_results.jsonl", "memory://bk/b/s_results.jsonl"]
        assert read_counts(two, merge="allow-duplicates").n.tolist() == [4]
    finally:
        fs.rm("/bk", recursive=True)


# ------------------------------------------------------------------ overlapping shards
def test_a_merged_file_beside_its_shards(tmp_path, capsys):
    recs = records(0)
    write(tmp_path / "Results.jsonl", recs)
    write(tmp_path / "Results-1.jsonl", recs[:4])
    write(tmp_path / "Results-2.jsonl", recs[4:])
    with pytest.raises(ArchiveError) as info:
        read_counts(tmp_path, merge=True)
    text = str(info.value)
    assert text.startswith(f"{tmp_path / 'Results.jsonl'}: holds the same tasks and samples as "
                           f"these together: {tmp_path / 'Results-1.jsonl'}, "
                           f"{tmp_path / 'Results-2.jsonl'}")
    assert "merge='allow-duplicates'" in text
    for jobs in ("1", "2"):
        assert cli.main(["score", str(tmp_path), "--merge", "-k", "1,2", "--jobs", jobs]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "--allow-duplicates" in err
    both = read_counts(tmp_path, merge="allow-duplicates")
    assert rows(both) == {t: (2 * n, 2 * c) for t, (n, c) in recount(recs).items()}
    shards = read_counts([tmp_path / "Results-1.jsonl", tmp_path / "Results-2.jsonl"],
                         merge=True)
    assert rows(shards) == recount(recs)


def test_a_copy_and_real_shards(tmp_path):
    recs = records(1, samples=3)
    write(tmp_path / "a.jsonl", recs)
    write(tmp_path / "a_copy.jsonl", recs)
    with pytest.raises(ArchiveError, match=r"a\.jsonl: holds the same tasks and samples "
                                           r"as .*a_copy\.jsonl \("):
        read_counts(tmp_path, merge=True)
    # shards that split each task's samples: every task in both, counts that differ, each
    # sample its own text
    rng = random.Random(2)
    first = [dict(r, is_solved=rng.random() < 0.5, source_codes=[f"return {i}"])
             for i, r in enumerate(records(3, samples=4))]
    second = [dict(r, is_solved=rng.random() < 0.5, source_codes=[f"return -{i}"])
              for i, r in enumerate(records(4, samples=4))]
    folder = tmp_path / "shards"
    folder.mkdir()
    write(folder / "part0.jsonl", first)
    write(folder / "part1.jsonl", second)
    assert rows(read_counts(folder, merge=True)) == recount(first + second)
    # the same texts in both shards (greedy decoding): refused unless they are real samples
    write(folder / "part1.jsonl", [dict(r, source_codes=["pass"]) for r in second])
    write(folder / "part0.jsonl", [dict(r, source_codes=["pass"]) for r in first])
    with pytest.raises(ArchiveError, match=r"part1\.jsonl:\d+: this record is also "):
        read_counts(folder, merge=True)
    assert rows(read_counts(folder, merge="allow-duplicates")) == recount(first + second)


@pytest.mark.parametrize("seed", range(30))
def test_random_folders_against_a_plain_check(tmp_path, seed):
    """Random shards of one run, some merged or copied: refused exactly when one archive's
    counts are the sum of those of the archives that share a task with it, or when two
    archives share a record byte for byte."""
    rng = random.Random(seed)
    recs = records(seed, tasks=rng.randint(2, 8), samples=rng.randint(1, 3))
    cut = sorted(rng.sample(range(1, len(recs)), min(2, len(recs) - 1)))
    pieces = [recs[a:b] for a, b in zip([0, *cut], [*cut, len(recs)], strict=True)]
    if rng.random() < 0.5:
        pieces.append(list(recs) if rng.random() < 0.5 else list(rng.choice(pieces)))
    tables = []
    for i, piece in enumerate(pieces):
        write(tmp_path / f"p{i}.jsonl", piece)
        tables.append(recount(piece))
    repeats = any(
        (others := [t for j, t in enumerate(tables) if j != i and set(t) & set(whole)])
        and all(set(t) <= set(whole) for t in others)
        and all(tuple(map(sum, zip(*(t[k] for t in others if k in t), strict=True))) == v
                for k, v in whole.items())
        for i, whole in enumerate(tables))
    lines = [{json.dumps(r) for r in piece} for piece in pieces]
    shared = any(lines[i] & lines[j] for i in range(len(lines)) for j in range(i))
    total = recount([r for p in pieces for r in p])
    if repeats:
        with pytest.raises(ArchiveError, match="holds the same tasks and samples as"):
            read_counts(tmp_path, merge=True)
    elif shared:
        with pytest.raises(ArchiveError, match="byte for byte"):
            read_counts(tmp_path, merge=True)
    else:
        assert rows(read_counts(tmp_path, merge=True)) == total
    assert rows(read_counts(tmp_path, merge="allow-duplicates")) == total
    assert rows(read_counts(tmp_path, merge="allow-duplicates", workers=2)) == total


def test_merge_values_are_checked():
    with pytest.raises(ValueError, match="merge must be True, False or 'allow-duplicates'"):
        read_counts("x.jsonl", merge="yes")
    with pytest.raises(TypeError, match="merge must be a bool or 'allow-duplicates'"):
        read_counts("x.jsonl", merge=1)



def test_records_repeated_across_shards_are_refused(tmp_path, capsys):
    recs = [{"task_id": f"T/{i % 4}", "completion": f"return {i}", "passed": i % 3 == 0}
            for i in range(12)]
    write(tmp_path / "a.jsonl", recs[:8])
    write(tmp_path / "b.jsonl", recs[5:])  # records 5, 6, 7 in both: no union, a repeat
    for workers in (1, 2):
        with pytest.raises(ArchiveError) as info:
            read_counts(tmp_path, merge=True, workers=workers)
        assert str(info.value) == (
            f"{tmp_path / 'b.jsonl'}:1: this record is also {tmp_path / 'a.jsonl'}:6, byte for "
            "byte (3 distinct record(s) appear in both); pooled by merge, a repeated record "
            "counts twice (overlapping shards, or a merged file beside a shard?). Leave one "
            "out, or pass merge='allow-duplicates' if the repeats are real samples")
    for jobs in ("1", "2"):
        assert cli.main(["score", str(tmp_path), "--merge", "--jobs", jobs]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "b.jsonl:1: this record is also" in err
        assert "a.jsonl:6" in err and "--allow-duplicates" in err
    want: dict = {}
    for r in recs[:8] + recs[5:]:
        n, c = want.get(r["task_id"], (0, 0))
        want[r["task_id"]] = (n + 1, c + r["passed"])
    assert rows(read_counts(tmp_path, merge="allow-duplicates")) == want  # as given
    assert cli.main(["score", str(tmp_path), "--allow-duplicates"]) == 0
    write(tmp_path / "b.jsonl", recs[8:])
    assert rows(read_counts(tmp_path, merge=True)) == recount_passed(recs)
    assert len(read_counts(tmp_path).groups) == 2  # kept apart: no check, nothing pooled


def recount_passed(recs) -> dict:
    return {t: (n, c) for t, (n, c) in recount([dict(r, is_solved=r["passed"])
                                                  for r in recs]).items()}


def test_repeats_inside_one_file_blank_lines_and_compression(tmp_path):
    """One file may repeat a record (two samples of the same text); blank lines are no
    records; a gzip shard is compared by its records, not its bytes."""
    import gzip

    same = '{"task_id": "T/0", "completion": "pass", "passed": true}\n'
    (tmp_path / "a.jsonl").write_text(same * 3 + "\n\n  \n")
    (tmp_path / "b.jsonl").write_text('{"task_id": "T/0", "completion": "x", "passed": false}'
                                      "\n\n  \n")
    assert rows(read_counts(tmp_path, merge=True)) == {"T/0": (4, 3)}
    (tmp_path / "c.jsonl.gz").write_bytes(gzip.compress(same.encode()))
    with pytest.raises(ArchiveError, match=r"c\.jsonl\.gz:1: this record is also "
                                           r".*a\.jsonl:1, byte for byte \(1 distinct"):
        read_counts(tmp_path, merge=True)


def test_a_hash_collision_is_no_repeat(tmp_path, monkeypatch):
    """A shared hash is confirmed on the bytes: were every line to hash alike, distinct
    records would still not be called repeats."""
    from passatk.archives import overlap

    write(tmp_path / "a.jsonl", [{"task_id": "T/0", "completion": "1", "passed": True}])
    write(tmp_path / "b.jsonl", [{"task_id": "T/0", "completion": "2", "passed": False}])
    assert overlap._first_repeat(str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"),
                                 [hash(b"x")]) is None
    import builtins

    monkeypatch.setattr(overlap, "hash", lambda b: 7 if b.strip() else builtins.hash(b),
                        raising=False)
    calls = []
    real = overlap._first_repeat
    monkeypatch.setattr(overlap, "_first_repeat", lambda *a: calls.append(a) or real(*a))
    assert rows(read_counts(tmp_path, merge=True)) == {"T/0": (2, 1)}
    assert [c[2] for c in calls] == [[7]]  # the collision was seen, and checked


def test_s3_spellings_of_one_object_by_etag(tmp_path):
    """s3:// and s3a:// name one object (same store, path and ETag); a copy is another."""
    pytest.importorskip("moto")
    pytest.importorskip("s3fs")
    from corpus import moto_s3

    run = tmp_path / "run"
    run.mkdir()
    write_archive(run / "s_results.jsonl", ["a", "b"], [[True, False, True], [False] * 3])
    with moto_s3({"run": str(run)}, bucket="passatk-identity") as options:  # moto's state is
        # shared by every server of the process: a bucket of its own
        from passatk.archives.io.remote import storage_options, url_identity

        url = "s3://passatk-identity/v1/run/s_results.jsonl"
        with storage_options(options):
            key = url_identity(url)
            assert key[0] == "s3" and key[1] == "passatk-identity/v1/run/s_results.jsonl"
            assert key[2]  # the ETag
            assert url_identity("s3a://passatk-identity/v1/run/s_results.jsonl") == key
        both = read_counts([url, "s3a://passatk-identity/v1/run/s_results.jsonl"], merge=True,
                           storage_options=options)
        assert both.n.tolist() == [3, 3]


def test_repeated_records_in_remote_shards(tmp_path):
    """Objects named by URL are read again for the check, as local files are."""
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("memory")
    one = b'{"task_id": "t", "completion": "a", "passed": true}\n'
    other = b'{"task_id": "t", "completion": "b", "passed": false}\n'
    try:
        for key, body in (("/rep/a.jsonl", one + other), ("/rep/b.jsonl", other)):
            with fs.open(key, "wb") as f:
                f.write(body)
        urls = ["memory://rep/a.jsonl", "memory://rep/b.jsonl"]
        with pytest.raises(ArchiveError, match=r"^memory://rep/b\.jsonl:1: this record is "
                                               r"also memory://rep/a\.jsonl:2, byte for byte"):
            read_counts(urls, merge=True)
        assert read_counts(urls, merge="allow-duplicates").n.tolist() == [3]
        with fs.open("/rep/b.jsonl", "wb") as f:
            f.write(b'{"task_id": "t", "completion": "c", "passed": false}\n')
        assert read_counts(urls, merge=True).n.tolist() == [3]
    finally:
        fs.rm("/rep", recursive=True)


def test_a_record_in_three_archives_two_of_one_group(tmp_path):
    """The repeat is between the first and the third archive (the second is another group):
    every pair of the archives holding a record is looked at, not only neighbours."""
    same_record = {"task_id": "T/0", "completion": "pass", "passed": True}
    for folder, others in (("x/a", "1"), ("y/b", "2"), ("z/a", "34")):  # no union, no copy
        (tmp_path / folder).mkdir(parents=True)
        write(tmp_path / folder / "s.jsonl",
              [same_record] + [{"task_id": "T/0", "completion": o, "passed": False}
                               for o in others])
    with pytest.raises(ArchiveError, match=r"z/a/s\.jsonl:1: this record is also "
                                           r".*x/a/s\.jsonl:1, byte for byte \(1 distinct"):
        read_counts(tmp_path, by=["path:parent"], merge=True)
    counts = read_counts(tmp_path / "y", by=["path:parent"], merge=True)
    assert rows(counts) == {"T/0": (2, 1)}
    (tmp_path / "z" / "a" / "s.jsonl").unlink()
    assert read_counts(tmp_path, by=["path:parent"], merge=True).n.tolist() == [2, 2]
    assert rows(read_counts(tmp_path / "x", merge=True)) == {"T/0": (2, 1)}


@pytest.mark.parametrize("workers", [1, 2])
def test_repeated_records_of_per_sample_tables(tmp_path, workers):
    """Per-sample JSON Lines tables (read in bulk by the table readers): a record with only a
    task id and a flag repeats across shards of one task, and needs allow-duplicates."""
    write(tmp_path / "a.jsonl", [{"task_id": f"T/{i}", "correct": i % 2 == 0} for i in range(4)])
    write(tmp_path / "b.jsonl", [{"task_id": "T/9", "correct": False},
                                 {"task_id": "T/0", "correct": True}])
    with pytest.raises(ArchiveError, match=r"b\.jsonl:2: this record is also .*a\.jsonl:1, "
                                           r"byte for byte \(1 distinct"):
        read_counts(tmp_path, merge=True, workers=workers)
    pooled = read_counts(tmp_path, merge="allow-duplicates", workers=workers)
    assert rows(pooled) == {"T/0": (2, 2), "T/1": (1, 0), "T/2": (1, 1), "T/3": (1, 0),
                            "T/9": (1, 0)}
