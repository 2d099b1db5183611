"""coll-to-cpu: explicit level -> upstream memref/scf/vector/arith, and
coll-cpu-to-llvm: on to the LLVM dialect with upstream passes.

On the CPU every simulated device is host memory, so placement is dropped:
`#coll.device<i>` memory spaces are stripped from every type and
`memref.memory_space_cast` disappears. Program order is a valid order of the
token graph (every op comes after the ops it waits for), so running the ops
in that order honours every token: tokens, `coll.join` and `coll.wait`
vanish.

- `coll.alloc`   -> a static buffer (`memref.global`, allocated once per
                    compiled program: backends/cpu/scratch.py), or with
                    scratch=heap `memref.alloc {alignment = 64}`, freed
                    before the terminator of its block.
- `coll.copy`    -> `memref.copy` (a contiguous slice lowers to a memcpy).
- `coll.combine` -> a call of the shared kernel of its signature
                    (backends/cpu/shared.py: one vector loop per kind, type
                    and arity); kernels=inline puts the loop in place.
With tiling on (the default, backends/cpu/fuse.py), the copies and combines
that share data run tile by tile and their scratch shrinks to one tile.
A program of more than `split` copies and combines is emitted at the
pointer level in functions of `split` ops (backends/cpu/pointer_level.py) when its
buffers are too small to tile (or tile=0), else split after lowering
(backends/cpu/split.py): no stage sees one giant block.
"""
from mlir import ir
from mlir.dialects import memref
from mlir.passmanager import PassManager

from ...core.errors import PassError
from ...core.pipeline import run_pm
from ...core.registry import choice, register
from .route import CPU_TO_LLVM
from ...ir.ops import Combine as CombineView, Implements
from ...ir.walk import find_ops
from ...ir.views import VIEW_OPS
from . import fuse as cpu_fuse
from . import pointer_level as cpu_program
from . import shared as cpu_shared
from . import split as cpu_split
from .scratch import MODES as SCRATCH_MODES, Scratch
from ..placement import strip_types
from .kernels import Combine

FUSED = "coll.cpu_fused"  # marks ops and scratch that tiled loops replaced
SPLIT = 128  # most ops per function (see cpu_split.py)


def _tops(module_op, skip):
    """The module and its top-level ops, but the functions named in `skip`
    (what the pointer-level path emitted: nothing of coll is left there)."""
    yield from (op.operation for op in module_op.regions[0].blocks[0].operations
                if op.operation.name != "func.func"
                or ir.StringAttr(op.operation.attributes["sym_name"]).value not in skip)


def _blocks(module_op, skip=()):
    blocks = list(module_op.regions[0].blocks)

    def visit(op):
        for region in op.regions:
            blocks.extend(region.blocks)
        return ir.WalkResult.ADVANCE
    for op in _tops(module_op, skip):
        op.walk(visit)
    return blocks


# -- per-op lowering ---------------------------------------------------------

def _collect(module_op, skip=()):
    ops = []

    def visit(op):
        if op.name.startswith("coll.") or op.name == "memref.memory_space_cast":
            ops.append(op)
        return ir.WalkResult.ADVANCE
    for op in _tops(module_op, skip):
        op.walk(visit)
    return ops


def _combine_operands(op):
    c = CombineView.of(op)
    return c.inputs, c.out


def _terminator(op, cache):
    """The terminator of `op`'s block (cached per parent: finding it walks
    the whole block)."""
    key = op.block  # not op.parent: an scf.index_switch (mpi route) has a block per case
    if key not in cache:
        ops = op.block.operations
        cache[key] = ops[len(ops) - 1]
    return cache[key]


def _combine(op, ins, out, kernels):
    try:
        kind = ir.StringAttr(op.attributes["kind"]).value
        if kernels is not None and kernels.call(kind, ins, out):
            return
        Combine(kind, ir.MemRefType(out.type).element_type).emit(ins, out)
    except ValueError as e:
        raise PassError(str(e), op.location) from None


def _rewrite(op, kernels, ends, scratch):
    """Emits the upstream ops that replace `op` (before it)."""
    name = op.name
    if FUSED in op.attributes:
        return
    with ir.InsertionPoint(op), op.location:
        if name == "coll.alloc":
            buf = scratch.buffer(op.results[0].type)
            op.results[0].replace_all_uses_with(buf)
            with ir.InsertionPoint(_terminator(op, ends)):
                scratch.free(buf)
        elif name == "coll.copy":
            src, dst = op.operands[0], op.operands[1]
            if ir.MemRefType(src.type).shape != ir.MemRefType(dst.type).shape:
                raise PassError("coll.copy source and target shapes differ", op.location)
            memref.copy(src, dst)
        elif name == "coll.combine":
            ins, out = _combine_operands(op)
            _combine(op, ins, out, kernels)
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


def _tile_blocks(module_op, tile, kernels, skip, scratch, nontemporal):
    """Replaces the copies and combines of every tileable group by tiled
    loops; marks what they replace. The final writes of a block whose
    buffers take at least `nontemporal` bytes (> 0) are streamed."""
    for block in _blocks(module_op, skip):
        groups, accesses = cpu_fuse.plan(block)
        streaming = bool(groups) and 0 < nontemporal <= cpu_fuse.footprint(accesses)
        for g in groups:
            if g.anchors is not None and kernels is None:
                continue  # (its ops of several lengths run through the shared kernels only)
            cpu_fuse.emit(g, accesses, tile, kernels, scratch, streaming)
            for op in g.ops:
                op.attributes[FUSED] = ir.UnitAttr.get()
            for s in g.scratch:
                s.owner.attributes[FUSED] = ir.UnitAttr.get()


def _pointer_level(module_op, kernels, split, tile, scratch):
    """Functions whose program cpu_program.py emitted: large programs, on
    buffers too small to tile (tile=-1) or on any buffers (tile=0)."""
    done = set()
    if tile > 0:
        return done  # tiles were asked for
    max_bytes = 2**31 if tile == 0 else cpu_fuse.TILE_BYTES
    for op in list(module_op.regions[0].blocks[0].operations):
        f = op.operation
        if f.name != "func.func" or not f.regions[0].blocks:
            continue
        try:
            parts = cpu_program.lower(f, kernels, split, max_bytes, scratch)
            if parts:
                done.update(parts + [ir.StringAttr(f.attributes["sym_name"]).value])
        except ValueError as e:
            raise PassError(e.args[0], e.args[1].location) from None
    return done


@register("coll-to-cpu",
          "Lower the explicit level to memref/scf/vector for CPU-simulated devices "
          "(tile: elements per tile, -1 sized by cache, 0 no tiling; kernels: shared "
          "functions or inline loops; split: most ops per function, 0 no split; scratch: static "
          "buffers allocated once per program, or heap buffers allocated at every call; "
          "nontemporal: bytes of a program's buffers from which tiled copies into results "
          "that nothing reads again use non-temporal stores, 0 never)",
          anchor=lambda o: "any" if o["kernels"] == "inline" and o["split"] == 0 else "builtin.module",
          tile=(int, -1), kernels=(choice("shared", "inline"), "shared"), split=(int, SPLIT),
          scratch=(choice(*SCRATCH_MODES), SCRATCH_MODES[0]), nontemporal=(int, 0))
def to_cpu(module_op, tile=-1, kernels="shared", split=SPLIT, scratch=SCRATCH_MODES[0], nontemporal=0):
    """Explicit level -> memref/scf/vector/arith, in place."""
    if tile < -1:
        raise PassError(f"tile must be -1 (sized by cache), 0 (no tiling) or a number of elements, got {tile}")
    if split < 0:
        raise PassError(f"split must be 0 (no split) or a number of ops, got {split}")
    if nontemporal < 0:
        raise PassError(f"nontemporal must be 0 (never) or a number of bytes, got {nontemporal}")
    with module_op.context, module_op.location:
        for claim in find_ops(module_op, Implements.NAME):
            claim.erase()  # checked already (coll-check-semantics); it runs nothing
        strip_types(module_op)
        lib = cpu_shared.Kernels(module_op) if kernels == "shared" else None
        buffers = Scratch(module_op, scratch)
        done = _pointer_level(module_op, lib, split, tile, buffers) if lib is not None and split else set()
        ops = _collect(module_op, done)
        if tile != 0:
            _tile_blocks(module_op, tile, lib, done, buffers, nontemporal)
        ends = {}
        for op in ops:
            _rewrite(op, lib, ends, buffers)
        # Users come after their producers: erase from the back.
        for op in reversed(ops):
            if FUSED in op.attributes and op.name == "coll.alloc":
                continue  # its views go first
            if op.name == "memref.memory_space_cast" and op.operands[0].type != op.results[0].type:
                continue  # a cast between non-coll spaces is not ours
            _erase(op)
        _erase_dead_views(_blocks(module_op, done))
        if split:
            cpu_split.split_module(module_op, split, skip=done)


@register("coll-cpu-to-llvm",
          "Lower memref/scf/vector/arith/func (and linalg, affine, math) to the LLVM dialect: "
          "the upstream passes of the cpu route (core/routes.py)", anchor="builtin.module")
def cpu_to_llvm(module_op):
    """memref/scf/vector/arith/func -> LLVM dialect, in place."""
    pm = PassManager.parse(f"builtin.module({','.join(CPU_TO_LLVM)})", module_op.context)
    try:
        run_pm(pm, module_op, verify_each=False)
    except ir.MLIRError as e:
        raise PassError(f"lowering to the LLVM dialect failed: {e}", module_op.location) from None
