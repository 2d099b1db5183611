"""coll-to-cpu: explicit level -> upstream memref/scf/vector/arith, and
coll-cpu-to-llvm: on to the LLVM dialect with upstream passes.

On the CPU every simulated device is host memory, so placement is dropped:
`#coll.device<i>` memory spaces are stripped from every type and
`memref.memory_space_cast` disappears. Program order is a valid order of the
token graph (every op comes after the ops it waits for), so running the ops
in that order honours every token: tokens, `coll.join` and `coll.wait`
vanish.

- `coll.alloc`   -> a static buffer (`memref.global`, allocated once per
                    compiled program: lowering/cpu/scratch.py), or with
                    scratch=heap `memref.alloc {alignment = 64}`, freed
                    before the terminator of its block.
- `coll.copy`    -> `memref.copy` (a contiguous slice lowers to a memcpy).
- `coll.combine` -> a call of the shared kernel of its signature
                    (lowering/cpu/shared.py: one vector loop per kind, type
                    and arity); kernels=inline puts the loop in place.
With tiling on (the default, lowering/cpu/fuse.py), the copies and combines
that share data run tile by tile and their scratch shrinks to one tile.
A program of more than `split` copies and combines is emitted at the
pointer level in functions of `split` ops (lowering/cpu/pointer_level.py) when its
buffers are too small to tile (or tile=0), else split after lowering
(lowering/cpu/split.py): no stage sees one giant block.
"""
from collections.abc import Collection, Iterator

from mlir import ir
from mlir.dialects import memref
from mlir.rewrite import FrozenRewritePatternSet, PatternRewriter, RewritePatternSet, walk_and_apply_patterns

from ...core.errors import PassError
from ...core.pipeline import build as build_pipeline
from ...core.pipeline import run_pm
from ...core.registry import choice, register
from ...ir.ops import OPS, Alloc, Copy, Implements, Join, Wait
from ...ir.ops import Combine as CombineView
from ...ir.types import contiguous
from ...ir.views import VIEW_OPS
from ...ir.walk import find_ops
from ..stored_types import strip_types
from . import fuse as cpu_fuse
from . import pointer_level as cpu_program
from . import shared as cpu_shared
from . import split as cpu_split
from .kernels import Combine, combine_element, copy_strided, unit_inner_stride
from .route import CPU_TO_LLVM
from .scratch import MODES as SCRATCH_MODES
from .scratch import Scratch

FUSED = "coll.cpu_fused"  # marks ops and scratch that tiled loops replaced
SPLIT = 128  # most ops per function (see cpu_split.py)


Op = ir.Operation | ir.OpView  # what a pattern is handed


def _tops(module_op: ir.Operation, skip: Collection[str]) -> Iterator[ir.Operation]:
    """The module and its top-level ops, but the functions named in `skip`
    (what the pointer-level path emitted: nothing of coll is left there)."""
    yield from (op.operation for op in module_op.regions[0].blocks[0].operations
                if op.operation.name != "func.func"
                or ir.StringAttr(op.operation.attributes["sym_name"]).value not in skip)


def _blocks(module_op: ir.Operation, skip: Collection[str] = ()) -> list[ir.Block]:
    blocks = list(module_op.regions[0].blocks)

    def visit(op: ir.Operation) -> ir.WalkResult:
        for region in op.regions:
            blocks.extend(region.blocks)
        return ir.WalkResult.ADVANCE
    for op in _tops(module_op, skip):
        op.walk(visit, ir.WalkOrder.POST_ORDER)  # (the default; the stubs have none)
    return blocks


# -- per-op lowering: one rewrite pattern per op ------------------------------
#
# walk_and_apply_patterns (22.1.8, checked on the wheel) visits every op
# under the op it is given (not that op), in program order and post-order
# (a region's ops before the op that holds it). It takes the next op before
# it calls a pattern, so a pattern may erase the op it visits, never another
# one, and ops a pattern puts before the visited op are not visited. Tokens
# flow forward: when a copy is visited, the ops that wait for its token are
# still to come. So a replaced op's tokens go to a placeholder at the start
# of its block, one per block and op name, which is erased once the walk is
# done; a placeholder still used then names the producer and the op that is
# not coll's.

PLACEHOLDER = "builtin.unrealized_conversion_cast"


def _combine(op: Op, ins: list[ir.Value], out: ir.Value, kernels: cpu_shared.Kernels | None) -> None:
    try:
        kind = ir.StringAttr(op.attributes["kind"]).value
        elem = combine_element(ins + [out])[0]
        if kernels is not None and kernels.call(kind, ins, out):
            return
        Combine(kind, elem).emit(ins, out)
    except ValueError as e:
        raise PassError(str(e), op.location) from None


class _Lowering:
    """The patterns of coll-to-cpu and what they share: the kernels, the
    scratch buffers, each block's terminator (finding it walks the whole
    block), the placeholders."""

    def __init__(self, kernels: cpu_shared.Kernels | None, scratch: Scratch) -> None:
        self.kernels, self.scratch = kernels, scratch
        self.ends: dict[ir.Block, ir.OpView] = {}
        self.placeholders: dict[tuple[ir.Block, str], ir.Value] = {}

    def patterns(self) -> FrozenRewritePatternSet:
        s = RewritePatternSet()
        s.add(Alloc.NAME, self.alloc)
        s.add(Copy.NAME, self.copy)
        s.add(CombineView.NAME, self.combine)
        s.add(Join.NAME, self.drop)
        s.add(Wait.NAME, self.drop)
        s.add("memref.memory_space_cast", self.space_cast)
        for name in OPS:  # the rest of coll has no CPU form
            if name not in LOWERED:
                s.add(name, _no_lowering)
        return s.freeze()

    def _replace(self, op: ir.Operation, rewriter: PatternRewriter) -> None:
        """Erases `op`; its tokens go to the placeholder of its block."""
        if not len(op.results):
            rewriter.erase_op(op)
            return
        key = (op.block, op.name)
        token = self.placeholders.get(key)
        if token is None:
            with ir.InsertionPoint.at_block_begin(op.block), op.location:
                token = ir.Operation.create(PLACEHOLDER, results=[op.results[0].type]).results[0]
            self.placeholders[key] = token
        rewriter.replace_op(op, [token] * len(op.results))

    def alloc(self, view: Op, rewriter: PatternRewriter) -> bool | None:
        op = view.operation
        if FUSED in op.attributes:
            return True  # tiled scratch: it goes with its views (_erase_dead_views)
        with ir.InsertionPoint(op), op.location:
            buf = self.scratch.buffer(op.results[0].type)
            with ir.InsertionPoint(self._terminator(op)):
                self.scratch.free(buf)
        rewriter.replace_op(op, [buf])
        return None

    def copy(self, view: Op, rewriter: PatternRewriter) -> None:
        op = view.operation
        if FUSED not in op.attributes:  # else a tiled loop does it
            src, dst = op.operands[0], op.operands[1]
            if ir.MemRefType(src.type).shape != ir.MemRefType(dst.type).shape:
                raise PassError("coll.copy source and target shapes differ", op.location)
            with ir.InsertionPoint(op), op.location:
                if contiguous(src.type) and contiguous(dst.type) or not all(
                        unit_inner_stride(v.type) and ir.MemRefType(v.type).has_static_shape for v in (src, dst)):
                    memref.copy(src, dst)
                else:  # a block's rows (collectives/emit.py view)
                    copy_strided(src, dst)
        self._replace(op, rewriter)

    def combine(self, op: Op, rewriter: PatternRewriter) -> None:
        if FUSED not in op.attributes:
            c = CombineView.of(op)
            with ir.InsertionPoint(op), op.location:
                _combine(op, c.inputs, c.out, self.kernels)
        self._replace(op.operation, rewriter)

    def drop(self, op: Op, rewriter: PatternRewriter) -> None:
        """coll.join, coll.wait: program order honours the tokens already."""
        self._replace(op.operation, rewriter)

    def space_cast(self, view: Op, rewriter: PatternRewriter) -> bool | None:
        op = view.operation
        src = op.operands[0]
        if src.type != op.results[0].type:
            return True  # a cast between non-coll spaces is not ours
        rewriter.replace_op(op, [src])
        return None

    def _terminator(self, op: ir.Operation) -> ir.OpView:
        key = op.block  # not op.parent: an scf.index_switch (mpi route) has a block per case
        if key not in self.ends:
            ops = op.block.operations
            self.ends[key] = ops[len(ops) - 1]
        return self.ends[key]

    def finish(self) -> None:
        """Erases the placeholders: every op that took a token is gone, but
        for ops that are not coll's."""
        for (_, name), token in self.placeholders.items():
            for use in token.uses:
                user = use.owner
                raise PassError(f"'{name}' result is still used by '{user.name}' after lowering to CPU "
                                "(tokens may only flow into coll ops)", user.location)
            token.owner.erase()


def _no_lowering(op: Op, rewriter: PatternRewriter) -> None:
    raise PassError(f"'{op.name}' has no CPU lowering; lower it to the explicit level first "
                    "(coll-lower-all-reduce)", op.location)


LOWERED = (Alloc.NAME, Copy.NAME, CombineView.NAME, Join.NAME, Wait.NAME)


def _erase_dead_views(blocks: list[ir.Block]) -> None:
    """Views (and tiled scratch) that only the replaced ops used."""
    for block in blocks:
        for op in reversed(list(block.operations)):
            dead = all(not list(r.uses) for r in op.results)
            if dead and (op.name in VIEW_OPS or FUSED in op.attributes):
                op.erase()


def _tile_blocks(module_op: ir.Operation, tile: int, kernels: cpu_shared.Kernels | None, skip: Collection[str],
                 scratch: Scratch, nontemporal: int, epilogues: bool = True, workers: int = 1) -> None:
    """Replaces the copies and combines of every tileable group by tiled
    loops (with `epilogues`, the local work fused after them,
    lowering/cpu/epilogue.py; the tiles of a large group shared among
    `workers` threads); marks what they replace. The final writes of
    a block whose buffers take at least `nontemporal` bytes (> 0) are
    streamed."""
    for block in _blocks(module_op, skip):
        groups, accesses = cpu_fuse.plan(block, epilogues and kernels is not None)
        streaming = bool(groups) and 0 < nontemporal <= cpu_fuse.footprint(accesses)
        groups = [g for g in groups if g.anchors is None or kernels is not None]
        # (its ops of several lengths run through the shared kernels only)
        together = cpu_fuse.shared_among(groups, accesses, workers)
        for shared in together:
            cpu_fuse.emit_shared(shared, accesses, tile, kernels, scratch, streaming, workers)
        placed = {id(g) for shared in together for g in shared}
        for g in groups:
            if not cpu_fuse.worth(g, accesses, workers, id(g) in placed):
                continue
            if id(g) not in placed:
                cpu_fuse.emit(g, accesses, tile, kernels, scratch, streaming, workers)
            for op in g.ops:
                op.attributes[FUSED] = ir.UnitAttr.get()
            for s in g.scratch:
                s.owner.attributes[FUSED] = ir.UnitAttr.get()


def _pointer_level(module_op: ir.Operation, kernels: cpu_shared.Kernels, split: int, tile: int,
                   scratch: Scratch) -> set[str]:
    """Functions whose program cpu_program.py emitted: large programs, on
    buffers too small to tile (tile=-1) or on any buffers (tile=0)."""
    done: set[str] = set()
    if tile > 0:
        return done  # tiles were asked for
    max_bytes = 2**31 if tile == 0 else cpu_program.MAX_BUFFER_BYTES
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
          "that nothing reads again use non-temporal stores, 0 never; epilogues: the row-parallel "
          "local work right after a collective runs in its tiles, on, or after it, off; workers: "
          "the threads the tiles of a large group are shared among, as an scf.parallel that "
          "async-parallel-for runs, 1 one thread)",
          # (static scratch is a memref.global: the module's)
          anchor=lambda o: "any" if o["kernels"] == "inline" and o["split"] == 0 and o["scratch"] == "heap"
          else "builtin.module",
          tile=(int, -1), kernels=(choice("shared", "inline"), "shared"), split=(int, SPLIT),
          scratch=(choice(*SCRATCH_MODES), SCRATCH_MODES[0]), nontemporal=(int, 0),
          epilogues=(choice("on", "off"), "on"), workers=(int, 1))
def to_cpu(module_op: ir.Operation, tile: int = -1, kernels: str = "shared", split: int = SPLIT,
           scratch: str = SCRATCH_MODES[0], nontemporal: int = 0, epilogues: str = "on", workers: int = 1) -> None:
    """Explicit level -> memref/scf/vector/arith, in place."""
    if tile < -1:
        raise PassError(f"tile must be -1 (sized by cache), 0 (no tiling) or a number of elements, got {tile}")
    if split < 0:
        raise PassError(f"split must be 0 (no split) or a number of ops, got {split}")
    if nontemporal < 0:
        raise PassError(f"nontemporal must be 0 (never) or a number of bytes, got {nontemporal}")
    if workers < 1:
        raise PassError(f"workers must be a number of threads (1: one), got {workers}")
    with module_op.context, module_op.location:
        for claim in find_ops(module_op, Implements.NAME):
            claim.erase()  # checked already (coll-check-semantics); it runs nothing
        strip_types(module_op)
        lib = cpu_shared.Kernels(module_op) if kernels == "shared" else None
        buffers = Scratch(module_op, scratch)
        done = _pointer_level(module_op, lib, split, tile, buffers) if lib is not None and split else set()
        if tile != 0:
            _tile_blocks(module_op, tile, lib, done, buffers, nontemporal, epilogues == "on", workers)
        lowering = _Lowering(lib, buffers)
        patterns = lowering.patterns()
        # The functions emitted at the pointer level hold nothing of coll.
        for top in [module_op] if not done else list(_tops(module_op, done)):
            walk_and_apply_patterns(top, patterns)
        lowering.finish()
        _erase_dead_views(_blocks(module_op, done))
        if split:
            cpu_split.split_module(module_op, split, skip=done)
        Scratch.unmark(module_op)


@register("coll-cpu-to-llvm",
          "Lower memref/scf/vector/arith/func (and linalg, affine, math) to the LLVM dialect: "
          "the upstream passes of the cpu route (core/routes.py)", anchor="builtin.module")
def cpu_to_llvm(module_op: ir.Operation) -> None:
    """memref/scf/vector/arith/func -> LLVM dialect, in place. A coll op
    left in the module is refused, located (upstream's conversions would
    pass it through: the output would not be LLVM)."""
    left = find_ops(module_op, lambda name: name.startswith("coll."))
    if left:
        raise PassError(f"'{left[0].name}' is not lowered for the CPU; expected the explicit program "
                        "lowered by coll-to-cpu first (the cpu route: coll-lower-collectives, coll-to-cpu, "
                        "coll-cpu-to-llvm)", left[0].location)
    pm = build_pipeline(f"builtin.module({','.join(CPU_TO_LLVM)})", module_op.context)
    try:
        run_pm(pm, module_op, verify_each=False)
    except ir.MLIRError as e:  # type: ignore[attr-defined]  # (set on ir at load time; not in the stubs)
        raise PassError(f"lowering to the LLVM dialect failed: {e}", module_op.location) from None
