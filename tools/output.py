"""All-or-nothing output for the tools: nothing is written on failure, and
the file ends up as a plain open() would have left it."""
from __future__ import annotations

import os
import stat
import sys
from typing import Literal


def write_output(prog: str, path: str, data: str | bytes) -> int:
    """The tools' last step: `data` (str or bytes) to stdout ('-') or to
    `path` atomically. Returns the exit code; a failure is one
    `prog: error: could not write ...` line."""
    try:
        if path == "-":
            out = data if isinstance(data, bytes) else data.encode("utf-8", errors="surrogateescape")
            sys.stdout.flush()
            sys.stdout.buffer.write(out)
            sys.stdout.flush()
        else:
            write_atomically(path, data)
    except BrokenPipeError:
        raise  # `| head`: quiet, as tool_main handles it
    except OSError as e:
        print(f"{prog}: error: could not write '{path}': {e.strerror}", file=sys.stderr)
        return 1
    return 0


def write_atomically(path: str, data: str | bytes) -> None:
    """Writes `data` (str or bytes) to `path` through a temp file renamed into
    place, so a failure never leaves a truncated file.

    - A new file gets the mode open() gives (0666 less the umask); an
      existing one keeps its mode (and owner, where allowed).
    - A symlink is written through: its target is replaced, the link stays.
    - Special files (/dev/null, /dev/stdout, fifos) are written directly:
      renaming over them would replace the device node.
    Raises OSError (e.g. a missing directory) with nothing written."""
    if isinstance(data, str):
        data = data.encode("utf-8", errors="surrogateescape")
    target = os.path.realpath(path)
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        with open(path, "wb") as f:
            f.write(data)
        return
    tmp, fd = _create_temp(target)
    try:
        with os.fdopen(fd, "wb") as f:
            if st is not None:
                _keep_attributes(f.fileno(), st)
            f.write(data)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def check_writable(path: str) -> None:
    """Raises OSError when write_atomically(path, ...) could not write
    (a directory, a missing or read-only folder), found by making and
    removing its temporary file: for a tool to say so before its work."""
    target = os.path.realpath(path)
    if os.path.isdir(target):
        raise IsADirectoryError(21, "Is a directory", path)
    if os.path.exists(target) and not os.path.isfile(target):
        return  # a special file (/dev/null, a fifo): written directly
    tmp, fd = _create_temp(target)
    os.close(fd)
    os.unlink(tmp)


def _create_temp(target: str) -> tuple[str, int]:
    """A fresh file beside `target`, created with mode 0666 so that the
    kernel applies the umask exactly as for open(target, 'w')."""
    folder, base = os.path.split(target)
    for _ in range(100):
        tmp = os.path.join(folder, f".{base}.{os.urandom(4).hex()}.tmp")
        try:
            return tmp, os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
        except FileExistsError:
            continue
    raise FileExistsError(f"could not create a temporary file beside '{target}'")


def _keep_attributes(fd: int, st: os.stat_result) -> None:
    os.fchmod(fd, stat.S_IMODE(st.st_mode))
    if (st.st_uid, st.st_gid) != (os.getuid(), os.getgid()):
        try:
            os.fchown(fd, st.st_uid, st.st_gid)
        except PermissionError:
            pass  # only root may; the file is then the writer's, as a new one would be


class AtomicPath:
    """For output a tool produces by path (a linker's -o): `tmp` is a fresh
    name beside the target; commit() moves it into place under the same
    rules as write_atomically (mode kept, symlinks followed, special files
    written directly); leaving without commit() removes it.

        with AtomicPath(out) as ap:
            link(ap.tmp)
            ap.commit()
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.target = os.path.realpath(path)
        folder = os.path.dirname(self.target)
        if not os.path.isdir(folder):
            raise FileNotFoundError(2, "No such file or directory", path)
        tmp, fd = _create_temp(self.target)
        os.close(fd)
        os.unlink(tmp)  # the producer creates it, with the mode it gives
        self.tmp = tmp

    def __enter__(self) -> AtomicPath:
        return self

    def commit(self) -> None:
        try:
            st = os.stat(self.target)
        except FileNotFoundError:
            st = None
        if st is not None and not stat.S_ISREG(st.st_mode):
            with open(self.tmp, "rb") as f:
                write_atomically(self.path, f.read())
            os.unlink(self.tmp)
            return
        if st is not None:
            fd = os.open(self.tmp, os.O_RDONLY)
            try:
                _keep_attributes(fd, st)
            finally:
                os.close(fd)
        os.replace(self.tmp, self.target)

    def __exit__(self, *exc: object) -> Literal[False]:
        try:
            os.unlink(self.tmp)
        except FileNotFoundError:
            pass
        return False
