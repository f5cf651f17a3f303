"""Public names of a package loaded on first use (PEP 562)."""

import sys
from collections.abc import Callable
from importlib import import_module


def lazy(package: str, table: dict[str, str]) -> tuple[Callable, Callable]:
    """``__getattr__`` and ``__dir__`` for ``package``: a name of ``table`` (name -> module)
    is imported from its module on first use and kept in the package's namespace."""

    def load(name: str) -> object:
        if name not in table:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(table[name], package), name)
        setattr(sys.modules[package], name, value)
        return value

    def names() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(table))

    return load, names
