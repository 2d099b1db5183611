"""Shared combine kernels: one private function per signature, called by
every coll.combine that has it.

A signature is (kind, element type, arity); the kernel takes one pointer
per operand (contiguous elements) and the element count, so one function
serves every chunk and tile size, and the large-program path
(cpu_program.py) calls it with plain pointers. Inlining the loops at each
combine made the program, and every stage after it, grow with the kernel
body times the number of combines. The body is the loop the inline form
emits (Combine.emit), so each element sees the same operations in the same
order: results are bitwise the same.
"""
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from mlir import ir
from mlir.dialects import arith, func, llvm, memref, scf, vector

from .kernels import Combine, combine_element, element_bytes, index, unit_inner_stride

# LLVM would inline a small private function at each of its thousands of
# call sites and undo the sharing.
NO_INLINE = "passthrough"


def no_inline(op: ir.Operation | ir.OpView, optimize: bool = True) -> None:
    """Marks func `op` noinline; optimize=False: optnone too (a function of
    calls gains nothing from -O3, and LLVM selects its code faster)."""
    names = ["noinline"] if optimize else ["noinline", "optnone"]
    op.attributes[NO_INLINE] = ir.ArrayAttr.get([ir.StringAttr.get(n) for n in names])


def inline_entry(op: ir.Operation | ir.OpView) -> None:
    """Marks a split entry function alwaysinline: its C-interface wrapper
    would otherwise call it with 5 scalars per buffer, and selecting a call
    of a thousand stack arguments takes LLVM quadratic time (4 s at 128
    devices). Its body is only table setup and calls."""
    old = [ir.StringAttr(a).value for a in ir.ArrayAttr(op.attributes[NO_INLINE])] \
        if NO_INLINE in op.attributes else []
    op.attributes[NO_INLINE] = ir.ArrayAttr.get([ir.StringAttr.get(n) for n in old + ["alwaysinline"]])


def ptr_type() -> ir.Type:
    return ir.Type.parse("!llvm.ptr")


def i64() -> ir.IntegerType:
    return ir.IntegerType.get_signless(64)


def create(name: str, results: Sequence[ir.Type], operands: Sequence[ir.Value],
           **attrs: ir.Attribute) -> ir.OpResultList:
    return ir.Operation.create(name, results=results, operands=operands, attributes=attrs).results


def descriptor_type(rank: int) -> ir.Type:
    if rank == 0:
        return ir.Type.parse("!llvm.struct<(ptr, ptr, i64)>")
    return ir.Type.parse(f"!llvm.struct<(ptr, ptr, i64, array<{rank} x i64>, array<{rank} x i64>)>")


def view_of(ptr: ir.Value, t: ir.Type, count: ir.Value | None = None) -> ir.Value:
    """A memref of type `t` (rank 1 or 0, unit stride, offset 0) on `ptr`;
    `count`: its i64 size when `t` is dynamic. Upstream has no memref op
    from a pointer: build the LLVM descriptor and cast it."""
    m = ir.MemRefType(t)
    dt = descriptor_type(m.rank)
    (d,) = create("llvm.mlir.poison", [dt], [])
    for field in (0, 1):
        (d,) = create("llvm.insertvalue", [dt], [d, ptr], position=ir.DenseI64ArrayAttr.get([field]))
    fields: list[tuple[list[int], ir.Value | int]] = [([2], 0)]
    if m.rank:
        size = count if m.is_dynamic_dim(0) else m.shape[0]
        assert size is not None  # (`count` is given for a dynamic `t`)
        fields += [([3, 0], size), ([4, 0], 1)]
    for pos, field_value in fields:
        value: ir.Value
        if isinstance(field_value, int):
            (value,) = create("llvm.mlir.constant", [i64()], [], value=ir.IntegerAttr.get(i64(), field_value))
        else:
            value = field_value
        (d,) = create("llvm.insertvalue", [dt], [d, value], position=ir.DenseI64ArrayAttr.get(pos))
    (v,) = create("builtin.unrealized_conversion_cast", [t], [d])
    return v


def pointer_of(view: ir.Value) -> ir.Value:
    """The address of a rank-1 unit-stride view's first element, as an
    !llvm.ptr (its aligned pointer plus its offset)."""
    m = ir.MemRefType(view.type)
    addr = memref.extract_aligned_pointer_as_index(view)
    _, off = m.get_strides_and_offset()
    esize = element_bytes(m.element_type)
    if m.is_dynamic_stride_or_offset(off):
        addr = arith.addi(addr, arith.muli(memref.extract_strided_metadata(view)[1], index(esize)))
    elif off:
        addr = arith.addi(addr, index(off * esize))
    (p,) = create("llvm.inttoptr", [ptr_type()], [arith.index_cast(i64(), addr)])
    return p


class Kernels:
    """The shared kernels of one module, created on first use."""

    def __init__(self, module_op: ir.Operation) -> None:
        self.body = module_op.regions[0].blocks[0]
        self.funcs: dict[str, func.FuncOp] = {}

    def function(self, kind: str, elem: ir.Type, arity: int, outs: Sequence[bool] = (False,),
                 types: Sequence[ir.Type] = ()) -> str:
        """The name of the kernel of this signature (raises ValueError for
        a kind the element type has not). `outs`: one flag per output, True
        where its stores are non-temporal (Combine.emit_1d_streaming); more
        than one output: copies of the result folded into the combine.
        `types`: each operand's element type where they differ (a 16-bit
        combine with an f32 partial, kernels.combine_element), else `elem`."""
        every = list(types) or [elem] * (arity + len(outs))
        assert not any(outs) or all(t == elem for t in every[arity:])  # (a streamed result is a result's type)
        name = f"coll_combine_{kind}_{elem}_x{arity}"
        if any(t != elem for t in every):
            name += "_" + "_".join(str(t) for t in every)
        if tuple(outs) != (False,):
            name += "_to_" + "".join("s" if nt else "p" for nt in outs)
        if name in self.funcs:
            return name
        kernel = Combine(kind, elem)
        signature = [ptr_type()] * (arity + len(outs)) + [i64()]

        def views(entry: ir.Block) -> tuple[list[ir.Value], list[ir.Value], ir.Value]:
            *ptrs, n = entry.arguments
            vs = [view_of(p, ir.MemRefType.get([ir.ShapedType.get_dynamic_size()], t), n) for p, t in zip(ptrs, every)]
            return vs[:arity], vs[arity:], arith.index_cast(ir.IndexType.get(), n)

        def streamed(entry: ir.Block, skewed: Callable[[], None] | None) -> None:
            ins, out_views, count = views(entry)
            kernel.emit_1d_streaming(ins, list(zip(out_views, outs)), count, skewed)
        if any(outs):  # its loops for buffers off their lines in a function of their own (emit_1d_streaming)
            with self._declared(name + "_skewed", signature) as entry:
                streamed(entry, None)
        with self._declared(name, signature) as entry:
            args = list(entry.arguments)
            if any(outs):
                streamed(entry, lambda: func.call([], ir.FlatSymbolRefAttr.get(name + "_skewed"), args))
            else:
                ins, out_views, count = views(entry)
                if len(outs) == 1:
                    kernel.emit(ins, out_views[0])
                else:
                    kernel.emit_1d([(v, None) for v in ins], [(v, None) for v in out_views], count)
        return name

    @contextmanager
    def _declared(self, name: str, args: list[ir.Type]) -> Iterator[ir.Block]:
        """Declares private function `name` (never inlined: one copy of its
        code however many calls) at the top of the module; the body is built
        at the yielded entry block, and the return added after it."""
        first = next(iter(self.body.operations), None)
        ip = ir.InsertionPoint(first) if first is not None else ir.InsertionPoint(self.body)
        with ip, ir.Location.unknown():
            f = func.FuncOp(name, ir.FunctionType.get(args, []), visibility="private")
            no_inline(f)
            entry = f.add_entry_block()
            with ir.InsertionPoint(entry):
                yield entry
                func.ReturnOp([])
        self.funcs[name] = f

    def copy(self, dst: ir.Value, src: ir.Value, nbytes: ir.Value) -> None:
        """Emits a call of the shared copy: memcpy on a size known only at
        run time, so that LLVM neither expands it at each of thousands of
        copies nor turns small ones into byte loops."""
        name = "coll_copy"
        if name not in self.funcs:
            with self._declared(name, [ptr_type(), ptr_type(), i64()]) as entry:
                create("llvm.intr.memcpy", [], list(entry.arguments), isVolatile=ir.BoolAttr.get(False))
        func.call([], ir.FlatSymbolRefAttr.get(name), [dst, src, nbytes])

    def copy_streaming(self, dst: ir.Value, src: ir.Value, nbytes: ir.Value) -> None:
        """Emits a call of the shared streaming copy: like `copy`, but its
        stores are non-temporal (they skip the cache, and the line is not
        read before it is written). For the last write of a result too large
        to stay in cache: a plain store reads each line first, so a copy
        moves 3 bytes per byte instead of 2 (measured: 256 KiB copies of a
        512 MiB buffer ran 2x faster streamed). glibc's memcpy does the same
        above its non-temporal threshold, but not for copies of a tile."""
        name = "coll_copy_streaming"
        if name not in self.funcs:
            with self._declared(name, [ptr_type(), ptr_type(), i64()]) as entry:
                _streaming_copy_body(*entry.arguments)
        func.call([], ir.FlatSymbolRefAttr.get(name), [dst, src, nbytes])

    def call_ptrs(self, kind: str, elem: ir.Type, ptrs: Sequence[ir.Value], count: ir.Value,
                  outs: Sequence[bool] = (False,), types: Sequence[ir.Type] = ()) -> None:
        """Emits the call on pointers (`ptrs`: inputs then outputs, one per
        flag of `outs`; `types`: as in `function`; `count`: an i64 Value)."""
        name = self.function(kind, elem, len(ptrs) - len(outs), outs, types)
        func.call([], ir.FlatSymbolRefAttr.get(name), list(ptrs) + [count])

    def call(self, kind: str, ins: list[ir.Value], out: ir.Value | list[ir.Value],
             outs: Sequence[bool] = (False,)) -> bool:
        """Emits `out = (+) ins` on memref views as a call (`out`: a view, or
        a list of them with one flag each in `outs`, as in `function`);
        False (nothing emitted) unless every view is rank 1 with unit stride."""
        views = ins + (out if isinstance(out, list) else [out])
        if not all(ir.MemRefType(v.type).rank == 1 and unit_inner_stride(v.type) for v in views):
            return False
        m = ir.MemRefType(views[-1].type)
        elem, mixed = combine_element(views)
        types = [ir.MemRefType(v.type).element_type for v in views] if mixed else []
        self.function(kind, elem, len(ins), outs, types)  # errors before any op is emitted
        if m.is_dynamic_dim(0):
            count = arith.index_cast(i64(), memref.dim(views[-1], index(0)))
        else:
            count = arith.constant(i64(), m.shape[0])
        self.call_ptrs(kind, elem, [pointer_of(v) for v in views], count, outs, types)
        return True


STREAM_BYTES = 64  # one vector store; non-temporal vector stores must be aligned to it


def _streaming_copy_body(dst: ir.Value, src: ir.Value, nbytes: ir.Value) -> None:
    """dst[0:n] = src[0:n] bytes: a scalar head up to dst's first 64-byte
    boundary, aligned non-temporal 64-byte vector stores, a scalar tail,
    then a fence (non-temporal stores are weakly ordered)."""
    idx = ir.IndexType.get()
    i8 = ir.IntegerType.get_signless(8)
    t = ir.MemRefType.get([ir.ShapedType.get_dynamic_size()], i8)
    d, s = view_of(dst, t, nbytes), view_of(src, t, nbytes)
    n = arith.index_cast(idx, nbytes)
    addr = arith.index_cast(idx, llvm.ptrtoint(i64(), dst))
    mask = arith.constant(idx, STREAM_BYTES - 1)
    head = arith.minui(arith.andi(arith.subi(arith.constant(idx, STREAM_BYTES), arith.andi(addr, mask)), mask), n)
    body = arith.addi(head, arith.andi(arith.subi(n, head), arith.constant(idx, ~(STREAM_BYTES - 1))))

    def scalar(lo: ir.Value, hi: ir.Value) -> None:
        loop = scf.ForOp(lo, hi, arith.constant(idx, 1))
        with ir.InsertionPoint(loop.body):
            i = loop.induction_variable
            memref.store(memref.load(s, [i]), d, [i])
            scf.YieldOp([])
    scalar(arith.constant(idx, 0), head)
    vt = ir.VectorType.get([STREAM_BYTES], i8)
    loop = scf.ForOp(head, body, arith.constant(idx, STREAM_BYTES))
    with ir.InsertionPoint(loop.body):
        i = loop.induction_variable
        vector.store(vector.load(vt, s, [i]), d, [i], nontemporal=True, alignment=STREAM_BYTES)
        scf.YieldOp([])
    scalar(body, n)
    llvm.fence(llvm.AtomicOrdering.seq_cst)
