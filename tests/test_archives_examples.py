"""The bundled example archives are what make_examples writes, and they read as expected."""

from __future__ import annotations

from pathlib import Path

from passatk.archives import example_path, read_counts
from passatk.archives.examples import make_examples


def test_bundled_examples_are_reproducible(tmp_path):
    for made in make_examples(tmp_path):
        bundled = Path(example_path("humaneval")).parent / Path(made).name
        assert bundled.read_bytes() == Path(made).read_bytes()


def test_examples_read_the_same_counts():
    he = read_counts(example_path("humaneval"))
    table = read_counts(example_path("counts"))
    assert len(he) == 20 and he.samples == 200
    assert he.task.tolist() == table.task.tolist()
    assert he.n.tolist() == table.n.tolist() and he.c.tolist() == table.c.tolist()
    assert 0 < he.c.sum() < he.n.sum()
