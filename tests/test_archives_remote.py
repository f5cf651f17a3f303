"""fsspec URLs as inputs: memory://, file://, a real HTTP server and a real S3 API (moto)."""

from __future__ import annotations

import functools
import http.server
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from corpus import LAYOUT, make_corpus, moto_s3, relocated, same, upload

from passatk import cli
from passatk.archives import ArchiveError, expand_paths, read_counts

fsspec = pytest.importorskip("fsspec")

pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning:botocore"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning:werkzeug"),
]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return make_corpus(tmp_path_factory.mktemp("corpus"))


def _same_run(local_path: str, url: str, **kw) -> None:
    """The URL read equals the local read, with the URL in place of the local path."""
    same(read_counts(url, **kw), relocated(read_counts(local_path, **kw), local_path, url))


# ------------------------------------------------------------------ memory:// and file://
def test_memory_urls_every_format(corpus):
    fs = fsspec.filesystem("memory")
    upload(fs, corpus, "/passatk-test")
    for folder, _, _ in LAYOUT:
        _same_run(corpus[folder], f"memory://passatk-test/{folder}")
    # a glob, and a directory walk that leaves out the sidecars as a local walk does
    files = expand_paths("memory://passatk-test/he*/*_results.jsonl*")
    assert [f.rsplit("/", 2)[1] for f in files] == ["he", "he_gz", "he_zst"]
    assert [f.rsplit("/", 1)[1] for f in expand_paths("memory://passatk-test/lm")] == [
        n for n in os.listdir(corpus["lm"]) if n.startswith("samples_")]


def test_file_urls(corpus):
    _same_run(corpus["evalplus"], "file://" + corpus["evalplus"])


def test_missing_objects_are_one_line_errors():
    with pytest.raises(ArchiveError, match=r"^memory://passatk-none/x.jsonl: no such file"):
        read_counts("memory://passatk-none/x.jsonl")
    with pytest.raises(ArchiveError, match="no file matches this pattern"):
        read_counts("memory://passatk-none/*.jsonl")
    with pytest.raises(ArchiveError, match=r"cannot read nosuch:// URLs"):
        read_counts("nosuch://bucket/x.jsonl")


def test_corrupt_object_reports_url_and_line(corpus):
    fs = fsspec.filesystem("memory")
    good = Path(corpus["he"], "s_results.jsonl").read_bytes().split(b"\n")
    good[7] = b'{"task_id": "HumanEval/0", "passed": "yes"}'
    fs.pipe("/passatk-bad/x_results.jsonl", b"\n".join(good))
    url = "memory://passatk-bad/x_results.jsonl"
    with pytest.raises(ArchiveError, match=rf"^{url}:8: "):
        read_counts(url)
    assert read_counts(url, skip_bad=True).skipped.records[0].location == f"{url}:8"


def test_without_fsspec_a_url_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "fsspec", None)
    with pytest.raises(ArchiveError, match=r"pip install 'passatk\[remote\]'"):
        read_counts("s3://bucket/x.jsonl")


def test_plain_import_loads_no_optional_package():
    code = ("import sys, passatk.archives, passatk.cli; "
            "print(sorted(m for m in ('fsspec', 'dask', 'distributed', 's3fs') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ------------------------------------------------------------------ a real HTTP server
class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def http_root(corpus):
    root = os.path.dirname(corpus["he"])
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Quiet, directory=root))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("name", ["he/s_results.jsonl", "he_gz/s_results.jsonl.gz",
                                  "he_zst/s_results.jsonl.zst", "crux/crux.json",
                                  "samples_csv/s.csv", "counts/c.parquet"])
def test_http_server(corpus, http_root, name):
    folder = name.split("/")[0]
    _same_run(os.path.join(corpus[folder], name.split("/")[1]), f"{http_root}/{name}")


def test_http_missing_object(http_root):
    assert cli.main(["score", f"{http_root}/none_results.jsonl"]) == 2


# ------------------------------------------------------------------ a real S3 API (moto)
@pytest.fixture(scope="module")
def s3(corpus):
    pytest.importorskip("s3fs")
    pytest.importorskip("moto.server")
    with moto_s3(corpus) as options:
        yield options


def test_s3_every_format(corpus, s3):
    for folder, _, _ in LAYOUT:
        _same_run(corpus[folder], f"s3://passatk-runs/v1/{folder}", storage_options=s3)
    # compressed objects stream, and globs expand on the store
    he = read_counts("s3://passatk-runs/v1/he*/s_results.jsonl*", storage_options=s3)
    assert len(he.files) == 3


def test_s3_cli_matches_local(corpus, s3, capsys):
    opts = [f"--storage-option=s3.{k}={v}" for k, v in s3.items() if k != "client_kwargs"]
    opts.append('--storage-option=client_kwargs={"region_name": "eu-west-1"}')
    assert cli.main(["score", corpus["bcb"], "-k", "1,5", "--format", "json"]) == 0
    local = capsys.readouterr().out
    assert cli.main(["score", "s3://passatk-runs/v1/bcb", "-k", "1,5", "--format", "json",
                     *opts]) == 0
    # the same rows; the envelope names the inputs (a URL is not hashed) and the command line
    remote = json.loads(capsys.readouterr().out)
    assert remote["rows"] == json.loads(local)["rows"]
    assert [i["bytes"] for i in remote["inputs"]] == [None]
    assert cli.main(["score", "s3://passatk-runs/v1/none/", *opts]) == 2
    err = capsys.readouterr().err
    assert err.startswith("passatk: error: s3://passatk-runs/v1/none/: no such file") and \
        err.count("\n") == 1


def test_s3_without_credentials_is_one_line(s3, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_CONFIG_FILE=str(tmp_path / "none"),
               AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"),
               AWS_EC2_METADATA_DISABLED="true")
    out = subprocess.run(
        [sys.executable, "-m", "passatk", "score", "s3://passatk-runs/v1/he/s_results.jsonl",
         f"--storage-option=endpoint_url={s3['endpoint_url']}"],
        capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 2
    assert out.stderr.startswith("passatk: error: s3://passatk-runs/v1/he/s_results.jsonl: ")
    assert "credentials" in out.stderr.lower() and out.stderr.count("\n") == 1


def test_s3_corrupt_object_cli(corpus, s3, capsys):
    fs = fsspec.filesystem("s3", **s3)
    lines = Path(corpus["he"], "s_results.jsonl").read_bytes().split(b"\n")
    lines[4] = b'{"task_id": "HumanEval/0", "completion": "", "passed": "yes"}'
    fs.pipe("passatk-runs/bad/x_results.jsonl", b"\n".join(lines))
    url = "s3://passatk-runs/bad/x_results.jsonl"
    opts = [f"--storage-option=s3.{k}={v}" for k, v in s3.items() if k != "client_kwargs"]
    opts.append('--storage-option=client_kwargs={"region_name": "eu-west-1"}')
    assert cli.main(["score", url, *opts]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"passatk: error: {url}:5: field \"passed\" must be ")
    assert err.endswith("got 'yes'\n") and err.count("\n") == 1
    assert cli.main(["score", url, "--skip-bad", *opts]) == 0
    err = capsys.readouterr().err
    assert "skipped 1 bad record(s)" in err and f"  {url}:5: field \"passed\"" in err


def test_s3_from_fsspec_environment_config(corpus, s3, tmp_path):
    # FSSPEC_<PROTOCOL>_<KEY> variables are fsspec's own configuration: no flag needed
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "FSSPEC_"))}
    env.update(FSSPEC_S3_ENDPOINT_URL=s3["endpoint_url"], FSSPEC_S3_KEY=s3["key"],
               FSSPEC_S3_SECRET=s3["secret"], AWS_DEFAULT_REGION="eu-west-1",
               AWS_CONFIG_FILE=str(tmp_path / "none"))
    args = ["score", "-k", "1,5", "--format", "csv"]
    remote = subprocess.run([sys.executable, "-m", "passatk", *args, "s3://passatk-runs/v1/crux"],
                            capture_output=True, text=True, env=env, timeout=120)
    local = subprocess.run([sys.executable, "-m", "passatk", *args, corpus["crux"]],
                           capture_output=True, text=True, timeout=120)
    assert remote.returncode == 0, remote.stderr
    assert remote.stdout == local.stdout


def test_http_directory_index(corpus, http_root):
    # an http(s) URL ending in / is walked through the links of its index page
    url = f"{http_root}/he"
    same(read_counts(url + "/"), relocated(read_counts(corpus["he"]), corpus["he"], url))


def test_sizes_come_from_the_listing(corpus):
    from passatk.archives.io.remote import known_sizes, storage_options

    fs = fsspec.filesystem("memory")
    upload(fs, {"samples_csv": corpus["samples_csv"]}, "/passatk-sizes")
    with storage_options(None):
        files = expand_paths("memory://passatk-sizes/samples_csv/")
        assert known_sizes() == {f: fs.size(f.split("://", 1)[1]) for f in files} != {}
    assert known_sizes() == {}  # kept for one read only
