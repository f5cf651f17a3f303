"""Type hints that work: mypy --strict and pyright accept a typed user script and flag wrong calls.

The two scripts are in tests/typing/. A checker that is not installed skips its tests with the
reason; .ci/run installs both (pyright from PyPI bundles its JavaScript and runs on the installed
node, offline).
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import typing
from pathlib import Path

import pytest

import passatk
from passatk import _types

HERE = Path(__file__).parent / "typing"
SRC = Path(passatk.__file__).resolve().parent.parent
WRONG_LINES = sorted(
    i for i, line in enumerate((HERE / "user_wrong.py").read_text().splitlines(), 1)
    if "# WRONG" in line
)


def _module_available(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def _run(cmd: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def mypy_lines(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[int]]:
    if not _module_available("mypy"):
        pytest.skip("mypy is not installed (pip install mypy; .ci/run installs it)")
    work = tmp_path_factory.mktemp("mypy")
    for name in ("user_typed.py", "user_wrong.py"):
        shutil.copy(HERE / name, work / name)
    env = {**os.environ, "MYPYPATH": str(SRC)}
    out = _run([sys.executable, "-m", "mypy", "--strict", "--no-error-summary",
                "--cache-dir", str(work / ".cache"), "--show-error-codes",
                "user_typed.py", "user_wrong.py"], work, env)
    lines: dict[str, list[int]] = {"user_typed.py": [], "user_wrong.py": []}
    for line in out.stdout.splitlines():
        m = re.match(r"(user_\w+\.py):(\d+): error:", line)
        if m:
            lines[m.group(1)].append(int(m.group(2)))
        elif ": error:" in line:
            raise AssertionError(f"mypy error outside the scripts: {line}\n{out.stdout}")
    assert out.returncode in (0, 1), out.stdout + out.stderr
    lines["output"] = out.stdout  # type: ignore[assignment]
    return lines


@pytest.fixture(scope="module")
def pyright_lines(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[int]]:
    if not _module_available("pyright"):
        pytest.skip("pyright is not installed (pip install pyright; .ci/run installs it)")
    if shutil.which("node") is None:
        pytest.skip("pyright needs node, which is not on PATH")
    work = tmp_path_factory.mktemp("pyright")
    for name in ("user_typed.py", "user_wrong.py"):
        shutil.copy(HERE / name, work / name)
    # its default mode ("standard"), the one the audit saw 14 false errors in; passatk from SRC
    (work / "pyrightconfig.json").write_text(json.dumps(
        {"extraPaths": [str(SRC)], "pythonVersion": f"{sys.version_info[0]}.{sys.version_info[1]}"}
    ))
    # no version check against PyPI: the bundled pyright runs offline
    env = {**os.environ, "PYRIGHT_PYTHON_IGNORE_WARNINGS": "1"}
    out = _run([sys.executable, "-m", "pyright", "--outputjson", "user_typed.py",
                "user_wrong.py"], work, env)
    assert out.returncode in (0, 1), out.stdout + out.stderr
    report = json.loads(out.stdout)
    lines: dict[str, list[int]] = {"user_typed.py": [], "user_wrong.py": []}
    for diag in report["generalDiagnostics"]:
        if diag["severity"] == "error":
            lines[Path(diag["file"]).name].append(diag["range"]["start"]["line"] + 1)
    lines["output"] = out.stdout  # type: ignore[assignment]
    return lines


@pytest.mark.slow
def test_mypy_strict_accepts_the_typed_script(mypy_lines):
    assert mypy_lines["user_typed.py"] == [], mypy_lines["output"]


@pytest.mark.slow
def test_mypy_flags_every_wrong_call(mypy_lines):
    assert sorted(set(mypy_lines["user_wrong.py"])) == WRONG_LINES, mypy_lines["output"]


@pytest.mark.slow
def test_pyright_accepts_the_typed_script(pyright_lines):
    assert pyright_lines["user_typed.py"] == [], pyright_lines["output"]


@pytest.mark.slow
def test_pyright_flags_every_wrong_call(pyright_lines):
    assert sorted(set(pyright_lines["user_wrong.py"])) == WRONG_LINES, pyright_lines["output"]


def _type_checking_names(module: str) -> dict[str, str]:
    """name -> defining module of the ``if TYPE_CHECKING:`` imports of ``module``'s __init__."""
    path = Path(importlib.util.find_spec(module).origin)
    names: dict[str, str] = {}
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for imp in node.body:
                if isinstance(imp, ast.ImportFrom):
                    for alias in imp.names:
                        names[alias.asname or alias.name] = "." * imp.level + (imp.module or "")
    return names


@pytest.mark.parametrize("module", ["passatk", "passatk.archives", "passatk.stats"])
def test_type_checking_imports_match_the_lazy_names(module):
    """What a type checker sees is what the lazy loader gives, name for name."""
    mod = importlib.import_module(module)
    seen = _type_checking_names(module)
    lazy = dict(mod._LAZY)
    lazy.update({name: "." for name in getattr(mod, "_SUBMODULES", ())})
    lazy.pop("__version__", None)
    assert {k: v for k, v in seen.items()} == lazy
    for name in seen:
        assert getattr(mod, name) is not None


def test_imports_stay_lazy():
    code = ("import sys, passatk, passatk.archives; "
            "print(sorted(m for m in ('numpy', 'numba', 'matplotlib') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stdout.strip() == "[]"


def test_dir_lists_public_names_only():
    names = dir(passatk)
    assert "import_module" not in names and "TYPE_CHECKING" not in names
    assert {"rl", "plot", "archives", "stats", "score", "__version__"} <= set(names)
    assert passatk.rl.group_metrics is not None and passatk.plot.plot_pass_at_k is not None


def _allowed(call, bad: str) -> tuple[str, ...]:
    """The choices the run-time check names in its error for ``bad``."""
    with pytest.raises(ValueError, match="must be one of") as info:
        call(bad)
    return ast.literal_eval(re.search(r"must be one of (\(.*?\))", str(info.value)).group(1))


@pytest.mark.parametrize(
    ("alias", "call"),
    [
        (_types.Interval, lambda v: passatk.score([10, 10], [3, 4], interval=v)),
        (_types.Metric, lambda v: passatk.score([10, 10], [3, 4], metric=v)),
        (_types.Missing, lambda v: passatk.score([10, 10], [3, 4], missing=v)),
        (_types.Duplicates, lambda v: passatk.score([10, 10], [3, 4], duplicates=v)),
        (_types.Unmatched, lambda v: passatk.compare([10], [3], [10], [4], unmatched=v)),
        (_types.CompareMetric, lambda v: passatk.compare([10], [3], [10], [4], metric=v)),
        (_types.TaskMetric, lambda v: passatk.task_variance([10], [3], 1, metric=v)),
        (_types.TaskMetric, lambda v: passatk.samples_needed([10], [3], 1, 0.1, metric=v)),
        (_types.TaskMethod, lambda v: passatk.stats.task_intervals([10], [3], method=v)),
    ],
)
def test_literal_types_name_exactly_the_accepted_choices(alias, call):
    assert typing.get_args(alias) == _allowed(call, "no-such-choice")


def test_rl_literal_types_name_exactly_the_accepted_choices():
    from passatk.rl import _advantages as A
    from passatk.rl import _groups as G
    from passatk.rl import _metrics as M

    pairs = [(_types.RLMetric, M.METRICS), (_types.RLMetricEstimator, M.ESTIMATORS),
             (_types.RLShortGroups, M.SHORT_GROUPS), (_types.NoneAnswers, M.NONE_ANSWERS),
             (_types.NanRule, G._NAN_OPTIONS), (_types.AdvEstimator, tuple(A.ESTIMATORS)),
             (_types.Normalize, tuple(A.NORMALIZE)), (_types.AdvShortGroups, A.SHORT_GROUPS)]
    for alias, accepted in pairs:
        assert typing.get_args(alias) == tuple(accepted), alias
