"""What host ops read and write, and where a memref value points.

The memory-effect analysis that coll-check-order (passes/check_order.py)
orders, and that the lowering and the runtimes borrow: `effects` /
`flat_effects` / `host_effects` give the buffers an op reads and writes
(exactly, as a box of elements, or only as somewhere in a view);
`Resolver` follows a memref value through the view ops (ir/views.py) to its
root buffer (a function argument, an allocation, a global by name) and its
strided layout there; `touch` / `view_uses` say what an op does with one
value and where a buffer is used through its views.
"""
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from mlir import ir

from ..ir.ops import COLLECTIVE_NAMES, SLOT_ATTR, view
from ..ir.structured import is_memref, read_operands, structured
from ..ir.types import memo_table
from ..ir.views import BRANCH_OPS, VIEW_OPS, branch_yields, constant_int, defining_op, forwarded, view_op

# A root buffer: a function argument, an allocation, a global by name ("@g"),
# or a slot of a split function's table of buffers ("slot 3", SLOT_ATTR).
Root = ir.Value | str
# (value, (start indices, extents) or None: somewhere in the view, exact).
Access = tuple[ir.Value, tuple[list[int], list[int]] | None, bool]
# (what an op reads, what it writes).
Effects = tuple[list[Access], list[Access]]

UNWRITTEN_ROOTS = ("coll.alloc", "memref.alloc", "memref.alloca")
ROOT_OPS = UNWRITTEN_ROOTS + ("memref.get_global",)
ASYNC_OPS = ("coll.copy", "coll.combine") + tuple(COLLECTIVE_NAMES)
# Ops whose memref operands are not memory accesses.
NO_ACCESS = ("memref.dim", "memref.rank", "memref.extract_strided_metadata",
             "memref.extract_aligned_pointer_as_index", "memref.prefetch")
# Accesses known only to lie somewhere in their view.
WHOLE_VIEW = ("vector.transfer_read", "vector.transfer_write", "vector.maskedload",
              "vector.maskedstore", "vector.gather", "vector.scatter", "vector.expandload",
              "vector.compressstore", "affine.load", "affine.store", "affine.vector_load",
              "affine.vector_store")
WHOLE_VIEW_WRITES = ("vector.transfer_write", "vector.maskedstore", "vector.scatter", "vector.compressstore",
                     "affine.store", "affine.vector_store")  # the others of WHOLE_VIEW read


class Unresolved(Exception):
    def __init__(self, message: str, op: ir.Operation | None = None) -> None:
        super().__init__(message)
        self.op = op  # the view op it stopped at, for a note


# -- where a memref value points ------------------------------------------------
@dataclass
class Layout:
    """Element (shape, strides, offset) of a view, relative to an aligned
    pointer `shift` bytes into `root`, with `esize` bytes per element."""
    root: Root
    shift: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int
    esize: int


_ESIZE: dict[ir.Type, int] = memo_table({})


def element_size(t: ir.Type) -> int:
    got = _ESIZE.get(t)
    if got is None:
        got = _ESIZE[t] = _esize_of(t)
    return got


def _esize_of(t: ir.Type) -> int:
    if isinstance(t, ir.IndexType) or str(t) == "index":
        return 8
    for cls in (ir.IntegerType, ir.FloatType):
        try:
            return max(1, (cls(t).width + 7) // 8)
        except (ValueError, TypeError):
            pass
    try:
        vt = ir.VectorType(t)
        n = 1
        for d in vt.shape:
            n *= d
        return n * element_size(vt.element_type)
    except (ValueError, TypeError):
        pass
    try:
        return 2 * element_size(ir.ComplexType(t).element_type)
    except (ValueError, TypeError):
        raise Unresolved(f"elements of type {t} have no known size") from None


DYN: tuple[int, int] | None = None


def _dyn() -> tuple[int, int]:
    """(dynamic stride or offset, dynamic size): the bindings' markers, read once."""
    global DYN
    if DYN is None:
        DYN = (ir.ShapedType.get_dynamic_stride_or_offset(), ir.ShapedType.get_dynamic_size())
    return DYN


def _static(mt: ir.MemRefType) -> tuple[tuple[int, ...], tuple[int, ...], int] | None:
    """(shape, strides, offset) of a memref type, or None when any is dynamic."""
    dyn = _dyn()
    shape = tuple(mt.shape)
    try:
        strides, offset = mt.get_strides_and_offset()
    except (ValueError, TypeError):
        return None
    if offset == dyn[0] or dyn[0] in strides or any(d < 0 or d == dyn[1] for d in shape):
        return None
    return shape, tuple(strides), offset


def _mixed(op: ir.Operation, name: str, dynamic_values: Iterable[ir.Value], marker: int) -> list[int] | None:
    """Static attribute `name` with its dynamic entries replaced by the
    constants they are, or None when one is not a constant."""
    out: list[int] = []
    dyn = iter(dynamic_values)
    for x in ir.DenseI64ArrayAttr(op.attributes[name]):
        if x == marker:
            known = constant_int(next(dyn))
            if known is None:
                return None
            x = known
        out.append(x)
    return out


def _segments(op: ir.Operation) -> list[list[ir.Value]]:
    sizes = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    operands, start = list(op.operands), 0
    out: list[list[ir.Value]] = []
    for s in sizes:
        out.append(operands[start:start + s])
        start += s
    return out


class Resolver:
    """Layouts of memref values, cached per value."""

    def __init__(self, func_op: ir.Operation) -> None:
        blocks = list(func_op.regions[0].blocks)
        self.entry_args: set[ir.Value] = set(blocks[0].arguments) if blocks else set()
        self.cache: dict[ir.Value, Layout] = {}

    def layout(self, v: ir.Value) -> Layout:
        got = self.cache.get(v)
        if got is None:
            got = self.cache[v] = self._layout(v)
        return got

    def layouts(self, v: ir.Value) -> list[Layout]:
        """The layouts `v` may have: its layout, or where it is (a view of)
        a choice of buffers (arith.select, the result of scf.if,
        scf.index_switch or scf.execute_region), one per buffer it may be
        (the order check takes an access through it as a possible access
        of each)."""
        try:
            return [self.layout(v)]
        except Unresolved:
            op = view_op(v)
            if op is not None:
                return [self._view(v, op, src) for src in self.layouts(op.operands[0])]
            choice = defining_op(v)
            if choice is not None and choice.name == "arith.select":
                return self.layouts(choice.operands[1]) + self.layouts(choice.operands[2])
            if choice is not None and choice.name in BRANCH_OPS:
                return [lay for y in branch_yields(choice, ir.OpResult(v).result_number) for lay in self.layouts(y)]
            raise

    def _layout(self, v: ir.Value) -> Layout:
        op = view_op(v)
        if op is None:
            mt = ir.MemRefType(v.type)
            return Layout(self._root(v), 0, *self._need(_static(mt), v), element_size(mt.element_type))
        return self._view(v, op, self.layout(op.operands[0]))

    def _view(self, v: ir.Value, op: ir.Operation, src: Layout) -> Layout:
        """The layout of view `v`, made by `op` of a buffer laid out as `src`."""
        mt = ir.MemRefType(v.type)
        esize = element_size(mt.element_type)
        static = _static(mt)
        name = op.name
        if name == "memref.view":
            # The byte shift is an operand: a new aligned pointer.
            shift = constant_int(op.operands[1])
            if shift is None:
                raise Unresolved("the byte shift of this memref.view is not a constant", op)
            if src.strides not in ((1,), ()) or src.esize != 1:
                raise Unresolved(f"memref.view of {op.operands[0].type}; expected a contiguous i8 buffer", op)
            shape = list(mt.shape)
            sizes = iter(op.operands[2:])
            for k, d in enumerate(shape):
                if d == _dyn()[1]:
                    size = constant_int(next(sizes))
                    if size is None:
                        raise Unresolved("a size of this memref.view is not a constant", op)
                    shape[k] = size
            strides: list[int] = []
            acc = 1
            for d in reversed(shape):
                strides.append(acc)
                acc *= d
            return Layout(src.root, src.shift + src.offset + shift, tuple(shape),
                          tuple(reversed(strides)), 0, esize)
        if static is not None:
            # Every other view keeps its source's aligned pointer, and the
            # verifier has checked its type against its operands.
            return Layout(src.root, src.shift, *static, esize)
        if name in ("memref.cast", "memref.memory_space_cast", "memref.assume_alignment"):
            return src
        if name in ("memref.subview", "memref.reinterpret_cast"):
            _, offs, size_values, stride_values = _segments(op)
            dso, dsz = ir.ShapedType.get_dynamic_stride_or_offset(), ir.ShapedType.get_dynamic_size()
            o = _mixed(op, "static_offsets", offs, dso)
            n = _mixed(op, "static_sizes", size_values, dsz)
            s = _mixed(op, "static_strides", stride_values, dso)
            if o is not None and n is not None and s is not None:
                if name == "memref.reinterpret_cast":
                    return Layout(src.root, src.shift, tuple(n), tuple(s), o[0], esize)
                offset = src.offset + sum(a * b for a, b in zip(o, src.strides))
                dims = [(k, st * step) for k, st, step in zip(n, src.strides, s)]
                dims = self._drop_unit_dims(dims, list(mt.shape))
                return Layout(src.root, src.shift, tuple(k for k, _ in dims),
                              tuple(st for _, st in dims), offset, esize)
        if name == "memref.transpose":
            perm = ir.AffineMapAttr(op.attributes["permutation"]).value
            idx = [ir.AffineDimExpr(r).position for r in perm.results]
            return Layout(src.root, src.shift, tuple(src.shape[i] for i in idx),
                          tuple(src.strides[i] for i in idx), src.offset, esize)
        raise Unresolved(f"{v.type} has a dynamic offset, stride or size; expected static ones")

    @staticmethod
    def _drop_unit_dims(dims: list[tuple[int, int]], result_shape: list[int]) -> list[tuple[int, int]]:
        """A rank-reducing subview drops unit dimensions: keep each dim that
        lines up with the next result dim, unless the non-unit dims after it
        need that place (unit dims are interchangeable, so this is exact)."""
        out: list[tuple[int, int]] = []
        j = 0
        for idx, (k, s) in enumerate(dims):
            later = sum(1 for n, _ in dims[idx + 1:] if n != 1)
            fits = j < len(result_shape) and result_shape[j] in (k, _dyn()[1])
            if k != 1 or (fits and len(result_shape) - j - 1 >= later):
                out.append((k, s))
                j += 1
        if len(out) != len(result_shape):
            raise Unresolved(f"cannot line up a rank-reducing subview with {result_shape}")
        return out

    def _need(self, static: tuple[tuple[int, ...], tuple[int, ...], int] | None,
              v: ir.Value) -> tuple[tuple[int, ...], tuple[int, ...], int]:
        if static is None:
            raise Unresolved(f"{v.type} has a dynamic offset, stride or size; expected static ones")
        return static

    def _root(self, v: ir.Value) -> Root:
        if isinstance(v, ir.BlockArgument):
            if v in self.entry_args:
                return v
            raise Unresolved(f"{buffer_name(v)} is a block argument of a nested region; "
                             "expected buffers defined at the top level of the function")
        op = v.owner.operation  # not a block argument: an op (or its view)
        if op.name == "memref.get_global":
            return "@" + ir.FlatSymbolRefAttr(op.attributes["name"]).value
        if op.name == "builtin.unrealized_conversion_cast" and SLOT_ATTR in op.attributes:
            return f"slot {ir.IntegerAttr(op.attributes[SLOT_ATTR]).value}"
        if op.name in ROOT_OPS:
            return v
        raise Unresolved(f"cannot tell which buffer {buffer_name(v)} aliases: it comes from '{op.name}'; "
                         "expected a function argument, coll.alloc, memref.alloc/alloca or "
                         "memref.get_global, seen through view ops")


def buffer_name(v: Root) -> str:
    if isinstance(v, str):
        return v
    try:
        return v.get_name()
    except Exception:  # a name is only for the message
        return "<buffer>"



# -- what each op reads and writes ---------------------------------------------
def _indices(values: Iterable[ir.Value]) -> list[int] | None:
    out = [constant_int(v) for v in values]
    return None if None in out else [i for i in out if i is not None]


def _linalg(op: ir.Operation) -> Effects | None:
    """(reads, writes) of a linalg op on buffers, from its destination-passing
    structure (ir/structured.py): the inputs and inits whose values its body
    uses read; its inits written. None for a linalg op without that
    structure."""
    s = structured(op)
    if s is None:
        return None
    reads: list[Access] = [(v, None, True) for v in read_operands(s) if is_memref(v)]
    writes: list[Access] = [(v, None, True) for v in s.inits if is_memref(v)]
    return reads, writes


def effects(op: ir.Operation) -> Effects | None:
    """([(value, (start, extents) or None, exact)] read, same written) of a
    host op, or None when it is not known."""
    name, operands = op.name, list(op.operands)
    if name == "memref.load":
        return [_point(operands[0], operands[1:])], []
    if name == "memref.store":
        return [], [_point(operands[1], operands[2:])]
    if name == "memref.copy":
        return [(operands[0], None, True)], [(operands[1], None, True)]
    if name in ("memref.atomic_rmw", "memref.generic_atomic_rmw"):
        base = 1 if name == "memref.atomic_rmw" else 0
        a = _point(operands[base], operands[base + 1:])
        return [a], [a]
    if name == "memref.dealloc":
        return [], [(operands[0], None, False)]
    if name in ("vector.load", "vector.store"):
        base = 0 if name == "vector.load" else 1
        vshape = list(ir.VectorType((op.results[0] if base == 0 else operands[0]).type).shape)
        a = _point(operands[base], operands[base + 1:], vshape)
        return ([a], []) if base == 0 else ([], [a])
    if name in WHOLE_VIEW:
        mems: list[Access] = [(v, None, False) for v in operands if isinstance(v.type, ir.MemRefType)]
        return ([], mems) if name in WHOLE_VIEW_WRITES else (mems, [])
    if name.startswith("linalg."):
        return _linalg(op)
    if name in ("func.call", "func.call_indirect"):
        mems = [(v, None, False) for v in operands if isinstance(v.type, ir.MemRefType)]
        return mems, list(mems)
    return None


def flat_effects(op: ir.Operation) -> Effects | None:
    """(reads, writes) as `effects` gives them of a host op without regions
    that takes no token: ([], []) for one that touches no memory (a view, an
    allocation, an op without memref operands); None when its accesses are
    not known."""
    name = op.name
    if name == "memref.reshape":  # a view that also reads its shape operand
        return [(op.operands[1], None, True)], []
    if name in VIEW_OPS or name in ROOT_OPS or name in NO_ACCESS or name in ("arith.select", "scf.yield"):
        return [], []  # (they hand a buffer on: its users' accesses say which may be touched)
    if not any(isinstance(v.type, ir.MemRefType) for v in op.operands):
        return [], []
    return effects(op)


def host_effects(op: ir.Operation) -> Effects | None:
    """(reads, writes) of a host op, as coll-check-order orders it: its
    flat effects, or for an op with regions (a loop, a branch) the union of
    what its nested ops may touch, none exactly (a nested coll op: its
    buffers). None when some access is not known. Shared with
    coll-check-semantics, which follows what host ops write."""
    if op.name.startswith("linalg.") and len(op.regions):
        return linalg_effects(op)
    if not len(op.regions) or op.name in VIEW_OPS:
        return flat_effects(op)

    def nested(inner: ir.Operation) -> Effects | None:
        if inner.name.startswith("coll."):
            v = view(inner)
            return ([(x, None, False) for x in v.reads if isinstance(x.type, ir.MemRefType)],
                    [(x, None, False) for x in v.writes if isinstance(x.type, ir.MemRefType)]) \
                if v is not None else ([], [])
        if len(inner.regions) and not inner.name.startswith("linalg."):
            return [], []  # its nested ops are visited one by one
        return flat_effects(inner)
    return _inside(op, nested, [], [])


def linalg_effects(op: ir.Operation) -> Effects | None:
    """A linalg op's operands, and what its body loads or stores besides
    (a gather's body reads a buffer by index), somewhere in its view: a
    body's load of a buffer an unordered copy wrote was a missed race."""
    eff = flat_effects(op)
    if eff is None:
        return None

    def nested(inner: ir.Operation) -> Effects | None:
        if not any(isinstance(v.type, ir.MemRefType) for v in inner.operands):
            return [], []
        return flat_effects(inner)
    return _inside(op, nested, list(eff[0]), list(eff[1]))


def _inside(op: ir.Operation, effects_of: Callable[[ir.Operation], Effects | None],
            reads: list[Access], writes: list[Access]) -> Effects | None:
    """`reads` and `writes` with what each op nested in `op` touches
    (`effects_of`: None when not known), somewhere in its view; None when
    some access is not known."""
    unknown = False

    def visit(inner: ir.Operation) -> ir.WalkResult:
        nonlocal unknown
        if inner == op:
            return ir.WalkResult.ADVANCE
        eff = effects_of(inner)
        if eff is None:
            unknown = True
            return ir.WalkResult.INTERRUPT
        reads.extend((v, None, False) for v, _, _ in eff[0])
        writes.extend((v, None, False) for v, _, _ in eff[1])
        return ir.WalkResult.ADVANCE
    op.walk(visit, ir.WalkOrder.PRE_ORDER)
    return None if unknown else (reads, writes)


def _point(mem: ir.Value, index_values: Sequence[ir.Value], vshape: Sequence[int] = ()) -> Access:
    """The box a load or store at `index_values` touches: one element, or
    the trailing `vshape` of a vector; the whole view when not constant."""
    idx = _indices(index_values)
    if idx is None:
        return (mem, None, False)
    rank = len(idx)
    ext = [1] * (rank - len(vshape)) + list(vshape)
    return (mem, (idx, ext), True)



def view_uses(value: ir.Value, _seen: list[ir.Value] | None = None) -> list[tuple[ir.Operation, ir.Value]]:
    """[(op, operand)] of `value`, of the views of it (ir/views.py) and of
    the values that may be it (a loop's iteration argument and result, an
    scf.if's or arith.select's result: ir/views.py forwarded)."""
    seen = [value] if _seen is None else _seen
    out: list[tuple[ir.Operation, ir.Value]] = []
    for use in value.uses:
        op = use.owner.operation
        k = use.operand_number
        carried = [op.results[0]] if op.name in VIEW_OPS and k == 0 and op.results else forwarded(op, k)
        for c in carried:
            if not any(c == s for s in seen):
                seen.append(c)
                out += view_uses(c, seen)
        out.append((op, op.operands[k]))
    return out


# Ops through which a buffer's pointer escapes: what is done with it is not known.
ESCAPES = ("memref.extract_aligned_pointer_as_index",)


def touch(op: ir.Operation, value: ir.Value) -> tuple[bool, bool] | None:
    """(reads, writes) of `value` by `op`: what its effects (or its coll
    role) say; None when that is not known (its pointer escapes, an op
    whose effects are not known)."""
    if op.name in ESCAPES:
        return None
    if any(forwarded(op, k) for k, x in enumerate(op.operands) if x == value):  # (hands it on: view_uses follows)
        return False, False
    if op.name in VIEW_OPS or op.name in NO_ACCESS or op.name == "func.return":
        return op.name == "memref.reshape" and op.operands[1] == value, False
    v = view(op)
    if v is not None:
        return any(x == value for x in v.reads), any(x == value for x in v.writes)
    eff = flat_effects(op) if not len(op.regions) or op.name.startswith("linalg.") else None
    if eff is None:
        return None
    return any(x[0] == value for x in eff[0]), any(x[0] == value for x in eff[1])

