"""numba starts at the first kernel call (``passatk._jit``), not when a kernel module loads."""

from __future__ import annotations

import subprocess
import sys

import pytest


def _python(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=600, check=True).stdout


def test_kernel_modules_load_without_numba_and_swap_in_dispatchers_at_the_start():
    out = _python(
        "import sys\n"
        "from passatk import _kernels, _rl_kernels, _adv_kernels, _jit\n"
        "from passatk.stats import _kernels as SK\n"
        "import passatk.rl\n"
        "print('numba' in sys.modules, type(_kernels.bulk).__name__)\n"
        "early = _kernels.bulk_serial  # a reference taken before the start\n"
        "_jit.start()\n"
        "import numba\n"
        "mods = (_kernels, _rl_kernels, _adv_kernels, SK)\n"
        "left = [f'{m.__name__}.{k}' for m in mods for k, v in vars(m).items()\n"
        "        if isinstance(v, _jit.Kernel)]\n"
        "print(left, _kernels.prange is numba.prange, _rl_kernels.prange is numba.prange)\n"
        "print(type(_kernels.bulk).__name__, early.dispatcher is _kernels.bulk_serial)\n")
    first, second, third = out.splitlines()
    assert first == "False Kernel"
    assert second == "[] True True"
    assert third == "CPUDispatcher True"


def test_threads_that_call_first_at_once_all_get_the_kernels():
    out = _python(
        "import threading, numpy as np, passatk\n"
        "n = np.full(5000, 300); c = np.arange(5000) % 301\n"
        "res = [None] * 6\n"
        "def work(i):\n"
        "    res[i] = passatk.pass_at_k(n, c, 1 + i % 3)\n"
        "ts = [threading.Thread(target=work, args=(i,)) for i in range(6)]\n"
        "[t.start() for t in ts]; [t.join() for t in ts]\n"
        "ref = [passatk.pass_at_k(n, c, 1 + i % 3) for i in range(6)]\n"
        "print(all(np.array_equal(a, b) for a, b in zip(res, ref)))\n")
    assert out.split() == ["True"]


@pytest.mark.parametrize("mod", ["passatk.stats", "passatk.rl", "passatk.cli"])
def test_importing_the_numerics_does_not_start_numba(mod):
    out = _python(f"import sys, {mod}\nprint('numba' in sys.modules)")
    assert out.split() == ["False"]
