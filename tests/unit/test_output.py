"""Tool output is all or nothing, and never replaces a special file."""
import os
import stat

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
