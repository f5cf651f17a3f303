"""The layers of archives/ (docs/architecture.md): the engine imports nothing of archives/ (it
receives read_part), the opening and finding of files knows no format, and no harness module
imports the lookups, the pipeline or an engine. Imports inside functions count."""

from __future__ import annotations

import pytest
from test_import_cycles import _src_graph

ARCHIVES = "passatk.archives"


def _reach(module: str) -> set[str]:
    """Every module of passatk that ``module`` imports, directly or through others."""
    edges, seen, todo = _src_graph(), set(), [module]
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(edges[m])
    return seen - {module}


@pytest.mark.parametrize("module", sorted(m for m in _src_graph()
                                          if m.startswith(f"{ARCHIVES}.engine")))
def test_the_engine_imports_nothing_of_archives(module):
    assert {m for m in _reach(module) if m.startswith(ARCHIVES)} == set()


@pytest.mark.parametrize("leaf", ["opening", "paths", "remote", "ranges"])
def test_opening_and_finding_files_knows_no_format(leaf):
    reached = _reach(f"{ARCHIVES}.io.{leaf}")
    assert {m for m in reached if m.startswith(ARCHIVES)} <= {
        f"{ARCHIVES}.errors", f"{ARCHIVES}.io.opening", f"{ARCHIVES}.io.remote"}


def test_no_harness_reaches_the_lookups_the_pipeline_or_an_engine():
    from passatk.archives.harnesses.registry import HARNESSES

    above = {f"{ARCHIVES}.harnesses.lookup", f"{ARCHIVES}.harnesses.writing",
             f"{ARCHIVES}.pipeline", f"{ARCHIVES}.parts"}
    for h in HARNESSES:
        reached = _reach(f"{ARCHIVES}.harnesses.{h}")
        assert not reached & above, h
        assert not any(m.startswith(f"{ARCHIVES}.engine") for m in reached), h
