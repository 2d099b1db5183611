"""What every collective's lowering shares: placed flat views of its
buffers, slices, scratch, copies and combines with token tracking, and the
final join (`finish`). The strategies (collectives/*.py) are written in
these.

A "part" is a list of memref pieces that together hold one block of data;
copy and combine accept parts as well as single buffers and emit one op per
piece. A block along a non-leading axis is one piece too: a strided view
(rank 2 or 3, `view`) of its rows, so a lowering's size does not grow with
the rows it moves (collectives/spec.py `strided_pair`). Every op that
waits for nothing else waits for the collective's own `deps`, so a
collective starts only after them.
"""
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import cast, overload

from mlir import ir
from mlir.dialects import memref

from ..core.errors import PassError
from ..ir import builders
from ..ir.kinds import ELEMENTS, order_matters, partials_round
from ..ir.ops import CANONICAL, CollectiveOp, Implements, view
from ..ir.types import device_attr, device_of, flat_offset, flat_type
from ..ir.types import numel as numel_of
from ..ir.verifier import SPMD_RANKS
from ..ir.views import same_memory
from . import spec

# Dependencies: tokens, parts' Tokens, lists of them, None for none.
Dep = ir.Value | Sequence["Dep"] | None
# A buffer, or a part: its pieces.
Buf = ir.Value | list[ir.Value]


def buffer_ops(n: int) -> int:
    """The ops of a lowering that do not depend on what it moves: the
    views of its buffers (a placement cast and a reshape each, 2N buffers
    at most), the join and the claim; every estimated_ops adds them."""
    return 4 * n + 4


class Tokens(list[ir.Value]):
    """The tokens of an op on a part, one per piece: an op on piece p of
    another part of as many pieces waits only for piece p."""


def _flatten(deps: Iterable[Dep], piece: int | None = None, pieces: int | None = None) -> Iterator[ir.Value]:
    for d in deps:
        if isinstance(d, Tokens) and piece is not None and len(d) == pieces:
            yield from _flatten([d[piece]])
        elif isinstance(d, (list, tuple)):
            yield from _flatten(d, piece, pieces)
        elif d is not None:
            yield cast(ir.Value, d)  # not a list or tuple: a token


def _offset(type_: ir.Type) -> int:
    strides, offset = ir.MemRefType(type_).get_strides_and_offset()
    return offset


def device_order_path(n: int, end: int) -> list[int]:
    """Device positions for a partial that picks up one contribution per
    hop in device order: 0, 1, .., N-1; or 1, 0 when it should end at 0
    over two devices (x_1 + x_0 has the bits of x_0 + x_1)."""
    return [1, 0] if n == 2 and end == 0 else list(range(n))


def _one_type(values: list[ir.Value]) -> list[ir.Value]:
    """`values` as one type (a combine's rhs group is one IRDL type): a
    slice or a block's strided view next to scratch is cast to a dynamic
    offset and outer strides (the innermost stays 1, so kernels vectorize)."""
    if len({v.type for v in values}) <= 1:
        return values
    out = []
    dyn = ir.ShapedType.get_dynamic_stride_or_offset()
    for v in values:
        mt = ir.MemRefType(v.type)
        layout = ir.StridedLayoutAttr.get(dyn, [dyn] * (mt.rank - 1) + [1])
        out.append(memref.cast(ir.MemRefType.get(mt.shape, mt.element_type, layout, mt.memory_space), v))
    return out


class Emitter:
    """Emits the explicit program of one collective `op` before it."""

    def __init__(self, op: ir.Operation) -> None:
        c = cast(CollectiveOp, view(op))  # a collective: this emits its lowering
        self.op, self.c = op, c
        self.kind = c.kind if c.HAS_KIND else None
        self.devices = c.devices
        self.n = len(self.devices)
        self.in_type = ir.MemRefType(c.inputs[0].type)
        self.out_type = ir.MemRefType(c.outputs[0].type)
        self.elem = self.in_type.element_type
        self.numel = numel_of(self.in_type)
        self.elem_bytes = ELEMENTS[str(self.elem)].bytes  # chunk boundaries follow it
        # Combine in device order, ((x_0 (+) x_1) (+) x_2) ..., the same bits
        # for every strategy (ir/ops.py ORDERS), where the association changes
        # the bits; else each strategy associates as it runs fastest.
        self.canonical = (self.kind is not None and c.order == CANONICAL
                          and order_matters(self.kind, str(self.elem)))
        # ... and rounded once, at the end: a partial result passed between
        # devices is kept in the type the kernels combine in (f32 for f16
        # and bf16), not rounded to the element type at every hop.
        wide = self.canonical and partials_round(cast(str, self.kind), str(self.elem))
        self.partial = ir.Type.parse(ELEMENTS[str(self.elem)].compute) if wide else self.elem
        self.entry = list(c.deps)
        self.tokens: list[ir.Value] = []     # every token emitted, in order
        self.consumed: set[ir.Value] = set()  # tokens some emitted op waits for
        self._flat: dict[tuple[ir.Value, int], ir.Value] = {}
        self._slices: dict[tuple[ir.Value, int, int], ir.Value] = {}
        self._views: dict[tuple[ir.Value, int, tuple[int, ...], tuple[int, ...]], ir.Value] = {}
        self._len: dict[ir.Value, int] = {}
        self._where: dict[ir.Value, tuple[int, int | None]] = {}
        self.x = [self.flat(v, d) for v, d in zip(c.inputs, c.input_devices)]
        # In place is the same memory, not the same value: an output that is
        # a view of its input moving nothing (a memref.cast) is that input,
        # so every strategy sees `y[j] is x[i]` (the verifier refuses a
        # partial overlap).
        self.y = [self._input_at(v, d) or self.flat(v, d) for v, d in zip(c.outputs, c.output_devices)]

    def _input_at(self, v: ir.Value, d: int) -> ir.Value | None:
        """The flat input on device `d` that is the same memory as `v`, or None."""
        c = self.c
        return next((x for x, v2, d2 in zip(self.x, c.inputs, c.input_devices)
                     if d2 == d and same_memory(v, v2)), None)

    # -- views ---------------------------------------------------------------
    def flat(self, value: ir.Value, device: int) -> ir.Value:
        """`value` placed on `device` and flattened to rank 1 (one view per
        buffer, so an in-place output is the very value of its input)."""
        key = (value, device)
        if key in self._flat:
            return self._flat[key]
        mt = ir.MemRefType(value.type)
        placed = ir.MemRefType.get(mt.shape, mt.element_type, mt.layout,
                                   ir.Attribute.parse(f"#coll.device<{device}>"))
        v = memref.memory_space_cast(placed, value)
        size, rank = numel_of(mt), len(mt.shape)
        flat = flat_type(self.elem, size, device, offset=flat_offset(mt) if size else None)
        if rank == 0:
            v = memref.expand_shape(flat, v, [], [], [1])
        elif rank > 1:
            v = memref.collapse_shape(flat, v, [list(range(rank))])
        self._flat[key] = v
        self._len[v] = size
        return v

    def slice(self, buf: ir.Value, start: int, size: int) -> ir.Value:
        """buf[start:start+size] as a memref.subview (one per region)."""
        if start == 0 and size == self._len.get(buf):
            return buf
        key = (buf, start, size)
        if key not in self._slices:
            where = self._place(buf)
            rt = flat_type(self.elem, size, where[1], offset=where[0] + start)
            self._slices[key] = builders.subview(buf, [start], [size], rt)
        return self._slices[key]

    def _place(self, buf: ir.Value) -> tuple[int, int | None]:
        """(offset, device) of flat `buf`, once per buffer (few are sliced)."""
        where = self._where.get(buf)
        if where is None:
            t = buf.type
            where = self._where[buf] = (_offset(t), device_of(t))
        return where

    def view(self, buf: ir.Value, v: spec.View) -> ir.Value:
        """The strided view `v` (offset, sizes, strides) of flat `buf`: a
        slice when it is contiguous, else a memref.reinterpret_cast."""
        offset, sizes, strides = v
        if len(sizes) == 1:
            return self.slice(buf, offset, sizes[0])
        key = (buf, offset, sizes, strides)
        if key not in self._views:
            start, device = self._place(buf)
            layout = ir.StridedLayoutAttr.get(start + offset, list(strides))
            rt = ir.MemRefType.get(list(sizes), self.elem, layout, ir.MemRefType(buf.type).memory_space)
            self._views[key] = builders.reinterpret(buf, start + offset, sizes, strides, rt)
        return self._views[key]

    def pieces(self, buf: ir.Value, region: Iterable[tuple[int, int] | spec.View]) -> list[ir.Value]:
        """The part of `buf` that `region` ([(start, size)] or [View]) names."""
        return [self.view(buf, r) if len(r) == 3 else self.slice(buf, *r) for r in region]

    @overload
    def scratch(self, device: int, size: int, elem: ir.Type | None = None) -> ir.Value: ...
    @overload
    def scratch(self, device: int, size: list[int] | list[tuple[int, ...]],
                elem: ir.Type | None = None) -> list[ir.Value]: ...

    def scratch(self, device: int, size: int | list[int] | list[tuple[int, ...]],
                elem: ir.Type | None = None) -> Buf:
        """A scratch buffer on `device` (of `elem`, default the element
        type); a list of sizes (or of shapes) gives a part."""
        if isinstance(size, list):
            return [self.scratch_buffer(device, s, elem) for s in size]
        return self.scratch_buffer(device, size, elem)

    def scratch_buffer(self, device: int, size: int | tuple[int, ...], elem: ir.Type | None = None) -> ir.Value:
        """One scratch buffer of `size` elements on `device`, or of that
        shape (the sizes of a strided view it stands for)."""
        elem = elem or self.elem
        if isinstance(size, tuple) and len(size) > 1:
            return builders.alloc(ir.MemRefType.get(list(size), elem, None, device_attr(device)))
        length = size[0] if isinstance(size, tuple) else size
        buf = builders.alloc(flat_type(elem, length, device))
        self._len[buf] = length
        return buf

    def hop(self, part: Buf, device: int, size: int | list[tuple[int, ...]], own: Callable[[], Buf],
            last: bool, out: Buf | None = None, deps: Iterable[Dep] = ()) -> tuple[Buf, ir.Value | Tokens]:
        """One hop of a chain of partial results: `part` (a partial, or the
        first contribution; `size` as scratch() takes it) is copied to
        `device`, which combines its own contribution `own()` (its view
        made after the copy, as the op order runs) into it: into a partial
        of `self.partial` (f32 for f16 and bf16 under the canonical
        contract: the chain rounds once, at its end), or, at the `last`
        hop, into `out` (None: a scratch of the element type). Returns
        (where the result is, its token)."""
        first = part[0] if isinstance(part, list) else part
        elem = ir.MemRefType(first.type).element_type
        r = self.scratch(device, size, elem)
        tok = self.copy(part, r, deps)
        want = self.elem if last else self.partial
        dst = out if last and out is not None else r if elem == want else self.scratch(device, size, want)
        return dst, self.combine(r, [own()], dst, [tok])

    # -- async ops, tracked so the final join names only terminal tokens ----
    def _deps(self, deps: Iterable[Dep], piece: int | None = None, pieces: int | None = None) -> list[ir.Value]:
        flat = list(_flatten(deps, piece, pieces))
        return flat if flat else list(self.entry)

    def _track(self, tok: ir.Value, deps: list[ir.Value]) -> ir.Value:
        self.consumed.update(deps)
        self.tokens.append(tok)
        return tok

    @overload
    def copy(self, src: ir.Value, dst: ir.Value, deps: Iterable[Dep] = ()) -> ir.Value: ...
    @overload
    def copy(self, src: list[ir.Value], dst: list[ir.Value], deps: Iterable[Dep] = ()) -> Tokens: ...

    def copy(self, src: Buf, dst: Buf, deps: Iterable[Dep] = ()) -> ir.Value | Tokens:
        """One copy, or one per piece of two parts (Tokens)."""
        if isinstance(src, list):
            return Tokens(self.copy_one(s, d, self._deps(deps, p, len(src)))
                          for p, (s, d) in enumerate(zip(src, dst)))
        return self.copy_one(src, cast(ir.Value, dst), deps)

    def copy_one(self, src: ir.Value, dst: ir.Value, deps: Iterable[Dep] = ()) -> ir.Value:
        """One copy of a buffer."""
        tokens = self._deps(deps)
        return self._track(builders.copy(src, dst, tokens), tokens)

    @overload
    def combine(self, lhs: ir.Value, rhs: Sequence[ir.Value], out: ir.Value, deps: Iterable[Dep] = ()) -> ir.Value: ...
    @overload
    def combine(self, lhs: list[ir.Value], rhs: Sequence[list[ir.Value]], out: list[ir.Value],
                deps: Iterable[Dep] = ()) -> Tokens: ...

    def combine(self, lhs: Buf, rhs: Sequence[Buf], out: Buf, deps: Iterable[Dep] = ()) -> ir.Value | Tokens:
        """out = lhs (+) rhs[0] (+) ...; on parts, one combine per piece."""
        if isinstance(out, list):
            lhs_, rhs_ = cast(list[ir.Value], lhs), cast(Sequence[list[ir.Value]], rhs)  # parts alike
            return Tokens(self.combine_one(lhs_[p], [r[p] for r in rhs_], out[p], self._deps(deps, p, len(out)))
                          for p in range(len(out)))
        return self.combine_one(cast(ir.Value, lhs), cast(Sequence[ir.Value], rhs), out, deps)

    def in_order(self, operands: Sequence[Buf], out: Buf, deps: Iterable[Dep] = ()) -> ir.Value | Tokens:
        """One combine of `operands`, the contributions in device order
        x_0 .. x_{N-1} (a buffer or part each): every device that runs it
        gets the same bits. Its rhs group is cast to one type (IRDL)."""
        if isinstance(out, list):
            parts = cast(Sequence[list[ir.Value]], operands)
            return Tokens(self.combine_one(parts[0][p], _one_type([r[p] for r in parts[1:]]), out[p],
                                           self._deps(deps, p, len(out)))
                          for p in range(len(out)))
        bufs = cast(Sequence[ir.Value], operands)
        return self.combine_one(bufs[0], _one_type(list(bufs[1:])), out, deps)

    def combine_one(self, lhs: ir.Value, rhs: Sequence[ir.Value], out: ir.Value, deps: Iterable[Dep] = ()) -> ir.Value:
        """One combine of buffers."""
        tokens = self._deps(deps)
        kind = cast(str, self.kind)  # a collective that combines has a kind
        return self._track(builders.combine(lhs, rhs, out, kind, tokens), tokens)

    def finish(self) -> ir.Value:
        """A join of the tokens nothing else waits for (the collective's
        deps when it emitted nothing)."""
        terminal = [t for t in self.tokens if t not in self.consumed]
        return builders.join(terminal if self.tokens else self.entry)


def claim(c: CollectiveOp, final: ir.Value) -> ir.Operation:
    """The coll.implements of collective `c` (an ir/ops.py view) over the
    program ending in `final`: what that program computes, with the
    collective's own attributes, for coll-check-semantics; a float sum or
    prod under the canonical order claims that order as well."""
    op = builders.implements(
        c.inputs, c.outputs, final, c.op.name[len("coll."):], kind=c.kind if c.HAS_KIND else None,
        devices=c.devices, to_device=getattr(c, "to_device", None), root=c.root,
        axes=cast(list[int], c.axes) or None,  # integers: the verifier checked them
        **c.arrays)
    op.attributes[Implements.LOWERED] = ir.UnitAttr.get()  # of this op, not of its function
    # The order contract is claimed too (ir/ops.py ORDERS) where it fixes the
    # bits: a max, or an integer sum, lowers alike under either contract.
    elem = str(ir.MemRefType(c.inputs[0].type).element_type) if c.inputs else ""
    if c.HAS_KIND and c.order == CANONICAL and elem in ELEMENTS and order_matters(c.kind, elem):
        op.attributes["order"] = ir.StringAttr.get(CANONICAL)
    return op


def replace(op: ir.Operation, final: ir.Value) -> None:
    """Replaces collective `op` by its lowered program's token `final`."""
    op.result.replace_all_uses_with(final)
    op.erase()


# -- blocks along an axis ---------------------------------------------------
def block_pairs(src: spec.Block, k: int, dst: spec.Block, m: int) -> tuple[list[spec.View], list[spec.View]]:
    """([view in the source], [view in the target]) of block k of `src`
    and block m of `dst` (each (shape, axis, n), collectives/spec.py
    `strided_pair`): one piece each, a strided view of equal sizes, or
    none when the blocks are empty; O(1) whatever the shape."""
    pair = spec.strided_pair(src, k, dst, m)
    return ([pair[0]], [pair[1]]) if pair is not None else ([], [])


def require_memref_form(op: ir.Operation) -> None:
    """Refuses a collective in the tensor form: the explicit lowering needs
    buffers (coll-bufferize and one-shot-bufferize come first)."""
    if cast(CollectiveOp, view(op)).is_tensor:
        raise PassError(f"'{op.name}' is in the tensor form; expected memrefs: bufferize it first "
                        "(coll-bufferize,one-shot-bufferize{bufferize-function-boundaries})", op.location)


def require_global_view(op: ir.Operation) -> None:
    """Refuses a collective of an SPMD function (one rank's buffers): the
    explicit lowering needs every device's buffers."""
    f = op.parent
    while f is not None and f.name != "func.func":
        f = f.parent
    if f is not None and SPMD_RANKS in f.attributes:
        ranks = ir.IntegerAttr(f.attributes[SPMD_RANKS]).value
        raise PassError(f"'{op.name}' is in an SPMD function ({SPMD_RANKS} = {ranks}): "
                        "expand it into its global view first (coll-spmd-to-global), or lower it per rank "
                        "(coll-spmd-to-mpi)", op.location)

