"""coll-gpu-fuse-epilogues: on the GPU route, the elementwise local work
right after a collective (pmean's divide, a residual add, a bias, an
activation, the scale of a norm) runs in one kernel with the collective's
last combine on each device, so the combined result is written once and
not read back.

Where: a coll.combine C (of a kind in KINDS_FUSED, an element type in
TYPES) that writes a whole buffer R, element for element (its span is all
of R: no offset, no byte shift, no other element type through memref.view)
and whose token only waits, joins and coll.implements use (nothing of the
collective comes after it on R: naive's and oneshot's combines, direct
reduce_scatter's, not the reduce-scatter steps of ring or twoshot, whose
chunks are copied on), and E, the first op after C that touches R: a
linalg.generic (named ops are generalized first, on the route) of
parallel loops over R's shape that names R itself and reads or writes it
through the identity map, its other buffers read through projected
permutations (a bias) or written through the identity, its body
arithmetic (cpu/epilogue.py BODY_PREFIXES, BODY_OPS). Between C and E, a
coll.wait covers C's token, and nothing writes C's inputs, touches R or
has effects not known (a call, a region, a linalg body that loads, a
buffer made by an op the analysis does not follow: arith.select,
extract_strided_metadata).

Fused: C goes (its token's users take a coll.join of its dependencies) and
one linalg.generic G at E's place folds C's inputs in device order, in the
accumulator type and rounded once (the combine kernel's operations), and
runs E's body on the result; the next ops, while elementwise over the same
shape and reading G's outputs element by element, join G. G is local work:
the route makes one kernel of it (GPU_LOCAL_WORK), launched after the wait
as E was. The results are the unfused program's, bit for bit
(tests/unit/test_gpu_epilogue.py runs both through the CPU back end).

Why linalg and not upstream's scf-parallel-loop-fusion: in LLVM 22 it
fuses no loops whose buffers may alias, and function arguments may for it
(its test do_not_fuse_alias); coll takes distinct arguments not to alias
(as on the CPU route).
"""
import math
from collections.abc import Sequence

from mlir import ir
from mlir.dialects import linalg, memref

from ...analysis.effects import ROOT_OPS, host_effects
from ...core.registry import register
from ...ir.kinds import ELEMENTS, KINDS
from ...ir.ops import Combine, view
from ...ir.types import contiguous
from ...ir.views import VIEW_OPS, root_of, span
from ...ir.walk import find_ops
from ..cpu.epilogue import BODY_OPS, BODY_PREFIXES, _buffer

Op = ir.Operation | ir.OpView

PASSIVE = VIEW_OPS + ("arith.constant", "coll.wait", "coll.join", "coll.implements", "coll.alloc", "memref.alloc",
                      "memref.alloca", "memref.get_global")
TOKEN_USERS = ("coll.wait", "coll.join", "coll.implements")
# Element types whose combine a generic computes as the kernels do (i1 is
# stored as a byte and fp8 loaded as i8 by the kernels: left unfused).
TYPES = ("f32", "f64", "f16", "bf16", "i8", "i16", "i32", "i64")
# Kinds whose last operation a backend cannot contract with the epilogue's
# first (prod's multiply and a residual add would be one fma in one body,
# a rounding fewer than the combine kernel's stored product).
KINDS_FUSED = ("sum", "max", "min", "and", "or", "xor")
PARALLEL = "#linalg.iterator_type<parallel>"


def _key(v: ir.Value) -> ir.Value | str:
    """The buffer a memref value is a view of."""
    return _buffer(root_of(v)[0])


def _known(values: Sequence[ir.Value]) -> bool:
    """Whether every memref among `values` is a view of a buffer the
    analysis names: an argument or an allocation (not a memref an op such
    as arith.select or extract_strided_metadata made, which may be another
    name of any of them: outside attack, 2026-12-07)."""
    for v in _memrefs(values):
        owner = root_of(v)[0].owner
        if not isinstance(owner, ir.Block) and owner.operation.name not in ROOT_OPS:
            return False
    return True


def _whole(v: ir.Value) -> ir.Value | None:
    """The root buffer `v` is, element for element (its span is the whole
    root, of the same element type: no offset, no byte shift, no other
    type seen through memref.view), else None."""
    s = span(v)
    if s is None:
        return None
    root, first, end = s
    rt = root.type
    if not isinstance(rt, ir.MemRefType) or not ir.MemRefType(rt).has_static_shape:
        return None
    rmt = ir.MemRefType(rt)
    if rmt.element_type != ir.MemRefType(v.type).element_type or not contiguous(rmt) \
            or rmt.get_strides_and_offset()[1] != 0:
        return None
    esize = ELEMENTS[str(rmt.element_type)].bytes if str(rmt.element_type) in ELEMENTS else 0
    return root if esize and first == 0 and end == math.prod(rmt.shape) * esize else None


def _memrefs(values: Sequence[ir.Value]) -> list[ir.Value]:
    return [v for v in values if isinstance(v.type, ir.MemRefType)]


def _effects(op: ir.Operation) -> tuple[list[ir.Value], list[ir.Value]] | None:
    """(buffers read, buffers written) by `op`: a coll op's by its role,
    another's as coll-check-order takes them (analysis/effects.py: a linalg
    body's loads too); None where not known."""
    if not _known(list(op.operands)):
        return None
    if op.name in PASSIVE:
        return [], []
    if op.name.startswith("coll."):
        v = view(op)
        return (_memrefs(list(v.reads)), _memrefs(list(v.writes))) if v is not None else None
    eff = host_effects(op)
    return ([a[0] for a in eff[0]], [a[0] for a in eff[1]]) if eff is not None else None


def _maps(op: Op) -> list[ir.AffineMap]:
    return [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]


def _n_inputs(op: Op) -> int:
    return list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))[0]


def _elementwise(op: Op, shape: list[int]) -> bool:
    """A linalg.generic on memrefs of parallel loops over `shape` whose
    outputs are written through the identity, its inputs read through
    projected permutations, and whose body is arithmetic."""
    if op.name != "linalg.generic" or len(op.results):
        return False
    iters = [str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]
    if len(iters) != len(shape) or any("parallel" not in i for i in iters):
        return False
    n_in = _n_inputs(op)
    for k, (v, m) in enumerate(zip(op.operands, _maps(op))):
        if not isinstance(v.type, ir.MemRefType):
            if k >= n_in:
                return False
            continue
        mt = ir.MemRefType(v.type)
        if not mt.has_static_shape or mt.memory_space is not None:
            return False
        dims = [e.position if isinstance(e, ir.AffineDimExpr) else None for e in m.results]
        if None in dims or len(set(dims)) != len(dims) or [shape[d] for d in dims if d is not None] != list(mt.shape):
            return False
        if k >= n_in and dims != list(range(len(shape))):
            return False
    return _arithmetic(op)


def _arithmetic(op: Op) -> bool:
    """Whether the body of a linalg op holds only arithmetic (no load of a
    buffer its operands do not name, no call)."""
    ok = True

    def visit(inner: ir.Operation) -> ir.WalkResult:
        nonlocal ok
        if inner != op.operation and not (inner.name.startswith(BODY_PREFIXES) or inner.name in BODY_OPS):
            ok = False
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE
    op.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return ok


def _identity(m: ir.AffineMap) -> bool:
    return m == ir.AffineMap.get_identity(m.n_dims)


def _covered(block: ir.Block, start: Op, end: Op, token: ir.Value) -> bool | None:
    """Whether a coll.wait between ops `start` and `end` covers `token`
    (through joins); None when an op between has effects not known or
    `end` is not after `start`."""
    def expand(deps: Sequence[ir.Value]) -> set[ir.Value]:
        seen: set[ir.Value] = set()
        todo = list(deps)
        while todo:
            v = todo.pop()
            if v in seen:
                continue
            seen.add(v)
            owner = v.owner
            if not isinstance(owner, ir.Block) and owner.operation.name == "coll.join":
                todo.extend(owner.operation.operands)
        return seen
    inside = covered = False
    for o in block.operations:
        op = o.operation
        if op == start.operation:
            inside = True
        elif op == end.operation:
            return covered if inside else None
        elif inside and op.name == "coll.wait" and token in expand(list(op.operands)):
            covered = True
    return None


def _sink(token: ir.Value) -> bool:
    """Whether only waits, joins and coll.implements use `token` (and, for
    joins, their tokens likewise): no op of the collective reads after it."""
    for use in token.uses:
        user = use.owner
        if user.name not in TOKEN_USERS:
            return False
        if user.name == "coll.join" and not _sink(user.results[0]):
            return False
    return True


def _shaped(v: ir.Value, shape: list[int]) -> ir.Value | None:
    """The elements of contiguous `v` as a memref of `shape` without a
    memory space (a view of its root buffer, at the element `v` starts
    at), at the insertion point; None where that is not known."""
    s = span(v)
    if s is None:
        return None
    root, first, end = s
    elem = ir.MemRefType(v.type).element_type
    esize = ELEMENTS[str(elem)].bytes
    rt = ir.MemRefType(root.type)
    if rt.element_type != elem or not rt.has_static_shape or not contiguous(rt) \
            or rt.get_strides_and_offset()[1] != 0 or first % esize or end - first != math.prod(shape) * esize:
        return None
    base = root
    if rt.memory_space is not None:
        base = memref.memory_space_cast(ir.MemRefType.get(rt.shape, elem), root)
    if first == 0 and list(rt.shape) == shape:
        return base
    strides = [math.prod(shape[k + 1:]) for k in range(len(shape))]
    out_t = ir.MemRefType.get(shape, elem, ir.StridedLayoutAttr.get(first // esize, strides))
    return memref.reinterpret_cast(out_t, base, [], [], [], [first // esize], shape, strides)


def _generic(ins: list[ir.Value], outs: list[ir.Value], maps: list[ir.AffineMap], rank: int,
             device: ir.Attribute | None) -> tuple[ir.Operation, ir.Block]:
    iters = ir.ArrayAttr.get([ir.Attribute.parse(PARALLEL)] * rank)
    g = linalg.GenericOp([], ins, outs, ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]), iters)
    if device is not None:
        g.operation.attributes["coll.device"] = device
    types = [ir.MemRefType(v.type).element_type if isinstance(v.type, ir.MemRefType) else v.type
             for v in ins + outs]
    return g.operation, g.regions[0].blocks.append(*types)


def _clone_body(src: ir.Block, mapping: dict[ir.Value, ir.Value]) -> list[ir.Value]:
    """Clones the ops of a linalg body at the insertion point, its values
    through `mapping` (grown with the clones' results); the yielded values."""
    for op in src.operations:
        o = op.operation
        if o.name == "linalg.yield":
            return [mapping.get(v, v) for v in o.operands]
        new = o.clone()

        def fix(inner: ir.Operation) -> ir.WalkResult:
            for i, v in enumerate(inner.operands):
                if v in mapping:
                    inner.operands[i] = mapping[v]
            return ir.WalkResult.ADVANCE
        new.walk(fix, ir.WalkOrder.PRE_ORDER)
        for old, res in zip(o.results, new.results):
            mapping[old] = res
    raise ValueError("a linalg body without a linalg.yield")


def _fold(kind: str, elem: str, args: Sequence[ir.Value]) -> ir.Value:
    """The combine of `args` in order, in the accumulator type, rounded once
    (lowering/gpu/kernels.py _fold's operations)."""
    from mlir.dialects import arith
    t = args[0].type
    compute = ELEMENTS[elem].compute or elem
    ct = ir.Type.parse(compute)
    name = KINDS[kind].arith_op(compute)
    acc: ir.Value | None = None
    for x in args:
        if compute != elem:
            x = arith.extf(ct, x)
        acc = x if acc is None else ir.Operation.create(name, results=[ct], operands=[acc, x]).result
    assert acc is not None
    return arith.truncf(t, acc) if compute != elem else acc


def _combine_generic(c: Combine, at: Op, r: ir.Value) -> ir.Operation | None:
    """The generic computing combine `c` into `r` (the view its next user
    has of the output), placed before op `at`; None where not possible."""
    shape = list(ir.MemRefType(r.type).shape)
    rank = len(shape)
    with ir.InsertionPoint(at):
        ins = [_shaped(v, shape) for v in c.inputs]
        if any(v is None for v in ins):
            return None
        ident = ir.AffineMap.get_identity(rank)
        g, body = _generic([v for v in ins if v is not None], [r], [ident] * (len(ins) + 1), rank,
                           at.operation.attributes["coll.device"] if "coll.device" in at.operation.attributes
                           else None)
    elem = str(ir.MemRefType(r.type).element_type)
    with ir.InsertionPoint(body):
        linalg.YieldOp([_fold(c.kind, elem, list(body.arguments)[:len(ins)])])
    return g


def _fuse(g: ir.Operation, f: Op) -> ir.Operation | None:
    """One generic doing `g` then `f` element by element (f reads g's
    outputs where g writes them), in place of both; None where that would
    compute something else."""
    g_in, g_out = list(g.operands)[:_n_inputs(g)], list(g.operands)[_n_inputs(g):]
    f_in, f_out = list(f.operands)[:_n_inputs(f)], list(f.operands)[_n_inputs(f):]
    g_maps, f_maps = _maps(g), _maps(f)
    rank = g_maps[0].n_dims
    written = {_key(v) for v in g_out}
    read: dict[ir.Value | str, list[tuple[ir.Value, ir.AffineMap]]] = {}
    for v, m in zip(g_in, g_maps):
        if isinstance(v.type, ir.MemRefType):
            read.setdefault(_key(v), []).append((v, m))
    for v, m in zip(f.operands, f_maps):
        if not isinstance(v.type, ir.MemRefType):
            continue
        k = _key(v)
        if k in written and (v not in g_out or not _identity(m)):
            return None  # (another element of g's output, or another view of it)
    for v in f_out:
        k = _key(v)
        if any(w != v or not _identity(m) for w, m in read.get(k, [])):
            return None  # (f writes what g reads elsewhere)
    extra_in = [(v, m) for v, m in zip(f_in, f_maps) if v not in g_out]
    extra_out = [v for v in f_out if v not in g_out]
    ins = g_in + [v for v, _ in extra_in]
    outs = g_out + extra_out
    ident = ir.AffineMap.get_identity(rank)
    maps = g_maps[:len(g_in)] + [m for _, m in extra_in] + g_maps[len(g_in):] + [ident] * len(extra_out)
    with ir.InsertionPoint(f.operation):
        h, body = _generic(ins, outs, maps, rank, _device(f))
    args = list(body.arguments)
    h_out_args = args[len(ins):]
    gb, fb = g.regions[0].blocks[0], f.operation.regions[0].blocks[0]
    with ir.InsertionPoint(body):
        mapping = {a: b for a, b in zip(list(gb.arguments)[:len(g_in)], args[:len(g_in)])}
        mapping.update({a: b for a, b in zip(list(gb.arguments)[len(g_in):], h_out_args[:len(g_out)])})
        current = dict(zip(g_out, _clone_body(gb, mapping)))  # each output's value after g
        fmap: dict[ir.Value, ir.Value] = {}
        extra = iter(args[len(g_in):len(ins)])
        for a, v in zip(list(fb.arguments)[:len(f_in)], f_in):
            fmap[a] = current[v] if v in current else next(extra)
        for a, v in zip(list(fb.arguments)[len(f_in):], f_out):
            fmap[a] = current[v] if v in current else h_out_args[outs.index(v)]
        for v, y in zip(f_out, _clone_body(fb, fmap)):
            current[v] = y
        linalg.YieldOp([current.get(v, h_out_args[i]) for i, v in enumerate(outs)])
    g.erase()
    f.operation.erase()
    return h


def _device(op: Op) -> ir.Attribute | None:
    return op.operation.attributes["coll.device"] if "coll.device" in op.operation.attributes else None


def _consumer(g: ir.Operation, f: Op, shape: list[int]) -> bool:
    """Whether `f` is elementwise over `shape`, on g's device, and reads an
    output of g (a chain of epilogue ops, not another device's work)."""
    outs = list(g.operands)[_n_inputs(g):]
    return _elementwise(f, shape) and _device(f) == _device(g) \
        and any(v in outs for v in list(f.operands)[:_n_inputs(f)] + list(f.operands)[_n_inputs(f):])


def _dead(buffer: ir.Value, writer: ir.Operation) -> bool:
    """Whether `buffer`, a memref.alloc, is read by nothing but `writer`
    (its other uses: its dealloc, coll.implements, views nothing reads)."""
    owner = buffer.owner
    if isinstance(owner, ir.Block) or owner.operation.name != "memref.alloc":
        return False

    def unread(v: ir.Value) -> bool:
        for use in v.uses:
            user = use.owner
            if user.name in VIEW_OPS:
                if not unread(user.results[0]):
                    return False
            elif user != writer and user.name not in ("memref.dealloc", "coll.implements"):
                return False
        return True
    return unread(buffer)


def _drop_dead(h: ir.Operation) -> ir.Operation:
    """`h` without its outputs that nothing reads after it (the collective's
    own buffer, when only the epilogue read it): the result written once."""
    n_in = _n_inputs(h)
    ins, outs, maps = list(h.operands)[:n_in], list(h.operands)[n_in:], _maps(h)
    block = h.regions[0].blocks[0]
    args = list(block.arguments)
    keep = [i for i, v in enumerate(outs) if not (_dead(v, h) and not len(list(args[n_in + i].uses)))]
    if len(keep) == len(outs) or not keep:
        return h
    with ir.InsertionPoint(h), h.location:
        new, body = _generic(ins, [outs[i] for i in keep], maps[:n_in] + [maps[n_in + i] for i in keep],
                             maps[0].n_dims, _device(h))
    new_args = list(body.arguments)
    mapping = dict(zip(args[:n_in], new_args[:n_in]))
    mapping.update({args[n_in + i]: new_args[n_in + k] for k, i in enumerate(keep)})
    with ir.InsertionPoint(body), h.location:
        ys = _clone_body(block, mapping)
        linalg.YieldOp([ys[i] for i in keep])
    h.erase()
    return new


def _next_consumer(block: ir.Block, g: ir.Operation, shape: list[int]) -> ir.Operation | None:
    """The next op after `g` that joins it (_consumer), past the other
    devices' local work that touches nothing either of them does (the
    global view clones each op for every device in turn); None at the first
    op that is not such work."""
    g_effects = _effects(g)
    assert g_effects is not None
    g_reads, g_writes = ({_key(v) for v in vs} for vs in g_effects)
    passed: list[tuple[set[ir.Value | str], set[ir.Value | str]]] = []
    found = False
    for o in block.operations:
        op = o.operation
        if not found:
            found = op == g
            continue
        if op.name in VIEW_OPS or op.name == "arith.constant":
            continue
        eff = _effects(op)
        if eff is None or op.name.startswith("coll."):
            return None
        reads, writes = ({_key(v) for v in vs} for vs in eff)
        if _consumer(g, op, shape):
            if any(w & (reads | writes) or r & writes for r, w in passed):
                return None
            return op
        if writes & (g_reads | g_writes) or reads & g_writes:
            return None
        passed.append((reads, writes))
    return None


def _epilogue(c: Combine, block: ir.Block) -> Op | None:
    """The op E that combine `c` fuses with (module doc), or None."""
    r = _key(c.out)
    inputs = {_key(v) for v in c.inputs}
    after = False
    for o in block.operations:
        op = o.operation
        if op == c.operation:
            after = True
            continue
        if not after:
            continue
        eff = _effects(op)
        if eff is None:
            return None
        reads, writes = eff
        if any(_key(v) == r for v in reads + writes):  # (in place, R is an input too: _fuse checks it)
            return op if op.name == "linalg.generic" else None
        if any(_key(v) in inputs for v in writes):
            return None
    return None


def fuse_epilogues(module_op: ir.Operation) -> int:
    """Fuses every combine with its epilogue (module doc); the count fused."""
    fused = 0
    for op in find_ops(module_op, Combine.NAME):
        c = Combine.of(op)
        block = op.operation.block
        out_t = ir.MemRefType(c.out.type)
        elem = str(out_t.element_type)
        root = root_of(c.out)[0]
        if elem not in TYPES or c.kind not in KINDS_FUSED or not _sink(op.results[0]) \
                or any(str(ir.MemRefType(v.type).element_type) != elem for v in c.inputs):
            continue
        # The combine writes its whole root R, which the epilogue names as
        # itself (a view at an offset, or of other elements through
        # memref.view, computed other sums: outside attack, 2026-12-07).
        if _whole(c.out) is None or not _known(list(op.operands)):
            continue
        e = _epilogue(c, block)
        if e is None or not _known(list(e.operands)):
            continue
        rank_view = [v for v, m in zip(e.operands, _maps(e)) if _key(v) == _key(root)]
        if not rank_view or any(not _identity(m) for v, m in zip(e.operands, _maps(e)) if _key(v) == _key(root)):
            continue
        r = rank_view[0]
        shape = list(ir.MemRefType(r.type).shape)
        if r != root or any(v != r for v in rank_view) or ir.MemRefType(r.type).memory_space is not None \
                or not _elementwise(e, shape) or not _covered(block, op, e, op.results[0]):
            continue
        with op.location:
            g = _combine_generic(c, e, r)
            if g is None:
                continue
            h = _fuse(g, e)
            if h is None:
                g.erase()
                continue
            with ir.InsertionPoint(op):
                join = ir.Operation.create("coll.join", results=[op.results[0].type], operands=list(c.deps))
            op.results[0].replace_all_uses_with(join.results[0])
            op.erase()
            fused += 1
            nxt = _next_consumer(block, h, shape)
            while nxt is not None:
                more = _fuse(h, nxt)
                if more is None:
                    break
                h = more
                nxt = _next_consumer(block, h, shape)
            _drop_dead(h)
    return fused



@register("coll-gpu-fuse-epilogues",
          "On the GPU route, the elementwise local work right after a collective's last combine on a "
          "device joins the combine in one linalg.generic (one kernel; the result written once)")
def fuse_epilogues_pass(module_op: ir.Operation) -> None:
    fuse_epilogues(module_op)
