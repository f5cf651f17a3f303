"""``passatk.errors``: options named in error messages travel as fields, through readers and
processes, and read the same as before in Python."""

from __future__ import annotations

import pickle

import pytest

import passatk
from passatk.archives import ArchiveError, read_counts
from passatk.errors import HintedError, Message, Option


def test_message_keeps_its_parts_through_concatenation():
    m = Message("give ", Option("threshold"), " to read it")
    assert (m + " (sample 2)").options == (Option("threshold"),)
    assert ("x: " + m).render(lambda o: "--" + o.name) == "x: give --threshold to read it"
    assert str(m + " (sample 2)") == "give threshold= to read it (sample 2)"
    assert type(str(m)) is str


def test_archive_error_carries_the_options_with_its_location():
    err = ArchiveError("f.csv", Message("map it with ", Option("task")), line=4)
    assert str(err) == "f.csv:4: map it with task="
    assert err.what == "map it with task=" and err.options == (Option("task"),)
    assert err.render(lambda o: "--" + o.name) == "f.csv:4: map it with --task"
    plain = ArchiveError("f.csv", "two\nlines")
    assert (str(plain), plain.options, plain.option) == ("f.csv: two lines", (), None)


def test_hinted_errors_pickle_with_their_fields():
    err = HintedError("a ", Option("missing", "report"))
    back = pickle.loads(pickle.dumps(err))
    assert (str(back), back.options) == (str(err), err.options)


def test_library_errors_name_their_options():
    with pytest.raises(HintedError) as info:
        passatk.score([2, 2], [1, 1], 3)
    assert info.value.options == (Option("missing", "report"),)
    with pytest.raises(HintedError) as info:
        passatk.compare([2], [1], [2], [1], 1, task_ids_a=["a"], task_ids_b=["b"])
    assert info.value.option == "unmatched"


def test_a_bad_record_keeps_the_threshold_hint(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text('{"task_id": "T/0", "passed": 1}\n{"task_id": "T/0", "passed": 0.5}\n')
    with pytest.raises(ArchiveError) as info:
        read_counts(path, format="samples")
    assert info.value.options == (Option("threshold"),)
    assert str(info.value) == (f"{path}:2: column \"passed\" must be a pass flag (true/false, "
                               "1/0, 1.0/0.0), got 0.5; give threshold= to read it as a reward")
    # skipped, the reason is plain text in the Python spelling
    (record,) = read_counts(path, format="samples", skip_bad=True).skipped.records
    assert type(record.reason) is str and record.reason.endswith("give threshold= to read it "
                                                                  "as a reward")
