"""Shared fixtures: the CLI runner."""

from __future__ import annotations

from typing import NamedTuple

import pytest

from passatk.cli import main


class CliRun(NamedTuple):
    """What one ``passatk`` command did: exit status, standard output, standard error."""

    code: int
    out: str
    err: str


@pytest.fixture
def cli(capsys):
    """Run ``passatk.cli.main(argv)`` in process; return ``CliRun(code, out, err)``.

    ``code, out, err = cli(["score", path])``: the pyupgrade style of testing ``main(argv)``.
    """

    def run(argv):
        capsys.readouterr()  # drop anything printed before the command
        code = main([str(a) for a in argv])
        captured = capsys.readouterr()
        return CliRun(code, captured.out, captured.err)

    return run
