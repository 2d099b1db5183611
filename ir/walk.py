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


def is_public(func_op):
    """Whether a function is public: no sym_visibility, or "public" (what
    `func.func public @main`, as JAX writes it, spells out)."""
    attrs = getattr(func_op, "operation", func_op).attributes
    return "sym_visibility" not in attrs or ir.StringAttr(attrs["sym_visibility"]).value == "public"
