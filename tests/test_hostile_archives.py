"""Hostile and corrupt archives (issue 9, archive side): each test is one reproducer of
../shared/audits/reliability.md turned into a check; the item is named in the test."""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
import tracemalloc
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from passatk.archives import ArchiveError, expand_paths, read_counts, write_archive
from passatk.archives.counts import _natural_sorted, _sort_key
from passatk.archives.io import opening as _sources

zstandard = pytest.importorskip("zstandard")


def _he(task="T/0", passed=True, completion=""):
    return json.dumps({"task_id": task, "completion": completion, "result": "passed",
                       "passed": passed}) + "\n"


def _run(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return path


def _cli(cli, *args):
    """Run the CLI in process: (exit status, stderr lines)."""
    rc, _, err = cli(["score", *args, "-q"])
    return rc, err.strip().splitlines()


def _one_line(cli, *args, match):
    rc, err = _cli(cli, *args)
    assert rc == 2 and len(err) == 1, err
    assert "Traceback" not in err[0] and re.search(match, err[0]), err[0]
    return err[0]


# ------------------------------------------------------------------ W1, M5: walks and globs
def _runs(tmp_path):
    run = tmp_path / "runs" / "2024-11-30"
    run.mkdir(parents=True)
    write_archive(run / "m_results.jsonl", ["T/0", "T/1"], [[True, False], [True]])
    return tmp_path / "runs"


def test_w1_glob_does_not_count_a_latest_symlink_twice(tmp_path):
    runs = _runs(tmp_path)
    (runs / "latest").symlink_to("2024-11-30")
    counts = read_counts(str(runs / "**" / "*_results.jsonl"))
    assert counts.samples == 3
    assert read_counts([runs, runs / "latest" / "m_results.jsonl"]).samples == 3  # same inode


def test_w1_glob_over_a_loop_link_matches_once(tmp_path):
    runs = _runs(tmp_path)
    (runs / "2024-11-30" / "up").symlink_to("..")
    assert expand_paths(str(runs / "**" / "*_results.jsonl")) == [
        str(runs / "2024-11-30" / "m_results.jsonl")]


def test_m5_glob_over_three_loop_links_is_linear(tmp_path):
    runs = _runs(tmp_path)
    (runs / "2024-11-30" / "up").symlink_to("..")
    (runs / "self").symlink_to(".")
    (runs / "2024-11-30" / "again").symlink_to("../../runs")
    code = ("import sys; from passatk.archives import expand_paths; "
            "print(len(expand_paths(sys.argv[1])))")
    out = subprocess.run([sys.executable, "-c", code, str(runs / "**" / "*_results.jsonl")],
                         capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "1"


def test_glob_keeps_glob_semantics(tmp_path, monkeypatch):
    runs = _runs(tmp_path)
    (runs / ".hidden").mkdir()
    write_archive(runs / ".hidden" / "h_results.jsonl", ["T"], [[True]])
    write_archive(runs / "top_results.jsonl", ["T"], [[True]])
    monkeypatch.chdir(tmp_path)
    assert expand_paths("runs/**/*_results.jsonl") == [
        "runs/2024-11-30/m_results.jsonl", "runs/top_results.jsonl"]
    assert expand_paths("runs/*/m_*.jsonl") == ["runs/2024-11-30/m_results.jsonl"]
    assert expand_paths("**/top_*") == ["runs/top_results.jsonl"]
    assert len(expand_paths("runs/**")) == 2


# ------------------------------------------------------------------ W3: unreadable directories
def test_w3_unlistable_subdirectory_is_an_error(tmp_path, monkeypatch):
    runs = _runs(tmp_path)
    (runs / "b").mkdir()
    write_archive(runs / "b" / "y_results.jsonl", ["T/0"], [[True]])
    real = os.scandir

    def scandir(path="."):
        if os.fspath(path).endswith(os.sep + "b"):
            raise PermissionError(13, "Permission denied")
        return real(path)

    monkeypatch.setattr(_sources.os, "scandir", scandir)
    for spec in (runs, str(runs / "**" / "*.jsonl"), str(runs / "*" / "*.jsonl")):
        with pytest.raises(ArchiveError, match=r"b: cannot list directory: Permission denied"):
            read_counts(spec)


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists("/usr/bin/setpriv"),
                    reason="needs root and setpriv")
def test_w3_unreadable_subdirectory_without_dac_override(tmp_path):
    """A real chmod 000: root without CAP_DAC_OVERRIDE is refused like any user."""
    runs = _runs(tmp_path)
    (runs / "b").mkdir()
    write_archive(runs / "b" / "y_results.jsonl", ["T/0"], [[True]])
    (runs / "b").chmod(0)
    try:
        code = ("import sys\nfrom passatk.archives import expand_paths\n"
                "try:\n    expand_paths(sys.argv[1:])\nexcept ValueError as e:\n    print(e)\n")
        out = subprocess.run(
            ["/usr/bin/setpriv", "--bounding-set=-dac_override,-dac_read_search",
             sys.executable, "-c", code, str(runs), str(runs / "**" / "*.jsonl")],
            capture_output=True, text=True, timeout=120, check=False)
    finally:
        (runs / "b").chmod(0o755)
    assert "b: cannot list directory: Permission denied" in out.stdout, out.stdout + out.stderr


# ------------------------------------------------------------------ W2, C3: compressed input
def _batches(n_batches=10):
    cobj = zstandard.ZstdCompressor().compressobj()
    out, cuts = b"", []
    for b in range(n_batches):
        chunk = "".join(_he(f"T/{i}", bool((i + b) % 2)) for i in range(100)).encode()
        out += cobj.compress(chunk) + cobj.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK)
        cuts.append(len(out))
    return out + cobj.flush(), cuts


def test_w2_truncated_zstd_is_an_error(tmp_path):
    full, cuts = _batches()
    assert read_counts(_run(tmp_path, "full_results.jsonl.zst", full)).samples == 1000
    cut = _run(tmp_path, "cut_results.jsonl.zst", full[:cuts[2]])
    with pytest.raises(ArchiveError, match="truncated zstd stream"):
        read_counts(cut)
    with pytest.raises(ArchiveError, match="truncated zstd stream"):
        read_counts(cut, format="humaneval")


def test_w2_multi_frame_zstd_reads_every_frame(tmp_path):
    z = zstandard.ZstdCompressor()
    data = z.compress(_he("T/0").encode()) + z.compress(_he("T/1", False).encode() * 2)
    counts = read_counts(_run(tmp_path, "m_results.jsonl.zst", data))
    assert counts.n.tolist() == [1, 2] and counts.c.tolist() == [1, 0]


def test_u3_small_truncated_zstd_says_truncated(tmp_path):
    data = zstandard.ZstdCompressor().compress(_he().encode() * 50)
    with pytest.raises(ArchiveError, match="truncated zstd stream"):
        read_counts(_run(tmp_path, "s_results.jsonl.zst", data[:-6]))


def _corrupt_gzip():
    b = bytearray(gzip.compress("".join(_he(f"T/{i % 3}") for i in range(12)).encode()))
    b[15] ^= 0x55
    return bytes(b)


def _corrupt_zstd():
    b = bytearray(zstandard.ZstdCompressor(write_checksum=True).compress(
        "".join(_he(f"T/{i % 3}") for i in range(12)).encode()))
    b[7] ^= 0xFF
    return bytes(b)


def _huge_window():
    line = _he().encode()
    return (b"\x28\xb5\x2f\xfd" + bytes([0, 21 << 3]) + ((len(line) << 3) | 1).to_bytes(3, "little")
            + line)


@pytest.mark.parametrize("name, data", [
    ("corrupt_results.jsonl.gz", _corrupt_gzip()),
    ("corrupt_results.jsonl.zst", _corrupt_zstd()),
    ("hugewin_results.jsonl.zst", _huge_window()),
])
def test_c3_corrupt_compressed_data_is_one_line(tmp_path, cli, name, data):
    path = _run(tmp_path, name, data)
    _one_line(cli, path, match=r"cannot decompress")
    _one_line(cli, path, "--input-format", "humaneval", match=r"cannot decompress")


# ------------------------------------------------------------------ C3: deep nesting
def test_c3_deeply_nested_record_is_a_bad_record(tmp_path, cli):
    deep = '{"task_id": "T", "passed": true, "completion": "", "x": ' + "[" * 100000 \
        + "]" * 100000 + "}\n"
    path = _run(tmp_path, "deep_results.jsonl", _he() + deep + _he("T", False))
    _one_line(cli, path, match=r"deep_results.jsonl:2: JSON nested too deeply")
    counts = read_counts(path, skip_bad=True)
    assert counts.samples == 2 and counts.skipped.count == 1
    first = _run(tmp_path, "deep1_results.jsonl", deep)
    _one_line(cli, first, "--skip-bad", match=r"deep1_results.jsonl:1: JSON nested too deeply")


def test_c3_deeply_nested_document_is_one_line(tmp_path, cli):
    path = _run(tmp_path, "eval_results.json", '{"eval": ' + "[" * 100000 + "]" * 100000 + "}")
    _one_line(cli, path, match=r"eval_results.json(:1)?: JSON nested too deeply")


# ------------------------------------------------------------------ C4: numbers out of range
def test_c4_counts_of_2_63_are_bad_records(tmp_path, cli):
    path = _run(tmp_path, "n.csv", "task_id,n,c\nT/0,9223372036854775808,3\nT/1,10,5\n")
    _one_line(cli, path, match=r"n.csv:2: column \"n\" must be below 2\*\*53")
    counts = read_counts(path, skip_bad=True)
    assert counts.task.tolist() == ["T/1"] and counts.skipped.count == 1
    jl = _run(tmp_path, "n.jsonl", '{"task_id": "T", "n": ' + "9" * 30 + ', "c": 1}\n')
    _one_line(cli, jl, match=r"n.jsonl:1: column \"n\" must be below 2\*\*53")


def test_c4_shards_summing_past_2_53_are_refused(tmp_path, cli):
    (tmp_path / "shards").mkdir()
    for name in ("a.csv", "b.csv"):
        _run(tmp_path, f"shards/{name}", "task_id,n,c\nT,5000000000000000,0\n")
    _one_line(cli, tmp_path / "shards", "--merge", "--allow-duplicates",
              match=r"task 'T': n sums to 2\*\*53 or more")


def test_c4_huge_reward_and_pass_at_1(tmp_path, cli):
    tau = _run(tmp_path, "tau.json", '[{"task_id": 0, "reward": ' + "1" * 400 + "}]")
    _one_line(cli, tau, match=r"tau.json: \$\[0\]: field \"reward\" must be a finite number")
    lm = _run(tmp_path, "samples_h_2024-01-01T00-00-00.jsonl",
              '{"doc_id": 0, "resps": [["a"]], "pass@1": ' + "1" * 400 + "}\n"
              '{"doc_id": 1, "resps": [["a"]], "pass@1": 1.0}\n')
    _one_line(cli, lm, match=r"jsonl:1: field \"pass@1\" must be a finite number")
    assert read_counts(lm, skip_bad=True).samples == 1
    csv = _run(tmp_path, "r.csv", "task_id,reward\nT," + "1" * 400 + "\n")
    with pytest.raises(ArchiveError, match=r"r.csv:2: column \"reward\" must be finite"):
        read_counts(csv, threshold=0.5)


# ------------------------------------------------------------------ C6: valid archives
def test_c6_first_record_over_64_kib_is_detected(tmp_path):
    path = _run(tmp_path, "long_results.jsonl",
                _he("T/0", False, "x = 1\n" * 12000) + _he("T/0", True))
    assert read_counts(path).samples == 2
    wide = ",".join([f"col{i}" for i in range(9000)] + ["task_id", "n", "c"]) + "\n" \
        + ",".join(["0"] * 9000 + ["T", "10", "3"]) + "\n"
    assert read_counts(_run(tmp_path, "wide.csv", wide)).c.tolist() == [3]


def test_c6_task_ids_that_int_cannot_read_sort(tmp_path):
    path = _run(tmp_path, "t.csv", f"task_id,n,c\nx1\u00b2,10,3\nx2,10,4\nT/{'9' * 5000},1,1\n"
                "T/1,1,0\n")
    assert read_counts(path).task.tolist() == ["T/1", f"T/{'9' * 5000}", "x1\u00b2", "x2"]


def test_c6_trailing_nul_is_part_of_the_task_id(tmp_path):
    path = _run(tmp_path, "nul_results.jsonl",
                '{"task_id": "T\\u0000", "completion": "", "result": "passed", "passed": true}\n'
                + _he("T", False))
    counts = read_counts(path)
    assert counts.task.tolist() == ["T", "T\x00"] and counts.c.tolist() == [0, 1]


def _old_task_key(task):  # the natural order before the fix, defined for ASCII digit runs
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p)
                 for p in re.split(r"([0-9]+)", task) if p)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="ab/_0123456789\x00\x01 ", max_size=8), min_size=2,
                max_size=8, unique=True))
def test_natural_order_is_unchanged_for_ascii_ids(ids):
    assert _natural_sorted(ids) == sorted(ids, key=_sort_key) == sorted(
        ids, key=lambda t: (_old_task_key(t), t))


# ------------------------------------------------------------------ W6: duplicate keys
@pytest.mark.parametrize("name, text, match", [
    ("eval_results.json",
     '{"eval": {"T": [{"base_status": "pass"}], "T": [{"base_status": "fail"}]}}',
     r"eval_results.json(:1)?: duplicate key 'T'"),
    ("d_results.jsonl", _he() + '{"task_id": "T/0", "completion": "", "result": "passed", '
     '"passed": true, "passed": false}\n', r"d_results.jsonl:2: duplicate key 'passed'"),
    ("counts.jsonl", '{"task_id": "T", "n": 10, "c": 3, "c": 9}\n',
     r"counts.jsonl:1: duplicate key 'c'"),
    ("samples_t_2024-01-01T00-00-00.jsonl",
     '{"doc_id": 0, "resps": [["a"]], "pass@1": 1.0}\n'
     '{"doc_id": 1, "doc_id": 2, "resps": [["a"]], "pass@1": 1.0}\n',
     r"jsonl:2: duplicate key 'doc_id'"),
])
def test_w6_duplicate_keys_name_the_key_and_line(tmp_path, cli, name, text, match):
    """--strict-json refuses them (by default the last value counts, as in json:
    tests/test_archives_duplicate_keys.py)."""
    _one_line(cli, _run(tmp_path, name, text), "--strict-json", match=match)


# ------------------------------------------------------------------ M2: record-length cap
def test_m2_endless_line_stops_at_the_cap(tmp_path, cli, monkeypatch):
    monkeypatch.setenv("PASSATK_MAX_RECORD_BYTES", "1M")
    zeros = _run(tmp_path, "z_results.jsonl", b"\0" * (3 << 20))
    for fmt in ("humaneval", "counts", "lm-eval"):
        _one_line(cli, zeros, "--input-format", fmt,
                  match=r"record longer than 1048576 bytes.*PASSATK_MAX_RECORD_BYTES")
    _one_line(cli, zeros, match=r"record longer than 1048576 bytes")
    row = _run(tmp_path, "c.csv", b"task_id,n,c\nT,1,1\n" + b"9" * (3 << 20))
    _one_line(cli, row, match=r"c.csv:3: record longer than 1048576 bytes")


def test_m2_gzip_bomb_stops_at_the_cap(tmp_path, cli, monkeypatch):
    monkeypatch.setenv("PASSATK_MAX_RECORD_BYTES", "1M")
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    bomb = b"".join(z.compress(b"{" * (1 << 20)) for _ in range(64)) + z.flush()
    path = _run(tmp_path, "bomb_results.jsonl.gz", bomb)
    _one_line(cli, path, "--input-format", "humaneval", match=r"record longer than")


def test_m2_cap_is_configurable(tmp_path, monkeypatch):
    path = _run(tmp_path, "long_results.jsonl", _he(completion="x" * (2 << 20)) + _he())
    monkeypatch.setenv("PASSATK_MAX_RECORD_BYTES", "1M")
    with pytest.raises(ArchiveError, match=r"long_results.jsonl:1: record longer than"):
        read_counts(path, format="humaneval")
    monkeypatch.setenv("PASSATK_MAX_RECORD_BYTES", str(3 << 20))
    assert read_counts(path).samples == 2
    monkeypatch.setenv("PASSATK_MAX_RECORD_BYTES", "lots")
    with pytest.raises(ValueError, match="PASSATK_MAX_RECORD_BYTES must be a positive number"):
        read_counts(path)


# ------------------------------------------------------------------ M3: long task ids
def _peak_mb(fn, *args, **kwargs):
    tracemalloc.start()
    try:
        result = fn(*args, **kwargs)
        return result, tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()


def test_m3_one_long_task_id_does_not_multiply_memory(tmp_path):
    lines = [_he(f"T/{i % 50}", i % 3 == 0) for i in range(10000)]
    lines[5000] = _he("L" * 4096)
    path = _run(tmp_path, "long_id_results.jsonl", "".join(lines))
    counts, peak = _peak_mb(read_counts, path)
    assert counts.samples == 10000 and "L" * 4096 in counts.task.tolist()
    assert peak < 40  # the key matrix was 10,000 lines x 4,096 bytes x 8 before the fix


def test_m3_task_ids_are_variable_width(tmp_path):
    rows = "".join(f"T/{i},2,1\n" for i in range(5000))
    path = _run(tmp_path, "t.csv", "task_id,n,c\n" + rows + "L" * 20000 + ",2,1\n")
    counts, peak = _peak_mb(read_counts, path)
    assert counts.task.dtype.kind in "OT" and len(counts) == 5001  # object or StringDType
    assert counts.task.tolist()[0] == "L" * 20000
    assert peak < 40  # a str array was 5,001 x 20,000 x 4 bytes (400 MB)


# ------------------------------------------------------------------ M6: memory per task
def test_m6_memory_per_task_is_small():
    from passatk.archives.counts import Counts, Tally

    def build():
        t = Tally()
        for i in range(100_000):
            t.add((), f"T/{i}", 10, 3)
        return Counts._from_acc(t, metric="pass@k")

    counts, peak = _peak_mb(build)
    assert len(counts) == 100_000
    assert peak * 1e6 / 100_000 < 300  # bytes per task at the peak (579 before the fix)


# ------------------------------------------------------------------ U1: located errors
def test_u1_lm_eval_filter_list_is_located_and_skippable(tmp_path, cli):
    path = _run(tmp_path, "samples_t_2024-01-01T00-00-00.jsonl",
                '{"doc_id": 0, "resps": [["a"]], "filter": ["x"], "pass@1": 1.0}\n'
                '{"doc_id": 1, "resps": [["a"]], "filter": "none", "pass@1": 1.0}\n')
    _one_line(cli, path, match=r"jsonl:1: field \"filter\" must be a string")
    assert read_counts(path, skip_bad=True).samples == 1


def test_u1_csv_integer_forms(tmp_path, cli):
    path = _run(tmp_path, "pm.csv", "task_id,n,c\nT/0,+-10,3\nT/1,1\u00b2,1\nT/2,+10,3\n")
    _one_line(cli, path, match=r"pm.csv:2: column \"n\" must be an integer, got '\+-10'")
    counts = read_counts(path, skip_bad=True)
    assert counts.n.tolist() == [10] and counts.skipped.count == 2


def test_u1_integer_task_id_of_5000_digits_is_located(tmp_path, cli):
    line = '{"task_id": ' + "9" * 5000 + ', "completion": "", "result": "passed", "passed": true}\n'
    path = _run(tmp_path, "big_results.jsonl", _he() + line)
    _one_line(cli, path, match=r"big_results.jsonl:2: .*(too long|digits)")
    assert read_counts(path, skip_bad=True).samples == 1


def test_u1_fifo_is_read_once_with_detection(tmp_path):
    """A pipe's start is kept for detection and replayed to the reader (issue 12)."""
    import threading

    text = (_he("T/0") + _he("T/0", False) + _he("T/1")).encode()
    fifo = tmp_path / "p_results.jsonl"
    os.mkfifo(fifo)

    def write():
        with open(fifo, "wb") as f:
            f.write(text)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        counts = read_counts(fifo)
    finally:
        writer.join(timeout=60)
    expected = read_counts(_run(tmp_path, "f_results.jsonl", text))
    assert counts.to_rows() == expected.to_rows()


def test_m2_dev_zero_with_a_format_stops_at_the_cap(cli, monkeypatch):
    monkeypatch.setenv("PASSATK_MAX_RECORD_BYTES", "1M")
    _one_line(cli, "/dev/zero", match=r"/dev/zero(:1)?: record longer than 1048576 bytes")
    for fmt in ("humaneval", "lm-eval", "counts", "samples"):
        _one_line(cli, "/dev/zero", "--input-format", fmt,
                  match=r"/dev/zero(:1)?: record longer than 1048576 bytes")
    # a document reader stops at its first byte: NUL starts no JSON value
    _one_line(cli, "/dev/zero", "--input-format", "evalplus",
              match=r"/dev/zero:1: malformed JSON: Expecting value \(column 1\)")


# ------------------------------------------------------------------ U3: detection blames
def test_u3_utf8_bom_is_read(tmp_path):
    for name, text in (("b_results.jsonl", _he() + _he("T/0", False)),
                       ("eval_results.json", '{"eval": {"T": [{"base_status": "pass"}]}}'),
                       ("c.jsonl", '{"task_id": "T", "n": 2, "c": 1}\n')):
        counts = read_counts(_run(tmp_path, name, b"\xef\xbb\xbf" + text.encode()))
        assert counts.samples >= 1


def test_u3_truncated_parquet_says_parquet(tmp_path, cli):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pq.write_table(pa.table({"task_id": ["T", "U"], "n": [10, 10], "c": [3, 5]}),
                   tmp_path / "ok.parquet")
    data = (tmp_path / "ok.parquet").read_bytes()
    path = _run(tmp_path, "trunc.parquet", data[: len(data) // 2])
    _one_line(cli, path, match=r"trunc.parquet: malformed Parquet")


def test_w6_parquet_with_a_repeated_column_is_refused(tmp_path, cli):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    table = pa.Table.from_arrays([pa.array(["T"]), pa.array([10]), pa.array([3]), pa.array([9])],
                                 names=["task_id", "n", "c", "c"])
    pq.write_table(table, tmp_path / "d.parquet")
    _one_line(cli, tmp_path / "d.parquet", match=r"d.parquet: repeats column\(s\) \['c'\]")
