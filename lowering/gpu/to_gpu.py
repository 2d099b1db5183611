"""coll-to-gpu: explicit level -> upstream gpu dialect (host ops + kernels).

  coll.alloc    -> a `memref.view` into one scratch pool, allocated once by
                   the library's constructor and freed at unload (not per
                   call: cuMemFree synchronizes the device). With `workspace=arg`
                   the pool is a trailing `memref<Bxi8>` argument instead
                   (the caller keeps it across runs) and the function gets
                   `coll.workspace_bytes = B`.
  coll.copy     -> `gpu.memcpy async`; a copy of strided views (a block's
                   rows) is one launch of a strided copy kernel
                   (kernels.py). A slice at an offset is handed over
                   as an identity-layout memref starting at the slice
                   (`memcpy-views=true`, the default; built on the memref
                   descriptor with llvm ops): upstream gpu-to-llvm rejects a
                   strided source (leaving the op unconverted, silently)
                   and ignores the destination's offset. With
                   `memcpy-views=false` the slices stay as they are (pure
                   gpu dialect; run coll-gpu-legalize-memcpy later).
  coll.combine  -> `gpu.launch_func async` of `combine_<kind>_<type>_x<arity>`
                   in `gpu.module @coll_kernels` (kernels.py), one kernel
                   per (kind, type, arity), given each operand's address;
                   above kernels.MAX_ARITY inputs, a chain of launches
                   that folds them into the device's accumulator (in the
                   pool) in device order. With a strided view among
                   its operands: `strided_<kind>_<type>_x<arity>`, the
                   same chain, one launch per kernel whatever the rows.
                   Grids: kernels.grid_blocks.
  coll.join     -> folded: its tokens are the dependencies of what waits on it
  coll.wait     -> one host sync (`mgpuStreamSynchronize`) after every live
                   stream joined one

Streams (lowering/gpu/streams.py). Every logical device's ops form a chain
on one stream (copies run on their destination's chain); streams, events and
the pool are made once, by the library's constructor, and reused by every
call. An op that must wait for another chain waits on an event recorded
right after the producer; dependencies a chain already implies (vector
clocks) are not waited for again. Upstream's `gpu.wait async` lowering would
create a stream per join, per call, so the token graph is lowered to the
`mgpu*` runtime calls directly; gpu.memcpy and gpu.launch_func still go
through upstream, with the stream as their one async dependency.
`streams=single` puts all ops of a GPU on one chain in program order (a
valid order of the token graph): no events, no concurrency; for comparing
host overhead against overlap.

Placement. `#coll.device<i>` memory spaces are stripped from all types;
`device-map=0,0,1` names the physical GPU of each logical device (default:
all GPU 0). Limitation: the upstream CUDA wrappers (libmlir_cuda_runtime)
create one context, for the device that is the default when they are first
used, and the compiled library loads its kernels from a constructor at load
time, so a program must keep all its logical devices on one GPU: a map
naming several GPUs is rejected. The GPU is recorded as `coll.gpu = k` on
the function; a runtime calls mgpuSetDefaultDevice(k) before loading the
library (lowering/gpu/driver.py). `gpu.set_default_device` inside the
function would come too late.
"""
from collections.abc import Iterable
from typing import Any, cast

from mlir import ir
from mlir.dialects import arith, gpu, memref

from ...core.errors import PassError
from ...core.registry import register
from ...ir.ops import Combine, Copy, Implements
from ...ir.types import contiguous, device_of, flat_offset
from ...ir.verifier import token_escapes
from ...ir.walk import find_ops
from ..cpu.split import PURE, split_function
from ..stored_types import strip_types
from . import kernels
from .kernels import KERNEL_MODULE, Kernel, add_kernels
from .legalize_memcpy import legalize_memcpy
from .streams import Chain, Chains, Program, _Tok, _token_type

THREADS = 256      # per block; grids: kernels.grid_blocks (occupancy on the chip)
# Ops of the module's local work (see _Function._local_launch) and their lowering.
LOCAL_OPS = {"gpu.launch_func": "_local_launch", "gpu.wait": "_local_wait", "gpu.alloc": "_local_op",
             "gpu.dealloc": "_local_op", "gpu.memcpy": "_local_op"}
LOCAL_CHAIN = "local"
POOL_ALIGN = 256    # bytes; keeps every scratch buffer 16-byte aligned


def parse_device_map(text: str) -> list[int]:
    """'0,0,1' -> [0, 0, 1]; '' -> [] (every logical device on GPU 0)."""
    text = text.strip()
    if not text:
        return []
    try:
        ids = [int(x) for x in text.split(",")]
    except ValueError:
        raise PassError(f"device-map must be comma-separated GPU ids, got '{text}'") from None
    if any(i < 0 for i in ids):
        raise PassError(f"device-map has a negative GPU id: '{text}'")
    return ids


def _numel(t: ir.Type) -> int:
    n = 1
    for d in ir.MemRefType(t).shape:
        n *= d
    return n


def _elem(t: ir.Type) -> str:
    return str(ir.MemRefType(t).element_type)


def _index(v: int) -> ir.Value:
    return arith.constant(ir.IndexType.get(), int(v))


# -- one function -----------------------------------------------------------------

def _flat(v: ir.Value) -> ir.Value:
    """`v` as a rank-1 memref (contiguous views only)."""
    mt = ir.MemRefType(v.type)
    if mt.rank == 1:
        return v
    n = _numel(mt)
    off = flat_offset(mt)  # a strided layout stays one, at its offset (0 included)
    flat = ir.MemRefType.get([n], mt.element_type, None if off is None else ir.StridedLayoutAttr.get(off, [1]),
                             mt.memory_space)
    if mt.rank == 0:
        return memref.expand_shape(flat, v, [], [], [1])
    try:
        return memref.collapse_shape(flat, v, [list(range(mt.rank))])
    except Exception:
        raise PassError(f"contiguous buffers are needed, got {mt}") from None


def _static_alloc(op: ir.Operation) -> bool:
    """A gpu.alloc of a static shape (coll-gpu-local-buffers'), placed in the pool."""
    return ir.MemRefType(op.results[0].type).has_static_shape


def _index_space(bufs: list[ir.Value], loc: ir.Location) -> tuple[list[int], list[int]]:
    """The strided kernels' index space (d0, d1, w) of an op on `bufs`, some
    of them strided views (rank 3 at most, of one shape, innermost stride
    1), and each operand's strides (s0, s1), flattened in operand order. A
    contiguous operand is walked row-major over that space."""
    shape = next(list(ir.MemRefType(b.type).shape) for b in bufs if not contiguous(b.type))
    if len(shape) > 3:
        raise PassError(f"strided views of rank {len(shape)}: the strided kernels take rank 3 at most", loc)
    d0, d1, w = ([1, 1] + shape)[-3:]
    out: list[int] = []
    for b in bufs:
        while not isinstance(b.owner, ir.Block) and b.owner.operation.name == "memref.cast":
            b = b.owner.operands[0]  # it only forgets a static layout (Emitter.in_order's rhs)
        mt = ir.MemRefType(b.type)
        if contiguous(b.type):
            out += [d1 * w, w]
            continue
        strides, _ = mt.get_strides_and_offset()
        if list(mt.shape) != shape or strides[-1] != 1 or any(mt.is_dynamic_stride_or_offset(s) for s in strides):
            raise PassError(f"operand {mt} of a strided op: the strided kernels need views of one shape "
                            f"({shape}) with static strides, the innermost 1", loc)
        out += ([0, 0] + strides)[-3:-1]
    return [d0, d1, w], out


class _Function:
    """Lowers the coll ops of one func.func (straight-line, in order)."""
    # Set by plan():
    ops: list[tuple[ir.Operation, int | None]]  # the ops to lower, each with its logical device
    scratch: dict[int, int]  # id(alloc op) -> its byte offset in the pool
    local_slots: set[ir.Value]
    accumulators: dict[int, int]  # device -> its accumulator's byte offset in the pool
    pool_bytes: int
    physical: list[int]
    # Set by emit():
    entry: ir.OpView
    chains: Chains

    def __init__(self, func: ir.Operation, device_map: list[int], workspace: str, streams: str,
                 kernels_needed: dict[str, Kernel], program: Program, chip: str) -> None:
        self.func = func
        self.chip = chip
        self.program = program
        self.device_map = device_map
        self.workspace = workspace
        self.streams = streams
        self.kernels_needed = kernels_needed
        self.block = func.regions[0].blocks[0]
        self.tokens: dict[ir.Value, list[_Tok]] = {}  # coll token value -> [_Tok]
        self.pool: ir.Value | None = None  # the scratch pool value
        self.consts: dict[int, ir.Value] = {}  # index constants, hoisted to the entry

    # Devices are read from the types before they are stripped.
    def plan(self) -> None:
        ops = [op for op in self.block.operations]
        self.ops = []
        # id(alloc op) -> byte offset: an Operation's hash changes when
        # strip_types retypes its result (bindings 22.1.8); self.ops keeps it alive.
        self.scratch = {}
        self.local_slots = set()  # pool views that replaced the local work's allocations
        used: set[int | None] = set()
        size = 0
        acc_bytes: dict[int, int] = {}  # device -> bytes of the accumulator its chained combines share
        for view in ops:
            name = view.operation.name
            op = view.operation
            if name == "coll.alloc" or (name == "gpu.alloc" and _static_alloc(op)):
                # scratch, and the local work's buffers: slots of the pool
                t = op.results[0].type
                dev = device_of(t) if name == "coll.alloc" else None
                used.add(dev)
                nbytes = _numel(t) * kernels.ELEMENT_BYTES[kernels.stored_element(_elem(t))]
                self.scratch[id(op)] = size
                size += -(-max(nbytes, 1) // POOL_ALIGN) * POOL_ALIGN
                self.ops.append((op, dev))
            elif name == Copy.NAME:
                c = Copy.of(op)
                dev = device_of(c.target.type)
                used.update([dev, device_of(c.source.type)])
                self.ops.append((op, dev))
            elif name == Combine.NAME:
                comb = Combine.of(op)
                dev = comb.device
                used.add(dev)
                self.ops.append((op, dev))
                if len(comb.inputs) > kernels.MAX_ARITY:  # a chain of kernels: an accumulator
                    t = comb.out.type
                    need = _numel(t) * kernels.ELEMENT_BYTES[kernels.accumulator(_elem(t))]
                    acc_bytes[dev] = max(acc_bytes.get(dev, 0), need + kernels.VECTOR_BYTES)
            elif name.startswith("coll.") or name == "memref.memory_space_cast" or name in LOCAL_OPS:
                self.ops.append((op, None))
        # One accumulator per device: the device's kernels run in order on one
        # stream, so its chains never overlap.
        self.accumulators = {}
        for dev, nbytes in sorted(acc_bytes.items()):
            self.accumulators[dev] = size
            size += -(-nbytes // POOL_ALIGN) * POOL_ALIGN
        self.pool_bytes = size
        used.discard(None)
        self.physical = sorted({self._gpu(d, op) for d in used if d is not None})
        if len(self.physical) > 1:
            raise PassError(
                f"device-map places this program on GPUs {self.physical}; the upstream CUDA "
                "wrappers create one context (for the default device, when the library loads), "
                "so all logical devices of a program must map to one GPU", self.func.location)

    def _gpu(self, dev: int, op: ir.Operation) -> int:
        if not self.device_map:
            return 0
        if dev >= len(self.device_map):
            raise PassError(f"device-map has {len(self.device_map)} entries but the program uses "
                            f"logical device {dev}", op.location)
        return self.device_map[dev]

    def _chain(self, dev: int) -> Chain:
        """The chain (stream) of a logical device's ops."""
        return dev if self.streams == "device" else self._gpu(dev, self.func)

    def _deps(self, values: Iterable[ir.Value]) -> list[_Tok]:
        out: list[_Tok] = []
        for v in values:
            out.extend(self.tokens.get(v, []))
        return out

    def _const(self, v: int) -> ir.Value:
        if v not in self.consts:
            with ir.InsertionPoint(self.entry), self.func.location:
                self.consts[v] = _index(v)
        return self.consts[v]

    @staticmethod
    def _method(op: ir.Operation) -> str:
        return LOCAL_OPS.get(op.name) or "_" + op.name.split(".")[1]

    def emit(self) -> None:
        for op, _ in self.ops:
            if not hasattr(self, self._method(op)):
                raise PassError(f"'{op.name}' has no GPU lowering; lower it to the explicit level first "
                                "(coll-lower-collectives)", op.location)
        first = self.block.operations[0]
        self.entry = first
        self.chains = Chains(self.program, first)
        with ir.InsertionPoint(first), self.func.location:
            self.func.attributes["coll.gpu"] = ir.IntegerAttr.get(
                ir.IntegerType.get_signless(64), self.physical[0] if self.physical else 0)
            self._make_pool()
        for op, dev in self.ops:
            with ir.InsertionPoint(op), op.location:
                getattr(self, self._method(op))(op, dev)
        # Whatever is still in flight at a return is synced there.
        term = self.block.operations[len(self.block.operations) - 1]
        with ir.InsertionPoint(term), term.location:
            self._finish()
        for op, _ in reversed(self.ops):
            op.erase()

    # -- scratch ------------------------------------------------------------------
    def _make_pool(self) -> None:
        if not self.pool_bytes:
            return
        pool_type = ir.MemRefType.get([self.pool_bytes], ir.IntegerType.get_signless(8))
        if self.workspace == "arg":
            self.pool = self.block.add_argument(pool_type, self.func.location)
            ft = ir.FunctionType(ir.TypeAttr(self.func.attributes["function_type"]).value)
            self.func.attributes["function_type"] = ir.TypeAttr.get(
                ir.FunctionType.get(list(ft.inputs) + [pool_type], list(ft.results)))
            self.func.attributes["coll.workspace_bytes"] = ir.IntegerAttr.get(
                ir.IntegerType.get_signless(64), self.pool_bytes)
            return
        self.pool = self.chains.pool(self.program.pool(self.pool_bytes), self.pool_bytes)

    def _finish(self) -> None:
        self.chains.sync()

    # -- ops ----------------------------------------------------------------------
    def _alloc(self, op: ir.Operation, dev: int) -> None:
        shift = self.scratch[id(op)]
        view = memref.view(op.results[0].type, self.pool, self._const(shift), [])
        op.results[0].replace_all_uses_with(view)

    def _copy(self, op: ir.Operation, dev: int) -> None:
        c = Copy.of(op)
        deps = self._deps(c.deps)
        if _numel(c.target.type) == 0:
            self.tokens[op.results[0]] = deps
            return
        if not (contiguous(c.source.type) and contiguous(c.target.type)):
            sizes, strides = _index_space([c.source, c.target], op.location)
            esize = kernels.ELEMENT_BYTES[kernels.stored_element(_elem(c.target.type))]
            args = [self._address(b, esize) for b in (c.source, c.target)]
            args += [self._const(x) for x in strides + sizes]
            kernel = kernels.copy_kernel(_elem(c.target.type))
            self.tokens[op.results[0]] = [self._launch(dev, deps, kernel, args, _numel(c.target.type))]
            return
        src, dst = _flat(c.source), _flat(c.target)

        def make(dep: ir.Value) -> ir.Value:
            return gpu.MemcpyOp(_token_type(), [dep], dst, src).result
        self.tokens[op.results[0]] = [self.chains.issue(self._chain(dev), deps, make)]

    def _launch(self, dev: int, deps: list[_Tok], kernel: Kernel, args: list[ir.Value], n: int) -> _Tok:
        """One launch of `kernel` over `n` elements on device `dev`'s chain,
        after `deps`; its grid: kernels.grid_blocks, at most one element
        (vector, where the kernel has vectors) per thread."""
        self.kernels_needed[kernel.name] = kernel
        one = self._const(1)
        block = (self._const(THREADS), one, one)
        per_block = THREADS * (1 if kernel.strided else kernels.lanes(kernel.elem))
        blocks = min(kernels.grid_blocks(self.chip, kernel.arity, THREADS), -(-n // per_block))
        grid = (self._const(max(1, blocks)), one, one)

        def make(dep: ir.Value) -> ir.Value:
            return gpu.LaunchFuncOp([KERNEL_MODULE, kernel.name], grid, block, args,
                                    async_dependencies=[dep]).results[0]
        return self.chains.issue(self._chain(dev), deps, make)

    def _address(self, v: ir.Value, esize: int) -> ir.Value:
        """Address of element 0 of the memref `v` (any rank and layout), as an index."""
        base = memref.extract_aligned_pointer_as_index(v)
        mt = ir.MemRefType(v.type)
        _, offset = mt.get_strides_and_offset()
        if mt.is_dynamic_stride_or_offset(offset):
            meta = memref.ExtractStridedMetadataOp(v)
            return arith.addi(base, arith.muli(meta.offset, self._const(esize)))
        return arith.addi(base, self._const(offset * esize)) if offset else base

    def _accumulator(self, dev: int, lead: ir.Value, elem: str) -> ir.Value:
        """Address of device `dev`'s accumulator for a chain of kernels,
        misaligned like the inputs' (the lead's) vector head, so that the
        kernels' vector loops take it too."""
        esize = kernels.ELEMENT_BYTES[kernels.stored_element(elem)]
        asize = kernels.ELEMENT_BYTES[kernels.accumulator(elem)]
        c16 = self._const(kernels.VECTOR_BYTES)
        head = arith.divui(arith.remui(arith.subi(c16, arith.remui(lead, c16)), c16), self._const(esize))
        skew = arith.remui(arith.subi(c16, arith.remui(arith.muli(head, self._const(asize)), c16)), c16)
        base = arith.addi(memref.extract_aligned_pointer_as_index(self.pool),
                          self._const(self.accumulators[dev]))
        return arith.addi(base, skew)

    def _combine(self, op: ir.Operation, dev: int) -> None:
        c = Combine.of(op)
        n_in = len(c.inputs)
        bufs = c.inputs + [c.out]
        deps = self._deps(c.deps)
        kind = c.kind
        # The element type is the rhs's; the lhs and the output may be its
        # accumulator (a partial between devices): the kernel's acc_in/acc_out.
        elem = _elem(bufs[1 if n_in > 1 else -1].type)
        acc_in, acc_out = _elem(bufs[0].type) != elem, _elem(bufs[-1].type) != elem
        n = _numel(bufs[-1].type)
        if n == 0:
            self.tokens[op.results[0]] = deps
            return
        try:
            kernels.combine_op(kind, kernels.stored_element(elem))
        except (KeyError, ValueError) as e:
            raise PassError(f"no combine kernel for kind '{kind}' on {elem}: {e}",
                            op.location) from None
        strided = not all(contiguous(b.type) for b in bufs)
        # Strided: each operand's strides, then the sizes, follow the addresses.
        sizes, strides = _index_space(bufs, op.location) if strided else ([], [])
        addresses: dict[ir.Value, ir.Value] = {}  # an operand that is also the output (in place): addressed once
        for b in bufs:
            if b not in addresses:
                esize = kernels.ELEMENT_BYTES[kernels.stored_element(_elem(b.type))]
                addresses[b] = self._address(b if strided else _flat(b), esize)
        ptrs = [addresses[b] for b in bufs]
        steps = kernels.chain(kind, elem, n_in, strided)
        if acc_in or acc_out:
            if len(steps) > 1:
                raise PassError(f"a combine of more than {kernels.MAX_ARITY} inputs with a partial in the "
                                "accumulator type; expected one kernel", op.location)
            steps = [(kernels.Kernel.make(kind, elem, n_in, acc_in, acc_out, strided), 0, n_in)]
        # A chain's accumulator (a chain of one kernel has none: the output stands in)
        acc = self._accumulator(dev, ptrs[0], elem) if len(steps) > 1 else ptrs[-1]
        acc_strides = [sizes[1] * sizes[2], sizes[2]] if strided else []  # contiguous, in the pool
        tail = [self._const(x) for x in sizes] if strided else [self._const(n)]
        for k, (kernel, start, take) in enumerate(steps):
            last = k == len(steps) - 1
            args = ([acc] if k else []) + ptrs[start:start + take] + [ptrs[-1] if last else acc]
            st = (acc_strides if k else []) + strides[2 * start:2 * (start + take)] + \
                (strides[-2:] if last else acc_strides)
            deps = [self._launch(dev, deps, kernel, args + [self._const(x) for x in st] + tail, n)]
        self.tokens[op.results[0]] = deps

    # -- local work ------------------------------------------------------------------
    # The module's own kernels (gpu-kernel-outlining's, launched synchronously)
    # and local buffer ops (coll-gpu-local-buffers: `gpu.wait async`, the op,
    # `gpu.wait`) run on a chain of their own, each waited for by the host
    # where it stands, as upstream's synchronous forms would, but on a stream
    # made at load instead of one made and destroyed per op and call; static
    # allocations are slots of the pool.
    def _local_chain(self) -> Chain:
        return LOCAL_CHAIN if self.streams == "device" else self._chain(0)

    def _local_launch(self, op: ir.Operation, dev: int | None) -> None:
        if op.results:  # an async launch that is not coll's: no chain to put it on
            raise PassError("an async gpu.launch_func of the module's own is not supported next to "
                            "collectives; expected synchronous launches (gpu-kernel-outlining's)", op.location)
        lf = cast(gpu.LaunchFuncOp, op.opview)
        grid = (lf.gridSizeX, lf.gridSizeY, lf.gridSizeZ)
        block = (lf.blockSizeX, lf.blockSizeY, lf.blockSizeZ)
        kernel = ir.SymbolRefAttr(op.attributes["kernel"])
        path = list(kernel.value)  # [module, kernel]
        shared = lf.dynamicSharedMemorySize

        def make(dep: ir.Value) -> ir.Value:
            return gpu.LaunchFuncOp(path, grid, block, list(lf.kernelOperands), async_dependencies=[dep],
                                    dynamic_shared_memory_size=shared).results[0]
        self.chains.issue(self._local_chain(), [], make)
        self.chains.sync()

    def _local_wait(self, op: ir.Operation, dev: int | None) -> None:
        if len(op.results) and not len(op.operands):  # a local op starts: nothing to wait for
            self.tokens[op.results[0]] = []
        elif not len(op.results):  # the host waits for it (when it made any work)
            if self._deps(list(op.operands)):
                self.chains.sync()
        else:
            raise PassError("gpu.wait async with dependencies is not supported next to collectives",
                            op.location)

    def _local_op(self, op: ir.Operation, dev: int | None) -> None:
        """gpu.alloc, gpu.dealloc or gpu.memcpy async [t], t from a local start.
        A static allocation is a slot of the pool (no allocation per call:
        cuMemAlloc and cuMemFree synchronize), its dealloc nothing."""
        deps = self._deps([op.operands[0]])
        if id(op) in self.scratch:
            view = memref.view(op.results[0].type, self.pool, self._const(self.scratch[id(op)]), [])
            op.results[0].replace_all_uses_with(view)
            self.local_slots.add(view)
            self.tokens[op.results[1]] = deps
            return
        if op.name == "gpu.dealloc" and op.operands[1] in self.local_slots:
            self.tokens[op.results[0]] = deps
            return
        token = _token_type()
        made = []

        def make(dep: ir.Value) -> ir.Value:
            if op.name == "gpu.alloc":
                new = gpu.AllocOp(op.results[0].type, token, [dep], [], [])
            elif op.name == "gpu.dealloc":
                new = gpu.DeallocOp(token, [dep], op.operands[1])
            else:
                new = gpu.MemcpyOp(token, [dep], op.operands[1], op.operands[2])
            made.append(new)
            return new.results[-1]
        self.tokens[op.results[-1]] = [self.chains.issue(self._local_chain(), deps, make)]
        if op.name == "gpu.alloc":
            op.results[0].replace_all_uses_with(made[0].results[0])

    def _join(self, op: ir.Operation, dev: int | None) -> None:
        self.tokens[op.results[0]] = self._deps(list(op.operands))

    def _wait(self, op: ir.Operation, dev: int | None) -> None:
        self.chains.sync()

    def _memory_space_cast(self, op: ir.Operation, dev: int | None) -> None:
        src, res = op.operands[0], op.results[0]
        if src.type == res.type:
            res.replace_all_uses_with(src)
        else:
            self.ops = [(o, d) for o, d in self.ops if o != op]  # not ours: keep it


# -- the module ---------------------------------------------------------------------

def _has_coll(func: ir.Operation) -> list[ir.Operation]:
    return find_ops(func, lambda name: name.startswith("coll."))


# A host function of more than SPLIT copies and launches is split into
# private functions of at most SPLIT host calls (lowering/cpu/split.py),
# placed after it: a 64-device ring is ~300,000 host ops in one
# block otherwise, and llc's time on one function grows faster than its
# size. Besides views and constants, a part rebuilds the handles it uses
# (stream, event and pool pointers are loaded from the globals the
# constructor writes once; nothing writes them during a call) and the
# descriptors legalize_memcpy builds, so only buffers cross parts.
SPLIT = 1024  # host calls per part: fewer parts, fewer handles and buffers rebuilt
HOST_PURE = PURE + ("llvm.mlir.addressof", "llvm.getelementptr", "llvm.load", "llvm.mlir.poison",
                    "llvm.insertvalue", "llvm.extractvalue", "llvm.mlir.constant",
                    "builtin.unrealized_conversion_cast", "memref.view")


def to_gpu(module_op: ir.Operation, device_map: str = "", chip: str = "sm_90", workspace: str = "alloc",
           streams: str = "device", memcpy_views: bool = True, split: int = SPLIT, graph: bool = True) -> list[str]:
    """Explicit level -> gpu dialect, in place. Returns the kernel names.
    `split`: most host ops per function (0: one function); `graph`: each
    call as one CUDA graph (lowering/gpu/streams.py)."""
    if workspace not in ("alloc", "arg"):
        raise PassError(f"workspace must be 'alloc' or 'arg', got '{workspace}'")
    if streams not in ("device", "single"):
        raise PassError(f"streams must be 'device' or 'single', got '{streams}'")
    if not chip.startswith("sm_"):
        raise PassError(f"chip must be an NVIDIA architecture like sm_90, got '{chip}'")
    dmap = parse_device_map(device_map)
    needed: dict[str, Kernel] = {}
    program = Program(graph)
    with module_op.context, module_op.location:
        for claim in find_ops(module_op, Implements.NAME):
            claim.erase()  # checked already (coll-check-semantics); it runs nothing
        funcs = []
        for op in module_op.regions[0].blocks[0].operations:
            if op.operation.name == "func.func" and _has_coll(op.operation):
                funcs.append(op.operation)
        lowerings = []
        for f in funcs:
            nested = [o for o in _has_coll(f) if o.parent != f]
            if nested:
                raise PassError("only straight-line code is lowered: coll ops must be "
                                "in the function body, not in nested regions", nested[0].location)
            low = _Function(f, dmap, workspace, streams, needed, program, chip)
            low.plan()
            lowerings.append(low)
        for f in funcs:
            strip_types(f)
        for low in lowerings:
            low.emit()
        program.install(module_op)
        if funcs:
            module_op.attributes["gpu.container_module"] = ir.UnitAttr.get()
        add_kernels(module_op, chip, needed)
    if memcpy_views:
        legalize_memcpy(module_op)
    if split:
        with module_op.context, module_op.location:
            for f in funcs:
                if len(find_ops(f, lambda n: n in ("gpu.memcpy", "gpu.launch_func"))) > split:
                    split_function(f, split, HOST_PURE)
    return sorted(needed)


@register("coll-to-gpu",
          "Lower the explicit level to gpu host ops (streams per device) and combine kernels",
          anchor="builtin.module",
          **{"device-map": (str, ""), "chip": (str, "sm_90"), "workspace": (str, "alloc"),
             "streams": (str, "device"), "memcpy-views": (str, "true"), "split": (int, SPLIT),
             "graph": (str, "true")})
def to_gpu_pass(module_op: ir.Operation, **options: Any) -> None:
    for op in find_ops(module_op, lambda n: n.startswith("coll.")):
        for loc, msg in token_escapes(op):  # a returned token would dangle (an LLVM abort)
            raise PassError(msg, loc)
    views = options["memcpy-views"]
    if views not in ("true", "false"):
        raise PassError(f"memcpy-views must be true or false, got '{views}'")
    if options["split"] < 0:
        raise PassError(f"split must be 0 (no split) or a positive op count, got {options['split']}")
    if options["graph"] not in ("true", "false"):
        raise PassError(f"graph must be true or false, got '{options['graph']}'")
    to_gpu(module_op, options["device-map"], options["chip"], options["workspace"],
           options["streams"], views == "true", options["split"], options["graph"] == "true")


