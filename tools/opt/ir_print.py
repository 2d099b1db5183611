"""--mlir-print-ir-before=NAME / --mlir-print-ir-after=NAME.

The bindings' PassManager.enable_ir_printing has no per-pass filter. So the
pass manager prints before/after every pass, into a temp file standing in
for fd 2 (C++ writes there), and only the dumps of the named passes reach
stderr: the pipeline itself is untouched (no extra passes in timing,
statistics or --dump-pass-pipeline), nested pipelines included. Python
writes during the run (coll-stats) go straight to the real stderr.
"""
import contextlib
import os
import re
import sys
import tempfile
from collections.abc import Container, Iterable, Iterator

# "// -----// IR Dump After CSE (cse) ('func.func' operation: @f) //----- //"
_HEADER = re.compile(r"// -----// IR Dump (Before|After) .*? \(([^()\s]+)\)")


def keep_dump(header: str, before: Container[str], after: Container[str]) -> bool:
    """Whether the dump under `header` is wanted; "*" in a set: every pass."""
    m = _HEADER.match(header)
    if not m:
        return True
    names = before if m.group(1) == "Before" else after
    return "*" in names or m.group(2) in names


def filter_dumps(text: str, before: Container[str], after: Container[str]) -> str:
    """Drops the dump blocks whose pass is not named in `before`/`after`.
    A block runs from its header to the next header or report banner."""
    out, keep = [], True
    for line in text.splitlines(keepends=True):
        if line.startswith("// -----// IR Dump "):
            keep = keep_dump(line, before, after)
        elif line.startswith("===-"):
            keep = True  # a statistics report follows the last dump
        if keep:
            out.append(line)
    return "".join(out)


@contextlib.contextmanager
def only_dumps_of(before: Iterable[str], after: Iterable[str]) -> Iterator[None]:
    """While active, C++ stderr output is collected; on exit it is written
    to stderr without the dumps of other passes."""
    sys.stderr.flush()
    saved_fd = os.dup(2)
    saved_py = sys.stderr
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        sys.stderr = open(os.dup(saved_fd), "w", encoding=saved_py.encoding, errors="replace")
        try:
            yield
        finally:
            sys.stderr.close()
            sys.stderr = saved_py
            os.dup2(saved_fd, 2)
            os.close(saved_fd)
            tmp.seek(0)
            text = tmp.read().decode("utf-8", errors="replace")
            sys.stderr.write(filter_dumps(text, set(before), set(after)))
            sys.stderr.flush()
