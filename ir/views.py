"""Views: ops whose result aliases (part of) their first operand.

The one list of them, and the walk from a view back to the buffer it views,
shared by the verifier, the order check, the task graph, the lowerings and
the runtimes.
"""
from mlir import ir

VIEW_OPS = (
    "memref.subview", "memref.reinterpret_cast", "memref.transpose", "memref.view",
    "memref.collapse_shape", "memref.expand_shape", "memref.cast",
    "memref.memory_space_cast", "memref.assume_alignment",
    # Also reads its shape operand (a memref of sizes): coll-check-order
    # counts that read.
    "memref.reshape",
)


def defining_op(value):
    """The op that defines `value`, or None for a block argument."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    return getattr(owner, "operation", owner)


def view_op(value):
    """The view op that defines `value`, or None."""
    op = defining_op(value)
    return op if op is not None and op.name in VIEW_OPS else None


def root_of(value):
    """(root buffer, [view ops from the root down to `value`])."""
    chain = []
    op = view_op(value)
    while op is not None:
        chain.append(op)
        value = op.operands[0]
        op = view_op(value)
    chain.reverse()
    return value, chain
