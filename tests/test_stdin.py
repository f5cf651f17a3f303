"""Standard input and pipes: ``read_counts("-")``, ``passatk score -`` and ``/dev/stdin``.

The format is detected from the first bytes, which are kept and replayed to the reader, so a
pipe is read once and never needs to be seekable.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys

import pytest

from passatk.archives import read_counts, write_archive

FLAGS = [[True, False, True], [False], [True, True, False, False]]
TASKS = ["T/0", "T/1", "T/2"]
#: every format write_archive writes as one file, with a file name for it
FILES = {
    "humaneval": "x_results.jsonl", "evalplus": "eval_results.json",
    "bigcodebench": "m_eval_results.json", "lm-eval": "samples_t_2024-01-01.jsonl",
    "livecodebench": "m_eval_all.json", "opencompass": "oc.json", "cruxeval": "cx.json",
    "code-eval": "humaneval-python-details.json", "qwen-math": "test_e-1.jsonl",
    "tau-bench": "tau.json", "counts": "counts.csv", "samples": "samples.jsonl",
}

_CHILD = ("import json, sys\nfrom passatk.archives import read_counts\n"
          "c = read_counts(sys.argv[1], format=sys.argv[2] or None)\n"
          "print(json.dumps(c.to_rows(), sort_keys=True, default=str))\n")


#: group fields taken from the file name, which standard input lacks
NAME_FIELDS = ("lm_eval_task",)


def _rows(counts):
    rows = json.loads(json.dumps(counts.to_rows(), sort_keys=True, default=str))
    return [{k: v for k, v in r.items() if k not in NAME_FIELDS} for r in rows]


def _piped(path, name="-", fmt=""):
    with open(path, "rb") as f:
        run = subprocess.run([sys.executable, "-c", _CHILD, name, fmt], stdin=f,
                             capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return [{k: v for k, v in r.items() if k not in NAME_FIELDS}
            for r in json.loads(run.stdout)]


@pytest.mark.parametrize("fmt", sorted(FILES))
def test_every_format_read_from_stdin_equals_the_file(tmp_path, fmt):
    path = tmp_path / FILES[fmt]
    write_archive(path, TASKS, FLAGS, format=fmt)
    expected = _rows(read_counts(path, format=fmt))
    assert _piped(path, fmt=fmt) == expected  # format given
    assert _piped(path) == _rows(read_counts(path))  # detected from the first bytes alone


@pytest.mark.parametrize("name", ["-", "/dev/stdin"])
def test_gzip_through_a_pipe_bom_crlf(tmp_path, name):
    if name == "/dev/stdin" and not os.path.exists(name):
        pytest.skip("no /dev/stdin")
    lines = [json.dumps({"task_id": f"T/{i % 3}", "completion": "x\u00e9",
                         "result": "passed", "passed": i % 2 == 0}) for i in range(50)]
    plain = tmp_path / "p_results.jsonl"
    plain.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(lines).encode() + b"\r\n")
    packed = tmp_path / "p_results.jsonl.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    expected = _rows(read_counts(plain))
    assert _piped(packed, name) == expected


def test_cli_score_dash_equals_the_file(tmp_path):
    path = tmp_path / "x_results.jsonl"
    write_archive(path, TASKS, FLAGS)
    args = [sys.executable, "-m", "passatk", "score", "-k", "1", "--format", "json"]
    direct = subprocess.run([*args, str(path)], capture_output=True, text=True, timeout=120)
    with open(path, "rb") as f:
        piped = subprocess.run([*args, "-"], stdin=f, capture_output=True, text=True,
                               timeout=120)
    assert direct.returncode == piped.returncode == 0, piped.stderr
    assert json.loads(piped.stdout)["rows"] == json.loads(direct.stdout)["rows"]


def test_a_long_stdin_is_not_kept_whole(tmp_path):
    """Past the cap the kept start is let go: a second read from the start is an error."""
    path = tmp_path / "x_results.jsonl"
    write_archive(path, [f"T/{i}" for i in range(300)], [[True, False] * 20] * 300)
    code = ("import sys\nfrom passatk.archives.io import opening as s\n"
            "with s.open_binary('-') as f:\n    data = f.stream.read()\n"
            "pipe = s._Pipe._open['-']\nprint(len(data), pipe.dropped, len(pipe.kept))\n"
            "try:\n    s.open_binary('-')\nexcept ValueError as e:\n    print(e)\n")
    env = {**os.environ, "PASSATK_MAX_RECORD_BYTES": "64K"}
    with open(path, "rb") as f:
        run = subprocess.run([sys.executable, "-c", code], stdin=f, capture_output=True,
                             text=True, timeout=120, env=env)
    assert run.returncode == 0, run.stderr
    first, message = run.stdout.splitlines()
    size, dropped, kept = first.split()
    assert int(size) == path.stat().st_size > (64 << 10) + (1 << 20)
    assert (dropped, kept) == ("True", "0")
    assert message.startswith("-: is a pipe already read past its start")
