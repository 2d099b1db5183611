"""coll-blas-contractions: f32/f64 contractions on memrefs become calls to
OpenBLAS's `cblas_sgemm`/`cblas_dgemm` (or gemv; the `scipy-openblas32` wheel, whose
symbols are prefixed `scipy_`), in loops over the dimensions one call does
not cover.

Which ops: `linalg.matmul`, `batch_matmul`, `matvec`, `vecmat`, `dot`,
`batch_matvec` (their indexing maps, or the `indexing_maps` they carry) and
any `linalg.generic` whose body is `out + a * b` with one output (what
jaxlib's legalization makes of a `dot_general`), all three operands of one
element type, f32 or f64, static shapes and static strides; or bf16/f16
inputs with an f32 output (coll-widen-contractions makes those of JAX's
bf16 programs): the inputs are extended into f32 copies first (products of
16-bit floats are exact in f32; XLA's CPU back end computes them so too). Each iteration
dimension is batch (in a, b and out), m (a, out), n (b, out) or k (a, b;
reduction); any other use is not a contraction and stays on loops.

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

Why a library and not upstream's transform-dialect tiling: a tuned gemm is
a packing scheme, register blocking and prefetching per microarchitecture,
threads; a transform script (tile, pack, vectorize) reaches a fraction of
it per shape and has to be tuned per machine. Measured on this 2-core VM
(bench/matmul_blas.py, f32 1024^2): convert-linalg-to-loops ~0.5 GFLOP/s,
the OpenBLAS call as fast as numpy's `@` (docs/architecture.md, CPU).
"""
from dataclasses import dataclass, replace
from itertools import product
from pathlib import Path

from mlir import ir
from mlir.dialects import arith, func, linalg, memref, scf

from ..core.registry import register
from ..ir.walk import find_ops

NARROW = ("bf16", "f16")  # inputs widened to an f32 copy first (_widen)
PREFIX = "scipy_"  # scipy-openblas32 prefixes every symbol
PRECISION = {"f32": "s", "f64": "d"}  # cblas_sgemm, cblas_dgemv, ...
ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112  # CBLAS_ORDER, CBLAS_TRANSPOSE
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
        import scipy_openblas32
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
    narrow: bool = False  # bf16/f16: the call reads an f32 copy (_widen)

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


def _is_mac(op: ir.Operation) -> bool:
    """A generic whose body is yield(out + a * b) on its block arguments (a
    and b extended first where they are narrower: coll-widen-contractions)."""
    if op.name != "linalg.generic":
        return True  # a named contraction
    block = op.regions[0].blocks[0]
    ops = [o.operation for o in block.operations]
    a, b, c = block.arguments
    ext = {o.results[0]: o.operands[0] for o in ops if o.name == "arith.extf"}
    ops = [o for o in ops if o.name != "arith.extf"]
    if [o.name for o in ops] != ["arith.mulf", "arith.addf", "linalg.yield"] or len(ext) > 2:
        return False
    mul, add, yld = ops
    factors = {ext.get(v, v) for v in mul.operands}
    return (factors == {a, b} and {add.operands[0], add.operands[1]} == {c, mul.results[0]}
            and yld.operands[0] == add.results[0])


def _operand(value: ir.Value, amap: ir.AffineMap) -> Operand | None:
    t = value.type
    if not isinstance(t, ir.MemRefType):
        return None
    t = ir.MemRefType(t)
    dims = []
    for e in amap.results:
        if not isinstance(e, ir.AffineDimExpr):
            return None
        dims.append(ir.AffineDimExpr(e).position)
    if len(set(dims)) != len(dims) or not t.has_static_shape:
        return None
    strides, _ = t.get_strides_and_offset()
    if any(s == ir.ShapedType.get_dynamic_stride_or_offset() or abs(s) >= INT_MAX for s in strides) or \
            any(s >= INT_MAX for s in t.shape):
        return None
    return Operand(value, tuple(dims), tuple(t.shape), tuple(strides))


def plan(op: ir.Operation) -> Gemm | None:
    """The call (and loops) for a contraction, or None to leave it to loops."""
    if op.name != "linalg.generic" and op.name not in NAMED_MAPS:
        return None
    if len(op.operands) != 3 or len(op.results) or not _is_mac(op):
        return None
    types = [str(ir.MemRefType(v.type).element_type) if isinstance(v.type, ir.MemRefType) else None
             for v in op.operands]
    if types[2] not in PRECISION or any(t != types[2] and (t not in NARROW or types[2] != "f32") for t in types[:2]):
        return None
    maps = _maps(op)
    if maps is None or len(maps) != 3:
        return None
    ops = [_operand(v, m) for v, m in zip(op.operands, maps)]
    if None in ops:
        return None
    ops = [_widened(x) if t != types[2] else x for x, t in zip(ops, types)]
    a, b, out = ops
    if out.value in (a.value, b.value):  # in place: no call may read what it writes
        return None
    n_dims = maps[0].n_dims
    role = {}
    for d in range(n_dims):
        role[d] = (d in a.dims, d in b.dims, d in out.dims)
    ms = [d for d, r in role.items() if r == (True, False, True)]
    ns = [d for d, r in role.items() if r == (False, True, True)]
    ks = [d for d, r in role.items() if r == (True, True, False)]
    if any(r not in ((True, False, True), (False, True, True), (True, True, False), (True, True, True))
           for r in role.values()) or not ks:
        return None
    sizes = {d: next(o.size(d) for o in ops if d in o.dims) for d in role}
    if any(s == 0 for s in sizes.values()):
        return None
    best, work = None, 0
    for m, n, k in product(ms or [None], ns or [None], ks):
        loops = tuple(d for d in range(n_dims) if d not in (m, n, k))
        w = sizes.get(m, 1) * sizes.get(n, 1) * sizes[k]
        if w <= work:
            continue
        if (m is None) != (n is None):  # a matrix times a vector: gemv
            x, y, mm = (a, b, m) if n is None else (b, a, n)
            layouts = (x.matrix(mm, k), _increment(y, k), _increment(out, mm))
            if None not in layouts:
                best, work = Gemm(x, y, out, mm, None, k, layouts, loops), w
            continue
        for x, y, mm, nn in ((a, b, m, n), (b, a, n, m)):  # out, or out^T = b^T a^T
            layouts = (x.matrix(mm, k), y.matrix(k, nn), out.matrix(mm, nn))
            if None not in layouts and not layouts[2][0]:
                best, work = Gemm(x, y, out, mm, nn, k, layouts, loops), w
                break
    return best


def _increment(x: Operand, d: int) -> tuple[bool, int] | None:
    """A vector along d: its stride as a BLAS increment (not 0)."""
    inc = x.stride(d) if x.size(d) > 1 else 1
    return (False, inc) if inc > 0 else None


def _widened(x: Operand) -> Operand:
    """A bf16/f16 input as the f32 copy the call reads (made by _widen):
    contiguous, row-major."""
    strides, step = [], 1
    for size in reversed(x.sizes):
        strides.insert(0, step)
        step *= size
    return Operand(x.value, x.dims, x.sizes, tuple(strides), narrow=True)


def _widen(value: ir.Value) -> ir.Value:
    """A new f32 buffer holding `value` (bf16/f16) extended: products of
    16-bit floats are exact in f32, so the sums are XLA's (f32 accumulation)."""
    t = ir.MemRefType(value.type)
    f32 = ir.F32Type.get()
    buf = memref.AllocOp(ir.MemRefType.get(list(t.shape), f32), [], [], alignment=64).result
    ident = ir.AffineMapAttr.get(ir.AffineMap.get_identity(t.rank))
    op = linalg.GenericOp([], [value], [buf], ir.ArrayAttr.get([ident, ident]),
                          ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * t.rank))
    block = op.regions[0].blocks.append(t.element_type, f32)
    with ir.InsertionPoint(block):
        linalg.YieldOp([arith.extf(f32, block.arguments[0])])
    return buf


def _index(v: int) -> ir.Value:
    return arith.constant(ir.IndexType.get(), v)


def _i32(v: int) -> ir.Value:
    return arith.constant(ir.IntegerType.get_signless(32), v)


def _pointer(x: Operand, ivs: dict[int, ir.Value]) -> ir.Value:
    """An !llvm.ptr to x's element at the loops' indices (0 elsewhere)."""
    t = ir.MemRefType(x.value.type)
    meta = memref.ExtractStridedMetadataOp(x.value)
    off = meta.offset
    for d, iv in ivs.items():
        if d in x.dims and x.stride(d):
            off = arith.addi(off, arith.muli(iv, _index(x.stride(d))))
    nbytes = t.element_type.width // 8
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
        func.FuncOp(name, ir.FunctionType.get(args, []), visibility="private")


def _emit(g: Gemm, name: str, ivs: dict[int, ir.Value]) -> None:
    """The loops over g.loops not in `ivs` yet, and the call inside them, at
    the current insertion point."""
    todo = [d for d in g.loops if d not in ivs]
    if todo:
        size = next(o.size(todo[0]) for o in (g.a, g.b, g.out) if todo[0] in o.dims)
        loop = scf.ForOp(_index(0), _index(size), _index(1))
        with ir.InsertionPoint(loop.body):
            _emit(g, name, {**ivs, todo[0]: loop.induction_variable})
            scf.YieldOp([])
        return
    elem = ir.MemRefType(g.out.value.type).element_type
    (ta, lda), (tb, ldb), (_, ldc) = g.layouts
    one = arith.constant(elem, 1.0)
    if g.routine.endswith("gemv"):  # a's rows and columns as stored
        shape = (g.a.size(g.k), g.a.size(g.m)) if ta else (g.a.size(g.m), g.a.size(g.k))
        head = [_i32(ROW_MAJOR), _i32(TRANS if ta else NO_TRANS), _i32(shape[0]), _i32(shape[1])]
    else:
        head = [_i32(ROW_MAJOR), _i32(TRANS if ta else NO_TRANS), _i32(TRANS if tb else NO_TRANS),
                _i32(g.out.size(g.m)), _i32(g.out.size(g.n)), _i32(g.a.size(g.k))]
    args = head + [one, _pointer(g.a, ivs), _i32(lda), _pointer(g.b, ivs), _i32(ldb),
                   one, _pointer(g.out, ivs), _i32(ldc)]
    func.CallOp([], ir.FlatSymbolRefAttr.get(name), args)


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
            copies = {x.value: _widen(x.value) for x in (g.a, g.b) if x.narrow}
            g = replace(g, a=replace(g.a, value=copies.get(g.a.value, g.a.value)),
                        b=replace(g.b, value=copies.get(g.b.value, g.b.value)))
            _emit(g, name, {})
            for buf in copies.values():
                memref.DeallocOp(buf)
        op.erase()
