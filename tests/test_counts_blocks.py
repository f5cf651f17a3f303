"""Counts of a Tally holding several pyarrow blocks (byte ranges of one table, files of one run)
equal the plain dict Tally's: equal (group, task) keys in different blocks are summed, whatever
the split, the row order, the chunking and the string type of the ids."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")

from passatk.archives import counts as counts_module  # noqa: E402
from passatk.archives.counts import Block, Counts, Tally, run_starts  # noqa: E402

_GROUPS = [(), (("model", "a"),), (("model", "b"),), (("model", None),)]
_rows = st.lists(st.tuples(st.sampled_from(_GROUPS), st.from_regex(r"T/0*[0-9]{1,3}|x[é²]?",
                                                                   fullmatch=True),
                           st.integers(1, 5), st.integers(0, 1)), min_size=1, max_size=40)


def _block(rows, large: bool, chunked: bool) -> Block:
    groups = tuple(dict.fromkeys(g for g, *_ in rows))
    g = np.array([groups.index(x) for x, *_ in rows], np.int64)
    kind = pa.large_string() if large else pa.string()
    ids = [t for _, t, _, _ in rows]
    task = pa.chunked_array([pa.array(ids[:1], kind), pa.array(ids[1:], kind)]) if chunked \
        else pa.array(ids, kind)
    return Block(groups, g, task, np.array([n for *_, n, _ in rows], np.int64),
                 np.array([min(c, n) for *_, n, c in rows], np.int64))


@settings(max_examples=150, deadline=None)
@given(rows=_rows, cuts=st.lists(st.integers(0, 40), max_size=3), with_dict=st.booleans(),
       step=st.sampled_from([2, 3, 1 << 20]), data=st.data())
def test_blocks_sum_as_the_dict_tally(rows, cuts, with_dict, step, data):
    rows = [(g, t, n, min(c, n)) for g, t, n, c in rows]
    plain = Counts.from_rows(rows)
    bounds = [0, *sorted(min(x, len(rows)) for x in cuts), len(rows)]
    acc = Tally()
    for a, b in pairwise(bounds):
        if b > a:
            acc.add_block(_block(rows[a:b], data.draw(st.booleans()), data.draw(st.booleans())))
    if with_dict:  # rows a reader added one at a time, pooled with the blocks
        acc.add((("model", "a"),), "T/1", 2, 1)
        plain = plain.merge(Counts.from_rows([({"model": "a"}, "T/1", 2, 1)]))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(counts_module, "_STEP", step)
        got = Counts._from_acc(acc, metric="pass@k")
    assert got.groups == plain.groups
    assert got.group.tolist() == plain.group.tolist()
    assert got.task.tolist() == plain.task.tolist()
    assert got.n.tolist() == plain.n.tolist() and got.c.tolist() == plain.c.tolist()
    assert got.n.dtype == np.int64 and got.task.dtype == plain.task.dtype


def test_run_starts_finds_equal_neighbours_only():
    t = pa.array(["a", "b", "b", "c", "a"])
    assert run_starts(np.array([0, 4, 1, 2, 3]), None, t).tolist() == [0, 2, 4]
    assert run_starts(np.array([0, 1, 3]), None, t) is None
    g = np.array([0, 0, 1, 0, 0])
    assert run_starts(np.array([0, 4, 1, 2, 3]), g, t).tolist() == [0, 2, 3, 4]


@settings(max_examples=60, deadline=None)
@given(rows=_rows)
def test_a_big_dict_tally_sorted_by_pyarrow_is_the_python_sort(rows):
    rows = [(g, t, n, min(c, n)) for g, t, n, c in rows]
    plain = Counts.from_rows(rows)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(counts_module, "_BIG", 0)  # every Tally is big
        got = Counts.from_rows(rows)
    assert got.groups == plain.groups and got.group.tolist() == plain.group.tolist()
    assert got.task.tolist() == plain.task.tolist()
    assert got.n.tolist() == plain.n.tolist() and got.c.tolist() == plain.c.tolist()


@settings(max_examples=150, deadline=None)
@given(rows=_rows, more=_rows, flush=st.integers(1, 6), label=st.booleans())
def test_a_tally_past_its_flush_sums_as_the_dict_tally(rows, more, flush, label):
    """Past _FLUSH rows a Tally keeps them as a Block (no str per id) and sums its blocks
    when they outgrow the last sum: the same Counts as a Tally that never does."""
    rows, more = ([(g, t, n, min(c, n)) for g, t, n, c in r] for r in (rows, more))
    tag = (("run", "x"),) if label else ()
    plain = Tally(compact=False)
    for row in rows:
        plain.add(*row)
    for g, t, n, c in more:
        plain.add(tag + g, t, n, c)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(counts_module, "_FLUSH", flush)
        acc, other = Tally(), Tally()
        for row in rows:
            acc.add(*row)
        for row in more:
            other.add(*row)
        acc.merge(other, tag)
        if len(rows) > 4 * flush:
            assert acc.blocks
        assert sorted(_summed(acc.items())) == sorted(_summed(plain.items()))
        got = Counts._from_acc(acc, metric="pass@k")
    want = Counts._from_acc(plain, metric="pass@k")
    assert (got.groups, got.group.tolist(), got.task.tolist()) == (
        want.groups, want.group.tolist(), want.task.tolist())
    assert got.n.tolist() == want.n.tolist() and got.c.tolist() == want.c.tolist()


def _summed(items):
    out: dict = {}
    for key, (n, c) in items:
        a, b = out.get(key, (0, 0))
        out[key] = (a + n, b + c)
    return [(repr(k), v) for k, v in out.items()]
