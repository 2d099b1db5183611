"""coll-check-order: a happens-before check of the explicit level.

Per function, the ops of the entry block are visited in program order, which
is a topological order of the token graph (a token is an SSA value, so its
producer comes first). Each op that orders or touches memory gets a node
number and the set of nodes ordered before it, as a Python int bitset:

- coll.copy, coll.combine (and a func.call that returns a token) run
  asynchronously: after the tokens they take and after what the host had
  waited for when it issued them;
- coll.wait blocks the host, and so does every other op that touches memory
  (memref.load/store/copy, vector.load/store, linalg.*, func.call, loops
  around them): it runs when the host reaches it, after what the host had
  waited for, and everything issued later is ordered after it.

Each buffer operand is followed through the view ops (ir/views.py) to its
root buffer and becomes the exact set of bytes it covers there, a strided
box (analysis/regions.py): a strided subview touches its own elements, not
the hull between them. Root buffers (function arguments, allocations,
globals by name) are taken not to alias one another, as the lowering and
the runtimes create them. The check reports:

- a read of bytes that an unordered op writes (RAW race), a write of bytes
  an unordered op reads (WAR) or writes (WAW); a copy that reads what it
  writes, or a combine whose output partly overlaps an input;
- a read of scratch (coll.alloc, memref.alloc/alloca) that the writes
  ordered before it do not cover, and of an argument that the function's
  coll.implements claims as an output but not as an input (it holds
  nothing yet); other arguments and globals are initialised memory. Accesses known only as "somewhere in this view" (non-
  constant indices, ops in loops, calls, masked ops) count for races but
  neither cover scratch nor are checked as reads of it;
- a copy or combine that no coll.wait (or returned token) orders: it could
  still be running when the function returns.

What it cannot follow (a dynamic offset or a memref.view with a non-
constant shift in a coll op's buffer, a token passed to a call or received
as an argument, a buffer of unknown origin, an op with memref operands whose
accesses it does not know) is a located error, never a silent pass; a host
op whose region is unknown may touch all of its root buffer.
"""
from dataclasses import dataclass, field

from mlir import ir

from ..analysis.regions import box, covered, overlaps
from ..core.errors import PassError
from ..core.registry import register
from ..ir.ops import COLLECTIVES, Implements, view
from ..ir.types import device_of, token_type
from ..ir.views import VIEW_OPS, root_of, view_op
from ..ir.walk import find_ops
from ..collectives.emit import require_memref_form

UNWRITTEN_ROOTS = ("coll.alloc", "memref.alloc", "memref.alloca")
ROOT_OPS = UNWRITTEN_ROOTS + ("memref.get_global",)
ASYNC_OPS = ("coll.copy", "coll.combine") + tuple(COLLECTIVES)
# Ops whose memref operands are not memory accesses.
NO_ACCESS = ("memref.dim", "memref.rank", "memref.extract_strided_metadata",
             "memref.extract_aligned_pointer_as_index", "memref.prefetch")
# Accesses known only to lie somewhere in their view.
WHOLE_VIEW = ("vector.transfer_read", "vector.transfer_write", "vector.maskedload",
              "vector.maskedstore", "vector.gather", "vector.scatter", "vector.expandload",
              "vector.compressstore", "affine.load", "affine.store", "affine.vector_load",
              "affine.vector_store")
MAX_FINDINGS = 50  # per function: one broken edge can make many ops wrong
MAX_NODES = 100_000  # bitsets cost up to nodes^2 / 8 bytes at worst


@dataclass
class Finding:
    location: object
    message: str
    notes: list = field(default_factory=list)  # [(location, message)]


class OrderError(PassError):
    """Every finding, each reported as an error with its notes."""

    def __init__(self, findings):
        super().__init__(findings[0].message, findings[0].location,
                         findings=[(f.location, f.message, f.notes) for f in findings])


class Unresolved(Exception):
    def __init__(self, message, op=None):
        super().__init__(message)
        self.op = op  # the view op it stopped at, for a note


# -- where a memref value points ------------------------------------------------
@dataclass
class Layout:
    """Element (shape, strides, offset) of a view, relative to an aligned
    pointer `shift` bytes into `root`, with `esize` bytes per element."""
    root: object
    shift: int
    shape: tuple
    strides: tuple
    offset: int
    esize: int


_ESIZE = {}


def _esize(t):
    got = _ESIZE.get(t)
    if got is None:
        got = _ESIZE[t] = _esize_of(t)
    return got


def _esize_of(t):
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
        return n * _esize(vt.element_type)
    except (ValueError, TypeError):
        pass
    try:
        return 2 * _esize(ir.ComplexType(t).element_type)
    except (ValueError, TypeError):
        raise Unresolved(f"elements of type {t} have no known size") from None


DYN = None


def _static(mt):
    """(shape, strides, offset) of a memref type, or None when any is dynamic."""
    global DYN
    if DYN is None:
        DYN = (ir.ShapedType.get_dynamic_stride_or_offset(), ir.ShapedType.get_dynamic_size())
    shape = tuple(mt.shape)
    try:
        strides, offset = mt.get_strides_and_offset()
    except (ValueError, TypeError):
        return None
    if offset == DYN[0] or DYN[0] in strides or any(d < 0 or d == DYN[1] for d in shape):
        return None
    return shape, tuple(strides), offset


def _constant(v):
    """The integer value of an arith.constant, else None."""
    if isinstance(v, ir.BlockArgument):
        return None
    op = v.owner.operation if hasattr(v.owner, "operation") else v.owner
    if op.name != "arith.constant":
        return None
    try:
        return ir.IntegerAttr(op.attributes["value"]).value
    except (ValueError, TypeError):
        return None


def _mixed(op, name, dynamic_values, marker):
    """Static attribute `name` with its dynamic entries replaced by the
    constants they are, or None when one is not a constant."""
    out, dyn = [], iter(dynamic_values)
    for x in ir.DenseI64ArrayAttr(op.attributes[name]):
        if x == marker:
            x = _constant(next(dyn))
            if x is None:
                return None
        out.append(x)
    return out


def _segments(op):
    sizes = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    operands, out, start = list(op.operands), [], 0
    for s in sizes:
        out.append(operands[start:start + s])
        start += s
    return out


class Resolver:
    """Layouts of memref values, cached per value."""

    def __init__(self, func_op):
        blocks = list(func_op.regions[0].blocks)
        self.entry_args = set(blocks[0].arguments) if blocks else set()
        self.cache = {}

    def layout(self, v):
        got = self.cache.get(v)
        if got is None:
            got = self.cache[v] = self._layout(v)
        return got

    def _layout(self, v):
        mt = ir.MemRefType(v.type)
        esize = _esize(mt.element_type)
        static = _static(mt)
        op = view_op(v)
        if op is None:
            return Layout(self._root(v), 0, *self._need(static, v), esize)
        src = self.layout(op.operands[0])
        name = op.name
        if name == "memref.view":
            # The byte shift is an operand: a new aligned pointer.
            shift = _constant(op.operands[1])
            if shift is None:
                raise Unresolved("the byte shift of this memref.view is not a constant", op)
            if src.strides not in ((1,), ()) or src.esize != 1:
                raise Unresolved(f"memref.view of {op.operands[0].type}; expected a contiguous i8 buffer", op)
            shape = list(mt.shape)
            sizes = iter(op.operands[2:])
            for k, d in enumerate(shape):
                if d == DYN[1]:
                    shape[k] = _constant(next(sizes))
                    if shape[k] is None:
                        raise Unresolved("a size of this memref.view is not a constant", op)
            strides, acc = [], 1
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
            _, offs, sizes, strides = _segments(op)
            dso, dsz = ir.ShapedType.get_dynamic_stride_or_offset(), ir.ShapedType.get_dynamic_size()
            o = _mixed(op, "static_offsets", offs, dso)
            n = _mixed(op, "static_sizes", sizes, dsz)
            s = _mixed(op, "static_strides", strides, dso)
            if None not in (o, n, s):
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
    def _drop_unit_dims(dims, result_shape):
        """A rank-reducing subview drops unit dimensions: keep each dim that
        lines up with the next result dim, unless the non-unit dims after it
        need that place (unit dims are interchangeable, so this is exact)."""
        out, j = [], 0
        for idx, (k, s) in enumerate(dims):
            later = sum(1 for n, _ in dims[idx + 1:] if n != 1)
            fits = j < len(result_shape) and result_shape[j] in (k, DYN[1])
            if k != 1 or (fits and len(result_shape) - j - 1 >= later):
                out.append((k, s))
                j += 1
        if len(out) != len(result_shape):
            raise Unresolved(f"cannot line up a rank-reducing subview with {result_shape}")
        return out

    def _need(self, static, v):
        if static is None:
            raise Unresolved(f"{v.type} has a dynamic offset, stride or size; expected static ones")
        return static

    def _root(self, v):
        if isinstance(v, ir.BlockArgument):
            if v in self.entry_args:
                return v
            raise Unresolved(f"{_name(v)} is a block argument of a nested region; "
                             "expected buffers defined at the top level of the function")
        op = v.owner.operation if hasattr(v.owner, "operation") else v.owner
        if op.name == "memref.get_global":
            return "@" + ir.FlatSymbolRefAttr(op.attributes["name"]).value
        if op.name in ROOT_OPS:
            return v
        raise Unresolved(f"cannot tell which buffer {_name(v)} aliases: it comes from '{op.name}'; "
                         "expected a function argument, coll.alloc, memref.alloc/alloca or "
                         "memref.get_global, seen through view ops")


def _name(v):
    if isinstance(v, str):
        return v
    try:
        return v.get_name()
    except Exception:  # a name is only for the message
        return "<buffer>"


@dataclass
class Access:
    node: int
    op: object
    root: object
    box: object        # analysis.regions.Box of bytes in the root
    device: object
    exact: bool        # False: somewhere in this view (no coverage claim)
    mapping: tuple     # (base, dims) of the view: equal mappings touch equal elements
    resz: int          # bytes per element of the root, for messages


def _owner_op(v):
    """The operation defining `v`, or None for a block argument."""
    if isinstance(v, (ir.BlockArgument, str)):
        return None
    return v.owner.operation


# -- what each op reads and writes ---------------------------------------------
def _indices(values):
    out = [_constant(v) for v in values]
    return None if None in out else out


def _linalg(op):
    """(reads, writes) of a linalg op on buffers: its inputs; its outputs,
    read too when the payload uses them."""
    ins, outs = _segments(op)[:2]
    used = []
    if len(op.regions) and len(op.regions[0].blocks):
        args = list(op.regions[0].blocks[0].arguments)
        if len(args) == len(ins) + len(outs):
            used = [len(list(a.uses)) > 0 for a in args[len(ins):]]
    if not used:
        used = [True] * len(outs)
    mem = lambda v: isinstance(v.type, ir.MemRefType)  # noqa: E731
    reads = [(v, None, True) for v in ins if mem(v)]
    reads += [(v, None, True) for v, u in zip(outs, used) if u and mem(v)]
    writes = [(v, None, True) for v in outs if mem(v)]
    return reads, writes


def effects(op):
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
        mems = [(v, None, False) for v in operands if isinstance(v.type, ir.MemRefType)]
        writes = "store" in name or "write" in name or "scatter" in name
        return ([], mems) if writes else (mems, [])
    if name.startswith("linalg.") and "operandSegmentSizes" in op.attributes:
        return _linalg(op)
    if name in ("func.call", "func.call_indirect"):
        mems = [(v, None, False) for v in operands if isinstance(v.type, ir.MemRefType)]
        return mems, list(mems)
    return None


def flat_effects(op):
    """(reads, writes) as `effects` gives them of a host op without regions
    that takes no token: ([], []) for one that touches no memory (a view, an
    allocation, an op without memref operands); None when its accesses are
    not known."""
    name = op.name
    if name == "memref.reshape":  # a view that also reads its shape operand
        return [(op.operands[1], None, True)], []
    if name in VIEW_OPS or name in ROOT_OPS or name in NO_ACCESS:
        return [], []
    if not any(isinstance(v.type, ir.MemRefType) for v in op.operands):
        return [], []
    return effects(op)


def host_effects(op):
    """(reads, writes) of a host op, as coll-check-order orders it: its
    flat effects, or for an op with regions (a loop, a branch) the union of
    what its nested ops may touch, none exactly (a nested coll op: its
    buffers). None when some access is not known. Shared with
    coll-check-semantics, which follows what host ops write."""
    if not len(op.regions) or op.name.startswith("linalg.") or op.name in VIEW_OPS:
        return flat_effects(op)
    reads, writes, unknown = [], [], []

    def visit(inner):
        if inner == op:
            return ir.WalkResult.ADVANCE
        if inner.name.startswith("coll."):
            v = view(inner)
            eff = ([(x, None, False) for x in v.reads if isinstance(x.type, ir.MemRefType)],
                   [(x, None, False) for x in v.writes if isinstance(x.type, ir.MemRefType)]) \
                if v is not None else ([], [])
        else:
            eff = flat_effects(inner) if not (len(inner.regions) and not inner.name.startswith("linalg.")) \
                else ([], [])  # its nested ops are visited one by one
        if eff is None:
            unknown.append(inner)
            return ir.WalkResult.INTERRUPT
        reads.extend((v, None, False) for v, _, _ in eff[0])
        writes.extend((v, None, False) for v, _, _ in eff[1])
        return ir.WalkResult.ADVANCE
    op.walk(visit)
    return None if unknown else (reads, writes)


def _point(mem, index_values, vshape=()):
    """The box a load or store at `index_values` touches: one element, or
    the trailing `vshape` of a vector; the whole view when not constant."""
    idx = _indices(index_values)
    if idx is None:
        return (mem, None, False)
    rank = len(idx)
    ext = [1] * (rank - len(vshape)) + list(vshape)
    return (mem, (idx, ext), True)


class _Checker:
    def __init__(self, func_op, func_name):
        self.func_name = func_name
        self.findings = []
        self.names = {}
        self.res = Resolver(func_op)
        self.tok = token_type()
        self.whole = {}  # value -> what a whole-view access of it touches
        self.extents = {}  # root -> (lo, hi) bytes it spans, () when unknown
        # An argument a claim names as an output and not as an input holds
        # nothing at entry: reading it before it is written reads garbage,
        # as for scratch. (Without a claim an argument may be in place.)
        self.fresh = set()
        self.initial = set()  # arguments some read finds (partly) unwritten: their caller's values
        for claim in find_ops(func_op, Implements.NAME):
            c = Implements.of(claim)
            ins = {root_of(v)[0] for v in c.inputs}
            self.fresh |= {r for r in (root_of(v)[0] for v in c.outputs)
                           if isinstance(r, ir.BlockArgument) and r not in ins}

    def where(self, a):
        if a.root not in self.names:
            self.names[a.root] = _name(a.root)
        dev = f" on device {a.device}" if a.device is not None else ""
        b, z = a.box, a.resz
        name = self.names[a.root]
        if a.mapping is None:
            return f"{name} (somewhere in it){dev}"
        if b.lo % z or b.hi % z or any(s % z for _, s in b.dims):
            return f"{name} bytes [{b.lo}, {b.hi}){dev}"
        if not b.dims:
            return f"{name}[{b.lo // z}, {b.hi // z}){dev}"
        shape = "x".join(str(n) for n, _ in b.dims)
        strides = ", ".join(str(s // z) for _, s in b.dims)
        each = "elements" if b.run == z else f"runs of {b.run // z}"
        return f"{name}[{b.lo // z}, {b.hi // z}) ({shape} {each} at strides {strides}){dev}"

    def report(self, op, message, notes=()):
        if len(self.findings) < MAX_FINDINGS:
            self.findings.append(Finding(op.location, message, list(notes)))
        elif len(self.findings) == MAX_FINDINGS:
            self.findings.append(Finding(op.location, f"more ordering errors in @{self.func_name} not shown"))

    # -- classification ---------------------------------------------------------
    def classify(self, op):
        """'skip', 'async', 'join', 'wait', 'host', 'return' (and the
        effects of a host op), or None after reporting why not."""
        name, tok = op.name, self.tok
        if name == "func.return":
            return "return", None
        if name.startswith("coll."):
            if name in ("coll.alloc", "coll.implements"):  # a claim touches no data
                return "skip", None
            if name == "coll.wait":
                return "wait", None
            if name == "coll.join":
                return "join", None
            return "async", None
        has_token = any(v.type == tok for v in op.operands) or any(r.type == tok for r in op.results)
        if name in ("func.call", "func.call_indirect"):
            if any(v.type == tok for v in op.operands):
                self.report(op, f"a !coll.token passed to {name} is not followed by coll-check-order; "
                                "expected the caller to coll.wait for it before the call")
                return None, None
            eff = effects(op)
            return ("async" if has_token else "host"), eff
        if has_token:
            self.report(op, f"a !coll.token used by '{name}' is not followed by coll-check-order; "
                            "expected tokens only in coll ops, func.call results and func.return")
            return None, None
        if len(op.regions) and not name.startswith("linalg.") and name not in VIEW_OPS:
            return self.nested(op)
        eff = flat_effects(op)
        if eff is None:
            self.report(op, f"coll-check-order does not know how '{name}' accesses its memref operands; "
                            "expected memref, vector, linalg, func.call or coll ops")
            return None, None
        return ("host", eff) if eff[0] or eff[1] else ("skip", None)

    def nested(self, op):
        """An op with regions (a loop, a branch) runs on the host as a whole:
        the union of what its nested ops may touch, none exactly."""
        reads, writes, bad = [], [], []

        def visit(inner):
            if inner == op:
                return ir.WalkResult.ADVANCE
            kind, eff = self.classify(inner)
            if kind not in (None, "skip", "host"):
                self.report(inner, f"{inner.name} inside '{op.name}' is not followed by coll-check-order; "
                                   "expected tokens at the top level of a function")
                kind = None
            if kind is None:
                bad.append(inner)
                return ir.WalkResult.INTERRUPT
            if eff is not None:
                reads.extend((v, None, False) for v, _, _ in eff[0])
                writes.extend((v, None, False) for v, _, _ in eff[1])
            return ir.WalkResult.ADVANCE
        op.walk(visit)
        if bad:
            return None, None
        return ("host", (reads, writes)) if reads or writes else ("skip", None)

    # -- one block, in program order -------------------------------------------
    def block(self, block):
        plan, tok = [], self.tok
        for op in block.operations:
            op = op.operation
            kind, eff = self.classify(op)
            if kind is None:
                return
            if kind != "skip":
                plan.append((op, kind, eff))
        if len(plan) > MAX_NODES:
            self.report(plan[0][0], f"@{self.func_name} has {len(plan)} ops that coll-check-order orders, "
                                    f"above the {MAX_NODES} that it handles")
            return
        # Uses of each token, so that a node's bitset is freed after its
        # last use: only the bitsets of pending tokens stay alive.
        uses = {}
        for op, _, _ in plan:
            for v in set(op.operands):
                if v.type == tok:
                    uses[v] = uses.get(v, 0) + 1
        node_of = {}        # token value -> node
        anc = []            # node -> bitset of the nodes ordered before it
        preds = []          # node -> nodes it directly waits for
        ops = []            # node -> op
        late_kind = []      # node -> must be waited for
        barrier, last_wait = 0, None  # what the host has waited for
        writes, reads = {}, {}
        finals, final_bits = [], 0
        for op, kind, eff in plan:
            a, direct = barrier, []
            for v in set(op.operands):
                p = node_of.get(v)
                if p is None:
                    continue
                a |= anc[p] | (1 << p)
                direct.append(p)
                uses[v] -= 1
                if uses[v] == 0:
                    anc[p] = None
            if kind == "return":
                if direct:  # returned tokens: the caller waits for them
                    final_bits |= a
                    finals.append(op)
                continue
            if last_wait is not None:
                direct.append(last_wait)
            i = len(ops)
            anc.append(a)
            preds.append(direct)
            ops.append(op)
            late_kind.append(kind == "async")
            for r in op.results:
                if r.type == tok and r in uses:
                    node_of[r] = i
            if kind in ("wait", "host"):
                barrier |= a | (1 << i)
                last_wait = i
            if kind == "wait":
                final_bits |= a | (1 << i)
                finals.append(op)
                continue
            if kind == "join":
                continue
            if eff is None:
                v = view(op)
                eff = ([(x, None, True) for x in v.reads],
                       [(x, None, True) for x in v.writes if isinstance(x.type, ir.MemRefType)])
            self.accesses(op, i, a, eff, reads, writes)
        self.waited(ops, preds, late_kind, finals, final_bits)

    def resolve(self, op, i, values, what):
        out = []
        for v, sub, exact in values:
            try:
                acc = self.access(op, i, v, sub, exact)
            except Unresolved as err:
                acc = None if op.name.startswith("coll.") else self.anywhere(op, i, v)
                if acc is None:
                    notes = [(err.op.location, f"this {err.op.name}")] if err.op is not None else []
                    self.report(op, f"cannot order the {what} of this {op.name}: {err}", notes)
                    continue
            if acc is not None and not self.inside(op, v, acc, what):
                continue
            if acc is not None:
                out.append(acc)
        return out

    def inside(self, op, v, acc, what):
        """Does the access stay inside its root buffer? A view outside it
        (a reinterpret_cast past the end: upstream cannot verify that) would
        read or write other memory, so it is an error, not a region."""
        if acc.mapping is None or isinstance(acc.root, str):
            return True
        extent = self.extents.get(acc.root)
        if extent is None:
            try:
                whole = self._access(acc.root, None, True)
            except Unresolved:
                whole = None
            extent = self.extents[acc.root] = (whole[0].lo, whole[0].hi) if whole else ()
        if not extent or (extent[0] <= acc.box.lo and acc.box.hi <= extent[1]):
            return True
        chain = root_of(v)[1]
        notes = [(c.location, f"this {c.name}") for c in chain if c.name == "memref.reinterpret_cast"]
        self.report(op, f"the {what} of this {op.name} leave {_name(acc.root)}: bytes "
                        f"[{acc.box.lo}, {acc.box.hi}) of a buffer of bytes [{extent[0]}, {extent[1]}); "
                        "expected a view inside its buffer", notes)
        return False

    def anywhere(self, op, i, v):
        """A host op's access whose region is unknown (a dynamic shape or
        offset) but whose root buffer is known: it may touch all of it."""
        value = root_of(v)[0]
        try:
            root = self.res._root(value)
        except Unresolved:
            return None
        try:
            dev = device_of(v.type)
        except ValueError:
            dev = None
        return Access(i, op, root, box(0, [], 1 << 62), dev, False, None, 1)

    def access(self, op, i, v, sub, exact):
        if sub is None:
            got = self.whole.get((v, exact))
            if got is None:
                got = self.whole[v, exact] = self._access(v, None, exact)
        else:
            got = self._access(v, sub, exact)
        if got is None:
            return None
        b, dev, mapping, resz, exact = got
        root = self.res.layout(v).root
        return Access(i, op, root, b, dev, exact, mapping, resz)

    def _access(self, v, sub, exact):
        lay = self.res.layout(v)
        z = lay.esize
        start, shape = (([0] * len(lay.shape)), lay.shape) if sub is None else sub
        if sub is not None and any(s < 0 or s + e > n for s, e, n in zip(start, shape, lay.shape)):
            start, shape, exact = [0] * len(lay.shape), lay.shape, False  # out of bounds: UB
        base = lay.shift + z * (lay.offset + sum(s * st for s, st in zip(start, lay.strides)))
        dims = [(n, st * z) for n, st in zip(shape, lay.strides)]
        b = box(base, dims, z)
        if b is None:
            return None
        try:
            dev = device_of(v.type)
        except ValueError:
            dev = None
        root = lay.root
        resz = z
        if not isinstance(root, str):
            try:
                resz = _esize(ir.MemRefType(root.type).element_type)
            except Unresolved:
                pass
        mapping = (base, tuple((n, st) for n, st in dims if n != 1))
        return b, dev, mapping, resz, exact

    def accesses(self, op, i, a, eff, reads, writes):
        rs = self.resolve(op, i, eff[0], "reads")
        ws = self.resolve(op, i, eff[1], "writes")
        if op.name in ("coll.copy", "coll.combine", "memref.copy"):
            self.self_overlap(op, rs, ws)
        for r in rs:
            self.check_read(r, a, writes.get(r.root, ()))
        for w in ws:
            self.check_write(w, a, writes.get(w.root, ()), reads.get(w.root, ()))
        for r in rs:
            reads.setdefault(r.root, []).append(r)
        for w in ws:
            writes.setdefault(w.root, []).append(w)

    def self_overlap(self, op, rs, ws):
        """An op may write exactly what it reads (combine in place), but a
        partial overlap, or a copy onto itself, has no defined result."""
        for w in ws:
            for r in rs:
                if r.root != w.root or not overlaps(r.box, w.box):
                    continue
                if op.name != "coll.combine" or r.mapping != w.mapping:
                    self.report(op, f"{op.name} reads {self.where(r)} and writes the overlapping {self.where(w)}")
                    return

    def check_read(self, r, a, prior):
        ordered, race = [], None
        rb = r.box
        for w in prior:
            wb = w.box
            if wb.hi <= rb.lo or rb.hi <= wb.lo or not overlaps(wb, rb):
                continue
            if a >> w.node & 1:
                if w.exact:
                    ordered.append(wb)
            else:
                race = w  # the latest unordered write: likely the one meant
        owner = _owner_op(r.root)
        if owner is None and r.exact and r.root not in self.initial and not covered(rb, ordered):
            # Reads what the caller passed in. (A read known only as
            # somewhere in a view, a call's, is not taken for one: the
            # memref level calls kernels on outputs it has written.)
            self.initial.add(r.root)
        unwritten = r.exact and (r.root in self.fresh if owner is None
                                 else owner.name in UNWRITTEN_ROOTS)
        covered_ = not unwritten or covered(rb, ordered)
        op = r.op
        if race is not None:
            if covered_:
                self.report(op, f"{op.name} reads {self.where(r)} while an unordered op may write it",
                            [(race.op.location, f"written by this {race.op.name}, not ordered with the read")])
            else:
                self.report(op, f"{op.name} reads {self.where(r)} before it is written",
                            [(race.op.location, f"written by this {race.op.name}, not ordered before the read")])
        elif not covered_:
            what = "only partly written" if ordered else "not written"
            self.report(op, f"{op.name} reads {self.where(r)}, which is {what} by the ops ordered before it")

    def check_write(self, w, a, prior_writes, prior_reads):
        op = w.op
        wb = w.box
        # A write must be ordered after every earlier write and read it overlaps.
        for prior, problem, note in (
                (prior_writes, ", racing with another write", "also written by this {}, not ordered with it"),
                (prior_reads, " while an unordered op may still read it", "read by this {}, not ordered before the write")):
            for x in prior:
                xb = x.box
                if xb.hi <= wb.lo or wb.hi <= xb.lo or a >> x.node & 1 or not overlaps(xb, wb):
                    continue
                self.report(op, f"{op.name} writes {self.where(w)}{problem}",
                            [(x.op.location, note.format(x.op.name))])
                return

    def waited(self, ops, preds, late_kind, finals, final_bits):
        """Every copy and combine must be ordered before a coll.wait or a
        returned token; report the last ones of each unordered chain."""
        late = [late_kind[i] and not final_bits >> i & 1 for i in range(len(ops))]
        if not any(late):
            return
        # A late op that some later late op depends on is fixed with it.
        fixed_later = [False] * len(ops)
        for i in reversed(range(len(ops))):
            if late[i] or fixed_later[i]:
                for p in preds[i]:
                    fixed_later[p] = True
        for i, op in enumerate(ops):
            if not late[i] or fixed_later[i]:
                continue
            wvals = self._writes(op)
            what = f"{op.name} writes {self._first_write(op, i, wvals)}" if wvals else op.name
            if finals:
                last = finals[-1]
                kind = "coll.wait" if last.name == "coll.wait" else "returned token"
                self.report(op, f"{what} but is not ordered before the final {kind}",
                            [(last.location, f"the final {kind}")])
            else:
                self.report(op, f"{what} but nothing waits for it: @{self.func_name} has no coll.wait and returns no token")

    @staticmethod
    def _writes(op):
        v = view(op)
        if v is not None:
            return [w for w in v.writes if isinstance(w.type, ir.MemRefType)]
        return [x for x in op.operands if isinstance(x.type, ir.MemRefType)]

    def _first_write(self, op, i, wvals):
        try:
            return self.where(self.access(op, i, wvals[0], None, True))
        except (Unresolved, ValueError, AttributeError):
            return _name(wvals[0])


def _funcs(module_op):
    return find_ops(module_op, "func.func")


def _touches_tokens(func_op):
    found, tok = [], token_type()

    def visit(op):
        if op.name.startswith("coll.") or any(r.type == tok for r in op.results) \
                or any(v.type == tok for v in op.operands):
            found.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE
    func_op.walk(visit)
    return bool(found)


def check_function(func_op):
    """[Finding] for one func.func."""
    func_op = func_op.operation
    name = ir.StringAttr(func_op.attributes["sym_name"]).value
    c = _Checker(func_op, name)
    blocks = list(func_op.regions[0].blocks)
    if not blocks:
        return []
    if any(a.type == c.tok for a in blocks[0].arguments):
        c.report(func_op, f"@{name} takes a !coll.token argument: coll-check-order cannot tell which "
                          "buffers the caller's pending work touches; expected the caller to coll.wait "
                          "before the call")
        return c.findings
    if not _touches_tokens(func_op):
        return []  # only host ops: they run one after the other
    coll_blocks = [b for b in blocks if any(o.operation.name.startswith("coll.") for o in b.operations)]
    if len(coll_blocks) > 1 or (coll_blocks and coll_blocks[0] != blocks[0]):
        c.report(func_op, f"@{name} has coll ops in a block other than its entry block; "
                          "coll-check-order expects them in the entry block")
        return c.findings
    if len(blocks) > 1:
        c.report(func_op, f"@{name} has {len(blocks)} blocks; coll-check-order expects a function "
                          "with coll ops to be one block (use scf ops for control flow)")
        return c.findings
    nested = []

    def visit(op):
        if op.name.startswith("coll.") and op.parent is not None and op.parent.operation != func_op:
            nested.append(op)
        return ir.WalkResult.ADVANCE
    func_op.walk(visit)
    if nested:  # the first one is enough to say why
        op = nested[0]
        c.report(op, f"{op.name} inside '{op.parent.name}' is not supported by coll-check-order; "
                     "expected coll ops at the top level of a function")
        return c.findings
    c.block(blocks[0])
    return c.findings


def _uses(value):
    """[(op, operand)] of `value` and of the views of it (ir/views.py)."""
    out = []
    for use in value.uses:
        op = getattr(use.owner, "operation", use.owner)
        if op.name in VIEW_OPS and use.operand_number == 0 and op.results:
            out += _uses(op.results[0])
        out.append((op, op.operands[use.operand_number]))
    return out


# Ops through which a buffer's pointer escapes: what is done with it is not known.
ESCAPES = ("memref.extract_aligned_pointer_as_index",)


def _touch(op, value):
    """(reads, writes) of `value` by `op`: what its effects (or its coll
    role) say; None when that is not known (its pointer escapes, an op
    whose effects are not known)."""
    if op.name in ESCAPES:
        return None
    if op.name in VIEW_OPS or op.name in NO_ACCESS or op.name == "func.return":
        return op.name == "memref.reshape" and op.operands[1] == value, False
    v = view(op)
    if v is not None:
        return any(x == value for x in v.reads), any(x == value for x in v.writes)
    eff = flat_effects(op) if not len(op.regions) or op.name.startswith("linalg.") else None
    if eff is None:
        return None
    return any(x[0] == value for x in eff[0]), any(x[0] == value for x in eff[1])


def _empty(t):
    try:
        return 0 in ir.MemRefType(t).shape
    except ValueError:
        return False


def argument_roles(func_op):
    """Per argument of `func_op`'s entry block: (whether the program reads
    the value the caller passed in, whether it writes the argument), from
    what its ops do: an argument only read is an input, one only written an
    output, one read before (or without) being written throughout an input
    the program also writes (in place); None for an argument whose
    accesses are not known (its pointer escapes, an op whose effects are not
    known). For an argument both read and
    written, whether the first reads find it written is the order check's
    coverage of its accesses (exact regions, in an order of the token
    graph): an exact read that finds part of it unwritten; where the
    function cannot be followed, it is taken to be read."""
    func_op = getattr(func_op, "operation", func_op)
    blocks = list(func_op.regions[0].blocks)
    if not blocks:
        return []
    args = list(blocks[0].arguments)
    roles = []
    for a in args:
        read = written = False
        for op, v in _uses(a):
            t = _touch(op, v)
            if t is None:
                read = None
                break
            read, written = read or t[0], written or t[1]
        roles.append([read, written] if read is not None else None)
    if any(r is not None and r[0] and r[1] for r in roles):
        name = ir.StringAttr(func_op.attributes["sym_name"]).value if "sym_name" in func_op.attributes else "?"
        c = _Checker(func_op, name)
        c.fresh = set()  # what the program does, not what a claim says
        try:
            c.block(blocks[0])
        except (Unresolved, ValueError, TypeError):
            c.findings.append(None)
        for role, a in zip(roles, args):
            if role is not None and role[0] and role[1] and not _empty(a.type):  # (nothing reads an empty buffer)
                # A racy program (findings) has no order of the token graph to follow: program order.
                role[0] = a in c.initial if not c.findings else _first_touch_reads(func_op, a)
    return [tuple(r) if r is not None else None for r in roles]


def _first_touch_reads(func_op, arg):
    """Whether the first op in program order that touches `arg` (or a view
    of it) reads it."""
    order = {}

    def visit(op):
        order[op] = len(order)
        return ir.WalkResult.ADVANCE
    func_op.walk(visit, ir.WalkOrder.PRE_ORDER)
    touches = sorted(((order.get(op, len(order)), _touch(op, v)) for op, v in _uses(arg)), key=lambda t: t[0])
    return next((t[0] for _, t in touches if t is not None and (t[0] or t[1])), True)


def check_module(module_op):
    """[Finding] for every function under module_op."""
    findings = []
    for f in _funcs(module_op):
        findings += check_function(f)
    return findings


@register("coll-check-order",
          "Check that every read is ordered after the write it needs, no two unordered ops touch "
          "overlapping bytes (one writing), and the final wait orders every copy and combine")
def check_order(module_op):
    for op in find_ops(module_op, lambda n: n in COLLECTIVES):
        require_memref_form(op)
    findings = check_module(module_op)
    if findings:
        raise OrderError(findings)
