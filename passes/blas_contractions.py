"""coll-blas-contractions: f32/f64 contractions on memrefs become calls to
OpenBLAS's `cblas_sgemm`/`cblas_dgemm` (or gemv; the `scipy-openblas32` wheel, whose
symbols are prefixed `scipy_`), in loops over the dimensions one call does
not cover.

Which ops: `linalg.matmul`, `batch_matmul`, `matvec`, `vecmat`, `dot`,
`batch_matvec` (their indexing maps, or the `indexing_maps` they carry) and
any `linalg.generic` with one output whose body yields `out + x * y`, f32
or f64 (what jaxlib's legalization makes of a `dot_general`), static
shapes and static strides. A factor that is an input is read where it
is; one the body computes from inputs (a bf16 input's extf, as
coll-widen-contractions makes JAX's bf16 contractions; an elementwise
producer linalg-fuse-elementwise-ops fused in, such as relu's backward
mask in a weight gradient) is first computed into a contiguous copy over
its own dimensions, O(m k) work before the O(m n k) call (products of
16-bit floats are exact in f32: XLA's CPU back end computes them so too).
Each iteration dimension is batch (in both factors and out), m (one factor
and out), n (the other and out) or k (both factors; reduction); any other
use is not a contraction and stays on loops.

One gemm call covers one m, one n and one k dimension; where the op has
an m but no n dimension (or the reverse), a gemv call (a matvec: this
OpenBLAS's gemm with n = 1 takes 2.7x its gemv's time at 4096^2 f32), its
vectors at any non-zero stride. Every other dimension (batches, further m/n/k
dimensions) is a loop around the call: linalg accumulates (out += a * b),
so the call has beta = 1 and a further k dimension is one more call on the
same output. The dimensions are those that cover the most work per call
among the choices whose strides BLAS can read: each operand, as a matrix,
must have a unit stride along one of its two dimensions (the other's stride
is the leading dimension, a transposed operand is CblasTrans; an output
with a unit stride along m is computed as its transpose, out^T += b^T a^T).
No choice fits (a non-unit inner stride, a broadcast stride 0): the op
stays on loops (convert-linalg-to-loops), as do integer contractions
and 16-bit ones that round each partial sum (a bf16 output).

Why a library and not upstream's transform-dialect tiling: measured on
this 2-core AMD EPYC VM (AVX-512, load 2; bench/matmul_blas.py --loops
256 --transform 1024,2048, f32, one thread), convert-linalg-to-loops runs
at 1.1 GFLOP/s, the OpenBLAS call at 104-106 GFLOP/s from 1024^2 to
4096^2, and a transform script (tiles 64 x 256 x 128 for the caches and
8 x 32 x 16 for the registers, vectorized, the contraction lowered to
FMAs on vector<32xf32>) at 91 GFLOP/s at 1024^2 and 73 at 2048^2 (no
packing: it falls off as the operands outgrow the caches). That script is
one tuned shape of one layout; the library also covers transposed and
strided operands, gemv, f64 and small or odd shapes without a tuning per
shape and machine, and picks its kernels for the CPU at run time.
"""
import math
from dataclasses import dataclass, replace
from itertools import product
from pathlib import Path
from typing import cast

from mlir import ir
from mlir.dialects import arith, func, linalg, memref, scf

from ..core.registry import register
from ..ir.ops import DEVICE_ATTR
from ..ir.walk import clone_remapped, find_ops

PREFIX = "scipy_"  # scipy-openblas32 prefixes every symbol
PRECISION = {"f32": "s", "f64": "d"}  # cblas_sgemm, cblas_dgemv, ...
ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112  # CBLAS_ORDER, CBLAS_TRANSPOSE
# A call in loops does at least this many multiply-adds, or the op stays on
# loops (a call costs about what a few hundred of them do: a row-wise sum of
# squares over 16 elements is no gemm).
MIN_WORK = 1024
INT_MAX = 2 ** 31  # sizes, leading dimensions and increments are C ints (LP64)

# The indexing maps of the named contractions (a, b, out), over their
# iteration dimensions as upstream orders them (reductions last).
NAMED_MAPS = {
    "linalg.matmul": ("(m, n, k) -> (m, k)", "(m, n, k) -> (k, n)", "(m, n, k) -> (m, n)"),
    "linalg.batch_matmul": ("(b, m, n, k) -> (b, m, k)", "(b, m, n, k) -> (b, k, n)", "(b, m, n, k) -> (b, m, n)"),
    "linalg.matvec": ("(m, k) -> (m, k)", "(m, k) -> (k)", "(m, k) -> (m)"),
    "linalg.vecmat": ("(n, k) -> (k)", "(n, k) -> (k, n)", "(n, k) -> (n)"),
    "linalg.batch_matvec": ("(b, m, k) -> (b, m, k)", "(b, m, k) -> (b, k)", "(b, m, k) -> (b, m)"),
    "linalg.dot": ("(k) -> (k)", "(k) -> (k)", "(k) -> ()"),
}


def library() -> Path | None:
    """libscipy_openblas.so of the scipy-openblas32 wheel, or None when it is
    not installed."""
    try:
        import scipy_openblas32  # an optional wheel (~20 ms to import): here, not at the top
    except ImportError:
        return None
    lib = Path(scipy_openblas32.get_lib_dir()) / f"lib{scipy_openblas32.get_library()}.so"
    return lib if lib.exists() else None


def calls_blas(module_op: ir.Operation) -> bool:
    """Whether a module (lowered or not) declares a function of the library."""
    for op in module_op.regions[0].blocks[0].operations:
        attrs = op.operation.attributes
        if "sym_name" in attrs and ir.StringAttr(attrs["sym_name"]).value.startswith(PREFIX + "cblas_"):
            return True
    return False


def linked_libraries(module_op: ir.Operation) -> list[str]:
    """[the library] when the module calls into it, else []: what the JIT
    (ExecutionEngine shared_libs) and the MPI link add."""
    lib = library()
    return [str(lib)] if lib is not None and calls_blas(module_op) else []


@dataclass(frozen=True)
class Operand:
    """A memref operand: the iteration dimension of each axis, static sizes
    and strides."""
    value: ir.Value
    dims: tuple[int, ...]
    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    # An expression of several inputs (or an extended bf16 input): its value
    # in the op's body and the inputs it reads; the call reads a copy.
    factor: ir.Value | None = None
    reads: tuple[int, ...] = ()

    def size(self, d: int | None) -> int:
        return self.sizes[self.dims.index(d)] if d in self.dims else 1

    def stride(self, d: int | None) -> int:
        return self.strides[self.dims.index(d)] if d in self.dims else 0

    def matrix(self, rows: int | None, cols: int | None) -> tuple[bool, int] | None:
        """(transposed, leading dimension) of the operand read as a row-major
        rows x cols matrix (a dimension it lacks has size 1), or None when
        neither dimension has a unit stride."""
        nr, nc = self.size(rows), self.size(cols)
        if nc <= 1 or self.stride(cols) == 1:
            ld = self.stride(rows) if nr > 1 else max(1, nc)
            return (False, ld) if ld >= max(1, nc) else None
        if nr <= 1 or self.stride(rows) == 1:
            ld = self.stride(cols)
            return (True, ld) if ld >= max(1, nr) else None
        return None


@dataclass(frozen=True)
class Gemm:
    """One call: out(m, n) += a(m, k) * b(k, n), row-major; `loops`: the
    other dimensions, a loop each. `layouts`: (transposed, leading
    dimension) of a, b and out; for a gemv (n is None: b and out are
    vectors), b's and out's are (False, increment)."""
    a: Operand
    b: Operand
    out: Operand
    m: int | None
    n: int | None
    k: int
    layouts: tuple[tuple[bool, int], tuple[bool, int], tuple[bool, int]]
    loops: tuple[int, ...]

    @property
    def routine(self) -> str:
        elem = str(ir.MemRefType(self.out.value.type).element_type)
        return f"{PREFIX}cblas_{PRECISION[elem]}{'gemv' if self.n is None and self.m is not None else 'gemm'}"


def _maps(op: ir.Operation) -> list[ir.AffineMap] | None:
    if "indexing_maps" in op.attributes:
        return [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    texts = NAMED_MAPS.get(op.name)
    return None if texts is None else [ir.AffineMapAttr(ir.Attribute.parse(f"affine_map<{t}>")).value
                                       for t in texts]


def _product(op: ir.Operation) -> tuple[ir.Value, ir.Value] | None:
    """The two factors of a body that yields out + x * y (x and y of the
    output's type), each computed from inputs only by arith/math ops: a
    named contraction's body (bf16 inputs extended), a generic of
    jaxlib's, one into which linalg-fuse-elementwise-ops fused elementwise
    producers (relu's backward mask: select(cmpf(a, b), c, b) * d)."""
    block = op.regions[0].blocks[0]
    ops = [o.operation for o in block.operations]
    out, yld = block.arguments[len(block.arguments) - 1], ops[-1]
    add = _defining(yld.operands[0]) if len(yld.operands) == 1 else None
    if add is None or add.name != "arith.addf" or out not in list(add.operands):
        return None
    other = [v for v in add.operands if v != out]
    mul = _defining(other[0]) if other else None  # (out + out: no product; an outside attack's StopIteration)
    if mul is None or mul.name != "arith.mulf":
        return None
    pure = all(o.name.split(".")[0] in ("arith", "math") and not len(o.regions) for o in ops[:-1])
    x, y = mul.operands
    if not pure or out in _reads(x, block) or out in _reads(y, block):
        return None
    return x, y


def _defining(value: ir.Value) -> ir.Operation | None:
    """The op that defines `value` (None: a block argument)."""
    owner = value.owner
    return None if isinstance(owner, ir.Block) else owner.operation


def _reads(value: ir.Value, block: ir.Block) -> list[ir.BlockArgument]:
    """The block arguments `value` is computed from within the block (values
    from outside it are constants of the body)."""
    if isinstance(value, ir.BlockArgument):
        return [value] if value.owner == block else []
    op = _defining(value)
    if op is None or op.block != block:
        return []
    return [a for v in op.operands for a in _reads(v, block)]


def _dims(amap: ir.AffineMap) -> tuple[int, ...] | None:
    """The dimensions of a map whose results are distinct dimensions."""
    dims = [ir.AffineDimExpr(e).position if isinstance(e, ir.AffineDimExpr) else None for e in amap.results]
    known = [d for d in dims if d is not None]
    return tuple(known) if len(known) == len(dims) and len(set(known)) == len(known) else None


def _operand(value: ir.Value, amap: ir.AffineMap) -> Operand | None:
    t = value.type
    dims = _dims(amap)
    if not isinstance(t, ir.MemRefType) or dims is None:
        return None
    t = ir.MemRefType(t)
    if not t.has_static_shape:
        return None
    strides, _ = t.get_strides_and_offset()
    if any(s == ir.ShapedType.get_dynamic_stride_or_offset() or abs(s) >= INT_MAX for s in strides) or \
            any(s >= INT_MAX for s in t.shape):
        return None
    return Operand(value, tuple(dims), tuple(t.shape), tuple(strides))


def _copied(op: ir.Operation, maps: list[ir.AffineMap], factor: ir.Value, size: dict[int, int]) -> Operand | None:
    """A factor computed from inputs, as the contiguous copy the call reads
    (made by _materialize), row-major over the union of its inputs'
    dimensions."""
    block = op.regions[0].blocks[0]
    reads = tuple(sorted({a.arg_number for a in _reads(factor, block)}))
    each = [_dims(maps[i]) for i in reads]
    known = [ds for ds in each if ds is not None]
    if not reads or len(known) != len(each):
        return None
    dims = tuple(dict.fromkeys(d for ds in known for d in ds))  # in the order of the inputs' axes
    sizes = tuple(size[d] for d in dims)
    strides = tuple(int(math.prod(sizes[i + 1:])) for i in range(len(sizes)))
    # Its value: the copy, which _materialize makes (dataclasses.replace) before any use.
    return Operand(cast(ir.Value, None), dims, sizes, strides, factor, reads)


def plan(op: ir.Operation) -> Gemm | None:
    """The call (and loops) for a contraction, or None to leave it to loops."""
    if op.name != "linalg.generic" and op.name not in NAMED_MAPS:
        return None
    n_in = len(op.operands) - 1
    maps = _maps(op)
    xy = _product(op) if len(op.results) == 0 and maps is not None and len(maps) == n_in + 1 else None
    out = _operand(op.operands[n_in], maps[n_in]) if xy is not None and maps is not None else None
    if out is None or str(ir.MemRefType(out.value.type).element_type) not in PRECISION:
        return None
    assert xy is not None and maps is not None  # out is set only then
    size = {d: n for v, m in zip(op.operands, maps) for d, n in zip(_dims(m) or (), ir.MemRefType(v.type).shape)}
    block = op.regions[0].blocks[0]
    factors: list[Operand | None] = []
    for f in xy:  # an input as it is, or a copy of what the body computes from inputs
        direct = isinstance(f, ir.BlockArgument) and f.owner == block
        factors.append(_operand(op.operands[f.arg_number], maps[f.arg_number]) if direct
                       else _copied(op, maps, f, size))
    a, b = factors
    if a is None or b is None:
        return None
    if any(x.factor is None and x.value == out.value for x in (a, b)):  # in place: a call reads what it writes
        return None
    ops = [a, b, out]
    n_dims = maps[0].n_dims
    role: dict[int, tuple[bool, bool, bool]] = {}
    for d in range(n_dims):
        role[d] = (d in a.dims, d in b.dims, d in out.dims)
    ms: list[int | None] = [d for d, r in role.items() if r == (True, False, True)]
    ns: list[int | None] = [d for d, r in role.items() if r == (False, True, True)]
    ks = [d for d, r in role.items() if r == (True, True, False)]
    if any(r not in ((True, False, True), (False, True, True), (True, True, False), (True, True, True))
           for r in role.values()) or not ks:
        return None
    sizes: dict[int | None, int] = {d: next(o.size(d) for o in ops if d in o.dims) for d in role}
    if any(s == 0 for s in sizes.values()):
        return None
    best: Gemm | None = None
    work = 0
    m: int | None
    n: int | None
    for m, n, k in product(ms or [None], ns or [None], ks):
        loops = tuple(d for d in range(n_dims) if d not in (m, n, k))
        w = sizes.get(m, 1) * sizes.get(n, 1) * sizes[k]
        if w <= work:
            continue
        if (m is None) != (n is None):  # a matrix times a vector: gemv
            x, y, mm = (a, b, m) if n is None else (b, a, n)
            la, lb, lo = x.matrix(mm, k), _increment(y, k), _increment(out, mm)
            if la is not None and lb is not None and lo is not None:
                best, work = Gemm(x, y, out, mm, None, k, (la, lb, lo), loops), w
            continue
        for x, y, mm, nn in ((a, b, m, n), (b, a, n, m)):  # out, or out^T = b^T a^T
            la, lb, lo = x.matrix(mm, k), y.matrix(k, nn), out.matrix(mm, nn)
            if la is not None and lb is not None and lo is not None and not lo[0]:
                best, work = Gemm(x, y, out, mm, nn, k, (la, lb, lo), loops), w
                break
    if best is not None and best.loops and work < MIN_WORK:
        return None  # many tiny calls: the loops are faster
    return best


def _increment(x: Operand, d: int | None) -> tuple[bool, int] | None:
    """A vector along d: its stride as a BLAS increment (not 0)."""
    inc = x.stride(d) if x.size(d) > 1 else 1
    return (False, inc) if inc > 0 else None


def _materialize(op: ir.Operation, x: Operand, maps: list[ir.AffineMap]) -> ir.Value:
    """A new buffer holding factor x for every index of its dimensions: a
    parallel linalg.generic over the inputs it reads, its body the ops of
    op's body that compute it (a bf16 input's extf; a fused mask)."""
    factor = x.factor
    assert factor is not None  # called for copied factors only
    elem = factor.type
    buf = memref.AllocOp(ir.MemRefType.get(list(x.sizes), elem), [], [], alignment=64).result
    rank = len(x.dims)
    ins = [op.operands[i] for i in x.reads]
    in_maps = [ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(x.dims.index(d)) for d in _dims(maps[i]) or ()])
               for i in x.reads]
    map_attrs = [ir.AffineMapAttr.get(m) for m in in_maps + [ir.AffineMap.get_identity(rank)]]
    copy = linalg.GenericOp([], ins, [buf], ir.ArrayAttr.get(map_attrs),
                            ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * rank))
    _same_device(op, buf.owner, copy)
    old = op.regions[0].blocks[0]
    block = copy.regions[0].blocks.append(*[old.arguments[i].type for i in x.reads], elem)
    mapping: dict[ir.Value, ir.Value] = {old.arguments[i]: block.arguments[j] for j, i in enumerate(x.reads)}
    needed = {factor}
    cone: list[ir.Operation] = []
    for o in reversed([o.operation for o in old.operations]):
        if any(r in needed for r in o.results):
            needed.update(o.operands)
            cone.insert(0, o)
    with ir.InsertionPoint(block):
        for o in cone:
            clone_remapped(o, ir.InsertionPoint(block), mapping)
        linalg.YieldOp([mapping[factor]])
    return buf


def _constant(t: ir.Type, v: float) -> ir.Value:
    # arith.py redefines constant(result, value) over the generated
    # constant(value), and mypy reads the generated one.
    return arith.constant(t, v)


def _index(v: int) -> ir.Value:
    return _constant(ir.IndexType.get(), v)


def _i32(v: int) -> ir.Value:
    return _constant(ir.IntegerType.get_signless(32), v)


def _pointer(x: Operand, ivs: dict[int, ir.Value]) -> ir.Value:
    """An !llvm.ptr to x's element at the loops' indices (0 elsewhere)."""
    t = ir.MemRefType(x.value.type)
    meta = memref.ExtractStridedMetadataOp(x.value)
    off = meta.offset
    for d, iv in ivs.items():
        if d in x.dims and x.stride(d):
            off = arith.addi(off, arith.muli(iv, _index(x.stride(d))))
    nbytes = ir.FloatType(t.element_type).width // 8  # f32 or f64 (PRECISION)
    addr = arith.addi(memref.extract_aligned_pointer_as_index(x.value), arith.muli(off, _index(nbytes)))
    i64 = ir.IntegerType.get_signless(64)
    return ir.Operation.create("llvm.inttoptr", results=[ir.Type.parse("!llvm.ptr")],
                               operands=[arith.index_cast(i64, addr)]).results[0]


def _declare(module_op: ir.Operation, name: str, elem: ir.Type) -> None:
    """cblas_?gemm(order, transa, transb, m, n, k, alpha, a, lda, b, ldb,
    beta, c, ldc) or cblas_?gemv(order, trans, m, n, alpha, a, lda, x,
    incx, beta, y, incy); enums and sizes are C ints (LP64)."""
    body = module_op.regions[0].blocks[0]
    if any(ir.StringAttr(o.operation.attributes["sym_name"]).value == name
           for o in body.operations if "sym_name" in o.operation.attributes):
        return
    i32, ptr = ir.IntegerType.get_signless(32), ir.Type.parse("!llvm.ptr")
    head = 4 if name.endswith("gemv") else 6  # the enums and sizes
    args = [i32] * head + [elem, ptr, i32, ptr, i32, elem, ptr, i32]
    with ir.InsertionPoint.at_block_begin(body), module_op.location:
        # func.py's FuncOp takes `visibility`; mypy reads the generated class.
        func.FuncOp(name, ir.FunctionType.get(args, []), visibility="private")


def _same_device(op: ir.Operation, *new: ir.Operation | ir.OpView) -> None:
    """The new ops carry the device of the op they replace (DEVICE_ATTR:
    coll-parallel-devices runs each device's ops together)."""
    if DEVICE_ATTR in op.attributes:
        for n in new:
            n.operation.attributes[DEVICE_ATTR] = op.attributes[DEVICE_ATTR]


def _emit(op: ir.Operation, g: Gemm, name: str, ivs: dict[int, ir.Value]) -> None:
    """The loops over g.loops not in `ivs` yet, and the call inside them, at
    the current insertion point, in place of `op`."""
    todo = [d for d in g.loops if d not in ivs]
    if todo:
        size = next(o.size(todo[0]) for o in (g.a, g.b, g.out) if todo[0] in o.dims)
        # scf.py's ForOp(lower, upper, step); mypy reads the generated class.
        loop = scf.ForOp(_index(0), _index(size), _index(1))
        _same_device(op, loop)
        with ir.InsertionPoint(loop.body):
            _emit(op, g, name, {**ivs, todo[0]: loop.induction_variable})
            scf.YieldOp([])
        return
    elem = ir.MemRefType(g.out.value.type).element_type
    (ta, lda), (tb, ldb), (_, ldc) = g.layouts
    one = _constant(elem, 1.0)
    if g.routine.endswith("gemv"):  # a's rows and columns as stored
        shape = (g.a.size(g.k), g.a.size(g.m)) if ta else (g.a.size(g.m), g.a.size(g.k))
        head = [_i32(ROW_MAJOR), _i32(TRANS if ta else NO_TRANS), _i32(shape[0]), _i32(shape[1])]
    else:
        head = [_i32(ROW_MAJOR), _i32(TRANS if ta else NO_TRANS), _i32(TRANS if tb else NO_TRANS),
                _i32(g.out.size(g.m)), _i32(g.out.size(g.n)), _i32(g.a.size(g.k))]
    args = head + [one, _pointer(g.a, ivs), _i32(lda), _pointer(g.b, ivs), _i32(ldb),
                   one, _pointer(g.out, ivs), _i32(ldc)]
    _same_device(op, func.CallOp([], ir.FlatSymbolRefAttr.get(name), args))


@register("coll-blas-contractions",
          "f32/f64 contractions on memrefs (linalg.matmul, batch_matmul, matvec, multiply-accumulate generics) "
          "become calls to OpenBLAS cblas_sgemm/cblas_dgemm (scipy-openblas32), in loops over the other "
          "dimensions; a layout BLAS cannot read stays on loops", anchor="builtin.module")
def blas_contractions(module_op: ir.Operation) -> None:
    for op in find_ops(module_op, lambda n: n == "linalg.generic" or n in NAMED_MAPS):
        g = plan(op)
        if g is None:
            continue
        name = g.routine
        _declare(module_op, name, ir.MemRefType(g.out.value.type).element_type)
        with ir.InsertionPoint(op), op.location:
            maps = cast(list[ir.AffineMap], _maps(op))  # plan read them
            a, b = (replace(x, value=_materialize(op, x, maps)) if x.factor is not None else x for x in (g.a, g.b))
            _emit(op, replace(g, a=a, b=b), name, {})
            for x in (a, b):
                if x.factor is not None:
                    _same_device(op, memref.DeallocOp(x.value))
        op.erase()
