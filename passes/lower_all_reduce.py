"""coll-lower-all-reduce: collective level -> explicit level (docs/algorithm.md).

Each coll.all_reduce becomes per-device copies, combines that write straight
into their final slice, and a coll.join of the program's terminal tokens,
which replaces the collective's token.
"""
from mlir import ir
from mlir.dialects import memref

from ..core.errors import PassError
from ..ir import peers
from ..ir.ops import AllReduce
from ..ir.walk import find_ops
from .chunking import chunks
from .emit import Emitter, claim, replace, require_global_view, require_memref_form
from .lower_rooted import broadcast_tree, reduce_tree
from .peer_strategies import oneshot, twoshot

DEFAULT_THRESHOLD = 256000


def reference_rule(n, numel, threshold=DEFAULT_THRESHOLD):
    """The reference compiler's default: ring when N > 2 and numel >
    threshold, else naive (coll-choose-strategy without a profile)."""
    return "ring" if n > 2 and numel > threshold else "naive"


def choose_strategy(requested, n, numel, threshold=DEFAULT_THRESHOLD):
    """An explicit strategy wins; `auto` (or none) is the reference rule."""
    if requested and requested != "auto":
        return requested
    return reference_rule(n, numel, threshold)


class _Emitter(Emitter):
    """An all_reduce's program: the shared pieces (passes/emit.py) plus its
    result slices and its allgather (or copy to the one target)."""

    def __init__(self, op):
        super().__init__(op)
        self.to_device = self.c.to_device

    def result_slice(self, device, s, size, default):
        """Where the reduced chunk is written: the result slice when `device`
        holds a result, else `default` (scratch, then one copy to the target)."""
        if self.to_device is None:
            return self.slice(self.y[self.devices.index(device)], s, size)
        if device == self.to_device:
            return self.slice(self.y[0], s, size)
        return default

    def deliver(self, device, reduced, s, size, done, hops, chain=False):
        """Allgather of a reduced chunk (multi-device) or its copy to the target."""
        if self.to_device is not None:
            if device != self.to_device:
                self.copy(reduced, self.slice(self.y[0], s, size), [done])
            return
        tok = done
        for src, dst in hops:
            src_buf = self.slice(self.y[src], s, size)
            t = self.copy(src_buf, self.slice(self.y[dst], s, size), [tok if chain else done])
            if chain:
                tok = t


# -- strategies ----------------------------------------------------------------
def identity(e):
    """N = 1: the result is the input, one copy on the device (no kernel)."""
    if e.x[0] != e.y[0]:
        e.copy(e.x[0], e.y[0])


def _one_type(values):
    """`values` as one type (a combine's rhs group is one IRDL type): a
    strided input next to scratch is cast to the dynamic-offset layout."""
    if len({v.type for v in values}) <= 1:
        return values
    out = []
    for v in values:
        mt = ir.MemRefType(v.type)
        dyn = ir.StridedLayoutAttr.get(ir.ShapedType.get_dynamic_stride_or_offset(), [1])
        out.append(memref.cast(ir.MemRefType.get(mt.shape, mt.element_type, dyn, mt.memory_space), v))
    return out


def _combine_in_order(e, operands, out, deps):
    """One combine of `operands` in device order x_0 .. x_{N-1}: every
    device computes the same expression, so every replica rounds alike."""
    return e.combine(operands[0], _one_type(operands[1:]), out, deps)


def naive(e):
    n, devs = e.n, e.devices
    if e.to_device is None:
        # In place (y_j is x_j) every copy is emitted first, and device j
        # combines only after the copies that read x_j as well. Device j
        # reads its own input in place, at its position in device order.
        in_place = e.y[0] == e.x[0]
        for group in [list(range(n))] if in_place else [[j] for j in range(n)]:
            operands, into, out_of = {}, {j: [] for j in range(n)}, {i: [] for i in range(n)}
            for j in group:
                operands[j] = []
                for i in range(n):
                    if i == j:
                        operands[j].append(e.x[j])
                        continue
                    r = e.scratch(devs[j], e.numel)
                    t = e.copy(e.x[i], r)
                    operands[j].append(r)
                    into[j].append(t)
                    out_of[i].append(t)
            for j in group:
                _combine_in_order(e, operands[j], e.y[j], into[j] + (out_of[j] if in_place else []))
        return
    # Device order here too; when the target holds no input, x_0's copy
    # lands in the output and is the first operand.
    t, y = e.to_device, e.y[0]
    operands, deps, holds = [], [], t in devs
    for i in range(n):
        if devs[i] == t:
            operands.append(e.x[i])
            continue
        dst = y if i == 0 and not holds else e.scratch(t, e.numel)
        deps.append(e.copy(e.x[i], dst))
        operands.append(dst)
    _combine_in_order(e, operands, y, deps)


def all2all(e):
    n, devs = e.n, e.devices
    for c, (s, size) in enumerate(chunks(e.numel, n)):
        if size == 0:
            continue
        owner = devs[c]
        recv, deps = [], []
        for j in range(n):
            if j != c:
                r = e.scratch(owner, size)
                deps.append(e.copy(e.slice(e.x[j], s, size), r))
                recv.append(r)
        out = e.result_slice(owner, s, size, default=recv[0])
        done = e.combine(e.slice(e.x[c], s, size), recv, out, deps)
        e.deliver(owner, out, s, size, done, hops=[(c, j) for j in range(n) if j != c])


def ring(e):
    n, devs = e.n, e.devices
    for c, (s, size) in enumerate(chunks(e.numel, n)):
        if size == 0:
            continue
        partial, tok = e.slice(e.x[c], s, size), None
        for k in range(n - 1):
            dst = (c + k + 1) % n
            r = e.scratch(devs[dst], size)
            tok = e.copy(partial, r, [tok])
            out = r
            if k == n - 2:
                out = e.result_slice(devs[dst], s, size, default=r)
            tok = e.combine(r, [e.slice(e.x[dst], s, size)], out, [tok])
            partial = out
        start = (c - 1) % n
        # Allgather hop by hop around the ring, each after the one before.
        e.deliver(devs[start], partial, s, size, tok, hops=[
            ((start + k - 1) % n, (start + k) % n) for k in range(1, n)], chain=True)


def rhd(e):
    """Recursive halving reduce-scatter, then recursive doubling allgather,
    over the largest power of two p <= N (ranks in device order); the first
    2(N - p) devices fold in pairwise first (2i sends to 2i+1) and get the
    result back at the end."""
    n, devs, multi = e.n, e.devices, e.to_device is None
    p = 1 << (n.bit_length() - 1)
    extra = n - p
    at = [2 * i + 1 for i in range(extra)] + list(range(2 * extra, n))  # rank -> device index
    acc = [e.y[i] if multi else e.scratch(devs[i], e.numel) for i in at]  # its partials
    part, tok = [e.x[i] for i in at], [[] for _ in at]
    for q in range(extra):  # fold-in, operands in device order
        r = e.scratch(devs[at[q]], e.numel)
        tok[q] = [e.combine(r, [e.x[at[q]]], acc[q], [e.copy(e.x[at[q] - 1], r)])]
        part[q] = acc[q]
    cuts = [s for s, _ in chunks(e.numel, p)] + [e.numel]
    span = lambda lo, hi: (cuts[lo], cuts[hi] - cuts[lo])  # noqa: E731
    held = [(0, p)] * p  # the chunks rank q is responsible for
    d = p // 2
    while d:  # halving: get the partner's partial of the half it keeps, combine
        recv = {}
        for q in range(p):
            lo, hi = held[q]
            held[q] = (lo, (lo + hi) // 2) if q & d == 0 else ((lo + hi) // 2, hi)
            s, size = span(*held[q])
            if size:
                r = e.scratch(devs[at[q]], size)
                recv[q] = (r, e.copy(e.slice(part[q ^ d], s, size), r, [tok[q ^ d]]))
        for q, (r, t) in recv.items():
            s, size = span(*held[q])
            pair = (r, e.slice(part[q], s, size))[:: 1 if q ^ d < q else -1]
            tok[q] = [e.combine(pair[0], [pair[1]], e.slice(acc[q], s, size), [t, tok[q]])]
        part = list(acc)  # only the (non-empty) ranges written above are read
        d //= 2
    if not multi:  # each rank's reduced chunk to the target
        for q in range(p):
            s, size = span(*held[q])
            if size:
                e.copy(e.slice(acc[q], s, size), e.slice(e.y[0], s, size), [tok[q]])
        return
    d = 1
    while d < p:  # doubling: everything a rank holds into its partner's output
        sent = [None] * p
        for q in range(p):
            s, size = span(*held[q])
            if size:
                sent[q] = e.copy(e.slice(acc[q], s, size), e.slice(acc[q ^ d], s, size), [tok[q]])
        tok = [tok[q] + [sent[q ^ d]] for q in range(p)]
        held = [(min(held[q][0], held[q ^ d][0]), max(held[q][1], held[q ^ d][1])) for q in range(p)]
        d *= 2
    for q in range(extra):  # fold-out: the result back to the even device
        e.copy(e.y[at[q]], e.y[at[q] - 1], [tok[q]])


def tree(e):
    """Binomial tree reduce to the first device (or the target), then a
    binomial tree broadcast from it: every replica gets the same bits."""
    if e.to_device is not None:
        reduce_tree(e, e.x, e.devices, e.y[0], e.to_device)
        return
    done = reduce_tree(e, e.x, e.devices, e.y[0], e.devices[0])
    broadcast_tree(e, e.y[0], e.devices[0], e.y, e.devices, after=done)


# The strategies coll-lower-all-reduce implements, by the name the
# `strategy` attribute gives (ir/ops.py AllReduce.STRATEGIES lists them).
STRATEGIES = {"naive": naive, "ring": ring, "all2all": all2all, "rhd": rhd, "tree": tree,
              "oneshot": oneshot, "twoshot": twoshot}


MAX_OPS = 2_000_000  # above this, building the program would exhaust memory


def estimated_ops(strategy, n, numel):
    """An upper bound on the ops one all_reduce lowers to (casts included)."""
    if n == 1 or numel == 0:
        return 2 * n + 4
    if strategy == "naive":
        return 2 * n * n + 3 * n
    busy = sum(1 for _, size in chunks(numel, n) if size)
    return busy * 6 * n + 2 * n + 4


def check_size(op, strategy, n, numel):
    size = estimated_ops(strategy, n, numel)
    if size > MAX_OPS:
        raise PassError(f"lowering this all_reduce ({n} devices, strategy {strategy}) would emit "
                        f"about {size} ops, above the limit of {MAX_OPS}; use fewer devices or "
                        f"another strategy", op.location)


def check_global_form(op, c):
    """The lowerings take one buffer per device: an SPMD-form collective
    (one rank's buffers, `devices` naming the group) is refused, located."""
    if len(c.inputs) != len(c.input_devices) or len(c.outputs) != len(c.output_devices):
        raise PassError(f"{op.name} has {len(c.inputs)} input(s) and {len(c.outputs)} output(s) for "
                        f"devices {list(c.devices)}; expected one buffer per device (an SPMD-form "
                        "collective needs coll-spmd-to-global first)", op.location)


def lower_op(op, strategy="auto", threshold=DEFAULT_THRESHOLD):
    """Replaces one coll.all_reduce with its explicit program. Returns the
    strategy used: the op's `strategy` attribute (what coll-choose-strategy
    wrote), else `strategy`, with `auto` resolved by the reference rule."""
    require_memref_form(op)
    require_global_view(op)
    ar = AllReduce.of(op)
    check_global_form(op, ar)
    requested = ar.strategy if ar.strategy not in (None, "auto") else strategy
    if ar.threshold is not None:
        threshold = ar.threshold
    with ir.InsertionPoint(op), op.location:
        e = _Emitter(op)
        chosen = choose_strategy(requested, e.n, e.numel, threshold)
        if chosen not in STRATEGIES:
            raise PassError(f"unknown strategy '{chosen}'; expected one of: {', '.join(STRATEGIES)}",
                            op.location)
        check_size(op, chosen, e.n, e.numel)
        if chosen in AllReduce.PEER_STRATEGIES and e.n > 1 and not peers.enabled(op):
            raise PassError(f"strategy '{chosen}' reads buffers of other devices in place; the "
                            f"module has no '{peers.ATTR}' (set it when the devices can address "
                            "each other's memory, e.g. logical devices on one GPU)", op.location)
        if e.n == 1 or e.numel == 0:
            if e.numel:
                identity(e)
        else:
            STRATEGIES[chosen](e)
        final = e.finish()
        claim(ar, final)  # what the program computes, for coll-check-semantics
    replace(op, final)
    return chosen


def lower_all_reduce(module_op, strategy="auto", threshold=DEFAULT_THRESHOLD):
    """Lowers every coll.all_reduce under module_op."""
    return [lower_op(op, strategy, threshold)
            for op in find_ops(module_op, AllReduce.NAME)]
