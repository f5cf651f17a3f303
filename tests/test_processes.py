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
    note = run.stderr.strip().splitlines()
    assert len(note) == 1 and "compiled in memory" in note[0] and "NUMBA_CACHE_DIR" in note[0]
    code = "import passatk; print(repr(passatk.pass_at_k(200, 13, 10)))"
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == repr(passatk.pass_at_k(200, 13, 10))
