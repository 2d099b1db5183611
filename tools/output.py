"""All-or-nothing output for the tools: nothing is written on failure."""
import os
import stat
import tempfile


def write_atomically(path, data):
    """Writes `data` (str or bytes) to `path` through a temp file renamed into
    place, so a failure never leaves a truncated file. Special files
    (/dev/null, /dev/stdout, fifos) are written directly: renaming over them
    would replace the device node."""
    mode = "wb" if isinstance(data, (bytes, bytearray)) else "w"
    try:
        special = not stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        special = False
    if special:
        with open(path, mode) as f:
            f.write(data)
        return
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)),
                               prefix="." + os.path.basename(path) + ".")
    try:
        with os.fdopen(fd, mode) as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
