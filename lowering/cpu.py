"""coll-to-cpu: explicit level -> upstream memref/scf/vector/arith, and
coll-cpu-to-llvm: on to the LLVM dialect with upstream passes.

On the CPU every simulated device is host memory, so placement is dropped:
`#coll.device<i>` memory spaces are stripped from every type and
`memref.memory_space_cast` disappears. Program order is a valid order of the
token graph (every op comes after the ops it waits for), so running the ops
in that order honours every token: tokens, `coll.join` and `coll.wait`
vanish.

- `coll.alloc`   -> `memref.alloc {alignment = 64}`, freed before the
                    terminator of its block (the function's return).
- `coll.copy`    -> `memref.copy` (a contiguous slice lowers to a memcpy).
- `coll.combine` -> one vector loop (lowering/cpu_kernels.py).
With tiling on (the default, lowering/cpu_fuse.py), the copies and combines
that share data run tile by tile and their scratch shrinks to one tile.
"""
from mlir import ir
from mlir.dialects import memref
from mlir.passmanager import PassManager

from ..core.errors import PassError
from ..core.registry import register
from ..core.routes import CPU_TO_LLVM
from ..ir.ops import Combine as CombineView, Implements
from ..ir.walk import find_ops
from ..ir.views import VIEW_OPS
from . import cpu_fuse
from .placement import strip_types
from .cpu_kernels import Combine

ALIGNMENT = 64

FUSED = "coll.cpu_fused"  # marks ops and scratch that tiled loops replaced


def _blocks(module_op):
    blocks = []

    def visit(op):
        for region in op.regions:
            blocks.extend(region.blocks)
        return ir.WalkResult.ADVANCE
    module_op.walk(visit)
    return blocks


# -- per-op lowering ---------------------------------------------------------

def _collect(module_op):
    ops = []

    def visit(op):
        if op.name.startswith("coll.") or op.name == "memref.memory_space_cast":
            ops.append(op)
        return ir.WalkResult.ADVANCE
    module_op.walk(visit)
    return ops


def _rewrite(op):
    """Emits the upstream ops that replace `op` (before it)."""
    name = op.name
    if FUSED in op.attributes:
        return
    with ir.InsertionPoint(op), op.location:
        if name == "coll.alloc":
            buf = memref.alloc(op.results[0].type, [], [], alignment=ALIGNMENT)
            op.results[0].replace_all_uses_with(buf)
            block = op.block
            with ir.InsertionPoint(block.operations[len(block.operations) - 1]):
                memref.dealloc(buf)
        elif name == "coll.copy":
            src, dst = op.operands[0], op.operands[1]
            if ir.MemRefType(src.type).shape != ir.MemRefType(dst.type).shape:
                raise PassError("coll.copy source and target shapes differ", op.location)
            memref.copy(src, dst)
        elif name == "coll.combine":
            c = CombineView.of(op)
            try:
                kernel = Combine(c.kind, ir.MemRefType(c.out.type).element_type)
            except ValueError as e:
                raise PassError(str(e), op.location) from None
            kernel.emit(c.inputs, c.out)
        elif name == "memref.memory_space_cast":
            src = op.operands[0]
            if src.type == op.results[0].type:
                op.results[0].replace_all_uses_with(src)
        elif name in ("coll.join", "coll.wait"):
            pass
        else:
            raise PassError(f"'{name}' has no CPU lowering; lower it to the explicit level first "
                            "(coll-lower-all-reduce)", op.location)


def _erase(op):
    for r in op.results:
        for use in r.uses:
            user = use.owner
            raise PassError(f"'{op.name}' result is still used by '{user.name}' after lowering to CPU "
                            "(tokens may only flow into coll ops)", user.location)
    op.erase()


def _erase_dead_views(blocks):
    """Views (and tiled scratch) that only the replaced ops used."""
    for block in blocks:
        for op in reversed(list(block.operations)):
            dead = all(not list(r.uses) for r in op.results)
            if dead and (op.name in VIEW_OPS or FUSED in op.attributes):
                op.erase()


def _tile_blocks(module_op, tile):
    """Replaces the copies and combines of every tileable group by tiled
    loops; marks what they replace."""
    for block in _blocks(module_op):
        groups, accesses = cpu_fuse.plan(block)
        for g in groups:
            cpu_fuse.emit(g, accesses, tile)
            for op in g.ops:
                op.attributes[FUSED] = ir.UnitAttr.get()
            for s in g.scratch:
                s.owner.attributes[FUSED] = ir.UnitAttr.get()


@register("coll-to-cpu",
          "Lower the explicit level to memref/scf/vector for CPU-simulated devices "
          "(tile: elements per tile, -1 sized by cache, 0 no tiling)",
          tile=(int, -1))
def to_cpu(module_op, tile=-1):
    """Explicit level -> memref/scf/vector/arith, in place."""
    if tile < -1:
        raise PassError(f"tile must be -1 (sized by cache), 0 (no tiling) or a number of elements, got {tile}")
    with module_op.context, module_op.location:
        for claim in find_ops(module_op, Implements.NAME):
            claim.erase()  # checked already (coll-check-semantics); it runs nothing
        ops = _collect(module_op)
        strip_types(module_op)
        if tile != 0:
            _tile_blocks(module_op, tile)
        for op in ops:
            _rewrite(op)
        # Users come after their producers: erase from the back.
        for op in reversed(ops):
            if FUSED in op.attributes and op.name == "coll.alloc":
                continue  # its views go first
            if op.name == "memref.memory_space_cast" and op.operands[0].type != op.results[0].type:
                continue  # a cast between non-coll spaces is not ours
            _erase(op)
        _erase_dead_views(_blocks(module_op))


@register("coll-cpu-to-llvm",
          "Lower memref/scf/vector/arith/func (and linalg, affine, math) to the LLVM dialect: "
          "the upstream passes of the cpu route (core/routes.py)", anchor="builtin.module")
def cpu_to_llvm(module_op):
    """memref/scf/vector/arith/func -> LLVM dialect, in place."""
    pm = PassManager.parse(f"builtin.module({','.join(CPU_TO_LLVM)})", module_op.context)
    try:
        pm.run(module_op)
    except ir.MLIRError as e:
        raise PassError(f"lowering to the LLVM dialect failed: {e}", module_op.location) from None
