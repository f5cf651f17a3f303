"""The cost of the JSON envelope's inputs (size and SHA-256 of every file read) against the read
itself, on one human-eval archive of 109 MB (2,000 tasks x 500 samples):
``python -m pytest bench/test_bench_envelope.py --benchmark-enable``. The ratio is what
``--format json`` adds to a local read (docs/benchmarks.md, "Issue 24").
"""

import pytest

from passatk._output import input_record
from passatk.archives import read_counts, write_archive

TASKS, N = 2000, 500


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    path = tmp_path_factory.mktemp("env") / "big_results.jsonl"
    passes = [[(i * 7 + j) % 3 == 0 for j in range(N)] for i in range(TASKS)]
    write_archive(path, [f"T/{i}" for i in range(TASKS)], passes)
    return str(path)


def test_read(benchmark, archive):
    benchmark.extra_info["baseline"] = True
    counts = benchmark(read_counts, [archive], workers=1)
    assert len(counts) == TASKS


def test_inputs_record(benchmark, archive):
    record = benchmark(input_record, archive)
    assert record["bytes"] > 0 and len(record["sha256"]) == 64
