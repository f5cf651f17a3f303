"""The numba cache works from a read-only install: the second process loads, not compiles."""

import os
import shutil
import stat
import subprocess
import sys

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
               HOME=str(tmp_path), NUMBA_DEBUG_CACHE="1")
    code = (f"import passatk; assert passatk.__file__.startswith({str(dst)!r}); "
            "print(passatk.pass_at_k(200, 13, 10))")
    try:
        runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                               text=True, check=True, cwd=tmp_path) for _ in range(2)]
    finally:
        for root, dirs, _ in os.walk(dst):
            for name in dirs:
                os.chmod(os.path.join(root, name), 0o755)
        os.chmod(dst, 0o755)
    assert runs[0].stdout.splitlines()[-1] == repr(passatk.pass_at_k(200, 13, 10))
    assert "data saved to" in runs[0].stdout
    assert "data loaded from" in runs[1].stdout
    assert "data saved to" not in runs[1].stdout
    assert (dst / "__pycache__").is_file()
    assert any((tmp_path / "cache").rglob("*.nbi"))
