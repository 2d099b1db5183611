"""coll-parallel-devices: the simulated devices' local work on every core.

The CPU back end runs N devices in one function, one op after another; a
frontend's SPMD local work (each rank's clone carries DEVICE_ATTR) thus ran
on one core where XLA spreads the devices over the machine's cores.
Between two collectives, the devices' local work is independent: each
device computes on its own buffers. This pass finds, in a function's block,
each run of such ops (no collective, load or other op with unknown effects
between them), checks that no device writes memory another device of the
run touches (analysis/effects.py: roots and element ranges, exactly where
static; a BLAS call's pointers as their whole buffers), moves each
device's ops of the run, in order, into a function of its own
(`@main_device3_0`, noinline), and calls the devices in `threads` groups
(the machine's cores), each group but the last in an `async.execute`, the
last on the caller's thread (two threads, four devices):

    %t0 = async.execute { func.call @main_device0_0(%x0, %w0, ...)
                          func.call @main_device1_0(%x1, %w1, ...) }
    func.call @main_device2_0(...)
    func.call @main_device3_0(...)
    async.await %t0

at the run's last op (the views and constants between its ops stay where
they are, before it). Upstream's async lowering (route.py) runs each
execute on the MLIR async runtime's thread pool (one worker per core); the
block goes on when every device is done. Each device computes what it
computed on one core, so every result is bit for bit the sequential
program's.

A run moves only when its ops touch at least `min-bytes` bytes in all
(handing work to another thread costs tens of microseconds).
"""
from collections.abc import Iterable

from mlir import ir
from mlir.dialects import arith, func

from ...analysis.effects import NO_ACCESS, ROOT_OPS, Resolver, Unresolved, flat_effects
from ...core.errors import PassError
from ...core.registry import register
from ...ir.ops import DEVICE_ATTR
from ...ir.views import VIEW_OPS, defining_op
from ...passes.blas_contractions import PREFIX as BLAS_PREFIX
from .kernels import buffer_bytes
from .route import cores

# A run worth another thread: ring_attention (bench/jax_corpus.py, bench
# scale: 33 runs of 0.1-2.6 MB) took 1.9 ms a call on one thread and 2.3 ms
# with its runs from 2 MiB up on two; runs of 8 MiB and more (seq_parallel,
# megatron_mlp, dp_mlp_step) gained 1.4-1.8x.
MIN_BYTES = 1 << 23
# Ops that only compute a value (no memory effect): they stay in place, before
# the run's async.execute ops; any other op with results ends a run.
PURE = tuple(n for n in VIEW_OPS if n != "memref.reshape") + ROOT_OPS + NO_ACCESS + (
    "llvm.inttoptr", "llvm.mlir.constant", "affine.apply", "ub.poison")
PURE_DIALECTS = ("arith.", "index.")
# How a library call's pointer is computed from a buffer's aligned pointer
# (_pointer_buffer follows them; any other op on a pointer is not known).
ADDRESS_OPS = ("llvm.inttoptr", "arith.index_cast", "arith.addi", "arith.muli")
CALLS = ("func.call", "func.call_indirect", "llvm.call")

Span = tuple[object, int, int, bool]  # (root, first byte, end byte, written)


def _device(op: ir.Operation) -> int | None:
    """The device of a device's local work; None for any other op."""
    if DEVICE_ATTR not in op.attributes:
        return None
    attr = op.attributes[DEVICE_ATTR]
    if not isinstance(attr, ir.IntegerAttr) or ir.IntegerType(attr.type).width < 2:
        raise PassError(f"'{DEVICE_ATTR}' is {attr}; expected a device id (an integer, i64)", op.location)
    return ir.IntegerAttr(attr).value


def _is_work(op: ir.Operation) -> bool:
    """A device's local work: an op of one device that computes no value
    (a dealloc too: the buffer is that device's, another touching it would
    show as a conflict)."""
    return _device(op) is not None and not len(op.results) and op.name != "func.return"


def _is_pure(op: ir.Operation) -> bool:
    return op.name in PURE or op.name.startswith(PURE_DIALECTS)


def runs(block: ir.Block) -> list[list[ir.Operation]]:
    """The runs of local work ops of `block`, pure ops between them skipped."""
    out: list[list[ir.Operation]] = []
    run: list[ir.Operation] = []
    for o in block.operations:
        op = o.operation
        if _is_work(op):
            run.append(op)
        elif not _is_pure(op):
            out.append(run)
            run = []
    out.append(run)
    return [r for r in out if len({_device(op) for op in r}) > 1]


def _pointer_buffer(ptr: ir.Value, depth: int = 0) -> ir.Value | None:
    """The memref whose aligned pointer, plus an offset computed from no
    other pointer, gave address `ptr` (coll-blas-contractions' calls: an
    inttoptr of extract_aligned_pointer_as_index + offset * bytes); None
    for any other address."""
    op = defining_op(ptr)
    if op is None or depth > 16:
        return None
    if op.name == "memref.extract_aligned_pointer_as_index":
        return op.operands[0]
    if op.name in ("llvm.inttoptr", "arith.index_cast"):
        return _pointer_buffer(op.operands[0], depth + 1)
    if op.name == "arith.addi":
        a, b = op.operands
        for base, off in ((a, b), (b, a)):
            if _offset(off, depth + 1):
                return _pointer_buffer(base, depth + 1)
    return None


def _offset(v: ir.Value, depth: int) -> bool:
    """Whether `v` is an element or byte offset made of constants, loop
    counters and a memref's strided metadata only (no pointer in it)."""
    op = defining_op(v)
    if op is None:  # a block argument: a loop's counter, not the function's
        parent = v.owner.owner if isinstance(v.owner, ir.Block) else None
        return parent is not None and parent.name in ("scf.for", "affine.for", "scf.parallel")
    if depth > 16:
        return False
    if op.name in ("arith.constant", "memref.extract_strided_metadata"):
        return True
    if op.name in ("arith.addi", "arith.muli", "arith.index_cast"):
        return all(_offset(x, depth + 1) for x in op.operands)
    return False


def _call_accesses(op: ir.Operation, library: set[str]) -> list[tuple[ir.Value, bool, bool]] | None:
    """A library call's buffers, each whole and written; None for any other
    call (`library`: the module's declarations of BLAS functions)."""
    if op.name != "func.call" or ir.FlatSymbolRefAttr(op.attributes["callee"]).value not in library:
        return None  # what another function touches is not followed
    out = []
    for v in op.operands:
        if isinstance(v.type, ir.MemRefType):
            out.append((v, True, True))
        elif str(v.type) == "!llvm.ptr":
            buf = _pointer_buffer(v)
            if buf is None:
                return None
            out.append((buf, True, True))
    return out


def _accesses(op: ir.Operation, library: set[str]) -> list[tuple[ir.Value, bool, bool]] | None:
    """[(memref, whole root, written)] an op and the ops in its regions
    touch, a load in a linalg body too, each op's by effects.flat_effects;
    None when not known: a call other than the library's (its pointers
    followed here: effects.py follows memrefs only), an op on a pointer,
    an op whose effects are not known."""
    out: list[tuple[ir.Value, bool, bool]] = []
    unknown = False

    def visit(inner: ir.Operation) -> ir.WalkResult:
        nonlocal unknown
        if inner.name in CALLS:
            calls = _call_accesses(inner, library)
            if calls is None:
                unknown = True
                return ir.WalkResult.INTERRUPT
            out.extend(calls)
        elif inner.name not in ADDRESS_OPS and any(str(v.type) == "!llvm.ptr" for v in
                                                   list(inner.operands) + list(inner.results)):
            unknown = True
            return ir.WalkResult.INTERRUPT
        elif any(isinstance(v.type, ir.MemRefType) for v in inner.operands):
            eff = flat_effects(inner)  # (an op with regions: its own operands; its ops come next)
            if eff is None:
                unknown = True
                return ir.WalkResult.INTERRUPT
            out.extend([(v, False, False) for v, _, _ in eff[0]] + [(v, False, True) for v, _, _ in eff[1]])
        return ir.WalkResult.ADVANCE
    op.walk(visit, ir.WalkOrder.PRE_ORDER)
    return None if unknown else out


def _span(resolver: Resolver, v: ir.Value, whole: bool, written: bool) -> Span:
    lay = resolver.layout(v)
    if whole or any(s < 0 for s in lay.strides):
        return (lay.root, 0, 1 << 62, written)
    if 0 in lay.shape:
        return (lay.root, 0, 0, written)
    last = lay.offset + sum((n - 1) * s for n, s in zip(lay.shape, lay.strides))
    return (lay.root, lay.shift + lay.offset * lay.esize, lay.shift + (last + 1) * lay.esize, written)


def _independent(resolver: Resolver, run: Iterable[ir.Operation], library: set[str]) -> int | None:
    """The bytes the run's ops touch when no device writes what another
    device touches; None otherwise (or when an access is not known)."""
    by_root: dict[object, list[tuple[int, int, int, bool]]] = {}
    total = 0
    for op in run:
        acc = _accesses(op, library)
        if acc is None:
            return None
        d = _device(op)
        assert d is not None
        for v, whole, written in acc:
            try:
                root, lo, hi, w = _span(resolver, v, whole, written)
            except Unresolved:
                return None
            by_root.setdefault(root, []).append((d, lo, hi, w))
            total += buffer_bytes(ir.MemRefType(v.type)) if ir.MemRefType(v.type).has_static_shape else 0
    for spans in by_root.values():
        if len({d for d, *_ in spans}) < 2:
            continue
        spans.sort(key=lambda s: s[1])
        # Sweep: each span against the earlier ones still open at its start.
        open_: list[tuple[int, int, int, bool]] = []
        for s in spans:
            open_ = [o for o in open_ if o[2] > s[1]]
            if s[1] < s[2] and any(o[0] != s[0] and (o[3] or s[3]) for o in open_):
                return None
            if s[1] < s[2]:
                open_.append(s)
    return total


def _outline(ops: list[ir.Operation], name: str, after: ir.Operation) -> tuple[ir.Operation, list[ir.Value]]:
    """Moves `ops` (in order) into a new noinline function `name` after
    `after`; returns it and the values to call it with (what the ops
    use from outside, constants cloned in instead). An async.execute
    becomes a coroutine that carries every value its body uses: with the
    call alone in it, only that device's (upstream's async-parallel-for,
    one loop over the devices' cases, passed every device's memref
    descriptors through three functions: jit_transformer_2d took LLVM 2x
    as long to compile)."""
    inside: set[ir.Value] = set()
    used: list[ir.Value] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        inside.update(op.results)
        for region in op.regions:
            for block in region.blocks:
                inside.update(block.arguments)
        used.extend(op.operands)
        return ir.WalkResult.ADVANCE
    for op in ops:
        op.walk(visit, ir.WalkOrder.PRE_ORDER)
    captured = list(dict.fromkeys(v for v in used if v not in inside))
    constants = {v: c for v in captured if (c := defining_op(v)) is not None and c.name == "arith.constant"}
    args = [v for v in captured if v not in constants]
    with ir.InsertionPoint.after(after), after.location:
        f = func.FuncOp(name, ir.FunctionType.get([v.type for v in args], []), visibility="private")
        f.attributes["passthrough"] = ir.ArrayAttr.get([ir.StringAttr.get("noinline")])
        body = f.add_entry_block()
        with ir.InsertionPoint(body):
            ret = func.ReturnOp([])
    mapping = dict(zip(args, body.arguments))
    for v, c in constants.items():
        mapping[v] = c.clone(ir.InsertionPoint(ret)).results[0]
    for op in ops:
        op.move_before(ret.operation)

    def remap(inner: ir.Operation) -> ir.WalkResult:
        for i, v in enumerate(inner.operands):
            if v in mapping:
                inner.operands[i] = mapping[v]
        return ir.WalkResult.ADVANCE
    for op in ops:
        op.walk(remap, ir.WalkOrder.PRE_ORDER)
    return f.operation, args


def _parallelize(run: list[ir.Operation], func_op: ir.Operation, names: set[str], after: ir.Operation,
                 threads: int) -> ir.Operation:
    """Moves each device's ops of `run` into a function of its own; the
    devices, in `threads` groups of consecutive ones, are called group by
    group: each group but the last in an async.execute, the last on this
    thread, then every execute awaited, at the run's last op. One handoff
    per extra thread, not per device: a handoff costs tens of
    microseconds (ring_attention's runs from 256 KiB up, a device per
    execute: 2.0 -> 2.6 ms a call). The functions go after `after`;
    returns the last."""
    devices = sorted({d for op in run if (d := _device(op)) is not None})
    last = run[-1]
    with ir.InsertionPoint.after(last), last.location:  # where the run was (before its ops move away)
        anchor = arith.constant(ir.IndexType.get(), 0).owner
    base = ir.StringAttr(func_op.attributes["sym_name"]).value
    calls = []
    for d in devices:
        i = 0
        while f"{base}_device{d}_{i}" in names:
            i += 1
        names.add(f"{base}_device{d}_{i}")
        after, args = _outline([op for op in run if _device(op) == d], f"{base}_device{d}_{i}", after)
        calls.append((d, f"{base}_device{d}_{i}", args))
    k = min(threads, len(calls))
    groups = [calls[len(calls) * g // k:len(calls) * (g + 1) // k] for g in range(k)]

    def call_all(group: list[tuple[int, str, list[ir.Value]]]) -> None:
        for d, name, args in group:
            call = func.CallOp([], ir.FlatSymbolRefAttr.get(name), args)
            call.attributes[DEVICE_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), d)
    # One token per execute, each awaited (not a group: async.create_group is
    # Pure in LLVM 22, and CSE merged two runs' groups of one size into one
    # that then counted twice its tokens: an assertion of the runtime).
    token = ir.Type.parse("!async.token")
    with ir.InsertionPoint.after(anchor), last.location:
        tokens = []
        for group in groups[:-1]:
            execute = ir.Operation.create("async.execute", results=[token], operands=[], regions=1,
                                          attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, 0])})
            with ir.InsertionPoint(execute.regions[0].blocks.append()):
                call_all(group)
                ir.Operation.create("async.yield", operands=[])
            tokens.append(execute.results[0])
        call_all(groups[-1])
        for t in tokens:
            ir.Operation.create("async.await", operands=[t])
    anchor.erase()
    return after


def parallel_devices(module_op: ir.Operation, min_bytes: int = MIN_BYTES, threads: int = 0) -> None:
    """`threads`: 0, the cores this process may run on."""
    threads = threads or cores()
    if threads < 2:
        return
    top = module_op.regions[0].blocks[0]
    names = {ir.StringAttr(op.attributes["sym_name"]).value for op in top.operations if "sym_name" in op.attributes}
    # The library's functions: declarations (no body) of its names only.
    library = {n for op in top.operations if op.operation.name == "func.func" and not len(op.regions[0].blocks)
               and (n := ir.StringAttr(op.attributes["sym_name"]).value).startswith(BLAS_PREFIX)}
    for f in [op.operation for op in top.operations if op.operation.name == "func.func"]:
        if not len(f.regions[0].blocks):
            continue
        resolver = Resolver(f)
        after = f
        for run in runs(f.regions[0].blocks[0]):
            touched = _independent(resolver, run, library)
            if touched is not None and touched >= min_bytes:
                after = _parallelize(run, f, names, after, threads)


@register("coll-parallel-devices",
          "Run the simulated devices' local work (ops marked coll.device) between two collectives on "
          "every core: each run whose devices touch disjoint memory, and at least min-bytes in all, "
          "moves into one function per device; the devices, in `threads` groups (0: this machine's "
          "cores), are called group by group, each group but the last in an async.execute (the async "
          "runtime's thread pool), the last on the caller's thread, all awaited at the run's end",
          anchor="builtin.module", **{"min-bytes": (int, MIN_BYTES), "threads": (int, 0)})
def parallel_devices_pass(module_op: ir.Operation, **options: int) -> None:
    if options["min-bytes"] < 0:
        raise PassError(f"min-bytes must be a number of bytes, got {options['min-bytes']}")
    if options["threads"] < 0:
        raise PassError(f"threads must be 0 (this machine's cores) or a number of threads, got {options['threads']}")
    with module_op.context, module_op.location:
        parallel_devices(module_op, options["min-bytes"], options["threads"])
