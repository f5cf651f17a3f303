"""What ``passatk score`` on the bundled example imports (issue 20: the warm CLI imports nothing
it does not use). Each check runs the command in a fresh interpreter and reads sys.modules."""

from __future__ import annotations

import subprocess
import sys

from passatk.archives import example_path

#: modules the example's score has no use for: the worker pool (no worker processes for one
#: small file), numba (the exact integer path), numpy.ma (no masked input), and the
#: statistics of other commands, of Bayesian metrics and of clustered tasks
UNUSED = ("multiprocessing", "concurrent.futures.process", "numba", "numpy.ma",
          "passatk.stats._compare", "passatk.stats._leaderboard", "passatk.stats._plan",
          "passatk.stats._paired", "passatk.stats._maxt", "passatk.stats._posterior",
          "passatk.stats._spike", "passatk.stats._wild")


def _score_modules(*args: str) -> tuple[list[str], list[str]]:
    """The command's output lines, and its last line split in two: the exit status, and
    the names of UNUSED it left in sys.modules with whether it loaded the scoring module."""
    code = ("import sys\n"
            "from passatk import cli\n"
            f"status = cli.main({list(args)!r})\n"
            f"print(status, sorted(m for m in {UNUSED!r} if m in sys.modules),\n"
            "      'passatk.stats._score' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, check=True).stdout.splitlines()
    return out[:-1], out[-1].split(" ", 1)


def test_the_examples_score_imports_no_pool_numba_or_other_statistics():
    rows, (status, rest) = _score_modules("score", str(example_path("humaneval")),
                                          "-k", "1,5,10")
    assert status == "0"
    assert rest == "[] True"  # none of UNUSED; the scoring module itself was loaded
    assert [r.split()[:2] for r in rows[1:]] == [["pass@k", "1"], ["pass@k", "5"],
                                                 ["pass@k", "10"]]


def test_the_check_sees_a_module_that_a_command_does_load():
    """The same probe after ``compare``, which does use the comparison statistics."""
    path = str(example_path("humaneval"))
    _, (status, rest) = _score_modules("compare", path, path, "-k", "1")
    assert status == "0"
    assert "'passatk.stats._compare'" in rest
