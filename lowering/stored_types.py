"""Stripping placement: from the explicit level's types to what the CPU and
GPU lowerings store (shared by lowering/cpu/to_cpu.py and lowering/gpu/to_gpu.py)."""
from collections.abc import Iterable

import numpy as np
from mlir import ir

from ..ir.kinds import ELEMENTS
from ..ir.structured import structured


def is_device_space(space: ir.Attribute | None) -> bool:
    return space is not None and str(space).startswith("#coll.device<")


def llvm_element(elem: ir.Type) -> ir.Type:
    """The LLVM IR type that holds an element in memory, for the GEPs and
    loads the lowerings write themselves: LLVM has no fp8 type, so i8
    (ir/kinds.py Element.llvm); any other type as it is."""
    if isinstance(elem, ir.Float8E4M3FNType | ir.Float8E5M2Type):  # isinstance: printing types is slow
        return ir.Type.parse(ELEMENTS[str(elem)].llvm)
    return elem


def stored_type(t: ir.Type) -> ir.Type:
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


def _strip_values(values: Iterable[ir.Value]) -> None:
    for v in values:
        new = stored_type(v.type)
        if new != v.type:
            v.set_type(new)


def _is_byte_buffer(v: ir.Value) -> bool:
    return isinstance(v.type, ir.MemRefType) and str(ir.MemRefType(v.type).element_type) == "i8"


def _holds_bytes(v: ir.Value) -> bool:
    """An i8 buffer, or an i8 scalar (a fill's value, widened)."""
    return _is_byte_buffer(v) or str(v.type) == "i8"


def _convert(op_name: str, value: ir.Value, to: ir.Type, where: ir.InsertionPoint) -> ir.Value:
    """`value` converted to `to` at `where` (i1 <-> i8: extui widens, trunci
    keeps bit 0), in the current Location."""
    with where:
        return ir.Operation.create(op_name, results=[to], operands=[value]).results[0]


def _widen_i1_regions(ops: list[ir.Operation]) -> None:
    """A structured op (ir/structured.py: linalg.generic, map, reduce, fill,
    copy, transpose, broadcast, a named op) whose i1 buffers are now i8
    keeps computing on i1 inside: the block argument of an i8 buffer
    becomes i8, truncated to i1 for its uses, and an i1 yielded into an i8
    init is widened first. Bool buffers hold 0 or 1, as numpy's do."""
    i1 = ir.IntegerType.get_signless(1)
    i8 = ir.IntegerType.get_signless(8)
    for op in ops:
        if op.name == "linalg.fill" and str(op.operands[0].type) == "i1" and _is_byte_buffer(op.operands[1]):
            # its verifier wants the value of the buffer's element type
            with op.location:
                op.operands[0] = _convert("arith.extui", op.operands[0], i8, ir.InsertionPoint(op))
        s = structured(op)
        if s is None:
            continue
        first = s.body.operations[0]  # the truncations go before it, in argument order
        for arg, v in s.args:
            if str(arg.type) != "i1" or not _holds_bytes(v):
                continue
            arg.set_type(i8)
            if list(arg.uses):
                with op.location:
                    bit = _convert("arith.trunci", arg, i1, ir.InsertionPoint(first))
                arg.replace_all_uses_except(bit, bit.owner.operation)
        term = s.body.operations[len(s.body.operations) - 1]
        for k, (y, v) in enumerate(zip(term.operands, s.inits)):  # as yielded now (a truncated argument)
            if str(y.type) == "i1" and _is_byte_buffer(v):
                with op.location:
                    term.operands[k] = _convert("arith.extui", y, i8, ir.InsertionPoint(term))


def _memref_accesses(ops: list[ir.Operation]) -> None:
    """memref.load of an i8 (was i1) buffer gives i8, truncated to i1 for
    its uses; memref.store of an i1 stores it widened."""
    i1 = ir.IntegerType.get_signless(1)
    i8 = ir.IntegerType.get_signless(8)
    for op in ops:
        if op.name == "memref.load" and str(op.results[0].type) == "i1" and _is_byte_buffer(op.operands[0]):
            res = op.results[0]
            res.set_type(i8)
            with op.location:
                bit = _convert("arith.trunci", res, i1, ir.InsertionPoint(op)).owner
            bit.move_after(op)
            res.replace_all_uses_except(bit.results[0], bit.operation)
        elif op.name == "memref.store" and str(op.operands[0].type) == "i1" and _is_byte_buffer(op.operands[1]):
            with op.location:
                op.operands[0] = _convert("arith.extui", op.operands[0], i8, ir.InsertionPoint(op))


def _byte_globals(ops: list[ir.Operation]) -> None:
    """A memref.global of i1 (a bool constant, bufferized) holds i8, as its
    memref.get_global's result now does: its type and its initial value
    widened (0 or 1 per byte)."""
    for op in ops:
        t = ir.MemRefType(ir.TypeAttr(op.attributes["type"]).value)
        if str(t.element_type) != "i1":
            continue
        stored = ir.MemRefType(stored_type(t))
        op.attributes["type"] = ir.TypeAttr.get(stored)
        if "initial_value" in op.attributes and isinstance(op.attributes["initial_value"], ir.DenseIntElementsAttr):
            init = ir.DenseIntElementsAttr(op.attributes["initial_value"])
            bits = np.array([int(init[i]) & 1 for i in range(len(init))], dtype=np.int8).reshape(t.shape)
            op.attributes["initial_value"] = ir.DenseElementsAttr.get(  # type: ignore[call-overload]
                bits, type=stored.element_type, shape=list(t.shape))  # (numpy's stubs: a buffer from 3.12 on)


def strip_types(root: ir.Operation) -> None:
    """Strips placement (and i1 storage) from every value and function type
    under `root`, in place."""
    linalg_ops, accesses, globals_ = [], [], []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "memref.global":
            globals_.append(op)
        if op.name.startswith("linalg.") and len(op.regions) and len(op.regions[0].blocks):
            linalg_ops.append(op)
        elif op.name in ("memref.load", "memref.store"):
            accesses.append(op)
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
    root.walk(visit, ir.WalkOrder.POST_ORDER)  # (the default; the stubs have none)
    with root.context, root.location:
        _widen_i1_regions(linalg_ops)
        _memref_accesses(accesses)
        _byte_globals(globals_)
