"""Stripping placement: from the explicit level's types to what the CPU and
GPU lowerings store (shared by backends/cpu/to_cpu.py and backends/gpu/to_gpu.py)."""
from mlir import ir


def is_device_space(space):
    return space is not None and str(space).startswith("#coll.device<")


def stored_type(t):
    """`t` without a #coll.device memory space, and with i1 elements stored
    as i8 (other types unchanged). An i1 memref holds one byte per element
    (numpy bool) and LLVM 22's memref-to-llvm refuses i1 loads, so i8 is the
    same buffer with the same descriptor: the C interface does not change."""
    if not isinstance(t, ir.MemRefType):
        return t
    m = ir.MemRefType(t)
    placed = is_device_space(m.memory_space)
    is_i1 = str(m.element_type) == "i1"
    if not (placed or is_i1):
        return t
    elem = ir.IntegerType.get_signless(8) if is_i1 else m.element_type
    return ir.MemRefType.get(m.shape, elem, m.layout, None if placed else m.memory_space,
                             loc=ir.Location.unknown(m.context))


def _strip_values(values):
    for v in values:
        new = stored_type(v.type)
        if new != v.type:
            v.set_type(new)


def _widen_i1_fills(fills):
    """A linalg.fill of an i1 value into what is now an i8 buffer fills
    the i1 value zero-extended (a frontend's bool fill, or coll-bufferize's
    zeros for an output a collective leaves alone): its value and its
    body's arguments become i8, in place (its attributes stay)."""
    for op in fills:
        value, out = op.operands[0], op.operands[1]
        if str(value.type) != "i1" or str(ir.MemRefType(out.type).element_type) != "i8":
            continue
        i8 = ir.IntegerType.get_signless(8, op.context)
        with ir.InsertionPoint(op), op.location:
            op.operands[0] = ir.Operation.create("arith.extui", results=[i8], operands=[value]).results[0]
        for arg in op.regions[0].blocks[0].arguments:
            arg.set_type(i8)


def strip_types(root):
    """Strips placement (and i1 storage) from every value and function type
    under `root`, in place."""
    fills = []

    def visit(op):
        if op.name == "linalg.fill" and len(op.operands) == 2 and isinstance(op.operands[1].type, ir.MemRefType):
            fills.append(op)
        for region in op.regions:
            for block in region.blocks:
                _strip_values(block.arguments)
        _strip_values(op.results)
        if "function_type" in op.attributes:
            try:
                ft = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
            except ValueError:  # not a builtin function type (llvm.func)
                return ir.WalkResult.ADVANCE
            ins = [stored_type(t) for t in ft.inputs]
            outs = [stored_type(t) for t in ft.results]
            if ins != list(ft.inputs) or outs != list(ft.results):
                op.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(ins, outs))
        return ir.WalkResult.ADVANCE
    root.walk(visit)
    _widen_i1_fills(fills)
