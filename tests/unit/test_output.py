"""Tool output is all or nothing, and never replaces a special file."""
import os
import stat

import pytest

from coll.tools.output import write_atomically


def test_regular_file_replaced_whole(tmp_path):
    p = tmp_path / "out.mlir"
    p.write_text("old")
    write_atomically(str(p), "new")
    assert p.read_text() == "new"
    assert [f.name for f in tmp_path.iterdir()] == ["out.mlir"]


def test_special_file_is_written_not_replaced(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    r = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        write_atomically(str(fifo), b"bytes")
        assert os.read(r, 16) == b"bytes"
    finally:
        os.close(r)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_dev_null_stays_a_device():
    write_atomically("/dev/null", "x")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def _mode(p):
    return stat.S_IMODE(os.stat(p).st_mode)


def test_new_file_gets_the_mode_open_gives(tmp_path):
    old = os.umask(0o022)
    try:
        write_atomically(str(tmp_path / "new.mlir"), "x")
        with open(tmp_path / "plain.mlir", "w") as f:
            f.write("x")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "new.mlir") == 0o644 == _mode(tmp_path / "plain.mlir")


def test_umask_is_honoured(tmp_path):
    old = os.umask(0o077)
    try:
        write_atomically(str(tmp_path / "new.mlir"), "x")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "new.mlir") == 0o600


def test_existing_file_keeps_its_mode(tmp_path):
    for mode in (0o600, 0o755, 0o640):
        p = tmp_path / f"out{mode:o}.mlir"
        p.write_text("old")
        os.chmod(p, mode)
        write_atomically(str(p), "new")
        assert (p.read_text(), _mode(p)) == ("new", mode)


def test_symlink_is_written_through(tmp_path):
    target = tmp_path / "real.mlir"
    target.write_text("old")
    link = tmp_path / "link.mlir"
    link.symlink_to("real.mlir")
    write_atomically(str(link), "new")
    assert link.is_symlink() and os.readlink(link) == "real.mlir"
    assert target.read_text() == "new"
    assert sorted(f.name for f in tmp_path.iterdir()) == ["link.mlir", "real.mlir"]


def test_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "link.mlir"
    link.symlink_to("made.mlir")
    write_atomically(str(link), "new")
    assert link.is_symlink() and (tmp_path / "made.mlir").read_text() == "new"


def test_failed_rename_leaves_old_file_and_no_temp(tmp_path, monkeypatch):
    p = tmp_path / "out.mlir"
    p.write_text("old")

    def fail(*a):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError):
        write_atomically(str(p), "new")
    assert p.read_text() == "old"
    assert [f.name for f in tmp_path.iterdir()] == ["out.mlir"]


def test_missing_directory_raises_and_writes_nothing(tmp_path):
    with pytest.raises(FileNotFoundError):
        write_atomically(str(tmp_path / "no" / "out.mlir"), "x")
    assert list(tmp_path.iterdir()) == []
