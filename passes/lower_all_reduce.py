"""coll-lower-all-reduce: collective level -> explicit level (ALGORITHM.md).

Each coll.all_reduce becomes per-device copies, combines that write straight
into their final slice, and a coll.join of the program's terminal tokens,
which replaces the collective's token; a coll.implements next to it records
what the program computes (checked by coll-check-semantics).
"""
from mlir import ir
from mlir.dialects import memref

from ..core.errors import PassError
from ..ir import builders
from ..ir.ops import AllReduce
from ..ir.types import device_of, flat_type, numel as numel_of
from ..ir.walk import find_ops
from .chunking import chunks

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


class _Emitter:
    """Emits the explicit program of one all_reduce before it."""

    def __init__(self, op):
        ar = AllReduce.of(op)
        self.op = op
        self.kind = ar.kind
        self.devices = ar.devices
        self.n = len(self.devices)
        self.mtype = ir.MemRefType(ar.inputs[0].type)
        self.elem = self.mtype.element_type
        self.numel = numel_of(self.mtype)
        self.to_device = ar.to_device
        self.x = [self.flat(v, d) for v, d in zip(ar.inputs, self.devices)]
        self.y = [self.flat(v, d) for v, d in zip(ar.outputs, ar.output_devices)]
        self.tokens = []      # every token emitted, in order
        self.consumed = set()  # tokens some emitted op waits for
        self._slices = {}

    # -- views ---------------------------------------------------------------
    def flat(self, value, device):
        """`value` placed on `device` and flattened to rank 1."""
        mt = ir.MemRefType(value.type)
        placed = ir.MemRefType.get(mt.shape, mt.element_type, None,
                                   ir.Attribute.parse(f"#coll.device<{device}>"))
        v = memref.memory_space_cast(placed, value)
        flat = flat_type(self.elem, self.numel, device)
        rank = len(mt.shape)
        if rank == 1:
            return v
        if rank == 0:
            return memref.expand_shape(flat, v, [], [], [1])
        return memref.collapse_shape(flat, v, [list(range(rank))])

    def slice(self, buf, start, size):
        """buf[start:start+size] as a memref.subview (one per region)."""
        if start == 0 and size == self.numel:
            return buf
        key = (buf, start, size)
        if key not in self._slices:
            rt = flat_type(self.elem, size, device_of(buf.type), offset=start)
            self._slices[key] = builders.subview(buf, [start], [size], rt)
        return self._slices[key]

    def scratch(self, device, size):
        return builders.alloc(flat_type(self.elem, size, device))

    # -- async ops, tracked so the final join names only terminal tokens ----
    def _track(self, tok, deps):
        self.consumed.update(d for d in deps if d is not None)
        self.tokens.append(tok)
        return tok

    def copy(self, src, dst, deps=()):
        return self._track(builders.copy(src, dst, deps), deps)

    def combine(self, lhs, rhs, out, deps=()):
        return self._track(builders.combine(lhs, rhs, out, self.kind, deps), deps)

    def finish(self):
        terminal = [t for t in self.tokens if t not in self.consumed]
        return builders.join(terminal)

    # -- strategies ----------------------------------------------------------
    def identity(self):
        """N = 1: the result is the input, one copy on the device (no kernel)."""
        self.copy(self.x[0], self.y[0])

    def naive(self):
        n, devs = self.n, self.devices
        if self.to_device is None:
            for j in range(n):
                recv, deps = [], []
                for i in range(n):
                    if i != j:
                        r = self.scratch(devs[j], self.numel)
                        deps.append(self.copy(self.x[i], r))
                        recv.append(r)
                self.combine(self.x[j], recv, self.y[j], deps)
            return
        t, y = self.to_device, self.y[0]
        own = [i for i in range(n) if devs[i] == t]
        others = [i for i in range(n) if devs[i] != t]
        deps, recv = [], []
        if own:
            lhs = self.x[own[0]]
        else:  # the target holds no input: the first copy lands in the output
            first = others.pop(0)
            deps.append(self.copy(self.x[first], y))
            lhs = y
        for i in others:
            r = self.scratch(t, self.numel)
            deps.append(self.copy(self.x[i], r))
            recv.append(r)
        if recv or own:
            self.combine(lhs, recv, y, deps)

    def all2all(self):
        n, devs = self.n, self.devices
        for c, (s, size) in enumerate(chunks(self.numel, n)):
            if size == 0:
                continue
            owner = devs[c]
            recv, deps = [], []
            for j in range(n):
                if j != c:
                    r = self.scratch(owner, size)
                    deps.append(self.copy(self.slice(self.x[j], s, size), r))
                    recv.append(r)
            out = self.result_slice(owner, s, size, default=recv[0])
            done = self.combine(self.slice(self.x[c], s, size), recv, out, deps)
            self.deliver(c, owner, out, s, size, done, hops=[
                (c, j) for j in range(n) if j != c])

    def ring(self):
        n, devs = self.n, self.devices
        for c, (s, size) in enumerate(chunks(self.numel, n)):
            if size == 0:
                continue
            partial, tok = self.slice(self.x[c], s, size), None
            for k in range(n - 1):
                dst = (c + k + 1) % n
                r = self.scratch(devs[dst], size)
                tok = self.copy(partial, r, [tok])
                out = r
                if k == n - 2:
                    out = self.result_slice(devs[dst], s, size, default=r)
                tok = self.combine(r, [self.slice(self.x[dst], s, size)], out, [tok])
                partial = out
            start = (c - 1) % n
            # Allgather hop by hop around the ring, each after the one before.
            self.deliver(c, devs[start], partial, s, size, tok, hops=[
                ((start + k - 1) % n, (start + k) % n) for k in range(1, n)], chain=True)

    # -- shared tails ----------------------------------------------------------
    def result_slice(self, device, s, size, default):
        """Where the reduced chunk is written: the result slice when `device`
        holds a result, else `default` (scratch, then one copy to the target)."""
        if self.to_device is None:
            return self.slice(self.y[self.devices.index(device)], s, size)
        if device == self.to_device:
            return self.slice(self.y[0], s, size)
        return default

    def deliver(self, c, device, reduced, s, size, done, hops, chain=False):
        """Allgather of chunk c (multi-device) or its copy to the target."""
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


# The strategies coll-lower-all-reduce implements, by the name the
# `strategy` attribute gives (ir/ops.py AllReduce.STRATEGIES lists them).
STRATEGIES = {"naive": _Emitter.naive, "ring": _Emitter.ring, "all2all": _Emitter.all2all}


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


def lower_op(op, strategy="auto", threshold=DEFAULT_THRESHOLD):
    """Replaces one coll.all_reduce with its explicit program. Returns the
    strategy used: the op's `strategy` attribute (what coll-choose-strategy
    wrote), else `strategy`, with `auto` resolved by the reference rule."""
    ar = AllReduce.of(op)
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
        if e.n == 1 or e.numel == 0:
            if e.numel:
                e.identity()
        else:
            STRATEGIES[chosen](e)
        final = e.finish()
        # What the program claims to compute, for coll-check-semantics.
        builders.implements(ar.inputs, ar.outputs, final, "all_reduce", kind=ar.kind,
                            devices=ar.devices, to_device=ar.to_device)
    op.result.replace_all_uses_with(final)
    op.erase()
    return chosen


def lower_all_reduce(module_op, strategy="auto", threshold=DEFAULT_THRESHOLD):
    """Lowers every coll.all_reduce under module_op."""
    return [lower_op(op, strategy, threshold)
            for op in find_ops(module_op, AllReduce.NAME)]
