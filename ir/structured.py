"""Linalg's structured ops as destination-passing ops: which operands are
inputs and which are inits, read off the op itself, not a table of ops.

Every linalg structured op (generic, map, reduce, transpose, broadcast,
fill, copy, the named contractions and elementwise ops) is in destination
style: its body yields one value per init, and the inits are its last
operands (upstream DestinationStyleOpInterface, which the Python bindings
do not expose); the body's block arguments line up with the leading
operands (inputs, then inits where the op reads them: map has none for its
init, reduce its accumulators). Shared by the effects analysis
(analysis/effects.py) and the i1 storage rewrite (lowering/stored_types.py).
"""
from dataclasses import dataclass

from mlir import ir


@dataclass
class Structured:
    inputs: list[ir.Value]  # operands read (memrefs, tensors or scalars)
    inits: list[ir.Value]   # operands written, the k-th gets the body's k-th yielded value
    args: list[tuple[ir.BlockArgument, ir.Value]]  # (block argument, the operand it stands for)
    body: ir.Block          # the entry block


def structured(op: ir.Operation | ir.OpView) -> Structured | None:
    """The destination-passing structure of a linalg op, or None when it
    has no body ending in a yield (not a structured op)."""
    if not op.name.startswith("linalg.") or len(op.regions) != 1 or not len(op.regions[0].blocks):
        return None
    body = op.regions[0].blocks[0]
    ops = list(body.operations)
    if not ops or ops[-1].name != "linalg.yield":
        return None
    operands = list(op.operands)
    yielded = list(ops[-1].operands)
    if len(yielded) > len(operands) or len(body.arguments) > len(operands):
        return None
    cut = len(operands) - len(yielded)
    return Structured(operands[:cut], operands[cut:], list(zip(body.arguments, operands)), body)


def read_operands(s: Structured) -> list[ir.Value]:
    """The operands whose values the body reads: an input or init whose
    block argument has uses (an accumulator, a matmul's C; not the window
    operand of a reduce_window, which only shapes the iteration space), or
    an input without a block argument."""
    used = [v for arg, v in s.args if len(list(arg.uses)) > 0]
    return used + s.inputs[len(s.args):]


def is_memref(v: ir.Value) -> bool:
    return isinstance(v.type, ir.MemRefType)
