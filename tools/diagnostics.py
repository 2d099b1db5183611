"""MLIR-style diagnostics for the tools: collect, print, and check them
against `// expected-error {{...}}` annotations (--verify-diagnostics)."""
from __future__ import annotations

import atexit
import os
import re
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn, TextIO

from coll.core.errors import take_notes, take_warnings
from coll.ir.errors import LocatedError, MLIRError


@dataclass
class Diag:
    severity: str          # error | warning | note | remark
    message: str
    file: str = ""
    line: int = 0
    col: int = 0
    notes: list[Diag] = field(default_factory=list)
    located: bool = False  # a file location, even one at 0:0

    def format(self) -> str:
        where = (f"{self.file}:{self.line}:{self.col}: " if self.line or self.located
                 else f"{self.file}: " if self.file else "")
        out = [f"{where}{self.severity}: {self.message}"]
        out += [n.format() for n in self.notes]
        return "\n".join(out)


_SEVERITY = {"ERROR": "error", "WARNING": "warning", "NOTE": "note", "REMARK": "remark"}


def _file_loc(loc: Any) -> tuple[str, int, int]:
    """The first file:line:col inside a (possibly nested) location."""
    text = str(loc)
    m = re.search(r'"((?:[^"\\]|\\.)*)":(\d+):(\d+)', text)
    if m:
        return m.group(1), int(m.group(2)), int(m.group(3))
    return "", 0, 0


def from_mlir(d: Any, filename: str) -> Diag:
    """Diag from a binding diagnostic (handler) or DiagnosticInfo (MLIRError)."""
    sev = _SEVERITY.get(str(d.severity).split(".")[-1], "error")
    f, line, col = _file_loc(d.location)
    located = bool(f)
    if f == "-" or (f == "" and line):
        f = filename
    notes = [from_mlir(n, filename) for n in d.notes]
    if sev == "error":  # notes a pass recorded (core/errors.py: the bindings cannot emit them)
        notes += [from_location(loc, text, filename, "note") for loc, text in take_notes(d.message)]
    return Diag(sev, d.message, f, line, col, notes, located)


def from_location(loc: Any, message: str, filename: str, severity: str = "error") -> Diag:
    f, line, col = _file_loc(loc)
    located = bool(f)
    if f == "-" or (f == "" and line):
        f = filename
    return Diag(severity, message, f, line, col, located=located)


class Collector:
    """Catches every diagnostic the context emits, so nothing reaches stderr
    unformatted."""

    def __init__(self, ctx: Any, filename: str) -> None:
        self.filename = filename
        self.diags: list[Diag] = []
        self.handle = ctx.attach_diagnostic_handler(self._on)

    def _on(self, d: Any) -> bool:
        self._add(from_mlir(d, self.filename))
        return True

    def _add(self, d: Diag) -> None:
        self.diags.append(d)

    def add_error(self, err: Exception) -> None:
        """Adds the diagnostics carried by an MLIRError."""
        infos = getattr(err, "error_diagnostics", None) or []
        if infos:
            for d in infos:
                self._add(from_mlir(d, self.filename))
        else:
            self.diags.append(Diag("error", str(err), self.filename))

    def detach(self) -> None:
        self.handle.detach()


def diags_of(exc: BaseException, filename: str) -> list[Diag]:
    """The Diags of an error coll raises about a program: an MLIRError (its
    diagnostics), any LocatedError (ir/errors.py: verifier, passes, checks,
    runtimes; its findings with their notes), else one error about the
    program as a whole (at 1:1)."""
    if isinstance(exc, MLIRError):
        infos = getattr(exc, "error_diagnostics", None) or []
        return [from_mlir(d, filename) for d in infos] or [Diag("error", str(exc), filename, 1, 1)]
    if isinstance(exc, LocatedError):
        out = []
        for loc, msg, notes in exc.findings:
            d = from_location(loc, msg, filename) if loc is not None else Diag("error", msg, filename, 1, 1)
            d.notes = [from_location(nloc, text, filename, "note") for nloc, text in notes]
            out.append(d)
        return out
    return [Diag("error", str(exc), filename, 1, 1)]


def format_error(exc: BaseException, filename: str) -> str:
    """`diags_of` as the text the tools print (one place formats them all)."""
    return "\n".join(d.format() for d in diags_of(exc, filename))


def print_diags(diags: list[Diag], stream: TextIO | None = None) -> None:
    for d in diags:
        print(d.format(), file=stream or sys.stderr)  # the stderr of now (a test may swap it)


def print_warnings(filename: str, stream: TextIO | None = None) -> None:
    """Prints the passes' warnings (core/errors.py warn), located."""
    print_diags([from_location(loc, msg, filename, "warning") for loc, msg in take_warnings()], stream)


class Failure(Exception):
    """Diagnostics (or one message) already formatted for stderr: `main`
    prints them and exits 1."""


def main(prog: str, run: Callable[[list[str]], int], argv: list[str] | None = None,
         quick_exit: bool = False) -> NoReturn:
    """Every tool's `main`: runs `run(argv)` (default: the command line)
    and exits with its code. A Failure is printed as it is, exit 1; what no
    handler caught still ends as one `prog: error: internal error:` line and
    exit 1, not a traceback (COLL_TRACEBACK=1 shows it); Ctrl-C is exit
    130; a closed stdout pipe (`| head`) is quiet, exit 1. `quick_exit`
    (an executable's entry point, never a call that catches SystemExit):
    the process ends without the interpreter's teardown (_exit_now)."""
    try:
        code = run(sys.argv[1:] if argv is None else argv)
        sys.stdout.flush()  # here, so that a closed pipe is handled below, not at exit
    except Failure as f:
        print(str(f), file=sys.stderr)
        code = 1
    except KeyboardInterrupt:
        code = 130
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 1
    except Exception as e:  # noqa: BLE001 - the last resort
        if os.environ.get("COLL_TRACEBACK"):
            raise
        print(f"{prog}: error: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        code = 1
    if quick_exit:
        _exit_now(code)
    sys.exit(code)


def _exit_now(code: int) -> NoReturn:
    """Exits with `code` once the atexit handlers have run, skipping the
    interpreter's teardown: destroying the bindings' modules and types takes
    20-40 ms, a third of coll-opt's time over `import mlir.ir`
    (bench/startup.py), and there is nothing left to write. With another
    thread alive (work that may not be over), the normal exit."""
    if threading.active_count() > 1:
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed, or a pipe nobody reads: nothing more to say
            pass
    os._exit(code)


tool_main = main  # its old name
