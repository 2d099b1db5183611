"""MLIR-style diagnostics for the tools: collect, print, and check them
against `// expected-error {{...}}` annotations (--verify-diagnostics)."""
import re
import sys
from dataclasses import dataclass, field

from coll.core.errors import take_notes


@dataclass
class Diag:
    severity: str          # error | warning | note | remark
    message: str
    file: str = ""
    line: int = 0
    col: int = 0
    notes: list = field(default_factory=list)
    located: bool = False  # a file location, even one at 0:0

    def format(self):
        where = f"{self.file}:{self.line}:{self.col}: " if self.line or self.located else (f"{self.file}: " if self.file else "")
        out = [f"{where}{self.severity}: {self.message}"]
        out += [n.format() for n in self.notes]
        return "\n".join(out)


_SEVERITY = {"ERROR": "error", "WARNING": "warning", "NOTE": "note", "REMARK": "remark"}


def _file_loc(loc):
    """The first file:line:col inside a (possibly nested) location."""
    text = str(loc)
    m = re.search(r'"((?:[^"\\]|\\.)*)":(\d+):(\d+)', text)
    if m:
        return m.group(1), int(m.group(2)), int(m.group(3))
    return "", 0, 0


def from_mlir(d, filename):
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


def from_location(loc, message, filename, severity="error"):
    f, line, col = _file_loc(loc)
    located = bool(f)
    if f == "-" or (f == "" and line):
        f = filename
    return Diag(severity, message, f, line, col, located=located)


class Collector:
    """Catches every diagnostic the context emits, so nothing reaches stderr
    unformatted."""

    def __init__(self, ctx, filename):
        self.filename = filename
        self.diags = []
        self.handle = ctx.attach_diagnostic_handler(self._on)

    def _on(self, d):
        self._add(from_mlir(d, self.filename))
        return True

    def _add(self, d):
        self.diags.append(d)

    def add_error(self, err):
        """Adds the diagnostics carried by an MLIRError."""
        infos = getattr(err, "error_diagnostics", None) or []
        if infos:
            for d in infos:
                self._add(from_mlir(d, self.filename))
        else:
            self.diags.append(Diag("error", str(err), self.filename))

    def detach(self):
        self.handle.detach()


def diags_of(exc, filename):
    """The Diags of an error coll raises about a program: an MLIRError (its
    diagnostics), any LocatedError (ir/errors.py: verifier, passes, checks,
    runtimes; its findings with their notes), else one error about the
    program as a whole (at 1:1)."""
    from mlir import ir
    from coll.ir.errors import LocatedError
    if isinstance(exc, ir.MLIRError):
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


def format_error(exc, filename):
    """`diags_of` as the text the tools print (one place formats them all)."""
    return "\n".join(d.format() for d in diags_of(exc, filename))


def print_diags(diags, stream=None):
    for d in diags:
        print(d.format(), file=stream or sys.stderr)  # the stderr of now (a test may swap it)


def print_warnings(filename, stream=None):
    """Prints the passes' warnings (core/errors.py warn), located."""
    from coll.core.errors import take_warnings
    print_diags([from_location(loc, msg, filename, "warning") for loc, msg in take_warnings()], stream)


# --verify-diagnostics -------------------------------------------------------
_EXPECT = re.compile(
    r"expected-(error|warning|note|remark)(-re)?\s*(@(above|below|[+-]\d+))?\s*(\d+)?\s*\{\{(.*)\}\}")


@dataclass
class Expect:
    severity: str
    regex: bool
    line: int
    text: str
    at: int  # line of the annotation itself
    matched: bool = False
    col: int = 1  # column of "expected-...", where mlir-opt points
    count: int = 1  # `expected-note@+1 2 {{...}}`: that many diagnostics

    def matches(self, d):
        if d.severity != self.severity or d.line != self.line:
            return False
        if self.regex:
            pattern = "".join(
                part if i % 2 else re.escape(part)
                for i, part in enumerate(re.split(r"\{\{(.*?)\}\}", self.text)))
            return re.search(pattern, d.message) is not None
        return self.text in d.message


def parse_expectations(text, first_line=1):
    out = []
    lines = text.splitlines()
    for i, raw in enumerate(lines):
        lineno = first_line + i
        m = _EXPECT.search(raw)
        if not m:
            continue
        sev, re_flag, _, at, count, body = m.groups()
        if at is None:
            target = lineno
        elif at == "above":
            target = lineno - 1
        elif at == "below":
            target = lineno + 1
        else:
            target = lineno + int(at)
        out.append(Expect(sev, bool(re_flag), target, body, lineno, col=m.start() + 1,
                          count=int(count) if count else 1))
    return out


def check_expectations(expects, diags, filename, only_expected=False):
    """Returns the problems as Diags (empty when everything matched).
    only_expected (--verify-diagnostics=only-expected): diagnostics that no
    annotation expects are not problems."""
    problems = []
    flat = []
    for d in diags:
        flat.append(d)
        # mlir-opt turns the op printing off under --verify-diagnostics; the
        # bindings cannot, so that one note is not checked.
        flat.extend(n for n in d.notes if not n.message.startswith("see current operation:"))
    for d in flat:
        e = next((e for e in expects if not e.matched and e.matches(d)), None)
        if e is not None:
            e.count -= 1
            e.matched = e.count == 0
        elif not only_expected:  # as mlir-opt: an unexpected note too
            problems.append(Diag("error", f"unexpected {d.severity}: {d.message}", d.file or filename, d.line, d.col))
    for e in expects:
        if not e.matched:
            problems.append(Diag("error", f"expected {e.severity} \"{e.text}\" was not produced", filename, e.at, e.col))
    return problems


def tool_main(prog, run, argv):
    """Runs a tool's `run(argv)` and exits with its code. What no handler
    caught still ends as one `prog: error:` line and exit 1, not a traceback
    (COLL_TRACEBACK=1 shows it); a closed stdout pipe (`| head`) is quiet."""
    import os
    try:
        code = run(argv)
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
    sys.exit(code)
