"""Input that would crash a tool inside the MLIR parser (an assertion or a
stack overflow aborts the whole process) is caught before parsing, as
located errors. Every tool reads its input through `read_source` and
`check_source`.

Three layers:
- bytes that are not UTF-8 are reported at their line and column;
- a scan of the text with strings and comments masked out finds the
  patterns known to crash the LLVM 22 parser (found by fuzz/engine.py
  against the wheels, which are built with assertions) and nesting deeper
  than MAX_NESTING;
- whatever else might crash is parsed (and walked) first in a forked child
  with a bounded address space: a child killed by a signal is reported as
  an error instead of taking the tool down.
"""
from __future__ import annotations

import ctypes
import os
import re
import select
import signal
import subprocess
import sys
import time
from typing import BinaryIO, NoReturn

from mlir import ir

from coll.ir import make_context
from coll.ir.errors import MLIRError
from coll.ir.verifier import verify

from .source import as_text, is_bytecode

MAX_NESTING = 256  # brackets deep; the recursive-descent parser overflows the stack far below 20,000
CHILD_TIMEOUT = 120.0  # seconds for the child's parse
CHILD_MEMORY = 8 << 30  # bytes of address space for the child

# (pattern, message). The error points at the start of the match.
KNOWN_CRASHES = [
    # DenseArrayAttr::parse calls getIntOrFloatBitWidth() on `index`.
    (re.compile(r"array\s*<\s*index\b"),
     "dense arrays of 'index' elements are not supported (they crash the MLIR parser); "
     "use i64"),
    # The lexer reports "@ identifier expected..." for a lone `@` but, where
    # an op is expected after a !coll.token value, parsing still succeeds:
    # the Python bindings then abort on the unhandled error (ErrorCapture).
    (re.compile(r"@(?=\s|$)"),
     "expected a symbol name after '@' (a lone '@' crashes the MLIR Python bindings)"),
]


class SourceError(Exception):
    """[(file, line, col, message)] that make the input unusable."""

    def __init__(self, findings: list[tuple[str, int, int, str]]) -> None:
        super().__init__(findings[0][3])
        self.findings = findings

    def format(self) -> str:
        return "\n".join(f"{f}:{line}:{col}: error: {m}" if line else f"{f}: error: {m}"
                         for f, line, col, m in self.findings)


def read_source(path: str, stdin: BinaryIO | None = None) -> tuple[str, str]:
    """(text, display name) of `path` ('-': stdin). Raises SourceError for a
    file that cannot be read or is not UTF-8 (located at the first bad byte)."""
    name = "<stdin>" if path == "-" else path
    try:
        if path == "-":
            data = (stdin or sys.stdin.buffer).read()
        else:
            with open(path, "rb") as f:
                data = f.read()
    except OSError as e:
        raise SourceError([(name, 0, 0, f"could not open input file: {e.strerror or e}")]) from None
    except MemoryError:
        raise SourceError([(name, 0, 0, "could not read input file: out of memory")]) from None
    return decode(data, name), name


def decode(data: bytes | str, name: str) -> str:
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise SourceError([(name, line, col, f"invalid UTF-8 byte 0x{data[e.start]:02x}; "
                                             "expected UTF-8 text")]) from None


def mask(text: str) -> str:
    """`text` with the contents of string literals and `//` comments
    replaced by spaces (newlines kept), so patterns and brackets are found
    only in code, at their original offsets."""
    out, i, n = list(text), 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"' and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            for k in range(i + 1, min(j, n)):
                if out[k] != "\n":
                    out[k] = " "
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            for k in range(i, j):
                out[k] = " "
            i = j
        else:
            i += 1
    return "".join(out)


def _line_col(text: str, pos: int) -> tuple[int, int]:
    start = text.rfind("\n", 0, pos) + 1
    return text.count("\n", 0, pos) + 1, pos - start + 1


def known_crashes(text: str) -> list[tuple[int, int, str]]:
    """[(line, col, message)] for every known parser crash in `text` and
    for nesting deeper than MAX_NESTING."""
    code = mask(text)
    out = []
    for pattern, message in KNOWN_CRASHES:
        for m in pattern.finditer(code):
            out.append((*_line_col(text, m.start()), message))
    depth = 0
    for m in re.finditer(r"[(\[{]|[)\]}]", code):
        depth += 1 if m.group() in "([{" else -1
        if depth > MAX_NESTING:
            out.append((*_line_col(text, m.start()),
                        f"brackets nested deeper than {MAX_NESTING} levels; expected at most {MAX_NESTING}"))
            break
    return out


def _child(text: str | bytes) -> NoReturn:
    """In a forked child: parse and walk `text`; exit 0 (parsed), 1 (a parse
    error, which the caller reports itself)."""
    code = 3
    try:
        try:  # Linux: die with the parent (a tool killed on a timeout leaves no child behind)
            ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        try:
            import resource  # POSIX only: its ImportError is caught
            resource.setrlimit(resource.RLIMIT_AS, (CHILD_MEMORY, CHILD_MEMORY))
        except (ImportError, ValueError, OSError):
            pass
        ctx = _context()
        ctx.enable_multithreading(False)
        with ctx:
            try:
                module = ir.Module.parse(text)
            except MLIRError:
                code = 1
            except RuntimeError:  # bytecode whose diagnostic is not UTF-8 (nanobind, 22.1.8)
                code = 4
            else:
                verify(module.operation)
                module.operation.get_asm()
                code = 0
    except BaseException:  # noqa: BLE001 - the parent parses again and reports
        code = 2
    finally:
        os._exit(code)


def _context() -> ir.Context:
    """The caller's context when one is current (the child's copy of it:
    it parses as the tool will, and skips building one, ~20 ms of
    coll-opt's start), else a fresh one."""
    current = ir.Context.current  # None outside a `with ctx:`
    return current if current is not None else make_context()


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


_BASELINE = _threads()  # threads when the tool started (numpy's pool, ...)


def _fork_and_wait(text: str | bytes, timeout: float) -> int | None:
    """Forks a child that parses `text`; its exit status, or None when it
    ran out of time (then it is killed)."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        _child(text)
    deadline = time.monotonic() + timeout
    try:  # Linux >= 5.3: wait on the child's descriptor, woken when it exits
        fd: int | None = os.pidfd_open(pid)
    except (AttributeError, OSError):
        fd = None
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return status
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return None
            if fd is not None:
                select.select([fd], [], [], left)
            else:
                time.sleep(0.002)
    finally:
        if fd is not None:
            os.close(fd)


def _verdict(status: int | None) -> str | None:
    if status is None:
        return f"parsing did not finish within {CHILD_TIMEOUT:.0f} s"
    if os.WIFSIGNALED(status):
        return f"the MLIR parser crashed on this input ({signal.Signals(os.WTERMSIG(status)).name})"
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 4:
        return "the MLIR parser rejects this bytecode with a message that is not text"
    return None


class _Server:
    """A fresh interpreter that forks the parsing children, for a process
    that has started threads of its own (MLIR's pool, a JIT): forking it
    could copy a lock another thread holds, and the child would hang."""
    proc: subprocess.Popen[bytes] | None = None

    @classmethod
    def ask(cls, text: str | bytes) -> str | None:
        if cls.proc is None or cls.proc.poll() is not None:
            cls.proc = subprocess.Popen([sys.executable, "-m", "coll.tools.parse_guard", "--server"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        proc = cls.proc
        assert proc.stdin is not None and proc.stdout is not None  # both pipes
        data = text if isinstance(text, bytes) else text.encode()
        try:
            proc.stdin.write(b"%d\n" % len(data) + data)
            proc.stdin.flush()
            answer = proc.stdout.readline().decode().strip()
        except OSError:
            answer = ""
        if not answer:
            cls.proc = None
            return None
        return None if answer == "ok" else answer


def serve() -> None:
    """The server's loop: length-prefixed texts in, one verdict line out
    (mlir and coll.ir, imported at the top, are imported once, before any fork)."""
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    while True:
        line = inp.readline()
        if not line:
            return
        data = inp.read(int(line))  # text or bytecode: Module.parse takes both
        why = _verdict(_fork_and_wait(data, CHILD_TIMEOUT))
        out.write((why or "ok").encode() + b"\n")
        out.flush()


def crash_in_child(text: str | bytes) -> str | None:
    """None when `text` parses (or fails to parse) without killing a
    process; else why it would (a signal, or no answer in time)."""
    if not hasattr(os, "fork"):
        return None
    if _threads() > _BASELINE:
        return _Server.ask(text)
    return _verdict(_fork_and_wait(text, CHILD_TIMEOUT))


def check_input(data: bytes, filename: str) -> None:
    """check_source for text; for bytecode (bytes), the parse in a child
    only: upstream's bytecode reader aborts on some corrupt inputs
    (StorageUniquer assertion, 22.1.8)."""
    if not is_bytecode(data):
        return check_source(as_text(data), filename)
    why = crash_in_child(data)
    if why:
        raise SourceError([(filename, 0, 0, f"{why}; the bytecode was not parsed: it is malformed")])


def check_source(text: str, filename: str) -> None:
    """Raises SourceError when parsing `text` would crash the process."""
    found = known_crashes(text)
    if found:
        raise SourceError([(filename, line, col, m) for line, col, m in found])
    why = crash_in_child(text)
    if why:
        raise SourceError([(filename, 1, 1, f"{why}; the input was not parsed")])


if __name__ == "__main__":
    if sys.argv[1:] == ["--server"]:
        serve()
