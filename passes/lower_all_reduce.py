"""coll-lower-all-reduce: collective level -> explicit level (ALGORITHM.md).

Each coll.all_reduce becomes per-device copies, combines that write straight
into their final slice, and a coll.join of the program's terminal tokens,
which replaces the collective's token.
"""
from mlir import ir

from ..core.errors import PassError
from ..ir.ops import AllReduce
from ..ir.walk import find_ops
from .chunking import chunks
from .emit import Emitter, replace
from .lower_rooted import broadcast_tree, reduce_tree

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


def naive(e):
    n, devs = e.n, e.devices
    if e.to_device is None:
        # In place (y_j is x_j) every copy is emitted first, and device j
        # combines only after the copies that read x_j as well.
        in_place = e.y[0] == e.x[0]
        for group in [list(range(n))] if in_place else [[j] for j in range(n)]:
            recv, into, out_of = {}, {j: [] for j in range(n)}, {i: [] for i in range(n)}
            for j in group:
                recv[j] = []
                for i in range(n):
                    if i != j:
                        r = e.scratch(devs[j], e.numel)
                        t = e.copy(e.x[i], r)
                        recv[j].append(r)
                        into[j].append(t)
                        out_of[i].append(t)
            for j in group:
                e.combine(e.x[j], recv[j], e.y[j], into[j] + (out_of[j] if in_place else []))
        return
    t, y = e.to_device, e.y[0]
    own = [i for i in range(n) if devs[i] == t]
    others = [i for i in range(n) if devs[i] != t]
    deps, recv = [], []
    if own:
        lhs = e.x[own[0]]
    else:  # the target holds no input: the first copy lands in the output
        first = others.pop(0)
        deps.append(e.copy(e.x[first], y))
        lhs = y
    for i in others:
        r = e.scratch(t, e.numel)
        deps.append(e.copy(e.x[i], r))
        recv.append(r)
    if recv or own:
        e.combine(lhs, recv, y, deps)


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
    over the largest power of two p <= N; the first 2(N - p) devices fold in
    pairwise first (2i sends to 2i+1) and get the result back at the end."""
    n, devs = e.n, e.devices
    p = 1 << (n.bit_length() - 1)
    extra = n - p
    multi = e.to_device is None
    acc = {}   # device index -> the buffer its partial lives in
    tok = {}   # device index -> tokens of the writes to it

    def accumulator(i):
        return e.y[i] if multi else e.scratch(devs[i], e.numel)

    for i in range(extra):  # fold-in: operands in device order
        lo, hi = 2 * i, 2 * i + 1
        r = e.scratch(devs[hi], e.numel)
        acc[hi] = accumulator(hi)
        tok[hi] = [e.combine(r, [e.x[hi]], acc[hi], [e.copy(e.x[lo], r)])]
    active = [2 * i + 1 for i in range(extra)] + list(range(2 * extra, n))
    part = {i: acc.get(i, e.x[i]) for i in active}
    cuts = [s for s, _ in chunks(e.numel, p)] + [e.numel]
    held = {q: (0, p) for q in range(p)}   # the chunk range rank q holds
    span = lambda a, b: (cuts[a], cuts[b] - cuts[a])

    d = p // 2
    while d:  # halving: exchange the half the partner keeps, combine the other
        sends = {}
        for q in range(p):
            a, b = held[q]
            mid = (a + b) // 2
            held[q] = (a, mid) if q & d == 0 else (mid, b)
            (s, size) = span(*held[q])
            if size:
                src = active[q ^ d]
                r = e.scratch(devs[active[q]], size)
                sends[q] = (r, e.copy(e.slice(part[src], s, size), r, [tok.get(src)]))
        for q, (r, t) in sends.items():
            i, (s, size) = active[q], span(*held[q])
            if i not in acc:
                acc[i] = accumulator(i)
            mine, out = e.slice(part[i], s, size), e.slice(acc[i], s, size)
            lhs, rhs = (r, mine) if active[q ^ d] < i else (mine, r)
            tok[i] = [e.combine(lhs, [rhs], out, [t, tok.get(i)])]
        for q in range(p):
            part[active[q]] = acc.get(active[q], part[active[q]])
        d //= 2
    if not multi:  # each rank's reduced chunk to the target
        for q in range(p):
            s, size = span(*held[q])
            if size:
                e.copy(e.slice(acc[active[q]], s, size), e.slice(e.y[0], s, size), [tok.get(active[q])])
        return
    d = 1
    while d < p:  # doubling: send what it holds to the partner's output
        new = {}
        for q in range(p):
            src, s_size = active[q ^ d], span(*held[q ^ d])
            if s_size[1]:
                new[q] = e.copy(e.slice(e.y[src], *s_size), e.slice(e.y[active[q]], *s_size),
                                [tok.get(src)])
        for q in range(p):
            tok[active[q]] = list(_flat_toks(tok.get(active[q]))) + ([new[q]] if q in new else [])
            a, b = held[q]
            pa, pb = held[q ^ d]
            held[q] = (min(a, pa), max(b, pb))
        d *= 2
    for i in range(extra):  # fold-out: the result back to the even device
        e.copy(e.y[2 * i + 1], e.y[2 * i], [tok.get(2 * i + 1)])


def _flat_toks(t):
    return [x for x in (t or []) if x is not None]


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
STRATEGIES = {"naive": naive, "ring": ring, "all2all": all2all, "rhd": rhd, "tree": tree}


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
                identity(e)
        else:
            STRATEGIES[chosen](e)
        final = e.finish()
    replace(op, final)
    return chosen


def lower_all_reduce(module_op, strategy="auto", threshold=DEFAULT_THRESHOLD):
    """Lowers every coll.all_reduce under module_op."""
    return [lower_op(op, strategy, threshold)
            for op in find_ops(module_op, AllReduce.NAME)]
