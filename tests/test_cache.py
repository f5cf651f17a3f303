"""The numba cache works from a read-only install: the second process loads, not compiles."""

import os
import shutil
import stat
import subprocess
import sys

import numpy as np
import pytest

import passatk


def test_read_only_package_uses_user_cache(tmp_path):
    src = os.path.dirname(passatk.__file__)
    site = tmp_path / "site"
    dst = site / "passatk"
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
    # Root ignores file modes, so also block the in-tree cache the way a read-only mount would:
    # a plain file where numba would create its __pycache__ directory.
    (dst / "__pycache__").write_text("")
    for root, dirs, files in os.walk(dst, topdown=False):
        for name in files:
            os.chmod(os.path.join(root, name), stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o555)
    os.chmod(dst, 0o555)
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env.update(PYTHONPATH=str(site), XDG_CACHE_HOME=str(tmp_path / "cache"),
               HOME=str(tmp_path), NUMBA_DEBUG_CACHE="1", PASSATK_SHIPPED_CACHE="0")
    code = (f"import passatk; assert passatk.__file__.startswith({str(dst)!r}); "
            "print(passatk.pass_at_k(2000, 13, 10))")
    try:
        runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                               text=True, check=True, cwd=tmp_path) for _ in range(2)]
    finally:
        for root, dirs, _ in os.walk(dst):
            for name in dirs:
                os.chmod(os.path.join(root, name), 0o755)
        os.chmod(dst, 0o755)
    assert runs[0].stdout.splitlines()[-1] == repr(passatk.pass_at_k(2000, 13, 10))
    assert "data saved to" in runs[0].stdout
    assert "data loaded from" in runs[1].stdout
    assert "data saved to" not in runs[1].stdout
    assert (dst / "__pycache__").is_file()
    assert any((tmp_path / "cache").rglob("*.nbi"))


def _copy_package(site):
    dst = site / "passatk"
    shutil.copytree(os.path.dirname(passatk.__file__), dst,
                    ignore=shutil.ignore_patterns("__pycache__"))
    return dst


def _env(tmp_path, site, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    # the shipped kernel cache is left out: these tests are of numba's and the warm-up's
    env.update(PYTHONPATH=str(site), XDG_CACHE_HOME=str(tmp_path / "xdg"), HOME=str(tmp_path),
               PASSATK_SHIPPED_CACHE="0", **extra)
    return env


def _lock(dst, mode_files, mode_dirs):
    for root, dirs, files in os.walk(dst, topdown=False):
        for name in files:
            os.chmod(os.path.join(root, name), mode_files)
        for name in dirs:
            os.chmod(os.path.join(root, name), mode_dirs)
    os.chmod(dst, mode_dirs)


_BULK = ("import numpy as np, passatk\n"
         "n = np.full(40000, 200); c = np.arange(40000) % 201\n"
         "print(repr(float(passatk.pass_at_k(n, c, 10).sum())), "
         "repr(passatk.pass_at_k(2000, 13, 10)))")


@pytest.mark.slow
def test_warm_leaves_a_cache_that_a_read_only_copy_elsewhere_loads(tmp_path):
    """``passatk warm`` in a writable install keeps the kernels in the package's __pycache__;
    a copy of that install at another path, read-only, with NUMBA_CACHE_DIR pointing at an
    empty folder, loads every kernel from there and compiles none."""
    built = _copy_package(tmp_path / "build")
    run = subprocess.run([sys.executable, "-m", "passatk", "warm", "--only", "pass_at_k"],
                         env=_env(tmp_path, tmp_path / "build"), capture_output=True,
                         text=True, timeout=900, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert f"cache: {built / '__pycache__'}" in run.stdout
    assert " 0 loaded from the cache" in run.stdout
    # the image: the same files, at another path, read-only
    site = tmp_path / "image"
    shutil.copytree(built.parent, site)
    dst = site / "passatk"
    before = sorted(p.name for p in (dst / "__pycache__").iterdir())
    assert any(name.endswith(".nbi") for name in before)
    empty = tmp_path / "numba-cache"
    env = _env(tmp_path, site, NUMBA_CACHE_DIR=str(empty), NUMBA_DEBUG_CACHE="1")
    _lock(dst, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH, 0o555)
    try:
        runs = [subprocess.run([sys.executable, "-c", _BULK], env=env, capture_output=True,
                               text=True, check=True, cwd=tmp_path, timeout=300)
                for _ in range(2)]
    finally:
        _lock(dst, 0o644, 0o755)
    n = np.full(40000, 200)
    expected = (f"{float(passatk.pass_at_k(n, np.arange(40000) % 201, 10).sum())!r} "
                f"{passatk.pass_at_k(2000, 13, 10)!r}")
    for r in runs:
        assert r.stdout.splitlines()[-1] == expected
        assert f"data loaded from '{dst / '__pycache__'}" in r.stdout
        assert "data saved to" not in r.stdout  # nothing compiled
    assert sorted(p.name for p in (dst / "__pycache__").iterdir()) == before
    assert not any(empty.rglob("*.nbc"))
    # entries are keyed on the source's content: an edited kernel module is compiled afresh
    with open(dst / "_kernels.py", "a") as f:
        f.write("\n# edited\n")
    edited = subprocess.run([sys.executable, "-c", _BULK], env=env, capture_output=True,
                            text=True, check=True, cwd=tmp_path, timeout=600)
    assert edited.stdout.splitlines()[-1] == expected
    assert f"data saved to '{empty}" in edited.stdout
    assert "_kernels.bulk_reuse" not in "".join(
        line for line in edited.stdout.splitlines() if "data loaded from" in line)



@pytest.mark.slow
def test_a_corrupt_package_cache_index_is_a_miss(tmp_path):
    from passatk import _kernels

    dst = _copy_package(tmp_path / "site")
    (dst / "__pycache__").mkdir()
    line = _kernels.bulk_serial.py_func.__code__.co_firstlineno
    tag = f"py{sys.version_info[0]}{sys.version_info[1]}"
    (dst / "__pycache__" / f"_kernels.bulk_serial-{line}.{tag}.nbi").write_bytes(b"xyz")
    env = _env(tmp_path, tmp_path / "site", NUMBA_CACHE_DIR=str(tmp_path / "empty"),
               NUMBA_DEBUG_CACHE="1")
    code = ("import numpy as np, passatk\n"
            "print(repr(float(passatk.pass_at_k(np.full(100, 2000), 13, 10)[0])))")
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         cwd=tmp_path, timeout=600)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[-1] == repr(passatk.pass_at_k(2000, 13, 10))
    saved = [line for line in run.stdout.splitlines() if "data saved to" in line]
    assert any("_kernels.bulk_serial-" in line for line in saved)  # compiled, not loaded
