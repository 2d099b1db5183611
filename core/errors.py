"""Errors of passes and pipelines, with notes at other locations.

The Python bindings can only emit error diagnostics, not notes attached to
them (LLVM 22). A pass that fails emits each finding as one error and
records its notes here; the tools' diagnostic collector attaches them to
that error as real notes (`take_notes`). Embedders that run a pipeline
through `core.pipeline.run`/`run_pm` catch an MLIRError whose
error_diagnostics carry those notes; `PassError.findings` keeps them too.
"""
import threading
from collections.abc import Iterable

from mlir import ir

from ..ir.errors import LocatedError, Note


class PassError(LocatedError):
    """A pass failure at `location`, with optional notes [(loc, text)].

    `findings`: [(loc, message, [(loc, note)])] when one failure reports
    several problems."""


class PipelineError(ValueError):
    """Bad pipeline text: unknown pass, bad option, unbalanced nesting."""


_notes = threading.local()


def record_notes(message: str, notes: Iterable[Note]) -> None:
    """Notes for the next error emitted with `message`."""
    if notes:
        pending = getattr(_notes, "pending", None)
        if pending is None:
            pending = _notes.pending = []
        pending.append((message, list(notes)))
        del pending[:-MAX_WARNINGS]  # notes nobody took (an error never shown) do not pile up


def take_notes(message: str) -> list[Note]:
    """The notes recorded for an error with `message` ([] if none)."""
    pending: list[tuple[str, list[Note]]] = getattr(_notes, "pending", None) or []
    for i, (m, notes) in enumerate(pending):
        if m == message:
            del pending[i]
            return notes
    return []


MAX_WARNINGS = 100


def warn(location: ir.Location | None, message: str) -> None:
    """A warning of a pass, for the tool that runs it to print located
    (coll-opt, coll-run, coll-build): the bindings emit only errors."""
    pending = getattr(_notes, "warnings", None)
    if pending is None:
        pending = _notes.warnings = []
    pending.append((str(location), message))  # text: holds no Context alive
    del pending[:-MAX_WARNINGS]  # a caller that never takes them keeps the last ones only


def take_warnings() -> list[tuple[str, str]]:
    """[(location text, message)] warned since the last call."""
    pending: list[tuple[str, str]] = getattr(_notes, "warnings", None) or []
    _notes.warnings = []
    return pending
