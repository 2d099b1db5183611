"""Pipeline text -> one PassManager mixing coll passes and upstream passes.

`builtin.module(coll-lower-all-reduce{strategy=ring},func.func(cse))`: coll
passes (from the registry) become Python passes, everything else goes to
upstream's pipeline parser, all in order in one PassManager. The bindings
cannot nest a Python pass (PassManager has no `nest`), so a coll pass
inside `func.func(...)` or `any(...)` runs at module level on each op that
anchor names, between the upstream segments before and after it: for
passes that work on one op at a time this is the same schedule.
"""
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from mlir import ir, passmanager

from ..ir.errors import MLIRError
from ..ir.verifier import VerifyError, verify_or_raise
from ..ir.walk import GENERATION
from .errors import PassError, PipelineError, record_notes, take_notes
from .registry import PassInfo, _Lookup, lookup, quote_value

MODULE = "builtin.module"


@dataclass
class Element:
    """One pipeline element: a pass `name{options}` or a nested `anchor(...)`."""
    name: str
    options: str = ""
    children: "tuple[Element, ...] | None" = None  # set for a nested pipeline

    def text(self) -> str:
        if self.children is not None:
            return f"{self.name}({','.join(c.text() for c in self.children)})"
        return f"{self.name}{{{self.options}}}" if self.options else self.name


def split_top(text: str) -> list[str]:
    """Splits at commas not nested in (), {} or []."""
    parts: list[str] = []
    depth = 0
    cur: list[str] = []
    for ch in text:
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
            if depth < 0:
                raise PipelineError(f"unbalanced ')' in pipeline '{text}'")
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if depth != 0:
        raise PipelineError(f"unbalanced parentheses in pipeline '{text}'")
    parts.append("".join(cur).strip())
    if parts == [""]:
        return []  # builtin.module(): the empty pipeline
    if "" in parts:  # 'cse,,cse', 'cse,': a typo upstream refuses too
        raise PipelineError(f"empty pipeline element in '{text}'")
    return parts


def _element(text: str) -> Element:
    brace, paren = text.find("{"), text.find("(")
    if paren != -1 and (brace == -1 or paren < brace):
        if not text.endswith(")"):
            raise PipelineError(f"expected ')' at the end of '{text}'")
        name = text[:paren].strip()
        if not name:
            raise PipelineError(f"a nested pipeline needs an op name before '(' in '{text}'")
        return Element(name, children=tuple(_element(p) for p in split_top(text[paren + 1:-1])))
    if brace != -1:
        if not text.endswith("}"):
            raise PipelineError(f"expected '}}' at the end of '{text}'")
        return Element(text[:brace].strip(), text[brace + 1:-1].strip())
    return Element(text.strip())


def split_anchor(text: str) -> tuple[str, str]:
    """'builtin.module(a,b)' -> ('builtin.module', 'a,b'). Any op name (or
    `any`) may anchor a pipeline, as in mlir-opt; the op it runs on must
    match at run time."""
    text = text.strip()
    paren = text.find("(")
    brace = text.find("{")
    name = text[:paren].strip() if paren > 0 else ""
    if not name or not text.endswith(")") or (brace != -1 and brace < paren) \
            or not all(c.isalnum() or c in "._-$" for c in name):
        raise PipelineError("a pipeline must be wrapped with its anchor op: expected "
                            f"'builtin.module(...)' (or another op name, or 'any'), got '{text}'")
    return name, text[paren + 1:-1]


def parse(text: str) -> list[Element]:
    """'builtin.module(a,b{x=1})' -> [Element('a'), Element('b', 'x=1')]."""
    text = text.strip()
    if not text:
        return []
    split_anchor(text)  # raises on a pipeline without its anchor op
    return list(_element(text).children or ())  # split_anchor: a nested pipeline


def text_of(elements: Iterable[Element]) -> str:
    return f"{MODULE}({','.join(e.text() for e in elements)})"


def _targets(module_op: ir.Operation, path: Sequence[str]) -> list[ir.Operation]:
    """The ops that a pass nested under `path` (anchor names) runs on."""
    ops = [module_op]
    for anchor in path:
        nxt = []
        for op in ops:
            for region in op.regions:
                for block in region.blocks:
                    for view in block.operations:
                        child = view.operation
                        if (anchor == "any" and len(child.regions)) or child.name == anchor:
                            nxt.append(child)
        ops = nxt
    return ops


def emit_pass_error(info_name: str, e: PassError, fallback: ir.Location) -> None:
    for loc, msg, notes in e.findings:
        text = f"{info_name}: {msg}"
        record_notes(text, notes)
        (loc or fallback).emit_error(text)


def _python_pass(info: PassInfo, options: dict[str, Any],
                 path: Sequence[str] = ()) -> Callable[[ir.Operation, Any], None]:
    def run(op: ir.Operation, pass_: Any) -> None:  # pass_: the bindings' pass handle (no stub)
        for target in _targets(op, path):
            try:
                info.fn(target, **options)
                verify_or_raise(target)
            except PassError as e:
                emit_pass_error(info.name, e, target.location)
                pass_.signal_pass_failure()
                return
            except VerifyError as e:
                for loc, msg, _ in e.findings:
                    (loc or target.location).emit_error(msg)
                pass_.signal_pass_failure()
                return
            except Exception as e:  # noqa: BLE001 - a bug of ours is still a located error
                target.location.emit_error(
                    f"{info.name}: internal error: {type(e).__name__}: {e}")
                pass_.signal_pass_failure()
                return
    return run


def _add_upstream(pm: passmanager.PassManager, text: str) -> None:
    try:
        pm.add(text)
    except ValueError as e:
        lines = str(e).strip().splitlines()
        detail = next((l for l in lines if "error:" in l), lines[0] if lines else "")
        detail = detail.split("error:", 1)[-1].strip()
        raise PipelineError(f"invalid pipeline element '{text}': {detail}") from None


def _add(pm: passmanager.PassManager, elements: Iterable[Element], path: tuple[str, ...], registry: _Lookup,
         top: str = MODULE) -> None:
    """Adds `elements` (nested under `path`) in order. Upstream elements are
    grouped and nested back under their anchors; coll passes are added at
    module level and applied to the ops the path names."""
    pending: list[Element] = []

    def flush() -> None:
        if pending:
            inner = ",".join(e.text() for e in pending)
            for anchor in reversed(path):
                inner = f"{anchor}({inner})"
            _add_upstream(pm, inner)
            pending.clear()

    for e in elements:
        if e.children is not None:
            flush()
            _add(pm, e.children, path + (e.name,), registry, top)
            continue
        info = registry.get(e.name)
        if info is None:
            pending.append(e)
            continue
        flush()
        try:
            values = info.parse_options(e.options)
        except ValueError as err:
            raise PipelineError(str(err)) from None
        # An anchor may depend on the options (coll-to-cpu adds functions to
        # the module unless its kernels are inline and nothing is split).
        anchor = info.anchor(values) if callable(info.anchor) else info.anchor
        where = path[-1] if path else (None if top in (MODULE, "any") else top)
        if where and anchor == MODULE:
            raise PipelineError(f"'{e.name}' runs on the whole module: put it at the top level, "
                                f"'builtin.module({e.name})', not inside '{where}(...)'")
        pm.add(_python_pass(info, values, path), name=e.name, argument=e.name)
    flush()


def describe(text: str, context: ir.Context | None = None) -> str:
    """The pipeline with every option spelled out, nesting kept: what
    --dump-pass-pipeline prints (upstream passes as upstream prints them)."""
    registry = lookup

    def one(e: Element, path: tuple[str, ...]) -> str:
        if e.children is not None:
            return f"{e.name}({','.join(one(c, path + (e.name,)) for c in e.children)})"
        info = registry.get(e.name)
        if info is not None:
            try:
                values = info.parse_options(e.options)
            except ValueError as err:
                raise PipelineError(str(err)) from None
            opts = " ".join(f"{k}={quote_value(v)}" for k, v in values.items())
            return f"{e.name}{{{opts}}}" if opts else e.name
        pm = passmanager.PassManager(MODULE, context=context)
        inner = e.text()
        for anchor in reversed(path):
            inner = f"{anchor}({inner})"
        _add_upstream(pm, inner)
        out = str(pm)[len(MODULE) + 1:-1]
        for anchor in path:  # strip the anchors added above
            out = out[len(anchor) + 1:-1]
        return out

    top = split_anchor(text)[0] if text.strip() else MODULE
    return f"{top}({','.join(one(e, ()) for e in parse(text))})"


def build(text: str, context: ir.Context | None = None) -> passmanager.PassManager:
    """A PassManager for pipeline `text` (raises PipelineError)."""
    top = split_anchor(text)[0] if text.strip() else MODULE
    pm = passmanager.PassManager(top, context=context)
    _add(pm, parse(text), (), lookup, top)
    return pm


def add_pass(pm: passmanager.PassManager, name: str, **options: Any) -> None:
    """Appends coll pass `name` (with keyword options) to an existing
    PassManager: how a frontend puts our passes into its own pipeline."""
    info = lookup.get(name)
    if info is None:
        raise PipelineError(f"'{name}' is not a coll pass")
    try:
        values = info.parse_options(" ".join(f"{k}={v}" for k, v in options.items()))
    except ValueError as e:
        raise PipelineError(str(e)) from None
    pm.add(_python_pass(info, values), name=name, argument=name)


def run_pm(pm: passmanager.PassManager, op: ir.Operation, verify_each: bool = True) -> None:
    """pm.run(op) where an error diagnostic always means failure.
    `verify_each=False`: the verifier runs once, after the last pass, not
    after each (mlir-opt --verify-each=false); for the long upstream
    pipelines of the back ends, where verifying every pass's output was 40%
    of their time on a large program.

    Some upstream passes emit an error and still succeed (22.1.8:
    convert-func-to-llvm on a memory space it cannot map); the bindings then
    abort the process (ErrorCapture asserts that no captured error is left).
    So the errors are taken here instead, and raised as ir.MLIRError with
    every error diagnostic, whether or not the pass failed."""
    ctx = op.context
    errors: list[ir.DiagnosticInfo] = []

    def on(d: ir.Diagnostic) -> bool:
        if d.severity != ir.DiagnosticSeverity.ERROR:
            return False  # warnings and remarks go on to the caller's handlers
        errors.append(ir.DiagnosticInfo(d))
        return True

    handler: Any = ctx.attach_diagnostic_handler(on)  # a DiagnosticHandler (the stub says object)
    saved = ctx.emit_error_diagnostics
    ctx.emit_error_diagnostics = True  # the bindings' capture passes errors on to `on`
    failed = False
    if not verify_each:
        pm.enable_verifier(False)
    try:
        pm.run(op)
        if not verify_each and not errors:
            failed = not op.verify()  # 22.1.8 raises MLIRError instead
    except MLIRError:
        failed = True
    finally:
        ctx.emit_error_diagnostics = saved
        handler.detach()
    if errors or failed:
        raise MLIRError("Failure while executing pass pipeline", [Diagnostic.of(d) for d in errors])


class Diagnostic:
    """An error of MLIRError.error_diagnostics with the fields of
    ir.DiagnosticInfo (severity, location, message, notes), its notes
    including those a pass recorded (core/errors.py): the bindings cannot
    attach notes from Python (22.1.8), so a frontend gets them here."""

    def __init__(self, severity: ir.DiagnosticSeverity, location: ir.Location | None, message: str,
                 notes: Iterable["Diagnostic | ir.DiagnosticInfo"] = ()) -> None:
        self.severity, self.location, self.message, self.notes = severity, location, message, list(notes)

    @classmethod
    def of(cls, info: ir.DiagnosticInfo) -> "Diagnostic":
        recorded = [cls(ir.DiagnosticSeverity.NOTE, loc, text) for loc, text in take_notes(info.message)]
        return cls(info.severity, info.location, info.message, [*info.notes, *recorded])

    def __str__(self) -> str:
        return "\n".join([f"{self.location}: {self.message}"] + [f"  {n}" for n in self.notes])


def run(module_op: ir.Operation | ir.Module, text: str) -> None:
    """Runs pipeline `text` on `module_op` (an ir.Module or its operation)
    in place, in the module's context.

    Raises ir.MLIRError with every diagnostic when a pass fails, TypeError
    for arguments of another kind."""
    op = getattr(module_op, "operation", None)
    if not isinstance(op, ir.Operation):
        raise TypeError(f"module_op must be an ir.Module or an operation, got {type(module_op).__name__}")
    if not isinstance(text, str):
        raise TypeError(f"text must be pipeline text like 'builtin.module(cse)', got {type(text).__name__} {text!r}")
    GENERATION[0] += 1  # the module may change (ir/walk.py: walks are counted per state)
    run_pm(build(text, op.context), op)
