"""Lines of a package by kind (docstring, blank, comment, code): the size bar of issue 19.

Run: python bench/archive_lines.py src/passatk/archives
"""

import ast
import pathlib
import sys

KINDS = ("total", "blank", "comment", "doc", "code")


def _docstring_lines(tree: ast.AST) -> set[int]:
    doc: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                doc.update(range(body[0].lineno, body[0].end_lineno + 1))
    return doc


def count(path: pathlib.Path) -> dict[str, int]:
    src = path.read_text()
    doc = _docstring_lines(ast.parse(src))
    out = dict.fromkeys(KINDS, 0)
    for i, line in enumerate(src.splitlines(), 1):
        out["total"] += 1
        text = line.strip()
        kind = "doc" if i in doc else "blank" if not text else (
            "comment" if text.startswith("#") else "code")
        out[kind] += 1
    return out


def main(root: str) -> None:
    rows = [(p, count(p)) for p in sorted(pathlib.Path(root).rglob("*.py"))]
    for p, d in sorted(rows, key=lambda r: -r[1]["total"])[:25]:
        print(f"{p.relative_to(root)!s:40s} {d}")
    print({k: sum(d[k] for _, d in rows) for k in KINDS})


if __name__ == "__main__":
    main(sys.argv[1])
