"""--verify-diagnostics: the `// expected-error {{...}}` annotations of an
input, checked against the diagnostics a run produced (as mlir-opt does)."""
import re
from dataclasses import dataclass

from ..diagnostics import Diag

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

    def matches(self, d: Diag) -> bool:
        if d.severity != self.severity or d.line != self.line:
            return False
        if self.regex:
            pattern = "".join(
                part if i % 2 else re.escape(part)
                for i, part in enumerate(re.split(r"\{\{(.*?)\}\}", self.text)))
            return re.search(pattern, d.message) is not None
        return self.text in d.message


def parse_expectations(text: str, first_line: int = 1) -> list[Expect]:
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


def check_expectations(expects: list[Expect], diags: list[Diag], filename: str,
                       only_expected: bool = False) -> list[Diag]:
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
            problems.append(Diag("error", f"expected {e.severity} \"{e.text}\" was not produced",
                                 filename, e.at, e.col))
    return problems


