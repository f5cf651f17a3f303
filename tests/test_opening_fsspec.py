"""Opening, issue 19: local files are opened through fsspec like URLs, and every raw file is
peeked for its magic bytes, never read and sought back (a zstd stream from a pipe included)."""

from __future__ import annotations

import gzip
import subprocess
import sys

import pytest

from passatk.archives import read_counts, write_archive
from passatk.archives.io.opening import file_size, is_file, list_names, open_binary, open_raw

fsspec = pytest.importorskip("fsspec")


def test_a_local_file_is_opened_through_fsspec(tmp_path):
    from fsspec.implementations.local import LocalFileOpener

    path = tmp_path / "x_results.jsonl"
    write_archive(path, ["T/0", "T/1"], [[True, False], [True]])
    with open_raw(str(path)) as raw:
        assert isinstance(raw, LocalFileOpener)
    with open_binary(str(path)) as f:  # the hot path reads the fsspec file itself
        assert f.compression is None and f.stream is f.raw
        assert f.stream.read() == path.read_bytes()
    assert file_size(str(path)) == path.stat().st_size
    assert is_file(str(path)) and not is_file(str(tmp_path / "nope.jsonl"))
    assert list_names(str(tmp_path)) == ["x_results.jsonl"]


def test_local_names_that_look_like_fsspec_spellings_are_read_as_given(tmp_path, monkeypatch):
    """fsspec's local file system reads "file:x" as x and "~x" under the home folder."""
    monkeypatch.chdir(tmp_path)
    write_archive(tmp_path / "x_results.jsonl", ["T/0"], [[True]])
    for name in ("file:x_results.jsonl", "~x_results.jsonl"):
        write_archive(tmp_path / name, ["T/9"], [[False, False]])
        assert read_counts(name).to_rows() == read_counts(tmp_path / name).to_rows()
        assert read_counts(name).task.tolist() == ["T/9"]


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_compressed_data_from_a_pipe_equals_the_file(tmp_path, suffix):
    plain = tmp_path / "p_results.jsonl"
    write_archive(plain, [f"T/{i}" for i in range(50)],
                  [[True, False, i % 3 == 0] for i in range(50)])
    if suffix == ".gz":
        data = gzip.compress(plain.read_bytes())
    else:
        data = pytest.importorskip("zstandard").ZstdCompressor().compress(plain.read_bytes())
    packed = tmp_path / f"p_results.jsonl{suffix}"
    packed.write_bytes(data)
    code = ("import sys\nfrom passatk.archives import read_counts\n"
            "print(read_counts('-').to_rows())\n")
    with open(packed, "rb") as f:
        run = subprocess.run([sys.executable, "-c", code], stdin=f, capture_output=True,
                             text=True, timeout=120, check=True)
    assert run.stdout.strip() == str(read_counts(plain).to_rows())
    assert read_counts(packed).to_rows() == read_counts(plain).to_rows()
