"""coll-check-semantics: prove that an explicit program computes the
collective it claims (`coll.implements`).

Every region of every buffer is followed as the value it holds, symbolically:
per root buffer, sorted pieces [start, end) of flattened positions, each with
one value for the whole piece. A value is the multiset of input elements it
combines, written relative to the position p it sits at, so that a piece can
be split or moved without touching its value:

  (None, s, ((i, 0),))            p holds x_i[p - s]
  (kind, s, ((i, r), ...))        p holds (+)_kind of x_i[p - s - r] ...
  an item (-1, r, kind2, items)   a nested value of another kind

Items are sorted and the first has r = 0, so equal values compare equal. A
copy moves pieces (s += distance); a combine merges the multisets of its
aligned operand pieces.

A claim of the canonical order (`order = "canonical"`, ir/ops.py ORDERS)
of a kind whose association changes the bits (sum, prod on floats) is
followed as an ordered association instead: a combination is

  (kind, s, items, rounded, broke)

with its items in fold order, ((it0 (+) it1) (+) it2) ..., a nested
partial that is not on the spine an item (-1, r, kind, items, rounded);
the first two items are sorted (x0 (+) x1 and x1 (+) x0 are the same bits:
IEEE addition and multiplication commute, association does not).
`rounded` names the 16-bit type a combine rounded the partial to (None: held
in the accumulator type, or a single contribution); `broke` is
(op index, op, why, other op or None) of the first combine in its history
whose result is no prefix x0 (+) .. (+) xk of the canonical fold (or that
combines a partial already rounded: the contract rounds once, at the end),
None where there is none. Appending to the spine costs as merging a
multiset, per piece; an output is the canonical fold of the spec's sources
(device order), compared with its multiset first, so that a wrong input is
reported as before and a wrong association at the combine that made it.

Both representations cost per piece, not per element: a program's pieces
are its chunks. A strided view (a block along a non-leading axis,
one op whatever its rows: collectives/emit.py) is followed run by run, so
its op costs per row here (at most MAX_RUNS runs a view, past which the
check says it cannot follow it): correct, but not O(1) per op.

The ops a claim covers are those its token depends on (token operands, and
every op before an earlier coll.wait), minus those an earlier claim covers;
they are applied in block order, which is a topological order of the token
graph. That the result does not depend on the order (no unordered
conflicting accesses) is coll-check-order's job. Then every output region
is compared with the collective's specification (its `spec`,
coll/collectives/), and a read of a region that nothing wrote is reported at the
op. A coll.copy or coll.combine that no claim covers is not checked: the
pass warns at the first one of each function (core/errors.py warn).
"""
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, cast

from mlir import ir

from ..analysis.effects import Access, Resolver, Root, Unresolved, host_effects
from ..collectives import COLLECTIVES as COLLECTIVE_OPS
from ..collectives.base import Collective
from ..collectives.spec import Piece as SpecPiece
from ..collectives.spec import Unsupported
from ..collectives.spec import aligned as _aligned
from ..core.errors import PassError, warn
from ..core.registry import register
from ..ir.errors import Finding, Note
from ..ir.kinds import ELEMENTS, KINDS, order_matters
from ..ir.ops import CANONICAL, COLLECTIVE_NAMES, DATA_OPS, Combine, Copy, Implements, OpView, attr_ints, view
from ..ir.types import device_of, token_type
from ..ir.views import root_of
from ..ir.walk import find_ops

POISON = ("poison",)  # what a read of unwritten memory yields (reported there)
UNKNOWN = "unknown"  # (UNKNOWN, op): a value written by `op` that is not followed
# Host ops whose writes are followed: they move slices as coll.copy does.
HOST_COPIES = ("memref.copy", "linalg.copy")
MAX_FINDINGS = 20
MAX_RUNS = 1_000_000  # contiguous runs of one strided view

# A symbolic value: (kind or None, shift, items) with items (input i, its
# shift) or (-1, shift, kind, items) for a nested reduction; POISON; or
# (UNKNOWN, op). Tuples of several shapes, built and read by position.
Value = tuple[Any, ...]
# (root buffer, [(position, length)]) of a view's elements, row-major.
Region = tuple[Root, list[tuple[int, int]]]
# A written piece: (start, end, value or None, the op that wrote it or None).
Piece = tuple[int, int, Value | None, ir.Operation | None]


class SemanticsError(PassError):
    def __init__(self, findings: list[Finding]) -> None:
        loc, msg, notes = findings[0]
        super().__init__(msg, loc, notes, findings=findings)


# The collectives a coll.implements may name, with their class (its axes,
# output shape and `spec`: what each output region holds, collectives/spec.py).
# Without 'axes' a claim is along axis 0 (concatenation in device order for
# 1-d buffers).
SPECS = {cls.short_name(): cls for cls in COLLECTIVE_OPS}


class _Spec:
    """A claim read against its collective's class: the axes, the shape of
    the outputs; Unsupported when they do not fit the buffers claimed."""

    def __init__(self, claim: Implements, cls: type[Collective], shape: list[int], out_shape: Sequence[int]) -> None:
        self.claim, self.cls = claim, cls
        self.inputs, self.outputs = claim.inputs, claim.outputs
        self.kind, self.to_device, self.collective = claim.kind, claim.to_device, claim.collective
        what = claim.collective
        axes = claim.axes if claim.axes is not None else [0] * len(cls.AXES)
        if len(axes) != len(cls.AXES):
            raise Unsupported(f"claims {what} with {len(axes)} axes; expected {len(cls.AXES)} "
                              f"({', '.join(cls.AXES) or 'none'})")
        for name, a in zip(cls.AXES, axes):
            if not 0 <= a < len(shape):
                raise Unsupported(f"claims {what} with {name} {a}, out of range for rank {len(shape)}")
        n = len(claim.outputs if cls.PER_DEVICE == "outputs" else claim.inputs)
        for name, a in zip(cls.AXES, axes):
            if name in cls.DIVIDED_AXES and shape[a] % n:
                raise Unsupported(f"claims {what} with {name} {a} of size {shape[a]}, "
                                  f"which its {n} devices do not divide")
        want = cls.result_shape(shape, n, axes)
        if list(out_shape) != want:
            raise Unsupported(f"claims {what} of {_shape(shape)} inputs on {n} devices into "
                              f"{_shape(out_shape)} outputs; expected {_shape(want)} outputs")
        self.axes, self.out_shape = axes, want
        self.arrays = {a: attr_ints(claim.operation, a) for a in cls.ARRAYS}  # e.g. a permute's pairs

    def axis(self, k: int) -> int:
        return self.axes[k]


def _shape(shape: Iterable[int]) -> str:
    return "x".join(map(str, shape)) or "scalar"


# -- values ---------------------------------------------------------------------

def _leaf(i: int, s: int) -> Value:
    return (None, s, ((i, 0),))


def _opaque(v: Value) -> bool:
    """POISON or an unknown value: moved and combined as they are."""
    return v is POISON or v[0] == UNKNOWN


def _moved(v: Value, d: int) -> Value:
    return v if _opaque(v) else (v[0], v[1] + d) + v[2:]


def _shifted(items: Sequence[tuple[Any, ...]], d: int) -> Sequence[tuple[Any, ...]]:
    return items if d == 0 else [(it[0], it[1] + d) + it[2:] for it in items]


def _combined(kind: str | None, values: Iterable[Value]) -> Value:
    """(+)_kind of `values` (all at the same positions), canonical. Items
    are kept relative to the first value's shift, so that merging operands
    that sit where their inputs do (the common case) moves no item."""
    items: list[tuple[Any, ...]] = []
    base: int | None = None
    for k, s, its in values:
        if base is None:
            base = s
        if k is None or k == kind:
            items.extend(_shifted(its, s - base))
        else:
            items.append((-1, s - base, k, its))
    if kind in KINDS and KINDS[kind].idempotent:  # x (+) x == x: a doubled contribution is exact
        items = list(set(items))
    if len(items) == 1:
        it = items[0]
        return (None, it[1] + base, ((it[0], 0),)) if it[0] >= 0 else (it[2], it[1] + base, it[3])
    items.sort()
    first = items[0][1]
    return (kind, base + first, tuple(_shifted(items, -first)))


# -- ordered values (a claim of the canonical order) --------------------------------
# (op index, op, why, another op to note or None): where a value first left
# the canonical association.
Broke = tuple[int, ir.Operation, str, ir.Operation | None]


def _fold(kind: str, values: Sequence[Value], rounds_to: str | None, at: tuple[int, ir.Operation] | None,
          writers: Sequence[ir.Operation | None] = ()) -> Value:
    """The ordered value of ((v0 (+) v1) (+) v2) ... (a combine's operands
    in order: lhs, rhs...), held in a buffer of `rounds_to` (a 16-bit type
    whose kernels combine in f32) or of the accumulator type (None). `at`:
    (index, op) of the combine, recorded where the association breaks first
    here; `writers`: the op that last wrote each operand (a rounding error
    names it)."""
    if len(values) == 1:
        v = values[0]
        return v if len(v) < 5 or rounds_to is None else v[:3] + (rounds_to, v[4])
    broke: Broke | None = None
    for v in values:
        if len(v) > 4 and v[4] is not None and (broke is None or v[4][0] < broke[0]):
            broke = v[4]  # the earliest op that broke it
    # The operand that holds a partial rounded to 16 bits (named by the error).
    rounded_at = next((k for k, v in enumerate(values) if len(v) > 4 and v[3] is not None), None)
    spine: list[tuple[Any, ...]] = []  # its items, relative to `base` (the first at 0)
    base = 0
    for v in values:
        kind_v, s, items = v[0], v[1], v[2]
        rounded = v[3] if len(v) > 4 else None
        if not (kind_v is None or (kind_v == kind and rounded is None)):
            items = ((-1, 0, kind_v, items, rounded),)  # another kind, or a rounded partial: not on the spine
        why = None
        if not spine:
            spine, base = list(items), s
            continue
        if len(spine) == 1 and len(items) == 1:  # the bottom of the fold: its operands commute
            both = [(spine[0][0], base + spine[0][1]) + spine[0][2:], (items[0][0], s + items[0][1]) + items[0][2:]]
            pair = sorted(both, key=lambda it: (it[0] >= 0, it[0], it[1], repr(it) if it[0] < 0 else ""))
            base = pair[0][1]
            spine = [(it[0], it[1] - base) + it[2:] for it in pair]
            new = spine
        elif len(spine) == 1:  # a contribution (+) a partial: the partial is the spine
            new = [(spine[0][0], base + spine[0][1] - s) + spine[0][2:]]
            spine, base = list(items) + new, s
        elif len(items) == 1:
            new = [(items[0][0], s + items[0][1] - base) + items[0][2:]]
            spine += new
        else:
            spine.append((-1, s - base, kind_v, items, rounded))
            why = "it combines two partial results, which reassociates the fold"
        if broke is None and at is not None:
            why = why or _off_prefix(spine, new)
            if why is not None:
                other = writers[rounded_at] if rounded_at is not None and rounded_at < len(writers) else None
                broke = (at[0], at[1], why, other if "rounded" in why else None)
    return (kind, base, tuple(spine), rounds_to if len(spine) > 1 else None, broke)


def _off_prefix(spine: Sequence[tuple[Any, ...]], new: Sequence[tuple[Any, ...]]) -> str | None:
    """Why a spine that items `new` just joined is no prefix x0 (+) x1
    (+) .. of the canonical fold, or None."""
    for it in new:
        if it[0] < 0 and it[4] is not None:
            return (f"it combines a partial result already rounded to {it[4]} (see the note): the canonical "
                    "order rounds once, at the end; keep partials in the accumulator type "
                    f"({ELEMENTS[it[4]].compute})")
        if it[0] < 0:
            return f"it combines a nested '{it[2]}' result into the fold"
    k = len(spine) - 1
    if k == 1 and [it[0] for it in spine] != [0, 1]:
        return (f"it starts a partial with x{spine[0][0]} and x{spine[1][0]}; in device order a partial "
                "starts with x0 and x1")
    if k > 1 and spine[-1][0] != k:
        return f"it adds x{spine[-1][0]} to the partial of x0 .. x{k - 1}; the next in device order is x{k}"
    return None


def _unordered(v: Value) -> Value:
    """The multiset value of an ordered one (what it combines, not how)."""
    if _opaque(v) or len(v) < 5:
        return v
    kind, s, items = v[0], v[1], v[2]
    parts = [(None, s + it[1], ((it[0], 0),)) if it[0] >= 0
             else _unordered((it[2], s + it[1], it[3], it[4], None)) for it in items]
    return _combined(kind, parts)


def _same(got: Value | None, want: Value | None) -> bool:
    """Whether an output holds what it should: ordered values by their
    association (where it was rounded aside: the output is the element
    type, the one rounding)."""
    if got is None or want is None or len(got) < 5 or len(want) < 5:
        return got == want
    return got[:3] == want[:3] and got[4] is None


_SIGNS = {"sum": "+", "prod": "*"}


def _fold_text(v: Value, a: int, b: int) -> str:
    """An ordered value at [a, b) as its association, e.g.
    '(x0[0:4] + x2[0:4]) + x1[0:4]', a partial rounded to bf16 as
    'bf16(x0[0:4] + x1[0:4])'."""
    kind, s, items = v[0], v[1], v[2]
    sign = _SIGNS.get(kind, kind)
    text = ""
    for k, it in enumerate(items):
        t = s + it[1]
        if it[0] >= 0:
            part = f"x{it[0]}[{a - t}:{b - t}]"
        else:
            part = _fold_text((it[2], t, it[3]), a, b)
            part = f"{it[4]}({part})" if it[4] else f"({part})"
        text = part if k == 0 else f"({text}) {sign} {part}" if k > 1 else f"{text} {sign} {part}"
    return text


def _describe(v: Value | None, a: int, b: int) -> str:
    """The value at positions [a, b), e.g. 'sum(x0[0:4], x1[4:8])'."""
    if v is None:
        return "nothing (never written)"
    if v is POISON:
        return "unwritten data"
    if v[0] == UNKNOWN:
        return f"a value from a {v[1].name} (not followed)"
    kind, s, items = v
    parts = []
    for it in items:
        t = s + it[1]
        if it[0] >= 0:
            parts.append(f"x{it[0]}[{a - t}:{b - t}]")
        else:
            parts.append(_describe((it[2], t, it[3]), a, b))
    return f"{kind}({', '.join(parts)})" if kind is not None else parts[0]


def _leaves(v: Value) -> Counter[tuple[int, int]]:
    """Counter of (input, shift) of the top-level inputs of a value."""
    kind, s, items = v
    return Counter((it[0], s + it[1]) for it in items if it[0] >= 0)


def _diagnosis(got: Value | None, want: Value | None, a: int, b: int) -> str:
    """Why `got` is not `want`, in words: what is missing, doubled, misplaced."""
    if got is None:
        return "it is never written"
    if got[0] == UNKNOWN:
        return (f"it depends on what this {got[1].name} writes (see the note); coll-check-semantics follows "
                f"the values of coll.copy, coll.combine, {' and '.join(HOST_COPIES)} only")
    if want is None:
        return "the claimed collective does not write it (no input reaches this output)"
    if got[0] is None and want[0] is None and got[2][0][0] != want[2][0][0]:
        return f"it holds x{got[2][0][0]}'s data instead of x{want[2][0][0]}'s"
    why = []
    if got[0] is not None and want[0] is not None and got[0] != want[0]:
        why.append(f"combined with '{got[0]}', expected '{want[0]}'")
    if any(it[0] < 0 for it in got[2]):
        why.append("it mixes reduction kinds")
    g, w = _leaves(got), _leaves(want)
    inputs = sorted({i for i, _ in g} | {i for i, _ in w})
    for i in inputs:
        gi = {t: c for (j, t), c in g.items() if j == i}
        wi = {t: c for (j, t), c in w.items() if j == i}
        if gi == wi:
            continue
        total = sum(gi.values())
        if not wi:
            why.append(f"x{i} must not contribute")
        elif not gi:
            why.append(f"x{i} is missing")
        elif total > sum(wi.values()) and set(gi) == set(wi):
            why.append(f"x{i} contributes {total} times")
        else:
            (t,) = wi
            wrong = sorted(set(gi) - set(wi))
            why.append(f"x{i} comes from x{i}[{a - wrong[0]}:{b - wrong[0]}] instead of "
                       f"x{i}[{a - t}:{b - t}] (the wrong slice)")
            if total > 1:
                why.append(f"x{i} contributes {total} times")
    return "; ".join(why) or "the values differ"


# -- regions ----------------------------------------------------------------------

def _runs(value: ir.Value, found: tuple[ir.Value, list[ir.Operation]] | None = None) -> Region:
    """(root, [(position, length)]) of memref `value`'s elements in
    row-major order, flattened in its root buffer, adjacent runs merged.
    `found`: root_of(value), when the caller has it."""
    root, chain = found or root_of(value)
    if any(op.name == "memref.view" for op in chain):
        raise Unsupported("a memref.view is not followed (its offset is an operand)")
    try:
        mt = ir.MemRefType(value.type)
        strides, offset = mt.get_strides_and_offset()
    except (ValueError, TypeError):
        raise Unsupported(f"{value.type} has no strided layout") from None
    dyn = ir.ShapedType.get_dynamic_stride_or_offset()
    shape = list(mt.shape)
    if any(d == 0 for d in shape):  # no element (its strides may read as dynamic)
        return root, []
    if offset == dyn or dyn in strides:
        # A memref.cast only forgets a static layout (naive casts strided
        # inputs to one type): the layout is its source's.
        cast = chain[-1] if chain and chain[-1].name == "memref.cast" else None
        if cast is not None:
            return _runs(cast.operands[0])
    if offset == dyn or dyn in strides or any(d < 0 for d in shape):
        raise Unsupported(f"{value.type} has a dynamic offset, stride or size; expected static ones")
    return root, _strided(shape, strides, offset, value.type)


def _strided(shape: Sequence[int], strides: Sequence[int], offset: int, what: object) -> list[tuple[int, int]]:
    """[(position, length)] of the elements of a strided box, row-major."""
    if any(d == 0 for d in shape):
        return []
    dims = [(d, s) for d, s in zip(shape, strides) if d != 1]
    block, k = 1, len(dims) - 1
    while k >= 0 and dims[k][1] == block:  # the contiguous innermost dims
        block *= dims[k][0]
        k -= 1
    outer = dims[:k + 1]
    count = 1
    for d, _ in outer:
        count *= d
    if count > MAX_RUNS:
        raise Unsupported(f"{what} is {count} separate runs, above the {MAX_RUNS} followed")
    starts = [offset]
    for d, s in outer:
        starts = [p + i * s for p in starts for i in range(d)]
    return [(p, block) for p in starts]


def _overlap(regions: Sequence[Region]) -> tuple[int, int] | None:
    """(i, j) of two regions ([(root, runs)]) that share an element, i == j
    for one that overlaps itself (a stride 0), else None."""
    roots: list[Root] = []
    spans: list[tuple[int, int, int, int]] = []
    for k, (root, runs) in enumerate(regions):
        if root not in roots:
            roots.append(root)
        r = roots.index(root)
        spans += [(r, p, p + n, k) for p, n in runs if n]
    spans.sort()
    for (r1, _, e1, k1), (r2, s2, _, k2) in zip(spans, spans[1:]):
        if r1 == r2 and s2 < e1:
            return (min(k1, k2), max(k1, k2))
    return None


class _Memory:
    """Per root buffer: sorted, disjoint written pieces [start, end, value, writer]."""

    def __init__(self) -> None:
        self.starts: dict[Root, list[int]] = {}
        self.pieces: dict[Root, list[Piece]] = {}

    def read(self, root: Root, a: int, b: int) -> list[Piece]:
        """[(start, end, value or None, writer)] covering [a, b)."""
        starts, pieces = self.starts.get(root, []), self.pieces.get(root, [])
        i = max(bisect_right(starts, a) - 1, 0)
        out: list[Piece] = []
        pos = a
        while i < len(pieces) and pieces[i][0] < b:
            s, e, v, w = pieces[i]
            i += 1
            if e <= pos:
                continue
            if s > pos:
                out.append((pos, s, None, None))
            out.append((max(s, pos), min(e, b), v, w))
            pos = min(e, b)
        if pos < b:
            out.append((pos, b, None, None))
        return out

    def write(self, root: Root, new: Sequence[Piece]) -> None:
        """Writes pieces `new` (sorted, contiguous [a, b))."""
        if not new:
            return
        a, b = new[0][0], new[-1][1]
        starts = self.starts.setdefault(root, [])
        pieces = self.pieces.setdefault(root, [])
        lo = max(bisect_right(starts, a) - 1, 0)
        while lo < len(pieces) and pieces[lo][1] <= a:
            lo += 1
        hi = lo
        while hi < len(pieces) and pieces[hi][0] < b:
            hi += 1
        keep = list(new)
        if lo < hi and pieces[lo][0] < a:
            keep.insert(0, (pieces[lo][0], a) + pieces[lo][2:])
        if lo < hi and pieces[hi - 1][1] > b:
            keep.append((b, pieces[hi - 1][1]) + pieces[hi - 1][2:])
        pieces[lo:hi] = keep
        starts[lo:hi] = [p[0] for p in keep]


def _name(v: ir.Value) -> str:
    try:
        return v.get_name()
    except Exception:  # a name is only for the message
        return "<buffer>"


# -- the checker -----------------------------------------------------------------

class _Claim:
    """Simulates the ops of one claim and compares its outputs with the spec."""

    def __init__(self, claim: Implements, ops: list[ir.Operation], tail: Sequence[ir.Operation] = ()) -> None:
        self.claim, self.ops = claim, ops
        self.mem = _Memory()
        self.findings: list[Finding] = []
        self.runs: dict[ir.Value, Region] = {}  # value -> _runs(value): slices are shared by many ops
        # claimed buffer -> [(device, role)] where the claim places it
        self.homes: dict[ir.Value, list[tuple[int, str]]] = {}
        self.misplaced: set[tuple[ir.Value, int]] = set()
        self.out_devices: list[int | None] = []  # per output, its claimed device
        self.tail = tail  # ops after the claim that no claim covers
        self.in_tail = False
        self._resolver: Resolver | None = None
        # The canonical order is claimed where it changes the bits (sum and
        # prod on floats): values are then ordered associations (_fold).
        elem = (str(ir.MemRefType(claim.inputs[0].type).element_type)
                if claim.inputs and isinstance(claim.inputs[0].type, ir.MemRefType) else "")
        self.ordered = (claim.order == CANONICAL and claim.kind in KINDS and elem in ELEMENTS
                        and order_matters(claim.kind, elem))
        self.applied = 0  # ops applied so far: which combine broke the order first
        self.reported_order: set[ir.Operation | None] = set()  # combines reported for the order

    def report(self, loc: ir.Location | None, message: str, notes: Iterable[Note] = ()) -> None:
        if len(self.findings) < MAX_FINDINGS:
            self.findings.append((loc, message, list(notes)))

    def region(self, op: ir.Operation, v: ir.Value) -> Region:
        try:
            r = self.runs.get(v)
            if r is None:
                found = root_of(v)
                r = self.runs[v] = _runs(v, found)
                if found[0] in self.homes:
                    self.check_home(op, *found)
            return r
        except Unsupported as e:
            raise PassError(f"coll-check-semantics cannot follow this {op.name}: {e}", op.location) from None

    def place(self, cls: type[Collective]) -> None:
        """Where the claim puts its buffers: as its collective does (a
        broadcast's input on the root, a reduce's output there, ...)."""
        claim = self.claim
        if claim.devices is None:
            return
        in_devs, out_devs = cls.placement(claim.devices, claim.root, claim.to_device)
        self.out_devices = list(out_devs)
        for group, devs, role in ((claim.inputs, in_devs, "input"), (claim.outputs, out_devs, "output")):
            for k, (v, d) in enumerate(zip(group, devs or [])):
                if d is not None:
                    self.homes.setdefault(root_of(v)[0], []).append((d, f"{role} #{k}"))

    def check_home(self, op: ir.Operation, root: ir.Value, chain: list[ir.Operation]) -> None:
        """A claimed buffer (`root`, viewed through `chain`) is used on the
        device the claim places it on: its first placement
        (memory_space_cast) names that device."""
        homes = self.homes.get(root)
        cast = next((c for c in chain if c.name == "memref.memory_space_cast"), None)
        if not homes or cast is None:
            return
        dev = device_of(cast.results[0].type)
        if dev is None or dev in [d for d, _ in homes] or (root, dev) in self.misplaced:
            return
        self.misplaced.add((root, dev))
        d, role = homes[0]
        what = self.claim.collective
        extra = f", the buffer of root {self.claim.root}" if self.claim.root == d else ""
        self.report(op.location, f"{op.name} uses {_name(root)} on device {dev}, but the claim places it "
                                 f"on device {d} ({role} of the claimed {what}{extra})",
                    [(cast.location, f"placed on device {dev} here"), (self.claim.location, "the claim")])

    def where(self, v: ir.Value, a: int, b: int) -> str:
        dev = device_of(v.type)
        return f"{_name(root_of(v)[0])}[{a}, {b})" + (f" on device {dev}" if dev is not None else "")

    def unwritten(self, op: ir.Operation, v: ir.Value, a: int, b: int) -> None:
        claim, root = self.claim, root_of(v)[0]
        outs = [root_of(o)[0] for o in claim.outputs]
        what = claim.collective
        if root in outs and root not in [root_of(x)[0] for x in claim.inputs]:
            why = f"{_name(root)} is output #{outs.index(root)} of the claimed {what}, not an input"
        else:
            why = f"it is no input of the claimed {what}"
        ins = ", ".join(_name(x) for x in claim.inputs)
        if claim.root is not None and len(claim.inputs) == 1:
            ins += f" (the buffer of root {claim.root})"
        self.report(op.location, f"{op.name} reads {self.where(v, a, b)}, which nothing has written: "
                                 f"{why} and no op before it in the program writes it; the claimed "
                                 f"input(s): {ins}",
                    [(claim.location, "the claim")])

    def run(self) -> list[Finding]:
        claim = self.claim
        found = SPECS.get(claim.collective)
        if found is None:
            raise PassError(f"no specification for collective '{claim.collective}'; expected one of: "
                            f"{', '.join(SPECS)}", claim.location)
        cls = found
        self.place(cls)
        ins = [self.region(claim.op, v) for v in claim.inputs]
        outs = [self.region(claim.op, v) for v in claim.outputs]
        for role, regions in (("input", ins), ("output", outs)):
            clash = _overlap(regions)
            if clash:
                a, b = clash
                what = f"{role} #{a} overlaps itself" if a == b else f"{role}s #{a} and #{b} overlap"
                raise PassError(f"coll.implements: {what}; expected distinct memory for each claimed "
                                f"{role}", claim.location)
        shapes = {tuple(ir.MemRefType(v.type).shape) for v in claim.inputs}
        out_shapes = {tuple(ir.MemRefType(v.type).shape) for v in claim.outputs}
        if len(shapes) != 1 or len(out_shapes) > 1:
            raise PassError("the claimed inputs (and outputs) must all have one shape", claim.location)
        shape = list(shapes.pop())
        try:
            spec = cls.spec(_Spec(claim, cls, shape, list(out_shapes.pop()) if out_shapes else shape), shape)
        except Unsupported as e:
            raise PassError(f"coll.implements {e}", claim.location) from None
        for i, (root, runs) in enumerate(ins):
            logical = 0
            for p, n in runs:
                self.mem.write(root, [(p, p + n, _leaf(i, p - logical), None)])
                logical += n
        for op in self.ops:
            self.apply(op)
        self.in_tail = True
        for op in self.tail:
            self.apply(op)
        for j, pieces in spec.items():
            self.check_output(j, outs[j], pieces)
        return self.findings

    def missing(self, op: ir.Operation) -> Value:
        """What a read of unwritten memory yields: POISON (reported at the
        read), or after the claimed program (its tail, which may read any
        buffer) a value not followed."""
        return (UNKNOWN, op) if self.in_tail else POISON

    def apply(self, op: ir.Operation) -> None:
        if op.name == Copy.NAME:
            self.copy(Copy.of(op))
        elif op.name == Combine.NAME:
            self.combine(Combine.of(op))
        elif op.name in COLLECTIVE_NAMES:  # after the claim: what it writes is not followed
            writes = cast(OpView, view(op)).writes
            self.clobber(op, [(v, None, True) for v in writes if isinstance(v.type, ir.MemRefType)])
        elif not op.name.startswith("coll."):
            self.host(op)

    def copy(self, c: Copy) -> None:
        self.move(c.op, c.source, c.target, self.region(c.op, c.source), self.region(c.op, c.target))

    def move(self, op: ir.Operation, source: ir.Value, target: ir.Value, src: Region, dst: Region) -> None:
        (sroot, sruns), (droot, druns) = src, dst
        writes, bad = [], None
        for (sp, dp), n in _aligned([sruns, druns]):
            new = []
            for a, b, v, _ in self.mem.read(sroot, sp, sp + n):
                if v is None:
                    bad = bad or (a, b)
                    v = self.missing(op)
                new.append((a + dp - sp, b + dp - sp, _moved(v, dp - sp), op))
            writes.append(new)
        if bad and not self.in_tail:
            self.unwritten(op, source, *bad)
        for new in writes:
            self.mem.write(droot, new)

    def host(self, op: ir.Operation) -> None:
        """A host op: a copy (HOST_COPIES) moves slices as coll.copy does;
        any other write (coll-check-order's model of its effects, a loop's
        or call's writes anywhere in their views) leaves its region holding
        a value that is not followed, named by the op."""
        if op.name == "func.return" or (not len(op.regions)
                                        and not any(isinstance(v.type, ir.MemRefType) for v in op.operands)):
            return
        eff = host_effects(op)
        if eff is None:  # not known: it may write every buffer it takes
            eff = ([], [(v, None, False) for v in op.operands if isinstance(v.type, ir.MemRefType)])
        reads, writes = eff
        if op.name in HOST_COPIES and len(reads) == 1 and len(writes) == 1 and writes[0][2]:
            try:
                src, dst = self.host_region(op, reads[0][0], None), self.host_region(op, writes[0][0], None)
                if sum(n for _, n in src[1]) == sum(n for _, n in dst[1]):
                    self.move(op, reads[0][0], writes[0][0], src, dst)
                    return
            except Unsupported:
                pass
        self.clobber(op, writes)

    def clobber(self, op: ir.Operation, writes: Iterable[Access]) -> None:
        """Each written region holds a value written by `op`, not followed."""
        for v, sub, exact in writes:
            try:
                root, runs = self.host_region(op, v, sub if exact else None)
            except Unsupported:  # somewhere in its root buffer
                root, runs = self.host_root(op, v), [(0, 1 << 62)]
            for p, n in runs:
                self.mem.write(root, [(p, p + n, (UNKNOWN, op), op)])

    def host_root(self, op: ir.Operation, v: ir.Value) -> ir.Value:
        """The buffer a host op's operand views; a located error where it is
        not known (as coll-check-order reports it)."""
        root = root_of(v)[0]
        try:
            self.resolver(op)._root(root)
        except Unresolved as e:
            raise PassError(f"coll-check-semantics cannot follow the writes of this {op.name}: {e}",
                            op.location) from None
        return root

    def resolver(self, op: ir.Operation) -> Resolver:
        if self._resolver is None:
            func = self.claim.op.parent
            self._resolver = Resolver(cast(ir.Operation, func))  # check_module: claims sit in functions
        return self._resolver

    def host_region(self, op: ir.Operation, v: ir.Value, sub: tuple[list[int], list[int]] | None) -> Region:
        """(root, runs) of a host op's access: its whole view (`sub` None),
        or the box (start, extents) in it."""
        root = self.host_root(op, v)
        if sub is None:
            return root, _runs(v)[1]
        try:
            mt = ir.MemRefType(v.type)
            strides, offset = mt.get_strides_and_offset()
        except (ValueError, TypeError):
            raise Unsupported(f"{v.type} has no strided layout") from None
        dyn = ir.ShapedType.get_dynamic_stride_or_offset()
        if offset == dyn or dyn in strides:
            raise Unsupported(f"{v.type} has a dynamic offset or stride")
        start, ext = sub
        return root, _strided(ext, strides, offset + sum(a * b for a, b in zip(start, strides)), v.type)

    def combine(self, c: Combine) -> None:
        regions = [self.region(c.op, v) for v in c.inputs + [c.out]]
        kind, writes, bad = cast(str, c.kind), [], None  # the verifier requires a kind
        at: tuple[int, ir.Operation] | None = None
        rounds_to: str | None = None
        if self.ordered:
            self.applied += 1
            at = (self.applied, c.op)
            out = str(ir.MemRefType(c.out.type).element_type)
            rounds_to = out if out in ELEMENTS and ELEMENTS[out].compute else None
        for pos, n in _aligned([runs for _, runs in regions]):
            q = pos[-1]
            # Each input's pieces, moved to the output positions.
            per_input, cuts = [], {q, q + n}
            for (root, _), p, v in zip(regions, pos, c.inputs):
                got = []
                for a, b, val, w in self.mem.read(root, p, p + n):
                    if val is None:
                        bad = bad or (v, a, b)
                        val = self.missing(c.op)
                    got.append((a + q - p, b + q - p, _moved(val, q - p), w))
                    cuts.add(a + q - p)
                per_input.append(got)
            bounds = sorted(cuts)
            idx = [0] * len(per_input)
            new = []
            for a, b in zip(bounds, bounds[1:]):
                vals, writers = [], []
                for k, got in enumerate(per_input):
                    while got[idx[k]][1] <= a:
                        idx[k] += 1
                    vals.append(got[idx[k]][2])
                    writers.append(got[idx[k]][3])
                v = next((x for x in vals if _opaque(x)), None)
                if v is None:
                    v = _fold(kind, vals, rounds_to, at, writers) if self.ordered else _combined(kind, vals)
                new.append((a, b, v, c.op))
            writes.append(new)
        if bad and not self.in_tail:
            self.unwritten(c.op, *bad)
        for new in writes:
            self.mem.write(regions[-1][0], new)

    def misordered(self, j: int, got: Value, want: Value, writer: ir.Operation | None,
                   la: int, lb: int, a: int, b: int) -> None:
        """Output #j [la, lb) combines the right inputs in another association
        than the claimed canonical one: reported at the first combine that
        broke it (once per combine)."""
        broke = got[4] if len(got) > 4 else None
        key = broke[1] if broke is not None else writer
        if key in self.reported_order:
            return
        self.reported_order.add(key)
        value = self.claim.outputs[j]
        devs = self.out_devices
        dev = f" on device {devs[j]}" if j < len(devs) and devs[j] is not None else ""
        what = (f"output #{j} ({_name(value)}{dev}) [{la}, {lb}) holds {_fold_text(got, a, b)} but the claimed "
                f"{self.claim.collective} (order = \"{CANONICAL}\") is {_fold_text(want, a, b)}")
        notes: list[Note] = [(self.claim.location, "the claim")]
        if broke is None:  # not expected: every combine records where it breaks the order
            self.report(self.claim.location, f"{what}: the association differs", notes)
            return
        _, op, why, other = broke
        if other is not None:
            notes.insert(0, (other.location, f"this {other.name} rounded it"))
        if writer is not None and writer != op:
            notes.append((writer.location, f"output #{j} last written by this {writer.name}"))
        self.report(op.location, f"{op.name} breaks the canonical order: {why}; {what}", notes)

    def check_output(self, j: int, region: Region, pieces: list[SpecPiece]) -> None:
        root, runs = region
        value = self.claim.outputs[j]
        # (logical a, logical b, got, want, writer, a, b)
        wrong: list[tuple[int, int, Value | None, Value | None, ir.Operation | None, int, int]] = []
        logical = 0
        pieces = sorted(pieces)
        starts = [pc[0] for pc in pieces]
        for p, n in runs:
            k = max(bisect_right(starts, logical) - 1, 0)
            for start, end, kind, sources in pieces[k:]:
                if start >= logical + n:
                    break
                lo, hi = max(start, logical), min(end, logical + n)
                if lo >= hi:
                    continue
                base = p - logical  # position of logical element e: e + base
                # No sources: the output keeps what it held (nothing writes it).
                leaves = [_leaf(i, base + d) for i, d in sources]
                want = (None if not sources else _fold(kind, leaves, None, None)
                        if self.ordered and kind is not None and len(leaves) > 1 else _combined(kind, leaves))
                for a, b, got, writer in self.mem.read(root, lo + base, hi + base):
                    if _same(got, want) or got is POISON:  # poison: reported at its read
                        continue
                    said = want
                    if self.ordered:  # the multiset first: a wrong input is said as without the order
                        if (want is not None and len(want) > 4 and got is not None and not _opaque(got)
                                and _unordered(got) == _unordered(want)):
                            self.misordered(j, got, want, writer, a - base, b - base, a, b)
                            continue
                        got = None if got is None else _unordered(got)
                        said = None if want is None else _unordered(want)
                    w = (a - base, b - base, got, said, writer, a, b)
                    if wrong and wrong[-1][1] == w[0] and wrong[-1][2:5] == w[2:5]:
                        w = (wrong[-1][0],) + w[1:5] + (wrong[-1][5], b)
                        wrong[-1] = w
                    else:
                        wrong.append(w)
            logical += n
        devs = self.out_devices
        dev = f" on device {devs[j]}" if j < len(devs) and devs[j] is not None else ""
        for k, (la, lb, got, want, writer, a, b) in enumerate(wrong[:3]):
            msg = (f"output #{j} ({_name(value)}{dev}) [{la}, {lb}) holds {_describe(got, a, b)} "
                   f"but should hold {_describe(want, a, b)}: {_diagnosis(got, want, a, b)}")
            notes = [(writer.location, f"last written by this {writer.name}")] if writer is not None else []
            if got is not None and got[0] == UNKNOWN and got[1] != writer:
                notes.append((got[1].location, f"this {got[1].name} wrote a value it depends on"))
            if k == 2 and len(wrong) > 3:
                notes.append((self.claim.location, f"and {len(wrong) - 3} more wrong regions of output #{j}"))
            self.report(self.claim.location, msg, notes)


def _host_writer(op: ir.Operation) -> bool:
    """Whether a host op (not coll) may write memory: coll-check-order's
    model of its effects (an op it does not know: taken to write)."""
    if op.name.startswith("coll.") or op.name == "func.return":
        return False
    if not len(op.regions) and not any(isinstance(v.type, ir.MemRefType) for v in op.operands):
        return False
    eff = host_effects(op)
    return eff is None or bool(eff[1])


def _program(block: ir.Block) -> dict[ir.Operation, tuple[list[ir.Operation], list[ir.Operation]]]:
    """{claim op: ([ops it covers, in block order], [its tail])} for the
    claims of a block. A claim covers the ops its token depends on; the host
    runs a host op that writes memory (memref.store, memref.copy, linalg, a
    loop, a call) once it has reached it, after everything it waited for,
    and issues every later op after it, so such an op orders like a
    coll.wait. Its tail (a claim of the whole function, `_whole`): the ops
    after it that no claim covers (a write into an output after the final
    wait), applied before its outputs are compared with the specification."""
    ops = [op.operation for op in block.operations]
    index = {op: i for i, op in enumerate(ops)}
    tok = token_type()
    preds: list[list[int]] = []
    last_wait: int | None = None
    for i, op in enumerate(ops):
        waits = [] if not op.name.startswith("coll.") else [  # only coll ops take tokens
            index[v.owner.operation] for v in op.operands
            if v.type == tok and isinstance(v, ir.OpResult) and v.owner.operation in index]
        if last_wait is not None:
            waits.append(last_wait)
        preds.append(waits)
        if op.name == "coll.wait" or _host_writer(op):
            last_wait = i
    taken: set[int] = set()
    covered: dict[int, set[int]] = {}
    for i, op in enumerate(ops):
        if op.name != Implements.NAME:
            continue
        seen: set[int] = set()
        stack = [i]
        while stack:
            for p in preds[stack.pop()]:
                if p not in seen and p not in taken:
                    seen.add(p)
                    stack.append(p)
        taken |= seen
        covered[i] = seen
    out: dict[ir.Operation, tuple[list[ir.Operation], list[ir.Operation]]] = {}
    for i, seen in covered.items():
        mine = [ops[k] for k in sorted(seen)]
        if _whole(ops[i], block):
            out[ops[i]] = (mine, [ops[k] for k in range(i + 1, len(ops)) if k not in taken])
        else:  # its inputs are what the ops before its first copy or combine left there
            first = next((k for k, op in enumerate(mine) if op.name in DATA_OPS), len(mine))
            out[ops[i]] = ([op for k, op in enumerate(mine) if k >= first or op.name.startswith("coll.")], [])
    return out


def _whole(claim_op: ir.Operation, block: ir.Block) -> bool:
    """Whether a claim is its function's: its buffers are the function's
    arguments, in order (inputs, then the outputs that are not inputs), so
    that what the caller gets (and coll-run checks) is the claimed
    collective. Then what the function does after the claimed program (a
    write into an output after the final wait) is part of it. A claim of
    one collective inside a larger program (local work around it) speaks
    of the program ending in its token only (so is the lowering's claim of
    a collective op, `lowered`): its inputs are what the host
    ops before its first copy or combine left in them."""
    c = Implements.of(claim_op)
    if c.lowered:  # the lowering's claim of one collective op
        return False
    ins = list(c.inputs)
    return ins + [o for o in c.outputs if o not in ins] == list(block.arguments)


def check_module(module_op: ir.Operation) -> list[Finding]:
    """[(location, message, notes)] for every claim under module_op."""
    findings: list[Finding] = []
    found = find_ops(module_op, lambda n: n in (Implements.NAME, "func.func"))  # one walk for both
    for claim_op in found:
        if claim_op.name == Implements.NAME and (claim_op.parent is None or claim_op.parent.name != "func.func"):
            raise PassError("coll.implements must be at the top level of a function", claim_op.location)
    for func in [op for op in found if op.name == "func.func"]:
        for block in func.regions[0].blocks:
            for claim_op, (ops, tail) in _program(block).items():
                lowered = [op for op in ops if op.name in COLLECTIVE_NAMES]
                if lowered:
                    raise PassError(f"the program claimed here still holds a {lowered[0].name}; lower it "
                                    "first (coll-lower-collectives)", claim_op.location,
                                    [(lowered[0].location, f"this {lowered[0].name}")])
                findings += _Claim(Implements.of(claim_op), ops, tail).run()
    return findings


def unclaimed(module_op: ir.Operation) -> list[tuple[ir.Location, str]]:
    """[(location, message)]: per function, its first coll.copy or
    coll.combine that no claim covers (nothing checks what it computes)."""
    out: list[tuple[ir.Location, str]] = []
    for func in find_ops(module_op, "func.func"):
        covered: set[ir.Operation] = set()
        for block in func.regions[0].blocks:
            for ops, _ in _program(block).values():
                covered.update(ops)
        loose = [op for op in find_ops(func, lambda n: n in DATA_OPS) if op not in covered]
        if loose:
            others = f" (and {len(loose) - 1} more coll.copy/coll.combine of this function)" if len(loose) > 1 else ""
            out.append((loose[0].location,
                        f"coll-check-semantics: this {loose[0].name}{others} belongs to no coll.implements "
                        "claim, so nothing checks what it computes; add a coll.implements that names the "
                        "collective the program implements, after its final token"))
    return out


@register("coll-check-semantics",
          "Prove that every explicit program claimed by a coll.implements computes its collective: "
          "each output region holds every input exactly once, combined with the right kind, from "
          "the right place, and nothing unwritten is read")
def check_semantics(module_op: ir.Operation) -> None:
    findings = check_module(module_op)
    for loc, msg in unclaimed(module_op):
        warn(loc, msg)
    if findings:
        raise SemanticsError(findings)
