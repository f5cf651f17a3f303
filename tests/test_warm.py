"""``passatk warm``: its options and what it prints (the cache it builds: tests/test_cache.py)."""

from __future__ import annotations

from passatk._warm import GROUPS, describe
from passatk.cli import main


def test_only_takes_the_groups_and_refuses_others(capsys):
    assert main(["warm", "--only", "nonsense"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "invalid choice: 'nonsense'" in err
    assert set(GROUPS) == {"pass_at_k", "stats", "rl"}


def test_the_report_names_the_counts_the_time_and_every_folder():
    result = {"kernels": 3, "signatures": 4, "loaded": 1, "compiled": 3, "cpu_s": 2.04,
              "wall_s": 3.0, "cache": ["/x/passatk/__pycache__", "/x/passatk/rl/__pycache__"],
              "package_cache": "/x/passatk/__pycache__", "numba_cache_dir": None}
    assert describe(result) == [
        "3 kernels, 4 signatures: 1 loaded from the cache, 3 compiled; 2.0 s CPU, 3.0 s wall",
        "cache: /x/passatk/__pycache__",
        "cache: /x/passatk/rl/__pycache__",
    ]
    elsewhere = {**result, "cache": ["/tmp/nb/passatk_abc"]}
    assert describe(elsewhere)[-1] == (
        "(the package's own cache, read when the above misses: /x/passatk/__pycache__)")
