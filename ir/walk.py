"""Finding ops in IR: the walk every pass, runtime and tool needs."""
import sys
from collections.abc import Callable, MutableMapping

from mlir import ir

# What a walk starts from: an op, its OpView, or a Module.
Root = ir.Operation | ir.OpView | ir.Module
# What find_ops looks for: an op name, or a test of the name.
Match = str | Callable[[str], bool]

# Walks of a whole module (find_ops, all_ops, OpIndex from a builtin.module),
# recorded while RECORD is a list: (the function that walked, the module's
# state: a hash of its text and how many pipelines ran so far, GENERATION,
# which core/pipeline.py `run` counts). tests/unit/test_program.py reads them.
RECORD: list[tuple[str, tuple[int, int]]] | None = None
GENERATION = [0]


def _counted(root: Root) -> ir.Operation:
    op = root.operation
    if RECORD is not None and op.name == "builtin.module":
        frame = sys._getframe(2)  # whoever called find_ops, all_ops or OpIndex
        RECORD.append((f"{frame.f_globals.get('__name__')}.{frame.f_code.co_name}",
                       (hash(str(op)), GENERATION[0])))
    return op


def _matcher(match: Match) -> Callable[[str], bool]:
    return (lambda name: name == match) if isinstance(match, str) else match


def symbol(op: ir.Operation, name: str) -> ir.OpView | None:
    """The op named `name` in the module that holds `op`, or None."""
    module = op.parent
    while module is not None and module.name != "builtin.module":
        module = module.parent
    if module is None:
        return None
    try:
        return ir.SymbolTable(module)[name]
    except KeyError:
        return None


def find_ops(root: Root, match: Match) -> list[ir.Operation]:
    """Ops under `root` (an Operation, OpView or Module), in walk order, whose
    name equals `match` (a str) or satisfies it (a callable on the name)."""
    test = _matcher(match)
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if test(op.name):
            found.append(op)
        return ir.WalkResult.ADVANCE
    # POST_ORDER: the bindings' default, which their stub does not show.
    _counted(root).walk(visit, ir.WalkOrder.POST_ORDER)
    return found


class OpIndex:
    """Every op under `root`, from one walk, in walk order: what several
    analyses of the same IR ask (`find`, as find_ops answers) without
    walking it again. Valid until the IR changes."""

    def __init__(self, root: Root) -> None:
        self.ops: list[ir.Operation] = []

        def visit(op: ir.Operation) -> ir.WalkResult:
            self.ops.append(op)
            return ir.WalkResult.ADVANCE
        _counted(root).walk(visit, ir.WalkOrder.POST_ORDER)

    def find(self, match: Match) -> list[ir.Operation]:
        test = _matcher(match)
        return [op for op in self.ops if test(op.name)]


def is_public(func_op: ir.Operation | ir.OpView) -> bool:
    """Whether a function is public: no sym_visibility, or "public" (what
    `func.func public @main`, as JAX writes it, spells out)."""
    attrs = getattr(func_op, "operation", func_op).attributes
    return "sym_visibility" not in attrs or ir.StringAttr(attrs["sym_visibility"]).value == "public"


def all_ops(root: Root) -> list[ir.Operation]:
    """Every op under `root` (not `root`), each before the ops nested in it,
    listed before any change (so that erasing one does not disturb the walk)."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> None:
        for region in op.regions:
            for block in region.blocks:
                for child in block.operations:
                    found.append(child.operation)
                    visit(child.operation)
    visit(_counted(root))
    return found


def clone_remapped(op: ir.Operation, insertion_point: ir.InsertionPoint,
                   mapping: MutableMapping[ir.Value, ir.Value]) -> ir.Operation:
    """A clone of `op` at `insertion_point` on the values `mapping` gives
    for its operands, in its nested regions too (a linalg body may use
    values from outside); its results join `mapping`. Returns the clone."""
    new = op.clone(insertion_point)
    for i, v in enumerate(op.operands):
        new.operands[i] = mapping.get(v, v)

    def remap(inner: ir.Operation) -> ir.WalkResult:
        for i, v in enumerate(inner.operands):
            if v in mapping:
                inner.operands[i] = mapping[v]
        return ir.WalkResult.ADVANCE
    for region in new.regions:
        for block in region.blocks:
            for inner in block.operations:
                inner.operation.walk(remap, ir.WalkOrder.POST_ORDER)
    for old, res in zip(op.results, new.results):
        mapping[old] = res
    return new


def ancestor_in(op: ir.Operation | ir.OpView, block: ir.Block) -> ir.Operation | None:
    """The op of `block` that holds `op` (itself or an ancestor), or None."""
    at: ir.Operation | None = op.operation
    while at is not None:
        if at.parent is not None and at.block == block:
            return at
        at = at.parent
    return None
