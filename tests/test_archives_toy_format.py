"""Adding a harness is one new module in ``archives/harnesses/`` plus one line in the name table,
nothing else: a copy of the package gets exactly that (the test checks the difference is one new
file and one added line), and in a fresh process the toy format is then detected, read from a
file and a folder, written, listed by ``passatk formats`` and scored by the command line; the
import graph of the copy, with the registry's dynamic imports as edges, has no cycle."""

from __future__ import annotations

import difflib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_import_cycles import _cycles, _graph

import passatk

SRC = Path(passatk.__file__).resolve().parent

TOY_DOC = '''"""A toy harness: one JSON document {"toy_flags": {task: [flags]}}."""

from passatk.archives.context import document_group
from passatk.archives.harnesses._writers import dump_json
from passatk.archives.harnesses.registry import FormatInfo, FormatSpec, register


def read(file, ctx, doc):
    ctx.set_metric("pass@k", file)
    group = document_group(file, ctx, doc)
    for task, flags in doc["toy_flags"].items():
        ctx.add(group, task, len(flags), sum(flags))


def write(path, tasks, flags, opts):
    dump_json(path, {"toy_flags": dict(zip(tasks, flags, strict=True))})
    return [path]


SPEC = register(FormatSpec(
    FormatInfo("toy-doc", "a toy harness", "*.toydoc.json", 'JSON document with "toy_flags"',
               "true flags"),
    kind="document", read=read, write=write,
    probe=lambda doc, file: isinstance(doc, dict) and "toy_flags" in doc,
    aliases=("toydoc",), names=("*.toydoc.json",),
))
'''

TOY_LINES = '''"""A toy harness: JSON Lines {"toy_task": id, "toy_score": [flags]}."""

import json

from passatk.archives.context import iter_lines, parse_json_line
from passatk.archives.harnesses._writers import atomic_stream
from passatk.archives.harnesses.registry import FormatInfo, FormatSpec, register


def read(file, ctx):
    ctx.set_metric("pass@k", file)
    for lineno, line in iter_lines(file, ctx):
        rec = parse_json_line(file, lineno, line)
        ctx.add((), rec["toy_task"], len(rec["toy_score"]), sum(rec["toy_score"]))


def write(path, tasks, flags, opts):
    with atomic_stream(path) as f:
        for t, p in zip(tasks, flags, strict=True):
            f.write(json.dumps({"toy_task": t, "toy_score": p}).encode() + b"\\n")
    return [path]


SPEC = register(FormatSpec(
    FormatInfo("toy-lines", "a toy line harness", "*.toy.jsonl",
               'JSON Lines whose first record has "toy_task"', "true entries of toy_score"),
    kind="lines", read=read, write=write,
    probe=lambda record, file: "toy_task" in record,
    aliases=("toylines",), names=("*.toy.jsonl",),  # more specific than samples' *.jsonl
))
'''

#: run in a fresh process on the copy: what the toy format does end to end
SCRIPT = '''
import json, os, sys
from passatk import archives
name, file, folder = sys.argv[1:]
path = os.path.join(folder, file)
out = {"for_path": archives.format_for_path(path),
       "written": archives.write_archive(path, ["T/0", "T/1", "T/10"],
                                         [[True, False, True], [False], [True, True]]),
       "detected": archives.detect_format(path), "reads": []}
alias = [s for s in archives.formats() if s.name == name]
for counts in (archives.read_counts(path), archives.read_counts(folder),
               archives.read_counts(path, format=name.replace("-", "").upper())):
    out["reads"].append([counts.task.tolist(), counts.n.tolist(), counts.c.tolist()])
print(json.dumps(out))
'''

CASES = [("toy_doc", TOY_DOC, "toy-doc", "run.toydoc.json"),
         ("toy_lines", TOY_LINES, "toy-lines", "run.toy.jsonl")]


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text(encoding="utf-8")
            for p in sorted(root.rglob("*.py")) if "__pycache__" not in p.parts}


def _add_harness(tmp_path: Path, module: str, text: str) -> Path:
    """A copy of the package with one new harness module and its line in the name table."""
    copy = tmp_path / "src" / "passatk"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "archives" / "harnesses" / f"{module}.py").write_text(text)
    registry = copy / "archives" / "harnesses" / "registry.py"
    lines = registry.read_text().splitlines(keepends=True)
    start = lines.index("HARNESSES = (\n")
    end = lines.index(")\n", start)  # the table's last line: the new module goes last
    lines.insert(end, f'    "{module}",\n')
    registry.write_text("".join(lines))
    return copy


def _run(copy: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(copy.parent)}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env,
                          timeout=300, cwd=copy.parent)


@pytest.mark.parametrize(("module", "text", "name", "file"), CASES)
def test_a_harness_is_one_module_and_one_line(tmp_path, module, text, name, file):
    copy = _add_harness(tmp_path, module, text)
    before, after = _tree(SRC), _tree(copy)
    assert set(after) - set(before) == {f"archives/harnesses/{module}.py"}
    changed = [f for f in before if before[f] != after[f]]
    assert changed == ["archives/harnesses/registry.py"]
    diff = [d for d in difflib.ndiff(before[changed[0]].splitlines(),
                                     after[changed[0]].splitlines()) if d[:1] in "+-"]
    assert diff == [f'+     "{module}",']  # nothing else

    folder = tmp_path / "data"
    folder.mkdir()
    run = _run(copy, "-c", SCRIPT, name, file, str(folder))
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    path = str(folder / file)
    assert (out["for_path"], out["written"], out["detected"]) == (name, [path], name)
    assert out["reads"] == [[["T/0", "T/1", "T/10"], [3, 1, 2], [2, 0, 2]]] * 3

    listed = _run(copy, "-m", "passatk", "formats", "--format", "json")
    rows = json.loads(listed.stdout)["rows"]
    assert rows[-1]["name"] == name and rows[-1]["harness"].startswith("a toy")
    score = _run(copy, "-m", "passatk", "score", path, "-k", "1", "--format", "json")
    assert score.returncode == 0, score.stderr
    assert json.loads(score.stdout)["rows"][0]["tasks"] == 3

    edges = _graph(copy.parent)
    lookup = "passatk.archives.harnesses.lookup"
    for harness in ("humaneval", "tables", module):  # the registry's dynamic imports
        edges[lookup].add(f"passatk.archives.harnesses.{harness}")
    assert _cycles(edges) == []


def test_the_registrys_dynamic_imports_close_no_loop():
    """The lookups import every module of the name table: count those imports as edges."""
    from passatk.archives.harnesses.registry import HARNESSES

    edges = _graph()
    lookup = "passatk.archives.harnesses.lookup"
    edges[lookup] |= {f"passatk.archives.harnesses.{h}" for h in HARNESSES}
    assert _cycles(edges) == []
    # the check can fail: a harness that imported the lookups would close the loop
    edges["passatk.archives.harnesses.humaneval"].add(lookup)
    assert _cycles(edges) != []
