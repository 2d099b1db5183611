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


def all_ops(root):
    """Every op under `root` (not `root`), each before the ops nested in it,
    listed before any change (so that erasing one does not disturb the walk)."""
    found = []

    def visit(op):
        for region in op.regions:
            for block in region.blocks:
                for child in block.operations:
                    found.append(child.operation)
                    visit(child.operation)
    visit(getattr(root, "operation", root))
    return found


def clone_remapped(op, insertion_point, mapping):
    """A clone of `op` at `insertion_point` on the values `mapping` gives
    for its operands, in its nested regions too (a linalg body may use
    values from outside); its results join `mapping`. Returns the clone."""
    new = op.clone(insertion_point)
    for i, v in enumerate(op.operands):
        new.operands[i] = mapping.get(v, v)

    def remap(inner):
        for i, v in enumerate(inner.operands):
            if v in mapping:
                inner.operands[i] = mapping[v]
        return ir.WalkResult.ADVANCE
    for region in new.regions:
        for block in region.blocks:
            for inner in block.operations:
                inner.operation.walk(remap)
    for old, res in zip(op.results, new.results):
        mapping[old] = res
    return new


def ancestor_in(op, block):
    """The op of `block` that holds `op` (itself or an ancestor), or None."""
    op = getattr(op, "operation", op)
    while op is not None:
        if op.parent is not None and op.block == block:
            return op
        op = op.parent
        op = getattr(op, "operation", op)
    return None
