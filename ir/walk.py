"""Finding ops in IR: the walk every pass, runtime and tool needs."""
from mlir import ir


def find_ops(root, match):
    """Ops under `root` (an Operation, OpView or Module), in walk order, whose
    name equals `match` (a str) or satisfies it (a callable on the name)."""
    test = (lambda name: name == match) if isinstance(match, str) else match
    found = []

    def visit(op):
        if test(op.name):
            found.append(op)
        return ir.WalkResult.ADVANCE
    getattr(root, "operation", root).walk(visit)
    return found
