"""The loops behind coll.combine and coll.copy on the CPU (memref/scf/vector).

A combine is one loop: vector loads of every operand, the reduction, one
vector store per step, then a scalar tail. Explicit vectors (rather than
relying on the LLVM loop vectorizer) because the output may alias an input,
which would make LLVM guard its vector loop with run-time alias checks, one
per operand. f16, bf16 and fp8 are combined in f32 (their `compute` type,
ir/kinds.py) and rounded once per store;
an operand or output may hold f32 itself (a partial result carried between
devices, coll.combine's accumulator type): it is read and written as is.
"""
from collections.abc import Callable, Sequence
from typing import Any

from mlir import ir
from mlir.dialects import arith, llvm, memref, scf, vector

from ...ir.kinds import ELEMENTS, KINDS

VECTOR_BYTES = 64  # one AVX-512 register; LLVM splits it on narrower targets
# A streamed result goes in 16-byte pieces to keep this many loads or more
# on lines (four stores for one; a load across lines costs about two).
PIECES_FROM_INPUTS = 4

Index = int | ir.Value             # a static index, or an index Value
Base = int | ir.Value | None       # where an operand's elements start (None: 0)
Operand = tuple[ir.Value, Base]    # (view, base)
Output = tuple[ir.Value, Base, "int | ir.Value"]  # (view, base, how it is streamed: Combine._store)


def _combine_fn(kind: str, elem: ir.Type) -> Callable[..., ir.Value] | None:
    """The arith builder that combines two `elem` values (ir/kinds.py), or None."""
    k, name = KINDS.get(kind), str(elem)
    if k is None or name not in ELEMENTS:
        return None
    try:
        return getattr(arith, k.arith_op(name).split(".", 1)[1])
    except ValueError:
        return None


_FLOAT_BYTES = ((ir.F32Type, 4), (ir.F64Type, 8), (ir.F16Type, 2), (ir.BF16Type, 2), (ir.Float8E4M3FNType, 1),
                (ir.Float8E5M2Type, 1))


def element_bytes(elem: ir.Type) -> int:
    if isinstance(elem, ir.IntegerType):
        return max(elem.width // 8, 1)
    for cls, n in _FLOAT_BYTES:  # isinstance: printing the type (str) is slow
        if isinstance(elem, cls):
            return n
    raise ValueError(f"no element size for {elem}")


def buffer_bytes(t: ir.Type) -> int:
    """Bytes of a static memref type's elements."""
    m = ir.MemRefType(t)
    n = element_bytes(m.element_type)
    for d in m.shape:
        n *= d
    return n


def index(v: Index) -> ir.Value:
    """An index constant, or `v` itself when it already is a Value."""
    return arith.constant(ir.IndexType.get(), v) if isinstance(v, int) else v


def unit_inner_stride(t: ir.Type) -> bool:
    m = ir.MemRefType(t)
    if m.rank == 0:
        return False
    try:
        strides, _ = m.get_strides_and_offset()
    except Exception:  # a layout that is not strided
        return False
    return strides[-1] == 1


def window(view: ir.Value, base: Index, count: int) -> ir.Value:
    """view[base : base+count] of a rank-1 unit-stride view (base: int or
    index Value); the view itself when that is all of it."""
    m = ir.MemRefType(view.type)
    if isinstance(base, int) and base == 0 and m.shape == [count]:
        return view
    _, offset = m.get_strides_and_offset()
    if isinstance(base, int) and not m.is_dynamic_stride_or_offset(offset):
        layout = ir.StridedLayoutAttr.get(offset + base, [1])
        rt = ir.MemRefType.get([count], m.element_type, layout, m.memory_space)
        return memref.subview(view, [base], [count], [1], result_type=rt)
    dyn = ir.ShapedType.get_dynamic_stride_or_offset()
    rt = ir.MemRefType.get([count], m.element_type, ir.StridedLayoutAttr.get(dyn, [1]), m.memory_space)
    return memref.subview(view, [index(base)], [count], [1], result_type=rt)


def copy_1d(src: tuple[ir.Value, Index], dst: tuple[ir.Value, Index], count: int) -> None:
    """dst[bd : bd+count] = src[bs : bs+count]; src, dst: (view, base)."""
    memref.copy(window(src[0], src[1], count), window(dst[0], dst[1], count))


def copy_strided(src: ir.Value, dst: ir.Value) -> None:
    """dst = src for static strided views of one shape with unit inner
    strides (a block's rows): one memcpy per row in a loop nest, where
    memref.copy would call memrefCopy, an element at a time, from a library
    the MPI executables do not link."""
    m = ir.MemRefType(src.type)
    shape = list(m.shape)
    dyn = ir.ShapedType.get_dynamic_stride_or_offset()

    def row(v: ir.Value, idx: list[ir.Value]) -> ir.Value:
        vt = ir.MemRefType(v.type)
        rt = ir.MemRefType.get([shape[-1]], vt.element_type, ir.StridedLayoutAttr.get(dyn, [1]), vt.memory_space)
        offsets: list[ir.Value | int] = [*idx, 0]
        return memref.subview(v, offsets, [1] * (len(shape) - 1) + [shape[-1]], [1] * len(shape), result_type=rt)

    def nest(idx: list[ir.Value]) -> None:
        if len(idx) == len(shape) - 1:
            memref.copy(row(src, idx), row(dst, idx))
            return
        loop = scf.ForOp(index(0), index(shape[len(idx)]), index(1))
        with ir.InsertionPoint(loop.body):
            nest(idx + [loop.induction_variable])
            scf.YieldOp([])
    nest([])


def combine_element(bufs: Sequence[ir.Value]) -> tuple[ir.Type, bool]:
    """(the element type, whether another type is in it) of a combine's
    buffers (inputs, then outputs): its rhs's type (without rhs, the
    output's); the lhs and the output may hold the accumulator type."""
    types = [ir.MemRefType(b.type).element_type for b in bufs]
    elem = types[1] if len(types) > 2 else types[-1]
    return elem, any(t != elem for t in types)


class Combine:
    """Emits the loops of a combine of `kind` on elements of type `elem`."""

    def __init__(self, kind: str, elem: ir.Type) -> None:
        self.elem = elem
        fn = _combine_fn(kind, elem)
        if fn is None:
            raise ValueError(f"reduction kind '{kind}' is not valid for element type {elem}")
        self.fn = fn
        wide = ELEMENTS[str(elem)].compute
        self.compute: ir.Type = ir.Type.parse(wide) if wide else elem
        self.lanes = max(VECTOR_BYTES // element_bytes(elem), 1)

    def _like(self, vtype: ir.VectorType | None, elem: ir.Type) -> ir.Type:
        return elem if vtype is None else ir.VectorType.get(vtype.shape, elem)

    def _load(self, view: ir.Value, idx: list[ir.Value], vtype: ir.VectorType | None) -> ir.Value:
        elem = ir.MemRefType(view.type).element_type
        vt = None if vtype is None else ir.VectorType.get(vtype.shape, elem)
        v = memref.load(view, idx) if vt is None else vector.load(vt, view, idx)
        if self.compute != elem:
            v = arith.extf(self._like(vtype, self.compute), v)
        return v

    def _round(self, value: ir.Value, vtype: ir.VectorType | None, elem: ir.Type | None = None) -> ir.Value:
        """`value` rounded to `elem` (default the element type; the compute
        type itself stays as it is)."""
        elem = elem or self.elem
        if self.compute != elem:
            value = arith.truncf(self._like(vtype, elem), value)
        return value

    def _store(self, value: ir.Value, view: ir.Value, idx: list[ir.Value], vtype: ir.VectorType | None,
               nontemporal: int | ir.Value = 0) -> None:
        """Stores a rounded value; `nontemporal` (vectors only): 0, or the
        bytes of each store past the cache (VECTOR_BYTES or 16: the vector in
        pieces of that many, at addresses aligned to them), or an i1 Value:
        VECTOR_BYTES where it holds, else 16."""
        if vtype is None:
            memref.store(value, view, idx)
        elif isinstance(nontemporal, ir.Value):
            self._if(nontemporal, lambda: self._store(value, view, idx, vtype, VECTOR_BYTES),
                     lambda: self._store(value, view, idx, vtype, 16))
        elif not nontemporal:
            vector.store(value, view, idx)
        else:
            n = vtype.shape[0]
            lanes = min(nontemporal // element_bytes(ir.MemRefType(view.type).element_type), n)
            piece = ir.VectorType.get([lanes], ir.VectorType(value.type).element_type)
            for j in range(0, n, lanes):
                part = value if lanes == n else vector.extract_strided_slice(piece, value, [j], [lanes], [1])
                at = idx[:-1] + [arith.addi(idx[-1], index(j))] if j else idx
                vector.store(part, view, at, nontemporal=True, alignment=nontemporal)

    def _step(self, ins: Sequence[Operand], outs: Sequence[Output], outer: list[ir.Value], k: ir.Value,
              vtype: ir.VectorType | None) -> None:
        """One step: every input loaded, combined, the result stored into
        every output (outs: Output)."""
        offsets: dict[int, ir.Value] = {}  # one index per distinct base

        def at(base: Base) -> list[ir.Value]:
            if base is None or (isinstance(base, int) and base == 0):
                return outer + [k]
            key = base if isinstance(base, int) else id(base)
            if key not in offsets:
                offsets[key] = arith.addi(index(base), k)
            return outer + [offsets[key]]
        acc: ir.Value | None = None
        for view, base in ins:
            v = self._load(view, at(base), vtype)
            acc = v if acc is None else self.fn(acc, v)
        assert acc is not None  # (a combine has inputs)
        rounded: dict[ir.Type, ir.Value] = {}  # per output element type
        for view, base, nontemporal in outs:
            elem = ir.MemRefType(view.type).element_type
            if elem not in rounded:
                rounded[elem] = self._round(acc, vtype, elem)
            self._store(rounded[elem], view, at(base), vtype, nontemporal if vtype is not None else 0)

    def _loop(self, lo: Index, hi: Index, step: Index, ins: Sequence[Operand], outs: Sequence[Output],
              outer: list[ir.Value], vtype: ir.VectorType | None) -> None:
        loop = scf.ForOp(index(lo), index(hi), index(step))
        with ir.InsertionPoint(loop.body):
            self._step(ins, outs, outer, loop.induction_variable, vtype)
            scf.YieldOp([])

    def emit_1d(self, ins: Sequence[Operand], out: Operand | list[Operand], count: Index,
                outer: Sequence[ir.Value] = (), vectorize: bool = True) -> None:
        """out[bo + k] = (+)_i ins[i][bi + k] for k in [0, count) along the
        innermost dimension. ins: (view, base or None); out: one such pair,
        or a list of them (every output gets the result: the copies of a
        combine's result folded into it); count: int or index Value;
        `outer`: indices of the outer dimensions. Plain stores."""
        outs: list[Output] = [(v, b, 0) for v, b in (out if isinstance(out, list) else [out])]
        outer_ = list(outer)
        lanes = self.lanes if vectorize else 1
        vtype = ir.VectorType.get([lanes], self.elem)
        if lanes == 1:
            self._loop(0, count, 1, ins, outs, outer_, None)
        elif isinstance(count, int):
            main = count - count % lanes
            if main:
                self._loop(0, main, lanes, ins, outs, outer_, vtype)
            if main < count:
                self._loop(main, count, 1, ins, outs, outer_, None)
        else:  # dynamic length: vectors up to the last full one, then scalars
            c = index(lanes)
            end = arith.muli(arith.divui(count, c), c)
            self._loop(0, end, lanes, ins, outs, outer_, vtype)
            self._loop(end, count, 1, ins, outs, outer_, None)

    def emit_1d_streaming(self, ins: Sequence[ir.Value], outs: Sequence[tuple[ir.Value, bool]], count: ir.Value,
                          copy_streaming: Callable[[ir.Value, ir.Value, ir.Value], Any],
                          skewed: Callable[[], None] | None = None) -> None:
        """emit_1d on whole rank-1 unit-stride views (ins: views; outs:
        (view, nontemporal); count: index Value) where the nontemporal
        outputs' vector stores bypass the cache, for results too large for
        it: no line is read before it is written. A non-temporal store must
        not cross a line. Buffers as the user's allocator hands them out are
        on 16 bytes only (malloc), each as far from a line as it happens to
        be, so the loops depend on where the buffers are (measured at 8 x 1
        and 16 MiB, as ratios to the time on lines):
          - the streamed outputs (and, for one, the first input) as far
            from a line: scalars up to the first output's line, then each
            vector store is one line;
          - one output of PIECES_FROM_INPUTS inputs or more, as far from 16
            bytes as the inputs, which are all as far from a line: the loads
            on lines, the result in 16-byte pieces (oneshot's 8 inputs, its
            output 16 bytes off: 1.3-1.5x with its loads across lines, 0.9x
            this way; tree's and all2all's 2-input kernels, scratch on lines
            and results from malloc: 1.1x on the output's line, 1.2-1.25x
            in pieces); else on the output's line (whole elements);
          - several outputs as far from 16 bytes: on the first output's
            line; the outputs as far from it in lines, the others in 16-byte
            pieces (twoshot, outputs 0-48 bytes off: 1.4-1.6x through the
            copies below, 1.0-1.15x this way; every output in pieces took
            2-3x when none was on the loop's lines);
          - else the result goes to the first output, and
            `copy_streaming(dst, src, bytes)` (views; an i64 Value), whose
            head aligns each destination on its own, copies it to the
            others from the cache.
        A fence ends it (non-temporal stores are weakly ordered).
        `skewed`, where given, emits what is done where the first case does
        not hold (a call of a function holding the others, made by this
        method with `skewed` None): with the other loops beside it, LLVM
        compiled the first case's loop so that it took 1.12-1.16x on
        malloc's page-aligned buffers (tree, all2all at 8 x 16 MiB)."""
        pairs: list[Operand] = [(v, None) for v in ins]
        esize = element_bytes(self.elem)
        eq = arith.CmpIPredicate.eq
        addrs = [memref.extract_aligned_pointer_as_index(v) for v, nt in outs if nt]
        loads = [memref.extract_aligned_pointer_as_index(v) for v in ins]
        first_in = loads[0]

        def offset(addr: ir.Value, align: int) -> ir.Value:
            return arith.andi(addr, index(align - 1))

        def alike(align: int, extra: Sequence[ir.Value] = ()) -> ir.Value:
            """Whether the streamed outputs (and `extra`) are all as far
            from an `align` boundary, a whole number of elements."""
            off = offset(addrs[0], align)
            ok = arith.cmpi(eq, arith.remui(off, index(esize)), index(0))
            for a in [*addrs[1:], *extra]:
                ok = arith.andi(ok, arith.cmpi(eq, offset(a, align), off))
            return ok

        def streamed(start: ir.Value, store: Callable[[ir.Value], int | ir.Value]) -> None:
            """Scalars up to `start`'s next line, vectors, scalars; `store`:
            how an output (its aligned pointer) is streamed (Combine._store)."""
            lanes = index(self.lanes)
            line = offset(arith.subi(index(VECTOR_BYTES), offset(start, VECTOR_BYTES)), VECTOR_BYTES)
            head = arith.minui(arith.divui(line, index(esize)), count)
            body = arith.addi(head, arith.muli(arith.divui(arith.subi(count, head), lanes), lanes))
            plain: list[Output] = [(v, None, 0) for v, _ in outs]
            self._loop(index(0), head, 1, pairs, plain, [], None)
            self._loop(head, body, lanes, pairs,
                       [(v, None, store(memref.extract_aligned_pointer_as_index(v)) if nt else 0) for v, nt in outs],
                       [], ir.VectorType.get([self.lanes], self.elem))
            self._loop(body, count, 1, pairs, plain, [], None)
            llvm.fence(llvm.AtomicOrdering.seq_cst)

        def copied() -> None:
            first = outs[0][0]
            self.emit_1d(pairs, (first, None), count)
            nbytes = arith.index_cast(ir.IntegerType.get_signless(64), arith.muli(count, index(esize)))
            for v, nt in outs[1:]:
                if nt:
                    copy_streaming(v, first, nbytes)
                else:
                    memref.copy(first, v)

        def lines() -> None:
            streamed(addrs[0], lambda _: VECTOR_BYTES)

        def on_loads() -> None:
            streamed(first_in, lambda _: 16)

        def mixed() -> None:
            off = offset(addrs[0], VECTOR_BYTES)
            streamed(addrs[0], lambda a: arith.cmpi(eq, offset(a, VECTOR_BYTES), off))
        single = len(addrs) == 1
        if skewed is not None:
            self._if(alike(VECTOR_BYTES, [first_in] if single else []), lines, skewed)
        elif not single:
            self._if(alike(16), mixed, copied)
        elif len(ins) < PIECES_FROM_INPUTS:
            self._if(alike(VECTOR_BYTES), lines, copied)
        else:
            on_lines = alike(16, [first_in])
            for a in loads[1:]:  # every input as far from a line: all the loads can be on lines
                on_lines = arith.andi(on_lines, arith.cmpi(eq, offset(a, VECTOR_BYTES), offset(first_in, VECTOR_BYTES)))
            self._if(on_lines, on_loads, lambda: self._if(alike(VECTOR_BYTES), lines, copied))

    @staticmethod
    def _if(cond: ir.Value, then: Callable[[], None], otherwise: Callable[[], None]) -> None:
        branch = scf.IfOp(cond, [], has_else=True)
        for block, emit in ((branch.then_block, then), (branch.else_block, otherwise)):
            with ir.InsertionPoint(block):
                emit()
                scf.YieldOp([])

    def emit(self, ins: list[ir.Value], out: ir.Value) -> None:
        """The whole combine: out = (+)_i ins[i], any rank and layout."""
        t = ir.MemRefType(out.type)
        if t.rank == 0:
            self._store(self._round(self._reduce_scalar(ins), None, t.element_type), out, [], None)
            return
        vectorize = all(unit_inner_stride(v.type) for v in ins + [out])
        self._nest(t, 0, [], [(v, None) for v in ins], (out, None), vectorize)

    def _reduce_scalar(self, ins: list[ir.Value]) -> ir.Value:
        acc: ir.Value | None = None
        for v in ins:
            x = self._load(v, [], None)
            acc = x if acc is None else self.fn(acc, x)
        assert acc is not None  # (a combine has inputs)
        return acc

    def _size(self, t: ir.MemRefType, out: ir.Value, dim: int) -> Index:
        if t.is_dynamic_dim(dim):
            return memref.dim(out, index(dim))
        return t.shape[dim]

    def _nest(self, t: ir.MemRefType, dim: int, outer: list[ir.Value], ins: list[Operand], out: Operand,
              vectorize: bool) -> None:
        size = self._size(t, out[0], dim)
        if dim == t.rank - 1:
            self.emit_1d(ins, out, size, outer, vectorize)
            return
        loop = scf.ForOp(index(0), index(size), index(1))
        with ir.InsertionPoint(loop.body):
            self._nest(t, dim + 1, outer + [loop.induction_variable], ins, out, vectorize)
            scf.YieldOp([])
