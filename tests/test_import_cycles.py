"""Imports go one way: every ``import`` in src/ that can run (at module level or inside a
function) is an edge, and the graph of the package's modules has no cycle. Imports under
``if TYPE_CHECKING:`` never run (the typed re-exports of ``passatk`` and ``passatk.archives``);
they are left out, as the review's finder leaves them out."""

from __future__ import annotations

import ast
import functools
import pathlib

import pytest

SRC = pathlib.Path(__file__).resolve().parents[1] / "src"


def _modules(src: pathlib.Path = SRC) -> dict[str, pathlib.Path]:
    out = {}
    for path in sorted((src / "passatk").rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _targets(module: str, node: ast.AST, is_package: bool, mods: dict) -> list[str]:
    """The modules an import statement names (``from pkg import name``: the submodule
    ``pkg.name`` when there is one, else ``pkg``)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = module.split(".") if is_package else module.split(".")[:-1]
    if node.level:
        base = base[:len(base) - (node.level - 1)]
        name = ".".join(base + ([node.module] if node.module else []))
    else:
        name = node.module or ""
    return [f"{name}.{a.name}" if f"{name}.{a.name}" in mods else name for a in node.names]


def _graph(src: pathlib.Path = SRC) -> dict[str, set[str]]:
    mods = _modules(src)
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for module, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
                       and "TYPE_CHECKING" in ast.unparse(block.test)
                       for stmt in block.body for n in ast.walk(stmt)}
        for node in ast.walk(tree):  # ast.walk reaches the imports inside functions too
            if id(node) in typing_only:
                continue
            for target in _targets(module, node, path.name == "__init__.py", mods):
                while target and target not in mods and "." in target:
                    target = target.rsplit(".", 1)[0]
                if target in mods and target != module:
                    edges[module].add(target)
    return edges


@functools.cache
def _src_graph() -> dict[str, set[str]]:
    return _graph()


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_the_finder_finds_a_cycle_made_of_lazy_imports(tmp_path):
    """The check can fail: two modules that import each other inside functions."""
    pkg = tmp_path / "passatk"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from . import b\n")
    (pkg / "b.py").write_text("def g():\n    from .a import f\n")
    assert _cycles(_graph(tmp_path)) == [["passatk.a", "passatk.b"]]
    (pkg / "b.py").write_text("def g():\n    import passatk.c\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                              "    from .a import f\n")
    assert _cycles(_graph(tmp_path)) == []  # a type-only import never runs
    (pkg / "c.py").write_text("def h():\n    from .a import f\n")
    assert _cycles(_graph(tmp_path)) == [["passatk.a", "passatk.b", "passatk.c"]]


def test_src_has_no_import_cycle():
    cycles = _cycles(_graph())
    assert not cycles, "import cycles (function-level imports included): " + "; ".join(
        " <-> ".join(c) for c in cycles)


@pytest.mark.parametrize("module", sorted(m for m in _modules() if m.startswith(
    "passatk.archives")))
def test_no_archives_module_imports_numba(module):
    edges = _src_graph()
    seen, todo = set(), [module]
    while todo:  # what it imports, directly or through other modules of archives/
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        todo.extend(t for t in edges[m] if t.startswith("passatk.archives"))
    assert not {t for m in seen for t in edges[m]} & {"passatk._jit"}
    text = _modules()[module].read_text(encoding="utf-8")
    assert "import numba" not in text and "from numba" not in text
