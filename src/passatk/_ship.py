"""Build the shipped kernel cache: ``python -m passatk._ship [ZIP]`` (issue 20).

Runs ``passatk warm`` in a child process whose numba compiles for the named CPU level
``x86-64-v3`` (AVX2, FMA, BMI: x86-64 processors since 2013-2015) into an empty
``NUMBA_CACHE_DIR``, then zips every kernel it compiled, with a manifest, into ZIP (default:
the package's ``data/kernel_cache.zip``, which ``pyproject.toml`` ships as package data).
A fresh install then loads its kernels from that zip on any processor that has those
features, with the numba, llvmlite and Python of the build, instead of compiling them
(``passatk._jit``). Rebuild it whenever a kernel's source or those versions change: an entry
whose source changed is never loaded (tests/test_shipped_cache.py says when it is stale).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

__all__ = ["CPU_NAME", "NEEDS", "build"]

#: the LLVM CPU the shipped kernels are built for
CPU_NAME = "x86-64-v3"
#: every feature that CPU level implies (LLVM's names); a loading CPU must have all of them
NEEDS = ("64bit", "cmov", "cx8", "fxsr", "mmx", "sse", "sse2", "cx16", "sahf", "popcnt",
         "sse3", "sse4.1", "sse4.2", "ssse3", "crc32", "avx", "avx2", "bmi", "bmi2", "f16c",
         "fma", "lzcnt", "movbe", "xsave")


def _default_path() -> str:
    from . import _jit

    return _jit.SHIPPED_CACHE


def build(path: str | None = None, groups: tuple[str, ...] = ()) -> str:
    """Build the shipped cache into ``path`` in a child process; returns what it printed.

    ``groups``: only these groups of ``passatk warm`` (default: all of them).
    """
    path = os.path.abspath(path or _default_path())
    with tempfile.TemporaryDirectory() as cache:
        env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
        env.update(NUMBA_CACHE_DIR=cache, NUMBA_CPU_NAME=CPU_NAME,
                   NUMBA_CPU_FEATURES=",".join("+" + f for f in NEEDS),
                   PASSATK_SHIPPED_CACHE="0")
        out = subprocess.run([sys.executable, "-m", "passatk._ship", "--child", path, *groups],
                             env=env, check=True, capture_output=True, text=True)
    return out.stdout


def _child(path: str, groups: list[str]) -> None:
    from . import _jit
    from ._output import atomic_path
    from ._warm import GROUPS, describe, warm

    result = warm(tuple(groups or GROUPS))
    with atomic_path(path) as partial:  # whole or not at all
        count = _jit.write_shipped(partial, NEEDS)
    print("\n".join(describe(result)))
    print(f"{count} signatures for {CPU_NAME} written to {path}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        _child(sys.argv[2], sys.argv[3:])
    else:
        print(build(sys.argv[1] if len(sys.argv) > 1 else None), end="")
