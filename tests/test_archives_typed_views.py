"""The typed msgspec views of the BigCodeBench, MultiPL-E and code_eval samples against the plain
checks on the same documents: ``msgspec.convert`` made to refuse every list, so that each sample
goes through the reader's own checks, must give identical counts, skips, stored numbers and
notes (the one-error hint included), on clean documents and on ones with bad samples. And
lm-eval's view of a line scored by a field ``passed`` names, against the plain reading."""

from __future__ import annotations

import json

import msgspec
import pytest
from corpus import same

from passatk.archives import ArchiveError, read_counts, write_archive
from passatk.archives.harnesses import _flags
from passatk.archives.io import lines

FLAGS = [[True, False, True], [False, False], [True, False, True, True]]
TASKS = ["T/0", "T/1", "T/2"]


def _plain(monkeypatch, path, **kw):
    def refuse(*args, **kwargs):
        raise msgspec.ValidationError("refused")

    with monkeypatch.context() as m:
        m.setattr(_flags.msgspec, "convert", refuse)
        return _outcome(path, **kw)


def _outcome(path, **kw):
    try:
        return read_counts(path, **kw)
    except ArchiveError as e:
        return f"ArchiveError: {e}"


def _check(monkeypatch, path, **kw) -> None:
    for skip_bad in (False, True):
        typed, plain = _outcome(path, skip_bad=skip_bad, **kw), _plain(monkeypatch, path,
                                                                       skip_bad=skip_bad, **kw)
        if isinstance(typed, str) or isinstance(plain, str):
            assert typed == plain
        else:
            same(typed, plain)


def _spoil(doc: dict, fmt: str, i: int) -> None:
    """Bad samples of each kind of check beside clean tasks (read typed), and one shared
    harness error (the hint)."""
    if fmt == "bigcodebench":
        for samples in doc["eval"].values():
            for s in samples:
                s["details"] = {"ALL": "no setitimer"} if s["status"] == "fail" else {}
        doc["eval"]["T/0"][2]["status"] = "passed"
        doc["eval"]["T/2"][0] = "x"
    elif fmt == "code-eval":
        for pairs in doc.values():
            for _, r in pairs:
                r["result"] = "passed" if r["passed"] else "failed: no setitimer"
        doc["T/0"][1][1]["passed"] = 0.5
        doc["T/1"][0][1]["task_id"] = "T/9"
        doc["T/0"][2] = [2, {"passed": True}, "extra"]
    elif i == 0:
        doc["results"][0]["exit_code"] = 0.0
        doc["results"][1]["status"] = None
    else:
        doc["results"][-1].update(status="OK", exit_code=1)  # a crash after the output


@pytest.mark.parametrize("fmt,name", [("bigcodebench", "r_eval_results.json"),
                                      ("code-eval", "humaneval-python-details.json"),
                                      ("multipl-e", "run")])
@pytest.mark.parametrize("spoiled", [False, True])
def test_typed_views_read_as_the_plain_checks(tmp_path, monkeypatch, fmt, name, spoiled):
    out = write_archive(tmp_path / name, TASKS, FLAGS, format=fmt, stored=True)
    for i, path in enumerate(p for p in out if not p.endswith("_pass_at_k.json")):
        with open(path) as f:
            doc = json.load(f)
        if spoiled:
            _spoil(doc, fmt, i)
        with open(path, "w") as f:
            json.dump(doc, f)
    target = str(tmp_path / name) if fmt == "multipl-e" else out[0]
    _check(monkeypatch, target, format=fmt)
    if not spoiled:
        counts = read_counts(target, format=fmt)
        assert (list(counts.n), list(counts.c)) == ([3, 2, 4], [2, 0, 3])


@pytest.mark.parametrize("passed", ["acc", "doc_id", "resps", "filter"])
def test_lm_eval_views_of_a_named_field(tmp_path, monkeypatch, passed):
    path = tmp_path / "samples_t_2024-01-01T00-00-00.jsonl"
    rows = [{"doc_id": i % 2, "resps": [["a"]], "filter": i % 2, "acc": i % 3 == 0}
            for i in range(9)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    for skip_bad in (False, True):
        typed = _outcome(path, passed=passed, skip_bad=skip_bad)
        with monkeypatch.context() as m:
            m.setattr(lines, "decode", lambda dec, block: None)
            plain = _outcome(path, passed=passed, skip_bad=skip_bad)
        if isinstance(typed, str) or isinstance(plain, str):
            assert typed == plain
        else:
            same(typed, plain)
