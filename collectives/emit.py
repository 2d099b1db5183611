"""What every collective's lowering shares: placed flat views of its
buffers, slices, scratch, copies and combines with token tracking, and the
final join (`finish`). The strategies (collectives/*.py) are written in
these.

A "part" is a list of memref pieces (slices) that together hold one block
of data; copy and combine accept parts as well as single buffers and emit
one op per piece (a block along a non-leading axis is several contiguous
runs). Every op that waits for nothing else waits for the collective's own
`deps`, so a collective starts only after them.
"""
from mlir import ir
from mlir.dialects import memref

from ..core.errors import PassError
from ..ir import builders
from ..ir.ops import Implements, view
from .base import buffer_ops
from ..ir.kinds import ELEMENTS
from ..ir.types import device_of, flat_type, numel as numel_of
from ..ir.verifier import SPMD_RANKS
from ..ir.views import same_memory
from . import spec


class Tokens(list):
    """The tokens of an op on a part, one per piece: an op on piece p of
    another part of as many pieces waits only for piece p."""


def _flatten(deps, piece=None, pieces=None):
    for d in deps:
        if isinstance(d, Tokens) and piece is not None and len(d) == pieces:
            yield from _flatten([d[piece]])
        elif isinstance(d, (list, tuple)):
            yield from _flatten(d, piece, pieces)
        elif d is not None:
            yield d


def _offset(type_):
    strides, offset = ir.MemRefType(type_).get_strides_and_offset()
    return offset


class Emitter:
    """Emits the explicit program of one collective `op` before it."""

    def __init__(self, op) -> None:
        c = view(op)
        self.op, self.c = op, c
        self.kind = c.kind if c.HAS_KIND else None
        self.devices = c.devices
        self.n = len(self.devices)
        self.in_type = ir.MemRefType(c.inputs[0].type)
        self.out_type = ir.MemRefType(c.outputs[0].type)
        self.elem = self.in_type.element_type
        self.numel = numel_of(self.in_type)
        self.elem_bytes = ELEMENTS[str(self.elem)].bytes  # chunk boundaries follow it
        self.entry = list(c.deps)
        self.tokens = []       # every token emitted, in order
        self.consumed = set()  # tokens some emitted op waits for
        self._flat, self._slices, self._len, self._where = {}, {}, {}, {}
        self.x = [self.flat(v, d) for v, d in zip(c.inputs, c.input_devices)]
        # In place is the same memory, not the same value: an output that is
        # a view of its input moving nothing (a memref.cast) is that input,
        # so every strategy sees `y[j] is x[i]` (the verifier refuses a
        # partial overlap).
        self.y = [next((x for x, v2, d2 in zip(self.x, c.inputs, c.input_devices)
                        if d2 == d and same_memory(v, v2)), None) or self.flat(v, d)
                  for v, d in zip(c.outputs, c.output_devices)]

    # -- views ---------------------------------------------------------------
    def flat(self, value, device):
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
        off = _offset(mt) if size else 0
        flat = flat_type(self.elem, size, device, offset=off if off else None)
        if rank == 0:
            v = memref.expand_shape(flat, v, [], [], [1])
        elif rank > 1:
            v = memref.collapse_shape(flat, v, [list(range(rank))])
        self._flat[key] = v
        self._len[v] = size
        return v

    def slice(self, buf, start, size):
        """buf[start:start+size] as a memref.subview (one per region)."""
        if start == 0 and size == self._len.get(buf):
            return buf
        key = (buf, start, size)
        if key not in self._slices:
            where = self._where.get(buf)
            if where is None:  # (offset, device) of the few buffers sliced
                t = buf.type
                where = self._where[buf] = (_offset(t), device_of(t))
            rt = flat_type(self.elem, size, where[1], offset=where[0] + start)
            self._slices[key] = builders.subview(buf, [start], [size], rt)
        return self._slices[key]

    def pieces(self, buf, region):
        """The part of `buf` that `region` ([(start, size)]) names."""
        return [self.slice(buf, s, n) for s, n in region]

    def scratch(self, device, size):
        """A scratch buffer on `device`; a list of sizes gives a part."""
        if isinstance(size, list):
            return [self.scratch(device, s) for s in size]
        buf = builders.alloc(flat_type(self.elem, size, device))
        self._len[buf] = size
        return buf

    # -- async ops, tracked so the final join names only terminal tokens ----
    def _deps(self, deps, piece=None, pieces=None):
        deps = list(_flatten(deps, piece, pieces))
        return deps if deps else list(self.entry)

    def _track(self, tok, deps):
        self.consumed.update(deps)
        self.tokens.append(tok)
        return tok

    def copy(self, src, dst, deps=()):
        """One copy, or one per piece of two parts (Tokens)."""
        if isinstance(src, list):
            return Tokens(self.copy(s, d, self._deps(deps, p, len(src)))
                          for p, (s, d) in enumerate(zip(src, dst)))
        deps = self._deps(deps)
        return self._track(builders.copy(src, dst, deps), deps)

    def combine(self, lhs, rhs, out, deps=()):
        """out = lhs (+) rhs[0] (+) ...; on parts, one combine per piece."""
        if isinstance(out, list):
            return Tokens(self.combine(lhs[p], [r[p] for r in rhs], out[p], self._deps(deps, p, len(out)))
                          for p in range(len(out)))
        deps = self._deps(deps)
        return self._track(builders.combine(lhs, rhs, out, self.kind, deps), deps)

    def finish(self):
        """A join of the tokens nothing else waits for (the collective's
        deps when it emitted nothing)."""
        terminal = [t for t in self.tokens if t not in self.consumed]
        return builders.join(terminal if self.tokens else self.entry)


def claim(c, final):
    """The coll.implements of collective `c` (an ir/ops.py view) over the
    program ending in `final`: what that program computes, with the
    collective's own attributes, for coll-check-semantics."""
    op = builders.implements(
        c.inputs, c.outputs, final, c.op.name[len("coll."):], kind=c.kind if c.HAS_KIND else None,
        devices=c.devices, to_device=getattr(c, "to_device", None), root=c.root, axes=c.axes or None,
        **c.arrays)
    op.attributes[Implements.LOWERED] = ir.UnitAttr.get()  # of this op, not of its function
    return op


def replace(op, final) -> None:
    """Replaces collective `op` by its lowered program's token `final`."""
    op.result.replace_all_uses_with(final)
    op.erase()


# -- blocks along an axis ---------------------------------------------------
def block_pairs(src, dst):
    """([(start, size)] in the source, the same in the target) for two run
    lists of one length (collectives/spec.py `runs`): the longest pieces
    contiguous in both, O(pieces) time and memory whatever the shape."""
    pairs = list(spec.aligned([src, dst]))
    return [(p[0], size) for p, size in pairs], [(p[1], size) for p, size in pairs]


def blocked_estimate(n, pieces):
    """estimated_ops of a blocked collective (ir/ops.py): at most N^2
    blocks of `pieces` pieces each (spec.segment_count, the decomposition
    block_pairs makes), a few ops a piece."""
    return 4 * n * n * max(pieces, 1) + buffer_ops(n), f"({n} devices, {pieces} pieces per block)", \
        "a leading axis"


def require_memref_form(op):
    """Refuses a collective in the tensor form: the explicit lowering needs
    buffers (coll-bufferize and one-shot-bufferize come first)."""
    if view(op).is_tensor:
        raise PassError(f"'{op.name}' is in the tensor form; expected memrefs: bufferize it first "
                        "(coll-bufferize,one-shot-bufferize{bufferize-function-boundaries})", op.location)


def require_global_view(op):
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

