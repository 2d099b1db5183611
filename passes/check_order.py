"""coll-check-order: a happens-before check of the explicit level.

Copies and combines run asynchronously after the tokens they take; coll.wait
and every host op that touches memory block the host (analysis/order.py has
the analysis, analysis/effects.py what each op reads and writes). Root
buffers (function arguments, allocations, globals by name) are taken not to
alias one another, as the lowering and the runtimes create them. The check
reports:

- a read of bytes that an unordered op writes (RAW race), a write of bytes
  an unordered op reads (WAR) or writes (WAW); a copy that reads what it
  writes, or a combine whose output partly overlaps an input;
- a read of scratch (coll.alloc, memref.alloc/alloca) that the writes
  ordered before it do not cover, and of an argument that the function's
  coll.implements claims as an output but not as an input (it holds
  nothing yet); other arguments and globals are initialised memory.
  Accesses known only as "somewhere in this view" (non-constant
  indices, ops in loops, calls, masked ops) count for races but
  neither cover scratch nor are checked as reads of it;
- a copy or combine that no coll.wait (or returned token) orders: it could
  still be running when the function returns.

What it cannot follow (a dynamic offset or a memref.view with a non-
constant shift in a coll op's buffer, a token passed to a call or received
as an argument, a buffer of unknown origin, an op with memref operands whose
accesses it does not know) is a located error, never a silent pass; a host
op whose region is unknown may touch all of its root buffer.
"""
from mlir import ir

from ..analysis.order import Checker, Finding
from ..collectives.emit import require_memref_form
from ..core.errors import PassError
from ..core.registry import register
from ..ir.ops import COLLECTIVE_NAMES
from ..ir.types import token_type
from ..ir.walk import find_ops


class OrderError(PassError):
    """Every finding, each reported as an error with its notes."""

    def __init__(self, findings: list[Finding]) -> None:
        super().__init__(findings[0].message, findings[0].location,
                         findings=[(f.location, f.message, f.notes) for f in findings])


def _funcs(module_op: ir.Operation) -> list[ir.Operation]:
    return find_ops(module_op, "func.func")


def _touches_tokens(func_op: ir.Operation) -> bool:
    found: list[ir.Operation] = []
    tok = token_type()

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name.startswith("coll.") or any(r.type == tok for r in op.results) \
                or any(v.type == tok for v in op.operands):
            found.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE
    func_op.walk(visit, ir.WalkOrder.POST_ORDER)
    return bool(found)


def check_function(func_op: ir.Operation | ir.OpView) -> list[Finding]:
    """[Finding] for one func.func."""
    func_op = func_op.operation
    name = ir.StringAttr(func_op.attributes["sym_name"]).value
    c = Checker(func_op, name)
    blocks = list(func_op.regions[0].blocks)
    if not blocks:
        return []
    if any(a.type == c.tok for a in blocks[0].arguments):
        c.report(func_op, f"@{name} takes a !coll.token argument: coll-check-order cannot tell which "
                          "buffers the caller's pending work touches; expected the caller to coll.wait "
                          "before the call")
        return c.findings
    if not _touches_tokens(func_op):
        return []  # only host ops: they run one after the other
    coll_blocks = [b for b in blocks if any(o.operation.name.startswith("coll.") for o in b.operations)]
    if len(coll_blocks) > 1 or (coll_blocks and coll_blocks[0] != blocks[0]):
        c.report(func_op, f"@{name} has coll ops in a block other than its entry block; "
                          "coll-check-order expects them in the entry block")
        return c.findings
    if len(blocks) > 1:
        c.report(func_op, f"@{name} has {len(blocks)} blocks; coll-check-order expects a function "
                          "with coll ops to be one block (use scf ops for control flow)")
        return c.findings
    nested: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name.startswith("coll.") and op.parent is not None and op.parent.operation != func_op:
            nested.append(op)
        return ir.WalkResult.ADVANCE
    func_op.walk(visit, ir.WalkOrder.POST_ORDER)
    if nested:  # the first one is enough to say why
        op = nested[0]
        parent = op.parent
        assert parent is not None  # visit took only ops with a parent
        c.report(op, f"{op.name} inside '{parent.name}' is not supported by coll-check-order; "
                     "expected coll ops at the top level of a function")
        return c.findings
    c.block(blocks[0])
    return c.findings


def check_module(module_op: ir.Operation) -> list[Finding]:
    """[Finding] for every function under module_op."""
    findings: list[Finding] = []
    for f in _funcs(module_op):
        findings += check_function(f)
    return findings


@register("coll-check-order",
          "Check that every read is ordered after the write it needs, no two unordered ops touch "
          "overlapping bytes (one writing), and the final wait orders every copy and combine")
def check_order(module_op: ir.Operation) -> None:
    for op in find_ops(module_op, lambda n: n in COLLECTIVE_NAMES):
        require_memref_form(op)
    findings = check_module(module_op)
    if findings:
        raise OrderError(findings)
