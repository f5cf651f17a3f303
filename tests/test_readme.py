"""Every command-line example of README.md runs, in order, in one folder, with the files the
earlier commands make (its Python examples are doctests). The install and test commands are
checked against .ci/run, which must run the README's second command exactly."""

from __future__ import annotations

import glob
import json
import re
import shlex
import shutil
from pathlib import Path

import pytest

from passatk.cli import main

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
BASH = re.findall(r"^```bash\n(.*?)^```$", README, re.M | re.S)


def _commands() -> list[str]:
    return [line for block in BASH for line in block.splitlines() if line.strip()]


def test_first_commands_install_without_extras_then_test():
    first, second = BASH[0].splitlines(), BASH[1].splitlines()
    assert first[0] == "python -m pip install -e ."
    assert first[1].startswith("passatk score src/passatk/data/examples/")
    assert second == ['python -m pip install -e ".[test]" && python -m pytest']
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert second[0] in ci and ci[-1] == second[0]


@pytest.mark.slow
def test_every_command_line_example_runs(tmp_path, monkeypatch, capsys):
    shutil.copytree(ROOT / "src" / "passatk" / "data", tmp_path / "src" / "passatk" / "data")
    monkeypatch.chdir(tmp_path)
    ran = 0
    for line in _commands():
        argv = shlex.split(line)
        if argv[0] != "passatk":
            assert argv[:4] == ["python", "-m", "pip", "install"], line
            continue
        args = [a for arg in argv[1:] for a in (sorted(glob.glob(arg)) if "*" in arg else [arg])]
        capsys.readouterr()
        code = main(args)
        _, err = capsys.readouterr()
        assert code == 0, f"{line}: exit {code}: {err}"
        ran += 1
    assert ran >= 8
    assert json.loads(Path("scores.json").read_text())["command"] == "score"
    assert Path("passk.pdf").read_bytes().startswith(b"%PDF")
