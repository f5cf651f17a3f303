"""The console transcripts of docs/cli.md, run and compared with what passatk prints.

Every ```console block is a transcript: ``$ command`` lines, each followed by its expected output
(stdout, then stderr). All blocks run in order in one temporary folder that holds the bundled
example at ``src/passatk/data/examples/``, so a ``passatk simulate`` early in the page makes the
files later commands read. ``passatk`` commands run in process (``passatk.cli.main``); other
commands run in a shell, except ``pip`` and commands that need a network or a cluster (a URL,
``--scheduler``), which are shown only. An expected line may elide with ``...``; nothing else is
normalized: the commands use relative paths.

Run ``python tests/test_docs_cli.py`` to print the page with every output regenerated (the way
sqlite-utils regenerates its docs with cog), then review and copy it over docs/cli.md.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from passatk.archives import example_path
from passatk.cli import main

DOC = Path(__file__).resolve().parent.parent / "docs" / "cli.md"
BLOCK = re.compile(r"^```console\n(.*?)^```$", re.M | re.S)


def transcripts(text: str) -> list[tuple[str, list[str]]]:
    """(command, expected output lines) for every ``$`` line of every console block."""
    out: list[tuple[str, list[str]]] = []
    for block in BLOCK.findall(text):
        continued = False
        for line in block.splitlines():
            if continued:  # a command continued with a backslash
                out[-1] = (out[-1][0][:-1].rstrip() + " " + line.strip(), [])
            elif line.startswith("$ "):
                out.append((line[2:], []))
            elif out:
                out[-1][1].append(line)
            continued = bool(out) and not out[-1][1] and out[-1][0].endswith("\\")
    return out


def run(command: str) -> tuple[int, list[str]]:
    """Run one transcript command in the current folder: (exit status, output lines)."""
    argv = shlex.split(command)
    if argv[0] == "passatk":
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv[1:])
        text = out.getvalue() + err.getvalue()
    else:
        proc = subprocess.run(command, shell=True, capture_output=True, text=True, check=False)
        code, text = proc.returncode, proc.stdout + proc.stderr
    return code, text.splitlines()


def matches(expected: list[str], actual: list[str]) -> bool:
    """Line by line equality, where ``...`` in an expected line stands for any text."""
    if len(expected) != len(actual):
        return False
    for want, got in zip(expected, actual, strict=True):
        pattern = ".*".join(re.escape(part) for part in want.split("..."))
        if not re.fullmatch(pattern, got):
            return False
    return True


def _folder(tmp: Path) -> None:
    examples = tmp / "src" / "passatk" / "data" / "examples"
    examples.mkdir(parents=True)
    shutil.copy(example_path(), examples / os.path.basename(example_path()))


def _runnable(command: str) -> bool:
    """Whether the test runs it: not ``pip``, nor what needs a network or a cluster."""
    return not command.startswith("pip ") and "://" not in command and (
        "--scheduler" not in command)


def test_the_page_has_transcripts():
    commands = [c for c, _ in transcripts(DOC.read_text())]
    assert len(commands) >= 15
    assert {shlex.split(c)[1] for c in commands if c.startswith("passatk ")} >= {
        "score", "compare", "check", "plot", "simulate"}


def test_console_transcripts_of_docs_cli_md(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")  # one transcript draws a plot
    _folder(tmp_path)
    monkeypatch.chdir(tmp_path)
    failures = []
    for command, expected in transcripts(DOC.read_text()):
        if not _runnable(command):
            continue
        code, actual = run(command)
        errors = any(line.startswith("passatk: error:") for line in actual)
        if not matches(expected, actual) or (code == 2) != errors:
            failures.append(f"$ {command}\n(exit {code}) expected:\n" + "\n".join(expected)
                            + "\ngot:\n" + "\n".join(actual))
    assert not failures, "\n\n".join(failures)


def test_transcripts_join_continued_commands_and_skip_remote_ones():
    page = "```console\n$ passatk score a \\\n    --by x\nout\n$ passatk score s3://b/\n```\n"
    assert transcripts(page) == [("passatk score a --by x", ["out"]),
                                 ("passatk score s3://b/", [])]
    assert [_runnable(c) for c, _ in transcripts(page)] == [True, False]


def test_matches_elides_only_where_told():
    assert matches(["a ... c"], ["a bbb c"])
    assert not matches(["a ... c"], ["a bbb d"])
    assert not matches(["a"], ["a", "b"])
    assert not matches(["a.c"], ["abc"])  # no other regex syntax


def regenerate(text: str, folder: Path) -> str:
    """The page with each transcript's output replaced by what the command prints now."""
    os.chdir(folder)

    def block(m: re.Match) -> str:
        lines = []
        for line in m.group(1).splitlines():
            if line.startswith("$ "):
                lines.append(line)
                if _runnable(line[2:]):
                    lines.extend(run(line[2:])[1])
        return "```console\n" + "\n".join(lines) + "\n```"

    return BLOCK.sub(block, text)


if __name__ == "__main__":  # pragma: no cover - a maintainer's tool
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        _folder(Path(tmp))
        sys.stdout.write(regenerate(DOC.read_text(), Path(tmp)))
