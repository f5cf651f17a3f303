"""The pyarrow reader of CSV/TSV and Parquet tables against the stdlib csv reader, on the same
files.

Every comparison reads a file twice, once with ``tables.ARROW`` on and once off (as when
pyarrow is not installed), and wants the same outcome: the same Counts (groups, tasks, n, c,
skips) or the same error line. Where a file is plainly valid pyarrow must also have read it
(no silent second read). Where the two parsers read malformed CSV apart, pyarrow's reading is
the one when it is installed, and those files are not compared: a bare carriage return is a
line end to Arrow; the csv module alone refuses a field over ``csv.field_size_limit()``; bad
UTF-8 in a column that is not read is not seen.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import io
import os

import pytest
from corpus import outcome, outcome_of
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from passatk.archives import read_counts  # noqa: E402
from passatk.archives.engine.plan import plan_ranges  # noqa: E402
from passatk.archives.harnesses import tables  # noqa: E402
from passatk.archives.io import tables as _arrow  # noqa: E402
from passatk.archives.options import Options  # noqa: E402
from passatk.archives.parts import counts_of  # noqa: E402
from passatk.archives.pipeline import Unit, _parts_of, read_part  # noqa: E402

#: ARROW_EXAMPLES=2000 for a longer search
SETTINGS = settings(max_examples=int(os.environ.get("ARROW_EXAMPLES", 60)), deadline=None,
                    database=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                          HealthCheck.too_slow])


@contextlib.contextmanager
def fast_path(on: bool):
    """Switch the pyarrow reader; yield the list of its results (True: it read the file)."""
    saved = (tables.ARROW, _arrow.read)
    finished: list[bool] = []

    def spy(*args):
        finished.append(saved[1](*args))
        return finished[-1]

    tables.ARROW, _arrow.read = on, spy
    try:
        yield finished
    finally:
        tables.ARROW, _arrow.read = saved


def both(path, **kw):
    """(fast outcome, stdlib outcome, whether the fast path finished the file)."""
    with fast_path(True) as finished:
        fast = outcome(path, **kw)
    with fast_path(False) as unused:
        slow = outcome(path, **kw)
    assert unused == []  # switched off, the fast path is not even tried
    return fast, slow, finished == [True]


def same(path, **kw) -> bool:
    fast, slow, finished = both(path, **kw)
    assert fast == slow
    return finished


# ------------------------------------------------------------------ fixed files
def write(tmp_path, name, text: str | bytes) -> str:
    data = text.encode() if isinstance(text, str) else text
    path = tmp_path / name
    if name.endswith(".gz"):
        data = gzip.compress(data)
    elif name.endswith(".zst"):
        zstandard = pytest.importorskip("zstandard")
        data = zstandard.ZstdCompressor().compress(data)
    path.write_bytes(data)
    return str(path)


SAMPLES = "task_id,passed\nT/1,1\nT/1,0\nT/2,true\nT/10,False\n"
VALID = {
    "plain": SAMPLES,
    "bom": "\ufeff" + SAMPLES,
    "crlf": SAMPLES.replace("\n", "\r\n"),
    "no final newline": SAMPLES.rstrip("\n"),
    "blank lines": SAMPLES.replace("\n", "\n\n"),
    "quoted header": '"task_id","passed"\n"T/1","1"\n"T,2","0"\n',
    "quoted comma and newline": 'task_id,passed\n"a,b",1\n"line\nbreak",0\n"a,b",TRUE\n',
    "quoted crlf": 'task_id,passed\r\n"line\r\nbreak",1\r\n"x",0\r\n',
    "doubled quotes": 'task_id,passed\n"say ""hi""",1\n"""",0\nz,1\n',
    "floats as flags": "task_id,passed\nT/1,1.0\nT/1,0.0\nT/2, 1 \n",
    "unicode ids": "task_id,passed\n問題/1,1\nzadanie/ż,0\n問題/1,0\nemoji/🙂,1\n",
    "spaces kept in ids": "task_id,passed\n T/1 ,1\nT/1,0\n",
    "long field": "task_id,passed,text\n" + "".join(f"T/{i},{i % 2},{'x' * 100_000}\n"
                                                     for i in range(4)),
    "many columns": "a,b,task_id,c_,passed,d\n" + "1,2,T/1,3,1,4\n" * 3,
}


@pytest.mark.parametrize("name", sorted(VALID))
@pytest.mark.parametrize("suffix", [".csv", ".csv.gz", ".csv.zst"])
def test_odd_but_valid_csv_reads_fast_and_alike(tmp_path, name, suffix):
    path = write(tmp_path, "s" + suffix, VALID[name])
    assert same(path)


def test_tsv_and_count_tables_read_fast_and_alike(tmp_path):
    tsv = write(tmp_path, "s.tsv", SAMPLES.replace(",", "\t"))
    assert same(tsv)
    counts = write(tmp_path, "c.csv", "model,task_id,n,c\na,T/1,10,3\na,T/2, 5 ,+5\nb,T/1,7,0\n")
    assert same(counts, by=["model"])
    assert same(counts, by=["model", "path:stem"])
    rewards = write(tmp_path, "r.csv", "task_id,reward\nT/1,0.5\nT/1,.25\nT/2,1e-3\nT/2,+7.\n")
    assert same(rewards, threshold=0.5)
    assert same(rewards, threshold=0.001)
    flags = write(tmp_path, "f.csv", "task_id,passed\nT/1,0.75\nT/1,1\nT/2,0\nT/2,true\n")
    assert same(flags, threshold=0.7) and same(flags, threshold=2.0)


BAD = {
    "bad flag": SAMPLES + "T/3,maybe\n",
    "half flag": SAMPLES + "T/3,0.5\n",
    "empty task": SAMPLES + ",1\n",
    "blank row": SAMPLES + " , \n",
    "short row": SAMPLES + "T/3\n",
    "long row": SAMPLES + "T/3,1,2\n",
    "quote inside": SAMPLES + 'T/3,"1"x\n',
    "quote in field": SAMPLES + 'T/"3,1\n',
    "open quote": SAMPLES + 'T/3,"1\n',
    "space before quote": SAMPLES + 'T/3, "1"\n',
    "bad utf-8": SAMPLES.encode() + b"T/\xff,1\n",
    "bom after header": "task_id,passed\n\ufeffT/1,1\n",
    "only header": "task_id,passed\n",
    "empty": "",
    "duplicate header": "task_id,passed,passed\nT/1,1,0\n",
    "nul": "task_id,passed\nT/\x001,1\n",
    "run column": "task_id,passed,split\nT/1,1,a\nT/1,0,b\n",
}


@pytest.mark.parametrize("name", sorted(BAD))
@pytest.mark.parametrize("skip_bad", [False, True])
def test_bad_csv_gives_the_same_error_or_skips(tmp_path, name, skip_bad):
    data = BAD[name]
    path = write(tmp_path, "s.csv", data)
    fast, slow, _ = both(path, skip_bad=skip_bad)
    assert fast == slow


@pytest.mark.parametrize("whole", [0, 7, 33, 1 << 25])
def test_a_csv_parsed_whole_or_streamed_after_its_head_reads_as_the_stdlib(
        tmp_path, monkeypatch, whole):
    """Up to ``CSV_WHOLE`` bytes a CSV is parsed whole (Arrow's threaded reader: with 16-byte
    blocks and no quoted newlines allowed it cut ``"line\nbreak"`` silently); past it the head
    read already is streamed, then the rest. Any cut gives the stdlib's outcome."""
    monkeypatch.setattr(_arrow, "CSV_WHOLE", whole)
    monkeypatch.setattr(_arrow, "CSV_BLOCK", 16)
    for i, text in enumerate([*VALID.values(), *BAD.values()]):
        fast, slow, _ = both(write(tmp_path, f"s{i}.csv", text))
        assert fast == slow, text


@pytest.mark.parametrize("text", [
    "task_id,n,c\nT/1,3,1\nT/1,2,2\n",  # duplicate row
    "task_id,n,c\nT/1,3,4\n",  # c > n
    "task_id,n,c\nT/1,0,0\n",  # n < 1
    "task_id,n,c\nT/1,3,-1\n",  # c < 0
    "task_id,n,c\nT/1,3.0,1\n",  # not an integer
    "task_id,n,c\nT/1,9007199254740992,1\n",  # 2**53
    "task_id,n,c\nT/1,99999999999999999999,1\n",  # past int64
    "task_id,n,c\nT/1,\u00a03,1\n",  # Unicode space: the stdlib path decides
])
def test_bad_count_tables_give_the_same_error(tmp_path, text):
    path = write(tmp_path, "c.csv", text)
    for skip_bad in (False, True):
        fast, slow, _ = both(path, skip_bad=skip_bad)
        assert fast == slow


def test_a_bad_row_before_a_broken_stream_is_the_error(tmp_path):
    """The fast path reads ahead; the stdlib path meets the bad row before the cut stream."""
    rows = "".join(f"T/{i * 7919 % 100003},{i % 2}\n" for i in range(200_000))
    data = gzip.compress((SAMPLES + "T/3,maybe\n" + rows).encode())
    path = tmp_path / "s.csv.gz"
    path.write_bytes(data[: len(data) // 2])
    fast, slow, _ = both(str(path))
    assert fast == slow and "maybe" in fast[1]
    fast, slow, _ = both(str(path), skip_bad=True)
    assert fast == slow and "decompress" in fast[1]


def test_the_switch_forces_the_stdlib_path(tmp_path, monkeypatch):
    path = write(tmp_path, "s.csv", SAMPLES)
    monkeypatch.setattr(tables, "ARROW", False)
    monkeypatch.setattr(_arrow, "read", lambda *a: pytest.fail("pyarrow reader used"))
    assert read_counts(path).n.tolist() == [2, 1, 1]


def test_many_batches_merge_exactly(tmp_path, monkeypatch):
    """Tiny CSV blocks, Parquet batches and merge sizes: partial sums merge exactly."""
    rows = [(f"T/{i % 37}", f"m{i % 3}", i % 5 == 0) for i in range(3000)]
    path = write(tmp_path, "s.csv", "task_id,model,passed\n"
                 + "".join(f"{t},{m},{int(p)}\n" for t, m, p in rows))
    pq_path = str(tmp_path / "s.parquet")
    pq.write_table(pa.table({"task_id": [r[0] for r in rows], "model": [r[1] for r in rows],
                             "passed": [r[2] for r in rows]}), pq_path)
    whole = [outcome(p, by=["model"]) for p in (path, pq_path)]
    monkeypatch.setattr(_arrow, "CSV_BLOCK", 512)
    monkeypatch.setattr(_arrow, "PARQUET_BATCH", 7)
    monkeypatch.setattr(_arrow, "_MERGE_ROWS", 5)
    for p, expected in zip((path, pq_path), whole, strict=True):
        fast, slow, finished = both(p, by=["model"])
        assert fast == slow == expected and finished


def test_a_row_longer_than_the_record_cap_fails_alike(tmp_path, monkeypatch):
    monkeypatch.setenv("PASSATK_MAX_RECORD_BYTES", "64")
    path = write(tmp_path, "s.csv", SAMPLES + "T/3," + "1" * 100 + "\n")
    fast, slow, _ = both(path)
    assert fast == slow and fast[0] == "error" and ":6:" in fast[1]
    short = write(tmp_path, "t.csv", SAMPLES + "T/3,1\n" * 50)
    assert same(short)  # rows under the cap still read fast with the small blocks


def test_byte_ranges_read_csv_fast_and_alike(tmp_path):
    path = write(tmp_path, "s.csv", "task_id,passed\n"
                 + "".join(f"T/{i % 13},{'true' if i % 3 else '0'}\n" for i in range(3000)))
    opts = Options(named=frozenset({os.path.normpath(path)}))
    for on in (True, False):
        with fast_path(on) as finished:
            units = [Unit((path,), s, e) for s, e in plan_ranges(os.path.getsize(path), 2000)]
            results = [read_part(u, opts) for u in units]
            got = outcome_of(counts_of(_parts_of(units, results, opts), opts, [path]))
        assert not any(r.fallback or r.whole for r in results)
        assert got == outcome(path)[:6]
        assert all(finished) and len(finished) == (len(results) if on else 0)


# ------------------------------------------------------------------ generated CSV
FLAG_TEXT = ["1", "0", "1.0", "0.0", "true", "false", "True", "FALSE", " 1", "0 ", "\ttrue",
             "TRUE "]
ODD_TEXT = ["maybe", "0.5", "", "2", "-1", "nan", "１"]
TASKS = st.sampled_from(["T/1", "T/2", "T/10", "a,b", 'q"t', "line\nbreak", "問題/3", " s ",
                         "crlf\r\nid", "7", "x" * 300])


@st.composite
def csv_tables(draw):
    """A per-sample or count table as CSV text, with its read options."""
    counts = draw(st.booleans())
    grouped = draw(st.booleans())
    odd = draw(st.integers(0, 9)) == 0  # one file in ten has a value the stdlib path refuses
    rows = []
    for _ in range(draw(st.integers(1, 25))):
        task = draw(TASKS)
        row = {"task_id": task, "model": draw(st.sampled_from(["m1", "m,2", "m 3"]))}
        if counts:
            n = draw(st.integers(1, 50))
            row |= {"n": str(n), "c": str(draw(st.integers(0, n)))}
        else:
            row["passed"] = draw(st.sampled_from(FLAG_TEXT))
        rows.append(row)
    if counts:  # one row per (group, task)
        seen = set()
        rows = [r for r in rows if (key := (r["model"] if grouped else "", r["task_id"])) not in
                seen and not seen.add(key)]
    if odd:
        rows[draw(st.integers(0, len(rows) - 1))][draw(st.sampled_from(
            ["c", "n", "task_id"] if counts else ["passed", "task_id"]))] = draw(
            st.sampled_from(ODD_TEXT))
    names = list(rows[0])
    draw(st.randoms()).shuffle(names)
    quoting = draw(st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL]))
    out = io.StringIO()
    writer = csv.writer(out, quoting=quoting, lineterminator=draw(st.sampled_from(["\n", "\r\n"])),
                        delimiter=draw(st.sampled_from([",", "\t"])))
    writer.writerow(names)
    writer.writerows([[r[k] for k in names] for r in rows])
    text = out.getvalue()
    bom = draw(st.booleans())
    if bom:  # the csv module reads a quote after the BOM as text: no task column then
        text = "\ufeff" + text
    tsv = writer.dialect.delimiter == "\t"
    threshold = None if counts else draw(st.sampled_from([None, 0.5, 1.0]))
    return text, tsv, {"by": ["model"] if grouped else [], "threshold": threshold,
                       "skip_bad": draw(st.booleans())}, not odd and not (bom and text[1] == '"')


@SETTINGS
@given(table=csv_tables())
def test_generated_csv_tables_read_alike(tmp_path_factory, table):
    text, tsv, kw, valid = table
    path = write(tmp_path_factory.mktemp("g"), "s.tsv" if tsv else "s.csv", text)
    fast, slow, finished = both(path, **kw)
    assert fast == slow
    if valid:
        assert fast[0] == "ok" and finished


@SETTINGS
@given(reward=st.from_regex(r"\A[+-]?([0-9]{1,25}\.?[0-9]{0,25}|\.[0-9]{1,25})"
                            r"([eE][+-]?[0-9]{1,3})?\Z"),
       threshold=st.floats(-1e6, 1e6, allow_nan=False))
def test_decimal_rewards_compare_as_float_does(tmp_path_factory, reward, threshold):
    path = write(tmp_path_factory.mktemp("r"), "r.csv", f"task_id,reward\nT/1,{reward}\nT/1,1\n")
    fast, slow, finished = both(path, threshold=threshold)
    assert fast == slow
    assert finished == (fast[0] == "ok")


# ------------------------------------------------------------------ Parquet
def parquet(tmp_path, columns: dict, name="s.parquet") -> str:
    path = str(tmp_path / name)
    pq.write_table(pa.table(columns), path)
    return path


def test_parquet_types_read_fast_and_alike(tmp_path):
    tasks = ["T/1", "T/2", "T/1", "T/10"]
    for passed in ([True, False, True, True], [1, 0, 0, 1], [1.0, 0.0, -0.0, 1.0],
                   ["true", "0", "1.0", "False"],
                   pa.array([1, 0, 1, 1], pa.uint8()),
                   pa.array([True, False, True, False]).dictionary_encode(),
                   [[True, False], [True], [False, False, True], [True]],
                   pa.array([[1, 0], [1], [0, 0, 1], [1]], pa.large_list(pa.int64()))):
        path = parquet(tmp_path, {"task_id": tasks, "model": ["a", "b", "a", "a"],
                                  "passed": passed})
        assert same(path) and same(path, by=["model"])
    rewards = parquet(tmp_path, {"id": [3, 3, 1, 2], "reward": [0.1, 0.9, 0.5, 1e300],
                                 "temperature": [0.2, 0.2, 0.8, 0.8], "filter": ["x"] * 4})
    assert same(rewards, threshold=0.5) and same(rewards, threshold=0.5, by=["temperature"])
    counts = parquet(tmp_path, {"task_id": tasks[:2] * 2, "model": ["a", "a", "b", "b"],
                                "n": [5, 4, 3, 2], "c": pa.array([1, 2, 3, 0], pa.int32())})
    assert same(counts, by=["model"])


@pytest.mark.parametrize("columns", [
    {"task_id": ["T/1", None], "passed": [True, False]},
    {"task_id": ["T/1", "T/2"], "passed": [True, None]},
    {"task_id": ["T/1", " "], "passed": [True, False]},
    {"task_id": [1.5, 2.5], "passed": [True, False]},
    {"task_id": ["T/1", "T/2"], "passed": [0.5, 1.0]},
    {"task_id": ["T/1", "T/2"], "passed": [float("nan"), 1.0]},
    {"task_id": ["T/1", "T/2"], "passed": ["yes", "no"]},
    {"task_id": ["T/1", "T/2"], "passed": [[True], []]},
    {"task_id": ["T/1", "T/2"], "passed": [[True], None]},
    {"task_id": ["T/1", "T/2"], "passed": [[True, None], [False]]},
    {"task_id": ["T/1", "T/2"], "reward": ["0.5", "1"]},
    {"task_id": ["T/1", "T/2"], "reward": [True, False]},
    {"task_id": ["T/1", "T/2"], "reward": [float("inf"), 1.0]},
    {"task_id": ["T/1", "T/1"], "n": [3, 3], "c": [1, 1]},
    {"task_id": ["T/1", "T/2"], "n": [3.0, 3.0], "c": [1, 1]},
    {"task_id": ["T/1", "T/2"], "n": ["3", "3"], "c": [1, 1]},
    {"task_id": ["T/1", "T/2"], "n": [True, True], "c": [1, 1]},
    {"task_id": ["T/1", "T/2"], "n": [3, None], "c": [1, 1]},
    {"task_id": ["T/1", "T/1"], "passed": [True, False], "split": ["a", "b"]},
    {"task_id": ["T/1", "T/1"], "passed": [True, False], "model": [float("nan")] * 2},
    {"task_id": ["T/1", "T/1"], "passed": [True, False], "model": [0.0, -0.0]},
])
def test_bad_or_odd_parquet_reads_alike(tmp_path, columns):
    path = parquet(tmp_path, columns)
    by = ["model"] if "model" in columns else []
    for skip_bad in (False, True):
        fast, slow, _ = both(path, skip_bad=skip_bad, threshold=0.5 if "reward" in columns
                             else None, by=by)
        assert fast == slow


@st.composite
def parquet_tables(draw):
    size = draw(st.integers(1, 30))
    kind = draw(st.sampled_from(["bool", "int", "float", "text", "list"]))
    flag = {"bool": st.booleans(), "int": st.integers(0, 1), "float": st.sampled_from([0.0, 1.0]),
            "text": st.sampled_from(FLAG_TEXT),
            "list": st.lists(st.booleans(), min_size=1, max_size=4)}[kind]
    task = st.sampled_from(["T/1", "T/2", "問題"]) if draw(st.booleans()) else st.integers(0, 5)
    columns = {"task_id": draw(st.lists(task, min_size=size, max_size=size)),
               "model": draw(st.lists(st.sampled_from(["a", "b", None]), min_size=size,
                                      max_size=size)),
               "passed": draw(st.lists(flag, min_size=size, max_size=size))}
    if draw(st.integers(0, 5)) == 0:
        columns["passed"][draw(st.integers(0, size - 1))] = None
    return columns, draw(st.sampled_from([None, 0.5])), draw(st.booleans())


@SETTINGS
@given(table=parquet_tables())
def test_generated_parquet_tables_read_alike(tmp_path_factory, table):
    columns, threshold, grouped = table
    path = parquet(tmp_path_factory.mktemp("p"), columns)
    fast, slow, finished = both(path, threshold=threshold, by=["model"] if grouped else [])
    assert fast == slow
    if None not in columns["passed"]:
        assert fast[0] == "ok" and finished


def test_reading_a_csv_does_not_start_numba(tmp_path):
    """No module of archives/ imports numba (about 50 MB and 0.3 s), quoted or not."""
    import subprocess
    import sys

    plain, quoted = tmp_path / "plain.csv", tmp_path / "quoted.csv"
    rows = "".join(f"T/{i},{i % 2}\n" for i in range(300_000))
    plain.write_text("task_id,passed\n" + rows)
    quoted.write_text('task_id,passed\n"T/0",1\n' + rows)
    code = ("import sys; from passatk.archives import read_counts; "
            "read_counts(sys.argv[1]); print('numba' in sys.modules)")
    seen = [subprocess.run([sys.executable, "-c", code, str(p)], capture_output=True, text=True,
                           check=True).stdout.split() for p in (plain, quoted)]
    assert seen == [["False"], ["False"]]


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.tuples(st.sampled_from(["T/1", "T/01", "T/2", "a", "b7", "T/10"]),
                               st.sampled_from(["m", "n", ""]), st.booleans()),
                     min_size=1, max_size=40),
       by_model=st.booleans(), mostly=st.integers(0, 1))
def test_tables_of_many_distinct_ids_sum_by_a_sort_as_by_a_hash(tmp_path_factory, rows,
                                                                 by_model, mostly):
    """Past _HASHED_ROWS (here 0) mostly distinct keys are summed by a sort and sums of
    equal neighbours (Arrow's hash aggregation costs 240 B a key): the same Counts as the
    stdlib reader and as the hash aggregation."""
    import passatk.archives.io.tables as arrow_tables

    folder = tmp_path_factory.mktemp("many")
    (folder / "s.csv").write_text("task_id,model,passed\n" + "".join(
        f"{t},{m},{int(p)}\n" for t, m, p in rows))
    (folder / "t.csv").write_text("task_id,passed\n" + "".join(f"{t},{int(p)}\n"
                                                               for t, _, p in rows))
    for name, kw in (("s.csv", {"by": ["model"]} if by_model else {}), ("t.csv", {})):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(arrow_tables, "_HASHED_ROWS", 0)
            mp.setattr(arrow_tables, "_mostly_distinct", lambda table, keys: bool(mostly))
            mp.setattr(arrow_tables, "_NEIGHBOURS", 3)
            fast, slow, finished = both(str(folder / name), **kw)
        assert finished and fast == slow
