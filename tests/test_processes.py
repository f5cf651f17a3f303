"""Processes: fork after a parallel kernel (audit C2, r08) and no writable numba cache (C5, r10)."""

from __future__ import annotations

import multiprocessing as mp
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import passatk
from passatk import _jit
from passatk.stats import _kernels as SK

N_BULK = 20_000  # above the serial cut-off, so the parent runs the threaded kernel


def _bulk(seed):
    rng = np.random.default_rng(seed)
    n = rng.integers(1, 300, N_BULK)
    c = rng.integers(0, n + 1)
    k = np.minimum(rng.integers(1, 20, N_BULK), n)
    return passatk.pass_at_k(n, c, k), passatk.pass_at_k(np.full(N_BULK, 10), 3, 2)


def _boot(seed):
    theta = np.random.default_rng(seed).random((2_000, 1))
    return SK.boot_means(theta, 12345, 10_000), _jit.threads_usable()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_pool_map_under_fork_after_a_parallel_kernel():
    parent = [_bulk(s) for s in range(2)]  # starts numba's threads in this process
    with mp.get_context("fork").Pool(2) as pool:
        children = pool.map_async(_bulk, range(2)).get(timeout=120)
    for (a, b), (ca, cb) in zip(parent, children, strict=True):
        assert np.array_equal(a, ca) and np.array_equal(b, cb)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_bootstrap_under_fork_matches_the_parent():
    reps, _ = _boot(0)
    assert SK.boot_means(np.ones((2_000, 1)), 1, 10_000).shape == (10_000, 1)
    with mp.get_context("fork").Pool(1) as pool:
        [(child, usable)] = pool.map_async(_boot, [0]).get(timeout=120)
    assert np.array_equal(reps, child)  # the serial kernel gives the same resamples
    assert usable is (_threading_layer() != "omp")


def _threading_layer():
    import numba

    try:
        return numba.threading_layer()
    except ValueError:
        return None


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_child_of_a_parent_without_threads_keeps_them():
    code = ("import os, passatk; from passatk import _jit\n"
            "pid = os.fork()\n"
            "if pid == 0:\n"
            "    os._exit(0 if _jit.threads_usable() else 3)\n"
            "_, status = os.waitpid(pid, 0); raise SystemExit(os.waitstatus_to_exitcode(status))")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def _no_cache_env(tmp_path):
    """A copy of the package that numba cannot cache for: no in-tree, no user cache directory."""
    site = tmp_path / "site"
    dst = site / "passatk"
    shutil.copytree(os.path.dirname(passatk.__file__), dst,
                    ignore=shutil.ignore_patterns("__pycache__"))
    # Plain files where numba wants directories: refused even for root, like a read-only mount.
    (dst / "__pycache__").write_text("")
    (tmp_path / "cache").write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env.update(PYTHONPATH=str(site), XDG_CACHE_HOME=str(tmp_path / "cache"),
               HOME=str(tmp_path / "cache"))
    return env


@pytest.mark.slow
def test_import_and_version_without_a_writable_numba_cache(tmp_path):
    env = _no_cache_env(tmp_path)
    run = subprocess.run([sys.executable, "-m", "passatk", "--version"], env=env,
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("passatk ")
    assert run.stderr == ""  # --version compiles nothing (numba is imported lazily)
    # n above _api.EXACT_MAX_N: the kernels, not the exact small-input path
    code = "import passatk; print(repr(passatk.pass_at_k(2000, 13, 10)))"
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == repr(passatk.pass_at_k(2000, 13, 10))
    note = [line for line in run.stderr.splitlines() if "compiled in memory" in line]
    assert len(note) == 1 and "NUMBA_CACHE_DIR" in note[0]


_NO_NUMBA = ("import sys, {mod}\n"
             "assert 'numba' not in sys.modules, 'importing {mod} imported numba'\n"
             "import numba\n"
             "assert numba.config.THREADING_LAYER == 'default'\n")


@pytest.mark.parametrize("mod", ["passatk", "passatk.archives"])
def test_import_does_not_load_numba_or_set_its_threading_layer(mod):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_THREADING_LAYER"}
    subprocess.run([sys.executable, "-c", _NO_NUMBA.format(mod=mod)], check=True, env=env,
                   timeout=120)


def test_the_first_parallel_call_chooses_the_layer_and_keeps_an_explicit_one():
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_THREADING_LAYER"}
    code = ("import numba, numpy as np, passatk\n"
            "numba.config.THREADING_LAYER = 'workqueue'\n"
            "passatk.pass_at_k(np.full(50000, 10), np.full(50000, 3), 2)\n"
            "print(numba.config.THREADING_LAYER, numba.threading_layer())\n")
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=300, check=True)
    assert run.stdout.split() == ["workqueue", "workqueue"]


def test_the_first_parallel_call_selects_the_threadsafe_layer():
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_THREADING_LAYER"}
    code = ("import numba, numpy as np, passatk\n"
            "from passatk import _jit\n"
            "before = numba.config.THREADING_LAYER\n"
            "passatk.pass_at_k(np.full(50000, 10), np.full(50000, 3), 2)\n"
            "print(before, numba.config.THREADING_LAYER, _jit._threadsafe_layer_available())\n")
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=300, check=True)
    before, after, available = run.stdout.split()
    assert before == "default"
    assert after == ("threadsafe" if available == "True" else "default")


@pytest.mark.parametrize("argv", [["--help"], ["formats"], ["score", "/nonexistent/x.jsonl"]])
def test_quick_commands_load_neither_numpy_nor_numba(argv):
    """What keeps them at start-up cost (docs/benchmarks.md times them)."""
    code = ("import sys\nfrom passatk.cli import main\n"
            f"code = main({argv!r})\n"
            "loaded = [m for m in ('numpy', 'numba') if m in sys.modules]\n"
            "sys.stdout.flush()\nsys.stderr.write(repr((code, loaded)))\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    expected_code = 2 if argv[0] == "score" else 0  # a bad input exits 2 (docs/cli.md)
    assert run.stderr.splitlines()[-1] == repr((expected_code, []))
