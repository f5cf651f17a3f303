"""The shipped kernel cache (issue 20): built for x86-64-v3, loaded by a fresh install.

``src/passatk/data/kernel_cache.zip`` is built by ``python -m passatk._ship``. These tests say
when it is stale (a kernel source changed since), and show that a fresh read-only install
and a fresh venv load every kernel a call needs from it, compile none and give the same
numbers, and that an edited kernel module is compiled, not loaded.
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import shutil
import stat
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import passatk
from passatk import _jit

PACKAGE = os.path.dirname(os.path.abspath(passatk.__file__))

_CALLS = (
    "import numpy as np, passatk\n"
    "from passatk import rl, _jit\n"
    "x = (np.random.default_rng(0).random((512, 16)) < 0.4).astype(np.float32)\n"
    "a = rl.advantages(x, k=4)\n"
    "n = np.full(40000, 200); p = passatk.pass_at_k(n, np.arange(40000) % 201, 10)\n"
    "d = [f for f in _jit.dispatchers() if getattr(f, 'signatures', None)]\n"
    "print(sum(sum(f.stats.cache_hits.values()) for f in d),\n"
    "      sum(sum(f.stats.cache_misses.values()) for f in d))\n"
    "print(repr(float(np.asarray(a, dtype=np.float64).sum())), repr(float(p.sum())))\n"
)


def _expected() -> str:
    from passatk import rl

    x = (np.random.default_rng(0).random((512, 16)) < 0.4).astype(np.float32)
    a = rl.advantages(x, k=4)
    p = passatk.pass_at_k(np.full(40000, 200), np.arange(40000) % 201, 10)
    return f"{float(np.asarray(a, dtype=np.float64).sum())!r} {float(p.sum())!r}"


def _usable_here() -> dict:
    manifest = _jit.shipped_manifest()
    assert manifest is not None, f"{_jit.SHIPPED_CACHE} is missing: python -m passatk._ship"
    why = _jit.shipped_usable(manifest)
    if why:
        pytest.skip(f"the shipped kernel cache cannot run in this process: {why}")
    return manifest


def test_the_shipped_cache_is_current_for_every_kernel_module():
    """Every index in the zip carries the content hash of today's kernel source: a kernel
    edited without ``python -m passatk._ship`` leaves its entries unused (slow, not wrong)."""
    manifest = _usable_here()
    assert manifest["magic"][1] == "x86-64-v3"
    homes = set()
    with zipfile.ZipFile(_jit.SHIPPED_CACHE) as archive:
        for name in archive.namelist():
            if not name.endswith(".nbi"):
                continue
            folder, _, base = name.rpartition("/")
            source = os.path.join(PACKAGE, folder, base.split(".")[0] + ".py")
            index = io.BytesIO(archive.read(name))
            assert pickle.load(index) == manifest["numba"]
            stamp, overloads = pickle.loads(index.read())
            with open(source, "rb") as f:
                assert stamp == hashlib.sha256(f.read()).digest(), (
                    f"{name} is stale ({source} changed): rebuild with python -m passatk._ship")
            assert all(key[1] == tuple(manifest["magic"]) for key in overloads)
            homes.add(os.path.relpath(source, PACKAGE))
    kernel_modules = set()
    for here, _, names in os.walk(PACKAGE):
        for name in names:
            if name.endswith(".py"):
                with open(os.path.join(here, name), encoding="utf-8") as f:
                    if "@jit" in f.read():
                        kernel_modules.add(os.path.relpath(os.path.join(here, name), PACKAGE))
    assert {"_kernels.py", "_adv_kernels.py", "_rl_kernels.py"} <= homes <= kernel_modules


def test_a_cpu_without_the_features_or_other_versions_are_refused():
    manifest = _jit.shipped_manifest()
    assert manifest is not None
    assert "lacks nosuchfeature" in _jit.shipped_usable(
        {**manifest, "needs": [*manifest["needs"], "nosuchfeature"]})
    assert "built with numba 0.0" in _jit.shipped_usable({**manifest, "numba": "0.0"})


def _lock(root, files, dirs):
    for here, subdirs, names in os.walk(root, topdown=False):
        for name in names:
            os.chmod(os.path.join(here, name), files)
        for name in subdirs:
            os.chmod(os.path.join(here, name), dirs)
    os.chmod(root, dirs)


def _env(tmp_path, **extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("NUMBA_", "PASSATK_")) and k != "PYTHONPATH"}
    env.update(HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / "xdg"), **extra)
    return env


def _run(python, env, cwd):
    run = subprocess.run([python, "-c", _CALLS], env=env, capture_output=True, text=True,
                         cwd=cwd, timeout=900)
    assert run.returncode == 0, run.stderr
    hits, misses = map(int, run.stdout.splitlines()[-2].split())
    return hits, misses, run.stdout.splitlines()[-1]


@pytest.mark.slow
def test_a_read_only_install_loads_every_kernel_from_it_and_an_edited_one_compiles(tmp_path):
    _usable_here()
    site = tmp_path / "site"
    dst = site / "passatk"
    shutil.copytree(PACKAGE, dst, ignore=shutil.ignore_patterns("__pycache__"))
    empty = tmp_path / "numba-cache"
    env = _env(tmp_path, PYTHONPATH=str(site), NUMBA_CACHE_DIR=str(empty))
    _lock(dst, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH, 0o555)
    try:
        hits, misses, values = _run(sys.executable, env, tmp_path)
    finally:
        _lock(dst, 0o644, 0o755)
    assert values == _expected()
    assert hits > 0 and misses == 0  # every signature loaded, none compiled
    assert not any(empty.rglob("*.nbc"))
    with open(dst / "_adv_kernels.py", "a") as f:
        f.write("\n# edited\n")
    hits, misses, values = _run(sys.executable, env, tmp_path)
    assert values == _expected()
    assert misses > 0  # the edited module's kernels compiled, not loaded from the zip
    saved = {p.name.split(".")[0] for p in empty.rglob("*.nbc")}
    assert saved == {"_adv_kernels"}


@pytest.mark.slow
def test_a_fresh_venv_installs_it_and_loads_from_it_read_only(tmp_path):
    """``pip install`` of the project into a new venv ships the zip as package data."""
    _usable_here()
    repo = os.path.dirname(os.path.dirname(PACKAGE))
    project = tmp_path / "project"
    shutil.copytree(os.path.join(repo, "src"), project / "src",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(os.path.join(repo, name), project / name)
    venv = tmp_path / "venv"
    # numpy, numba and msgspec, pip and setuptools from the interpreter's own site (a venv's
    # bundled setuptools may be too old to build a wheel); passatk itself only in the venv
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip",
                    str(venv)], check=True, timeout=300)
    python = str(venv / "bin" / "python")
    env = _env(tmp_path, NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"))
    install = subprocess.run(
        [python, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index",
         "-q", str(project)], env=env, capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stderr
    where = subprocess.run([python, "-c", "import passatk; print(passatk.__file__)"], env=env,
                           capture_output=True, text=True, check=True, cwd=tmp_path)
    installed = os.path.dirname(where.stdout.strip())
    assert installed.startswith(str(venv))
    assert os.path.isfile(os.path.join(installed, "data", "kernel_cache.zip"))
    _lock(installed, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH, 0o555)
    try:
        hits, misses, values = _run(python, env, tmp_path)
    finally:
        _lock(installed, 0o644, 0o755)
    assert values == _expected()
    assert hits > 0 and misses == 0
    assert not any((tmp_path / "numba-cache").rglob("*.nbc"))
