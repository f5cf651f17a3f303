"""``-o`` targets that are not plain files, errors that name the target, and temp-file cleanup.

Reliability audit items C1 (special files, symlinks, ENOSPC), U2 (temp file in messages) and U5
(temp files left by SIGTERM or SIGKILL); reproducers r07, r18 and r20.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import threading

import pytest

from passatk import archives
from passatk._output import atomic_path, write_text
from passatk.cli import main

ROOT = os.geteuid() == 0 if hasattr(os, "geteuid") else False


def _node(tmp_path, name, minor):
    """A copy of a memory character device (1, minor) under tmp_path: 3 null, 7 full."""
    if not ROOT:
        pytest.skip("mknod needs root")
    path = tmp_path / name
    os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, minor))
    return path


def _leftovers(folder):
    return sorted(p for p in os.listdir(folder) if ".tmp" in p)


def test_device_node_is_written_through_not_replaced(tmp_path):
    null = _node(tmp_path, "null", 3)
    assert main(["formats", "--format", "csv", "-o", str(null)]) == 0
    assert stat.S_ISCHR(os.lstat(null).st_mode)
    assert _leftovers(tmp_path) == []


def test_enospc_is_an_error_with_the_target_named(tmp_path, capsys):
    full = _node(tmp_path, "full", 7)
    assert main(["formats", "--format", "csv", "-o", str(full)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"passatk: error: {full}: No space left on device"]
    assert stat.S_ISCHR(os.lstat(full).st_mode)


def test_enospc_without_root_on_dev_full(capsys):
    if ROOT or not os.path.exists("/dev/full"):
        pytest.skip("as root this could replace the system node if the fix regressed")
    assert main(["formats", "--format", "csv", "-o", "/dev/full"]) == 1
    assert "No space left on device" in capsys.readouterr().err


def test_fifo_gets_the_bytes(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    write_text("hello\n", str(fifo))
    reader.join(10)
    assert got == [b"hello\n"]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_symlink_to_regular_file_replaces_the_target_and_keeps_the_link(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "out.csv"
    target.write_text("old\n")
    os.chmod(target, 0o640)
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    write_text("new\n", str(link))
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == "new\n"
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640
    assert _leftovers(tmp_path) == [] and _leftovers(tmp_path / "real") == []


def test_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "link.txt"
    link.symlink_to(tmp_path / "made.txt")
    write_text("x", str(link))
    assert link.is_symlink() and (tmp_path / "made.txt").read_text() == "x"


def test_symlink_to_a_special_file_is_written_through(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    link = tmp_path / "stdout"
    link.symlink_to(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    write_text("via link\n", str(link))
    reader.join(10)
    assert got == [b"via link\n"] and link.is_symlink()


def test_proc_self_fd_symlink_reaches_stdout(tmp_path):
    link = tmp_path / "stdout"
    link.symlink_to("/proc/self/fd/1")
    code = ("import sys; from passatk._output import write_text; "
            f"write_text('through\\n', {str(link)!r})")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)
    assert out.stdout == "through\n" and link.is_symlink()


@pytest.mark.parametrize("target", ["missing_dir/out.json", ""])
def test_errors_name_the_target_not_the_temp_file(tmp_path, monkeypatch, capsys, target):
    monkeypatch.chdir(tmp_path)
    assert main(["formats", "--format", "json", "-o", target]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert ".tmp" not in err and str(tmp_path) not in err
    if target:
        assert err.startswith(f"passatk: error: {target}: ")
        assert "does not exist" in err


def test_directory_target_is_an_error(tmp_path, capsys):
    (tmp_path / "d").mkdir()
    assert main(["formats", "-o", str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"passatk: error: {tmp_path / 'd'}: ") and ".tmp" not in err


def test_sigterm_during_the_write_removes_the_temp_file(tmp_path):
    target = tmp_path / "out.json"
    target.write_text("old")
    code = ("import os, signal; from passatk._output import atomic_path\n"
            f"with atomic_path({str(target)!r}) as tmp:\n"
            "    open(tmp, 'w').write('partial')\n"
            "    os.kill(os.getpid(), signal.SIGTERM)\n"
            "    raise AssertionError('SIGTERM did not interrupt the write')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, proc.stderr
    assert target.read_text() == "old"
    assert _leftovers(tmp_path) == []


def test_sigterm_handler_is_restored(tmp_path):
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(RuntimeError), atomic_path(tmp_path / "out.txt"):
        assert signal.getsignal(signal.SIGTERM) != before
        raise RuntimeError
    assert signal.getsignal(signal.SIGTERM) == before
    assert os.listdir(tmp_path) == []


def _dead_pid():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_stale_temp_files_of_dead_writers_are_removed(tmp_path):
    target = tmp_path / "out.json"
    stale = tmp_path / f".out.json.{_dead_pid()}-abcd_123.tmp.json"
    live = tmp_path / f".out.json.{os.getppid()}-abcd_123.tmp.json"  # a live process's
    other = tmp_path / ".other.json.1-abcd_123.tmp.json"
    for p in (stale, live, other):
        p.write_text("partial")
    write_text("new", str(target))
    assert target.read_text() == "new"
    assert not stale.exists()
    assert live.exists() and other.exists()


def test_sigkill_leftover_is_removed_by_the_next_write(tmp_path):
    target = tmp_path / "out.json"
    code = ("import os, signal; from passatk._output import atomic_path\n"
            f"with atomic_path({str(target)!r}) as tmp:\n"
            "    os.kill(os.getpid(), signal.SIGKILL)\n")
    proc = subprocess.run([sys.executable, "-c", code], timeout=120)
    assert proc.returncode == -signal.SIGKILL
    assert len(_leftovers(tmp_path)) == 1  # SIGKILL cannot be handled
    write_text("new", str(target))
    assert _leftovers(tmp_path) == [] and target.read_text() == "new"


def test_archive_writers_use_the_same_writer(tmp_path):
    target = tmp_path / "counts.csv"
    target.write_text("old")
    os.chmod(target, 0o640)
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    archives.write_archive(str(link), ["T/0"], [[True, False]])
    assert link.is_symlink()
    assert target.read_text().splitlines() == ["task_id,n,c", "T/0,2,1"]
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640
    assert _leftovers(tmp_path) == []


def test_archive_writer_to_a_device_node(tmp_path):
    null = _node(tmp_path, "null.jsonl.gz", 3)
    archives.write_archive(str(null), ["T/0"], [[True]], format="counts")
    assert stat.S_ISCHR(os.lstat(null).st_mode)


def test_unwritable_directory_names_the_target(tmp_path, monkeypatch, capsys):
    import tempfile

    def denied(prefix, suffix, dir):  # what mkstemp raises in a directory without write access
        raise PermissionError(13, "Permission denied", os.path.join(dir, f"{prefix}x{suffix}"))

    monkeypatch.setattr(tempfile, "mkstemp", denied)
    target = tmp_path / "out.csv"
    assert main(["formats", "--format", "csv", "-o", str(target)]) == 2
    assert capsys.readouterr().err == f"passatk: error: {target}: Permission denied\n"
