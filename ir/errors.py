"""The one base class of coll's diagnostics.

Every error about a program (a verifier finding, a pass failure, a check's
report, bad input to a runtime) is a LocatedError: one or more findings
[(location, message, [(location, note)])], the location an ir.Location (or
None: about the program as a whole). The tools format every one of them
the same way (tools/diagnostics.py `format_error`): `file:line:col: error:
message`, its notes after it.
"""


from collections.abc import Iterable

from mlir import ir

# mlir.ir.MLIRError (what a failed parse, verify or pass raises, with its
# error_diagnostics): the bindings add it to mlir.ir as they load, and their
# stub does not list it.
MLIRError: type[Exception] = getattr(ir, "MLIRError")  # noqa: B009 - not in the stub

# A note is (location, text); a finding is (location, message, [notes]).
Note = tuple[ir.Location | None, str]
Finding = tuple[ir.Location | None, str, list[Note]]


class LocatedError(Exception):
    def __init__(self, message: str, location: ir.Location | None = None, notes: Iterable[Note] = (),
                 findings: Iterable[tuple[ir.Location | None, str, Iterable[Note]]] | None = None) -> None:
        super().__init__(message)
        self.location = location
        self.notes = list(notes)
        self.findings = [(loc, msg, list(n)) for loc, msg, n in findings] if findings else \
            [(location, message, self.notes)]
