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

from mlir import ir
from mlir.dialects import arith, llvm, memref, scf, vector

from ...ir.kinds import ELEMENTS, KINDS

VECTOR_BYTES = 64  # one AVX-512 register; LLVM splits it on narrower targets
# Outputs on offsets from a line that are not 16 bytes apart get the result
# through a buffer of this many bytes (in L1), copied from it on each one's
# own lines (Combine._staged; 2-32 KiB measured alike).
STAGE_BYTES = 8192

Index = int | ir.Value             # a static index, or an index Value
Base = int | ir.Value | None       # where an operand's elements start (None: 0)
Operand = tuple[ir.Value, Base]    # (view, base)
Output = tuple[ir.Value, Base, bool]  # (view, base, whether its vectors are streamed lines: Combine._store)


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
               line: bool = False) -> None:
        """Stores a rounded value; `line` (vectors only): past the cache, into
        one whole line (the address on VECTOR_BYTES)."""
        if vtype is None:
            memref.store(value, view, idx)
        elif line:
            vector.store(value, view, idx, nontemporal=True, alignment=VECTOR_BYTES)
        else:
            vector.store(value, view, idx)

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
            self._store(rounded[elem], view, at(base), vtype, nontemporal and vtype is not None)

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
        outs: list[Output] = [(v, b, False) for v, b in (out if isinstance(out, list) else [out])]
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
                          skewed: Callable[[], None] | None = None) -> None:
        """emit_1d on whole rank-1 unit-stride views (ins: views; outs:
        (view, nontemporal); count: index Value) where the nontemporal
        outputs' vector stores bypass the cache, for results too large for
        it: no line is read before it is written. A non-temporal store must
        not cross a line, and 16-byte ones took 1.3-2.1x the time of whole
        lines at 8 x 16 MiB on this VM (2026-12-07). Buffers as the user's
        allocator hands them out are on 16 bytes only (malloc), each as far
        from a line as it happens to be, so the loops depend on where the
        buffers are (bench/alignment.py):
          - every input as far from a line, the streamed outputs a multiple
            of 16 bytes from them: the loop on the inputs' lines, each
            output's lines filled by a shuffle of two steps (_shifted);
          - else the streamed outputs a multiple of 16 bytes apart: the
            same on the first output's lines (the loads across lines);
          - else the result through a buffer in L1, copied from it on each
            output's own lines (_staged).
        A fence ends it (non-temporal stores are weakly ordered).
        `skewed`, where given, emits what is done where the buffers are not
        all on one offset from a line (a call of a function holding the
        others, made by this method with `skewed` None): with the other
        loops beside it, LLVM compiled that case's loop so that it took
        1.12-1.16x on malloc's page-aligned buffers (tree, all2all at 8 x
        16 MiB)."""
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

        def streamed(start: ir.Value, shifted: bool, anchor: int | None = None) -> None:
            """Scalars up to `start`'s next line, vectors, scalars; the
            streamed outputs on `start`'s offset from a line (`shifted`:
            or any multiple of 16 bytes from it, Combine._shifted; `start`
            is output `anchor`'s, if any)."""
            lanes = index(self.lanes)
            line = offset(arith.subi(index(VECTOR_BYTES), offset(start, VECTOR_BYTES)), VECTOR_BYTES)
            head = arith.minui(arith.divui(line, index(esize)), count)
            body = arith.addi(head, arith.muli(arith.divui(arith.subi(count, head), lanes), lanes))
            plain: list[Output] = [(v, None, False) for v, _ in outs]
            self._loop(index(0), head, 1, pairs, plain, [], None)
            if shifted:
                self._shifted(pairs, outs, head, body, start, anchor)
            else:
                self._loop(head, body, lanes, pairs, [(v, None, nt) for v, nt in outs],
                           [], ir.VectorType.get([self.lanes], self.elem))
            self._loop(body, count, 1, pairs, plain, [], None)
            llvm.fence(llvm.AtomicOrdering.seq_cst)

        def staged() -> None:
            self._staged(pairs, outs, count, lambda a: arith.cmpi(eq, arith.remui(a, index(esize)), index(0)))
        single = len(addrs) == 1
        if skewed is not None:
            self._if(alike(VECTOR_BYTES, [first_in] if single else []), lambda: streamed(addrs[0], False), skewed)
            return
        loads_on_lines = alike(16, [first_in])  # the loads on lines where the inputs are alike, else the first output's
        for a in loads[1:]:
            loads_on_lines = arith.andi(loads_on_lines,
                                        arith.cmpi(eq, offset(a, VECTOR_BYTES), offset(first_in, VECTOR_BYTES)))
        self._if(loads_on_lines, lambda: streamed(first_in, True),
                 lambda: self._if(alike(16), lambda: streamed(addrs[0], not single, [nt for _, nt in outs].index(True)),
                                  staged))

    def _value(self, ins: Sequence[Operand], k: ir.Value, vtype: ir.VectorType) -> ir.Value:
        """The rounded result of one vector step at `k` (rank-1 `ins`)."""
        acc: ir.Value | None = None
        for view, base in ins:
            v = self._load(view, [k if base is None else arith.addi(index(base), k)], vtype)
            acc = v if acc is None else self.fn(acc, v)
        assert acc is not None  # (a combine has inputs)
        return self._round(acc, vtype)

    def _shifted(self, ins: Sequence[Operand], outs: Sequence[tuple[ir.Value, bool]], lo: ir.Value, hi: ir.Value,
                 start: ir.Value, anchor: int | None) -> None:
        """Vectors from `lo` to `hi` (a multiple of lanes apart; `start`'s
        element `lo` on a line) where each streamed output is a multiple of
        16 bytes, d, from `start`'s offset: its lines hold the last d bytes
        of the previous result and the first of this one, so it gets one
        shuffle of the two and one whole line per step (16-byte
        non-temporal pieces took 1.3-2.1x the time on lines at 8 x 16 MiB
        on this VM, 2026-12-07). Where one output's d is known only at run
        time, it picks one of four loops (a branch per step took naive's
        8-input kernel from 1.10x to 1.18x the time on lines); where more
        are, each is a branch per step, the same way every step (as fast
        for twoshot's, tree's and ring's kernels, and a third of the code).
        Where an output's lines begin before `lo` or end after `hi`, the
        first and the last vector go there by masked plain stores.
        `anchor`: the output whose address is `start`, if any (d = 0)."""
        esize = element_bytes(self.elem)
        n = self.lanes
        vtype = ir.VectorType.get([n], self.elem)
        lanes = index(n)
        eq = arith.CmpIPredicate.eq
        quarter = max(16 // esize, 1)
        shifts: list[int | ir.Value | None] = [
            None if not nt else 0 if k == anchor else
            arith.divui(arith.andi(arith.subi(memref.extract_aligned_pointer_as_index(v), start),
                                   index(VECTOR_BYTES - 1)), index(esize)) for k, (v, nt) in enumerate(outs)]

        def cases(shift: int | ir.Value, emit: Callable[[int], None], j: int = 0) -> None:
            """emit(s) where `shift` is s, for s = 0, quarter, ... (16 bytes apart)."""
            if isinstance(shift, int) or (j + 1) * quarter >= n:
                emit(shift if isinstance(shift, int) else j * quarter)
                return
            self._if(arith.cmpi(eq, shift, index(j * quarter)), lambda: emit(j * quarter),
                     lambda: cases(shift, emit, j + 1))

        def part(value: ir.Value, v: ir.Value, at: ir.Value, lanes_: range) -> None:
            """The lanes `lanes_` of `value` into `v` from `at` (a masked store)."""
            bits = ", ".join("true" if j in lanes_ else "false" for j in range(n))
            mask = arith.constant(ir.VectorType.get([n], ir.IntegerType.get_signless(1)),
                                  ir.Attribute.parse(f"dense<[{bits}]> : vector<{n}xi1>"))
            vector.maskedstore(v, [at], mask, value)

        def edge(value: ir.Value, at: ir.Value, last: bool) -> None:
            """The first vector (at `lo`) into every output, the streamed
            ones up to their first line; or the last (at hi - lanes) into
            the streamed ones from their last line."""
            for (v, _), shift in zip(outs, shifts):
                if shift is None:
                    if not last:
                        vector.store(value, v, [at])
                    continue

                def store(s: int, v: ir.Value = v) -> None:
                    if s == 0:
                        if not last:
                            self._store(value, v, [at], vtype, True)
                    else:
                        part(value, v, at, range(n - s, n) if last else range(n - s))
                cases(shift, store)

        def loops() -> None:
            value = self._value(ins, lo, vtype)
            edge(value, lo, False)
            loop = scf.ForOp(arith.addi(lo, lanes), hi, lanes, [value])
            with ir.InsertionPoint(loop.body):
                i, prev = loop.induction_variable, loop.inner_iter_args[0]
                cur = self._value(ins, i, vtype)
                for (v, _), shift in zip(outs, shifts):
                    if shift is None:
                        vector.store(cur, v, [i])
                        continue

                    def line(s: int, v: ir.Value = v) -> None:
                        whole = cur if s == 0 else vector.shuffle(prev, cur, [n - s + j for j in range(n)])
                        self._store(whole, v, [arith.subi(i, index(s)) if s else i], vtype, True)
                    cases(shift, line)
                scf.YieldOp([cur])
            edge(loop.results[0], arith.subi(hi, lanes), True)
        dynamic = [k for k, sh in enumerate(shifts) if isinstance(sh, ir.Value)]

        def known(s: int, k: int) -> None:
            shift, shifts[k] = shifts[k], s
            loops()
            shifts[k] = shift
        any_ = scf.IfOp(arith.cmpi(arith.CmpIPredicate.ult, lo, hi), [], has_else=False)
        with ir.InsertionPoint(any_.then_block):
            if len(dynamic) == 1:  # (one loop per d; more outputs: a branch per step, less code to compile)
                shift = shifts[dynamic[0]]
                assert shift is not None
                cases(shift, lambda s: known(s, dynamic[0]))
            else:
                loops()
            scf.YieldOp([])

    def _staged(self, ins: Sequence[Operand], outs: Sequence[tuple[ir.Value, bool]], count: ir.Value,
                whole: Callable[[ir.Value], ir.Value]) -> None:
        """emit_1d_streaming for outputs at different offsets from a line:
        STAGE_BYTES of the result at a time into a buffer on the stack
        (plain stores: it stays in L1), then from it into each output, its
        streamed ones on their own lines (scalars up to the line, one-line
        non-temporal stores, scalars); `whole(addr)`: whether an output is
        a whole number of elements from a line (else plain stores)."""
        esize = element_bytes(self.elem)
        chunk = STAGE_BYTES // esize
        stage = memref.alloca(ir.MemRefType.get([chunk], self.elem), [], [], alignment=VECTOR_BYTES)
        vtype = ir.VectorType.get([self.lanes], self.elem)
        lanes = index(self.lanes)
        loop = scf.ForOp(index(0), count, index(chunk))
        with ir.InsertionPoint(loop.body):
            c = loop.induction_variable
            n = arith.minui(index(chunk), arith.subi(count, c))
            self.emit_1d([(v, c) for v, _ in ins], (stage, None), n)
            for out, nt in outs:
                if not nt:
                    self._loop(index(0), n, 1, [(stage, None)], [(out, c, False)], [], None)
                    continue
                addr = arith.addi(memref.extract_aligned_pointer_as_index(out), arith.muli(c, index(esize)))

                def lined(out: ir.Value = out, addr: ir.Value = addr) -> None:
                    gap = arith.andi(arith.subi(index(VECTOR_BYTES), arith.andi(addr, index(VECTOR_BYTES - 1))),
                                     index(VECTOR_BYTES - 1))
                    head = arith.minui(arith.divui(gap, index(esize)), n)
                    body = arith.addi(head, arith.muli(arith.divui(arith.subi(n, head), lanes), lanes))
                    self._loop(index(0), head, 1, [(stage, None)], [(out, c, False)], [], None)
                    self._loop(head, body, lanes, [(stage, None)], [(out, c, True)], [], vtype)
                    self._loop(body, n, 1, [(stage, None)], [(out, c, False)], [], None)

                def plain(out: ir.Value = out) -> None:
                    self.emit_1d([(stage, None)], (out, c), n)
                self._if(whole(addr), lined, plain)
            scf.YieldOp([])
        llvm.fence(llvm.AtomicOrdering.seq_cst)

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
