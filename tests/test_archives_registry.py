"""The format registry: a format defined here, in one spec, is detected, read, written and listed
by ``passatk formats`` with no other edit, and is gone once unregistered."""

from __future__ import annotations

import contextlib
import json
import os

import pytest

from passatk import archives, cli
from passatk.archives.context import document_group, iter_lines, parse_json_line
from passatk.archives.harnesses._writers import atomic_stream, dump_json
from passatk.archives.harnesses.lookup import probing_order, register, specs
from passatk.archives.harnesses.registry import FormatInfo, FormatSpec, unregister


def _read_doc(file, ctx, doc):
    ctx.set_metric("pass@k", file)
    group = document_group(file, ctx, doc)
    for task, flags in doc["toy_flags"].items():
        ctx.add(group, task, len(flags), sum(flags))


def _write_doc(path, tasks, flags, opts):
    dump_json(path, {"toy_flags": dict(zip(tasks, flags, strict=True))})
    return [path]


def _read_lines(file, ctx):
    ctx.set_metric("pass@k", file)
    for lineno, line in iter_lines(file, ctx):
        rec = parse_json_line(file, lineno, line)
        ctx.add((), rec["toy_task"], len(rec["toy_score"]), sum(rec["toy_score"]))


def _write_lines(path, tasks, flags, opts):
    with atomic_stream(path) as f:
        for t, p in zip(tasks, flags, strict=True):
            f.write(json.dumps({"toy_task": t, "toy_score": p}).encode() + b"\n")
    return [path]


TOY_DOC = FormatSpec(
    FormatInfo("toy-doc", "a toy harness", "*.toydoc.json", 'JSON document with "toy_flags"',
               "true flags"),
    kind="document", read=_read_doc, write=_write_doc,
    probe=lambda doc, file: isinstance(doc, dict) and "toy_flags" in doc,
    aliases=("toydoc",), names=("*.toydoc.json",),
)
TOY_LINES = FormatSpec(
    FormatInfo("toy-lines", "a toy line harness", "*.toy.jsonl",
               'JSON Lines whose first record has "toy_task"', "true entries of toy_score"),
    kind="lines", read=_read_lines, write=_write_lines,
    probe=lambda record, file: "toy_task" in record,
    aliases=("toylines",), names=("*.toy.jsonl",),  # more specific than samples' *.jsonl
)
TASKS = ["T/0", "T/1", "T/10"]
PASSES = [[True, False, True], [False], [True, True]]


@contextlib.contextmanager
def registered(spec):
    register(spec)
    try:
        yield spec
    finally:
        unregister(spec.name)


def _formats_listing(capsys, fmt):
    assert cli.main(["formats", "--format", fmt]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize(("spec", "file"), [(TOY_DOC, "run.toydoc.json"),
                                            (TOY_LINES, "run.toy.jsonl")])
def test_toy_format_is_detected_read_written_and_listed(tmp_path, capsys, spec, file):
    before = [s.name for s in specs()]
    path = str(tmp_path / file)
    with registered(spec):
        assert archives.format_for_path(path) == spec.name
        assert archives.write_archive(path, TASKS, PASSES) == [path]  # format from the name
        assert archives.detect_format(path) == spec.name
        for counts in (archives.read_counts(path), archives.read_counts(str(tmp_path)),
                       archives.read_counts(path, format=spec.aliases[0].upper())):
            assert counts.task.tolist() == TASKS
            assert counts.n.tolist() == [3, 1, 2]
            assert counts.c.tolist() == [2, 0, 2]
        other = str(tmp_path / "other.json")
        archives.write_archive(other, ["a"], [[True, False]], format=spec.name)
        assert archives.read_counts(other, format=spec.name).c.tolist() == [1]
        listed = json.loads(_formats_listing(capsys, "json"))["rows"]
        assert listed[-1] == {"name": spec.name, "harness": spec.info.harness,
                              "metric": "pass@k", "files": spec.info.files,
                              "detection": spec.info.detection, "passes": spec.info.passes}
        assert [r["name"] for r in listed] == [*before, spec.name]
        table = _formats_listing(capsys, "table").splitlines()
        assert any(line.startswith(f"{spec.name} ") and spec.info.harness in line
                   for line in table)
    assert [s.name for s in specs()] == before
    listed = json.loads(_formats_listing(capsys, "json"))["rows"]
    assert spec.name not in [r["name"] for r in listed]
    with pytest.raises(ValueError, match="format must be one of"):
        archives.read_counts(path, format=spec.name)
    with pytest.raises(archives.ArchiveError, match="cannot detect the format"):
        archives.detect_format(path)


def test_register_refuses_a_taken_name_or_alias():
    with registered(TOY_DOC):
        with pytest.raises(ValueError, match="'toy-doc' is already registered"):
            register(TOY_DOC)
    clash = FormatSpec(FormatInfo("toy2", "h", "f", "d", "p"), kind="document",
                       read=_read_doc, probe=lambda doc, file: False, aliases=("lcb",))
    with pytest.raises(ValueError, match="'lcb' is already registered"):
        register(clash)
    assert "toy2" not in [s.name for s in specs()]


def test_spec_checks_its_kind_and_probe():
    info = FormatInfo("toy3", "h", "f", "d", "p")
    with pytest.raises(ValueError, match="kind must be one of"):
        FormatSpec(info, kind="csv", read=_read_doc)
    with pytest.raises(ValueError, match="needs a probe"):
        FormatSpec(info, kind="document", read=_read_doc)


def test_probe_order_keeps_specific_probes_first():
    # a document may pass several probes; these orders are what detection always did
    assert [s.name for s in probing_order("document")] == [
        "inspect-ai", "evalplus", "bigcodebench", "cruxeval", "tau2-bench", "multipl-e",
        "livecodebench", "livecodebench-eval", "opencompass", "tau-bench", "code-eval"]
    assert [s.name for s in probing_order("zip")] == ["inspect-ai-eval"]
    assert [s.name for s in probing_order("lines")] == ["lm-eval", "qwen-math", "humaneval"]


def test_every_builtin_format_round_trips_through_its_spec(tmp_path):
    names = {"humaneval": "x_results.jsonl", "lm-eval": "samples_t_2024-01-01.jsonl",
             "livecodebench": "x_eval_all.json", "evalplus": "eval_results.json",
             "bigcodebench": "x_eval_results.json", "multipl-e": "run",
             "qwen-math": "test_cot_-1_seed0_t0.0_s0_e-1.jsonl", "counts": "c.csv",
             "samples": "s.jsonl", "inspect-ai-eval": "x.eval", "livecodebench-eval": "x_eval.json"}
    for spec in specs():
        folder = tmp_path / spec.name
        path = str(folder / names.get(spec.name, "x.json"))
        ids = [0, 1] if spec.native_ids else ["0", "1"]
        written = archives.write_archive(path, ids, [[True, False], [True, True]],
                                         format=spec.name)
        assert os.path.exists(written[0])
        counts = archives.read_counts(path if spec.name != "multipl-e" else written)
        assert counts.n.tolist() == [2, 2], spec.name
        assert counts.c.tolist() == [1, 2], spec.name
        if spec.name != "multipl-e":
            assert archives.detect_format(path) == spec.name


def _file_writes(tree):
    """(line, call) of each call that creates or replaces a file by itself."""
    import ast

    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
        owner = getattr(f.value, "id", "") if isinstance(f, ast.Attribute) else ""
        if name == "open" and not owner:
            mode = node.args[1] if len(node.args) > 1 else next(
                (k.value for k in node.keywords if k.arg == "mode"), None)
            text = mode.value if isinstance(mode, ast.Constant) else "?"
            if not isinstance(text, str) or set(text) & set("wax?+"):
                found.append((node.lineno, f"open(..., {text!r})"))
        elif (owner, name) in {("os", "replace"), ("os", "rename"), ("shutil", "move"),
                               ("tempfile", "mkstemp"), ("tempfile", "NamedTemporaryFile")}:
            found.append((node.lineno, f"{owner}.{name}"))
        elif name in ("write_text", "write_bytes") and isinstance(f, ast.Attribute):  # Path
            found.append((node.lineno, name))
    return found


def test_only_output_module_writes_files():
    """One atomic writer: every file passatk writes goes through _output.atomic_path."""
    import ast
    from pathlib import Path

    import passatk

    root = Path(passatk.__file__).parent
    offenders = []
    for path in sorted(root.rglob("*.py")):
        if path.name == "_output.py":
            continue
        for line, call in _file_writes(ast.parse(path.read_text(), str(path))):
            offenders.append(f"{path.relative_to(root)}:{line}: {call}")
    assert offenders == []
    assert _file_writes(ast.parse("open(p, 'wb'); os.replace(a, b); p.write_text(t)")) == [
        (1, "open(..., 'wb')"), (1, "os.replace"), (1, "write_text")]


def test_listing_order_does_not_depend_on_import_order():
    import subprocess
    import sys

    code = ("import passatk.archives.harnesses.tables, passatk.archives.harnesses.taubench\n"
            "from passatk.archives import formats\n"
            "print(' '.join(f.name for f in formats()))\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)
    assert run.stdout.split() == [s.name for s in specs()]
    assert run.stdout.split()[:3] == ["humaneval", "evalplus", "bigcodebench"]


def test_compressed_archives_are_reproducible(tmp_path):
    import gzip

    files = []
    for folder in ("a", "b"):
        path = tmp_path / folder / "run_results.jsonl.gz"
        archives.write_archive(path, TASKS, PASSES)
        files.append(path.read_bytes())
    assert files[0] == files[1]  # the gzip header holds no temporary file name
    assert b"run_results.jsonl\0" in files[0][:40]
    counts = archives.read_counts(str(tmp_path / "a" / "run_results.jsonl.gz"))
    assert counts.c.tolist() == [2, 0, 2]
    assert gzip.decompress(files[0]).count(b"\n") == 6


def test_byte_range_plans_follow_the_specs(tmp_path):
    from passatk.archives.options import Options
    from passatk.archives.pipeline import split_plan

    plans = {}
    for name in ("x_results.jsonl", "s.jsonl", "c.csv", "eval_results.json"):
        path = str(tmp_path / name)
        archives.write_archive(path, TASKS, PASSES)
        plan = split_plan(path, Options())
        plans[archives.detect_format(path)] = plan and plan[0]
    assert plans == {"humaneval": "humaneval", "samples": "samples", "counts": None,
                     "evalplus": None}
    assert {s.name for s in specs() if s.byte_ranges} == {"humaneval", "samples"}
