"""Byte ranges cut at line boundaries, and partial reads that merge into the sequential read."""

from __future__ import annotations

import dataclasses
import io
import json
import os
from pathlib import Path
from unittest import mock

import pytest
from corpus import big_humaneval, make_corpus, same
from hypothesis import event, given, settings
from hypothesis import strategies as st

from passatk.archives import ArchiveError, read_counts
from passatk.archives.engine.plan import plan_ranges
from passatk.archives.io import ranges as _ranges_module
from passatk.archives.io.ranges import LineRange, newlines_before
from passatk.archives.options import Options
from passatk.archives.parts import counts_of, join_ranges
from passatk.archives.pipeline import Unit, read_part


def _chunked(r: LineRange, buffer: int) -> bytes:
    """What ``r`` returns, read ``buffer`` bytes at a time."""
    got, chunk = b"", bytearray(buffer)
    while n := r.readinto(chunk):
        got += chunk[:n]
    return got


def _ranges(data: bytes, split: int, buffer: int) -> tuple[list[bytes], list[int]]:
    parts, firsts = [], []
    for s, e in plan_ranges(len(data), split):
        r = LineRange(io.BytesIO(data), s, e)
        parts.append(_chunked(r, buffer))
        firsts.append(r.first)
    return parts, firsts


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(st.binary(max_size=12).map(lambda b: b.replace(b"\n", b"")), max_size=20),
       trailing=st.booleans(), split=st.integers(1, 40), buffer=st.integers(1, 60),
       scan=st.integers(1, 8))
def test_ranges_tile_the_lines(lines, trailing, split, buffer, scan):
    """Read in chunks of ``buffer`` bytes, line ends looked for ``scan`` bytes at a time."""
    data = b"\n".join(lines) + (b"\n" if trailing and lines else b"")
    with mock.patch.object(_ranges_module, "_SCAN", scan):
        parts, firsts = _ranges(data, split, buffer)
    assert b"".join(parts) == data  # every byte once, in order
    ends = [sum(map(len, parts[:i])) for i in range(len(parts))]
    filled_at = [i for i, p in enumerate(parts) if p]
    assert [firsts[i] for i in filled_at] == [ends[i] for i in filled_at]
    for f in firsts:
        assert newlines_before(io.BytesIO(data), f) == data[:f].count(b"\n")
    filled = [p for p in parts if p]
    assert all(p.endswith(b"\n") for p in filled[:-1])  # cuts fall after a newline


def test_range_flags_csv_quotes_and_bare_cr():
    for data, flagged in [(b"a,b\n1,2\n", False), (b"a,b\r\n1,2\r\n", False),
                          (b'a,b\n"1\n2",3\n', True), (b"a,b\r1,2\n", True)]:
        r = LineRange(io.BytesIO(data), 0, len(data))
        r.read()
        assert r.quote_or_cr is flagged, data


@settings(max_examples=300, deadline=None)
@given(data=st.lists(st.sampled_from([b"a", b"\n", b"\r", b'"', b"\r\n"]), max_size=30)
       .map(b"".join), split=st.integers(1, 40), buffer=st.integers(1, 9))
def test_range_flags_in_any_chunking(data, split, buffer):
    """The flag of each range is that of its bytes, however they are read: a quote, or a
    carriage return followed by anything but a newline."""
    for s, e in plan_ranges(len(data), split):
        r = LineRange(io.BytesIO(data), s, e)
        got = _chunked(r, buffer)
        lone_cr = any(got[i:i + 1] == b"\r" and got[i + 1:i + 2] not in (b"\n", b"")
                      for i in range(len(got)))
        assert r.quote_or_cr is (b'"' in got or lone_cr), (got, buffer)


def test_plan_ranges_rejects_a_bad_size():
    with pytest.raises(ValueError, match="split_bytes must be a positive int"):
        plan_ranges(10, 0)


def _named(opts: Options, *files: str) -> Options:
    return dataclasses.replace(opts, named=frozenset(os.path.normpath(f) for f in files))


def _by_ranges(path: str, split: int, opts: Options, fmt=None):
    """A file's ranges read one by one, joined (or the file read again whole, as the
    pipeline does)."""
    opts = dataclasses.replace(_named(opts, path), format=fmt)
    results = [read_part(Unit((path,), s, e), opts)
               for s, e in plan_ranges(os.path.getsize(path), split)]
    joined = join_ranges(path, results)
    return results, joined if joined is not None else read_part(Unit((path,)), opts)[0]


def to_counts(part, opts, files):
    return counts_of([part], opts, files)


def _write_samples(path, rows, csv: bool):
    with open(path, "w") as f:
        if csv:
            f.write("task_id,passed\n")
        for i, (t, p) in enumerate(rows):
            if csv:
                f.write(f"{t},{p}\n" if i % 50 != 3 else f"{t},maybe\n")
            else:
                f.write(json.dumps({"task_id": t, "passed": p if i % 50 != 3 else "maybe"}) + "\n")


@pytest.mark.parametrize("kind", ["humaneval", "csv", "jsonl"])
@pytest.mark.parametrize("split", [300, 4096, 1 << 30])
def test_ranges_merge_to_the_sequential_read(tmp_path, kind, split):
    if kind == "humaneval":
        path = big_humaneval(tmp_path / "x_results.jsonl", 3000)
    else:
        path = str(tmp_path / f"s.{kind}")
        _write_samples(path, [(f"T/{i % 17}", int(i % 3 == 0)) for i in range(2000)],
                       kind == "csv")
    opts = Options(skip_bad=kind != "humaneval")
    results, part = _by_ranges(path, split, opts)
    if split < os.path.getsize(path):
        assert len(results) > 1 and not any(r.fallback or r.whole for r in results)
    same(to_counts(part, opts, [path]), read_counts(path, skip_bad=opts.skip_bad))
    if opts.skip_bad:  # skipped lines keep the line numbers of the file
        assert part.skipped.count == 40
        assert part.skipped.records[1].location == f"{path}:{54 + (kind == 'csv')}"


def test_a_bad_range_reads_the_file_again_for_the_exact_error(tmp_path):
    path = big_humaneval(tmp_path / "x_results.jsonl", 2000)
    lines = (tmp_path / "x_results.jsonl").read_text().split("\n")
    lines[1500] = '{"task_id": "T/1", "passed": "yes"}'
    (tmp_path / "x_results.jsonl").write_text("\n".join(lines))
    with pytest.raises(ArchiveError) as local:
        read_counts(path)
    results, part = _by_ranges(path, 5000, Options())
    assert any(r.fallback for r in results)
    assert str(part.error) == str(local.value) and f"{path}:1501:" in str(part.error)


def test_quoted_csv_falls_back_to_the_whole_file(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("task_id,passed\n" + "".join(f'"T,{i % 5}",{i % 2}\n' for i in range(500)))
    results, part = _by_ranges(str(path), 700, Options())
    assert any(r.quote_or_cr for r in results)
    same(to_counts(part, Options(), [str(path)]), read_counts(path))


def test_unsplittable_files_are_read_whole_by_the_first_range(tmp_path):
    folders = make_corpus(tmp_path)
    for folder in ("he_gz", "counts", "lm"):
        path = next(os.path.join(folders[folder], n) for n in sorted(os.listdir(folders[folder]))
                    if not n.startswith("results_"))
        results, part = _by_ranges(path, 64, Options())
        assert results[0].whole is not None and all(r.covered for r in results[1:])
        same(to_counts(part, Options(), [path]), read_counts(path))


def test_combine_keeps_file_order_errors_and_metric_clashes(tmp_path):
    folders = make_corpus(tmp_path)
    he = os.path.join(folders["he"], "s_results.jsonl")
    crux = os.path.join(folders["crux"], "crux.json")
    tau = os.path.join(folders["tau"], "tau.json")
    bad = tmp_path / "bad_results.jsonl"
    bad.write_text('{"task_id": "T/0", "completion": "", "passed": 3}\n')
    cases = ([he, tau], [tau, he], [he, str(bad), tau], [str(bad), he], [he, crux, tau],
             [tau, he, crux, tau], [crux, str(bad), he, tau, he], [folders["counts"], he, tau])
    for files in cases:
        files = [os.path.join(f, os.listdir(f)[0]) if os.path.isdir(f) else f for f in files]
        for merge in (False, True):  # apart, each archive its own metric; pooled, refused
            opts = _named(Options(merge=merge), *files)
            parts = [read_part(Unit((f,)), opts)[0] for f in files]
            local = _outcome(read_counts, files, merge=merge)
            got = _outcome(counts_of, parts, opts, files)  # the one merge, in file order
            if local[0] == "error" or len(set(files)) == len(files):
                assert got == local, files
            else:  # a file named twice is read once by read_counts, twice here
                assert got[:2] == local[:2], files
            assert local[0] == "error" or not merge, files
            if str(bad) not in files and not merge and files.count(tau) < 2:
                assert local[0] == "counts" and local[1] == "mixed", files


def _outcome(call, *args, **kwargs) -> tuple:
    """("counts", metric, group metrics, rows) or ("error", message)."""
    try:
        c = call(*args, **kwargs)
    except ArchiveError as e:
        return ("error", str(e))
    return ("counts", c.metric, c.group_metrics, c.to_rows())


@pytest.mark.parametrize("escaped", [False, True])
@pytest.mark.parametrize("split", [700, 5000])
def test_a_shared_error_text_gives_the_same_note(tmp_path, split, escaped):
    path = tmp_path / "x_results.jsonl"
    text = "failed: no setitimer a\\/b" if escaped else "failed: no setitimer a/b"
    lines = []
    for i in range(300):
        ok = "true" if i % 3 else "false"
        result = "passed" if i % 3 else text
        if i % 7 == 0:  # other key order: parsed by json.loads
            lines.append(f'{{"passed": {ok}, "result": "{result}", "task_id": "T/{i % 5}", '
                         '"completion": ""}')
        else:
            lines.append(f'{{"task_id": "T/{i % 5}", "completion": "", "result": "{result}", '
                         f'"passed": {ok}}}')
    path.write_text("\n".join(lines) + "\n")
    local = read_counts(path)
    assert len(local.notes) == 1 and "every failed sample carries" in local.notes[0]
    _, part = _by_ranges(str(path), split, Options())
    same(to_counts(part, Options(), [str(path)]), local)


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    root = tmp_path_factory.mktemp("mixed")
    folders = make_corpus(root)
    big = root / "big"
    big.mkdir()
    big_humaneval(big / "a_results.jsonl", 1500, seed=3)
    path = big_humaneval(big / "b_results.jsonl", 800, seed=4)
    text = Path(path).read_text().split("\n")
    text[99] = "{oops"
    Path(path).write_text("\n".join(text))
    _write_samples(str(big / "s.csv"), [(f"T/{i % 9}", i % 2) for i in range(900)], True)
    folders["big"] = str(big)
    return folders


def _in_process(paths, split, **kw):
    """The Dask engine's plan (a unit per file and per range), the units mapped here."""
    from passatk.archives.engine import dask_engine

    def here(fn, units, *, scheduler, progress):
        return [fn(u) for u in units]

    with mock.patch.object(dask_engine, "map_dask", here):
        return read_counts(paths, scheduler="local:1", split_bytes=split, **kw)


@settings(max_examples=25, deadline=None)
@given(data=st.data(), split=st.sampled_from([700, 3_000, 20_000, 1 << 30]),
       merge=st.booleans(), skip_bad=st.booleans(), by_parent=st.booleans())
def test_any_plan_gives_the_sequential_read(mixed, data, split, merge, skip_bad, by_parent):
    names = sorted(k for k in mixed if k not in ("tau", "big"))
    chosen = data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=6, unique=True))
    if data.draw(st.booleans()):  # large files, split or not, with a corrupt line
        chosen.insert(data.draw(st.integers(0, len(chosen))), "big")
    if data.draw(st.integers(0, 9)) == 0:  # pass^k data among pass@k data
        chosen.append("tau")
    paths = [mixed[k] for k in chosen]
    kw = {"merge": merge, "skip_bad": skip_bad, "by": ["path:parent"] if by_parent else []}
    try:
        local = read_counts(paths, **kw)
    except ArchiveError as e:
        event("the read fails")
        with pytest.raises(ArchiveError) as got:
            _in_process(paths, split, **kw)
        assert str(got.value) == str(e)
        return
    event(f"the read succeeds, big files split: {'big' in chosen and split < 1 << 30}")
    same(_in_process(paths, split, **kw), local)
