"""coll.all_reduce: every output (or the one on `to_device`) = (+)_i inputs[i].

Everything that is the all_reduce's: its op class, its strategies (the
reference compiler's naive, ring and all2all, docs/algorithm.md; rhd and
tree; oneshot and twoshot where devices address each other's memory), its
default rule, its specification and numpy reference, its shard mapping.
Under the default order contract (ir/ops.py ORDERS, docs/algorithm.md)
every strategy sums in device order, ((x_0 + x_1) + x_2) ..., so the bits
depend on no strategy; ring, rhd and tree have a device-order form and
their own (order = "any"). Replicas agree bit for bit either way.
"""
from collections.abc import Callable, Iterable, Sequence
from typing import Any, cast

import numpy as np
from mlir import ir

from ..ir.ops import EACH, EACH_OR_TO_DEVICE, PEER_ACCESS, Placement, register_op
from ..ir.peers import peer_view
from . import spec
from .base import DEFAULT_THRESHOLD, Collective, Expected, Fold, buffer_ops
from .broadcast import broadcast_tree
from .chunking import chunks
from .emit import Buf, Dep, Emitter, device_order_path
from .reduce import reduce_tree
from .spec import Claim, Spec


class _Emitter(Emitter):
    """An all_reduce's program: the shared pieces (collectives/emit.py) plus
    its result slices and its allgather (or copy to the one target)."""

    def __init__(self, op: ir.Operation) -> None:
        super().__init__(op)
        self.to_device = self.c.to_device

    def result_slice(self, device: int, s: int, size: int, default: ir.Value) -> ir.Value:
        """Where the reduced chunk is written: the result slice when `device`
        holds a result, else `default` (scratch, then one copy to the target)."""
        if self.to_device is None:
            return self.slice(self.y[self.devices.index(device)], s, size)
        if device == self.to_device:
            return self.slice(self.y[0], s, size)
        return default

    def deliver(self, device: int, reduced: ir.Value, s: int, size: int, done: Dep,
                hops: Iterable[tuple[int, int]], chain: bool = False) -> None:
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


@register_op
class AllReduce(Collective):
    """Every output (or the one on `to_device`) = (+)_i inputs[i]."""
    NAME = "coll.all_reduce"
    IN_PLACE = True
    PLACEMENT = Placement(EACH, EACH_OR_TO_DEVICE)
    REPLICATED = True
    ATTRS = {"to_device": "the one device that gets the result (single-device output)",
             "threshold": "elements above which the default rule picks ring"}
    SHARD = ("shard.all_reduce", {})
    STABLEHLO = ("stablehlo.all_reduce", {})
    GEN = ("kind", "to_device", "threshold", "in_place")
    EMITTER = _Emitter
    PLAIN = "naive"

    def outputs_noun(self) -> str:
        return "single-device output (to_device)" if self.to_device is not None else "multi-device output"

    @classmethod
    def reference_rule(cls, n: int, numel: int, threshold: int = DEFAULT_THRESHOLD) -> str:
        """The reference compiler's default: ring when N > 2 and numel >
        threshold, else naive (coll-choose-strategy without a profile)."""
        return "ring" if n > 2 and numel > threshold else "naive"

    @classmethod
    def busbw(cls, n: int) -> float:
        return 2 * (n - 1) / n if n else 0.0

    @staticmethod
    def estimated_ops(strategy: str, n: int, shape: Sequence[int],
                      axes: Sequence[int] = ()) -> tuple[int, str, str]:
        """(an upper bound on the ops it lowers to, casts included; what the
        limit message says of it)."""
        numel = spec.numel(shape)
        if n == 1 or numel == 0:
            size = buffer_ops(n)
        elif strategy == "naive":
            size = 2 * n * n + 3 * n + buffer_ops(n)
        else:
            # 8-byte elements: the most non-empty chunks of any element type
            busy = sum(1 for _, size in chunks(numel, n, 8) if size)
            size = busy * 6 * n + buffer_ops(n)
        return size, f"({n} devices, strategy {strategy})", "another strategy"

    def emit(self, e: Emitter, strategy: str) -> None:
        if e.n == 1 or e.numel == 0:
            if e.numel:
                identity(e)
        else:
            self.lowering(strategy)(e)

    @staticmethod
    def spec(claim: Claim, shape: list[int]) -> Spec:
        n = len(claim.inputs)
        spec.n_outputs(claim, 1 if claim.to_device is not None else n)
        every = spec.everywhere(shape, spec.reduction_kind(claim, n), range(n))
        return {j: every for j in range(len(claim.outputs))}

    @staticmethod
    def reference(x: list[np.ndarray], values: list[np.ndarray], fold: Fold, attrs: dict[str, Any], n: int,
                  n_out: int) -> Expected:
        return [(fold(x), x)] * n_out


# -- strategies ----------------------------------------------------------------
def identity(e: Emitter) -> None:
    """N = 1: the result is the input, one copy on the device (no kernel)."""
    if e.x[0] != e.y[0]:
        e.copy(e.x[0], e.y[0])


@AllReduce.defines("naive")
def naive(e: _Emitter) -> None:
    n, devs = e.n, e.devices
    if e.to_device is None:
        # In place (y_j is x_j on any device: partly in place too, which an
        # outside attack found racing, 2026-12-07) every copy is emitted
        # first, and device j combines only after the copies that read x_j
        # as well. Device j reads its own input in place, at its position in
        # device order.
        in_place = any(y == x for y, x in zip(e.y, e.x))
        for group in [list(range(n))] if in_place else [[j] for j in range(n)]:
            operands: dict[int, list[ir.Value]] = {}
            into: dict[int, list[Dep]] = {j: [] for j in range(n)}
            out_of: dict[int, list[Dep]] = {i: [] for i in range(n)}
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
                e.in_order(operands[j], e.y[j], into[j] + (out_of[j] if in_place else []))
        return
    # Device order here too; when the target holds no input, x_0's copy
    # lands in the output and is the first operand.
    t, y = e.to_device, e.y[0]
    srcs: list[ir.Value] = []
    deps: list[Dep] = []
    holds = t in devs
    for i in range(n):
        if devs[i] == t:
            srcs.append(e.x[i])
            continue
        dst = y if i == 0 and not holds else e.scratch(t, e.numel)
        deps.append(e.copy(e.x[i], dst))
        srcs.append(dst)
    e.in_order(srcs, y, deps)


@AllReduce.defines("ring")
def ring(e: _Emitter) -> None:
    """Chunk c's partial starts on device c and picks up one device's slice
    per hop around the ring; in device order (canonical) every chunk runs
    along d0 -> d1 -> ... -> d(N-1) instead, the chunks pipelined. Then the
    allgather forwards each reduced chunk hop by hop from where it ends."""
    n, devs = e.n, e.devices
    for c, (s, size) in enumerate(chunks(e.numel, n, e.elem_bytes)):
        if size == 0:
            continue
        path = device_order_path(n, (c - 1) % n) if e.canonical else [(c + k) % n for k in range(n)]
        partial: Buf = e.slice(e.x[path[0]], s, size)
        tok: Dep = None
        for k, dst in enumerate(path[1:], 1):
            last = k == n - 1
            out = e.result_slice(devs[dst], s, size, default=cast(ir.Value, None)) if last else None
            own = lambda: e.slice(e.x[dst], s, size)  # noqa: E731, B023 - called in this iteration
            partial, tok = e.hop(partial, devs[dst], size, own, last, out, [tok])
        end = path[-1]
        e.deliver(devs[end], cast(ir.Value, partial), s, size, tok, hops=[  # (a slice: one buffer)
            ((end + k - 1) % n, (end + k) % n) for k in range(1, n)], chain=True)


@AllReduce.defines("all2all")
def all2all(e: _Emitter) -> None:
    n, devs = e.n, e.devices
    for c, (s, size) in enumerate(chunks(e.numel, n, e.elem_bytes)):
        if size == 0:
            continue
        owner = devs[c]
        # Device order: the owner's own slice (read in place) at position c.
        parts, deps = [], []
        for j in range(n):
            if j == c:
                parts.append(e.slice(e.x[c], s, size))
                continue
            parts.append(e.scratch(owner, size))
            deps.append(e.copy(e.slice(e.x[j], s, size), parts[-1]))
        out = e.result_slice(owner, s, size, default=parts[1 if c == 0 else 0])
        done = e.in_order(parts, out, deps)
        e.deliver(owner, out, s, size, done, hops=[(c, j) for j in range(n) if j != c])


@AllReduce.defines("rhd")
def rhd(e: _Emitter) -> None:
    """Recursive halving reduce-scatter, then recursive doubling allgather,
    over the largest power of two p <= N (ranks in device order); the first
    2(N - p) devices fold in pairwise first (2i sends to 2i+1) and get the
    result back at the end. In device order (canonical) the halving moves
    the contributions themselves and each rank combines its chunk's N at the
    end (`_halve_contributions`)."""
    n, devs, multi = e.n, e.devices, e.to_device is None
    p = 1 << (n.bit_length() - 1)
    extra = n - p
    at = [2 * i + 1 for i in range(extra)] + list(range(2 * extra, n))  # rank -> device index
    acc = [e.y[i] if multi else e.scratch(devs[i], e.numel) for i in at]  # its partials
    cuts = [s for s, _ in chunks(e.numel, p, e.elem_bytes)] + [e.numel]
    span = lambda lo, hi: (cuts[lo], cuts[hi] - cuts[lo])  # noqa: E731
    halve = _halve_contributions if e.canonical else _halve_partials
    held, tok = halve(e, at, acc, span)
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


Span = Callable[[int, int], tuple[int, int]]  # chunks [lo, hi) -> (start, size)
Halving = tuple[list[tuple[int, int]], list[list[Dep]]]  # each rank's chunks, its tokens


def _halve_partials(e: _Emitter, at: list[int], acc: list[ir.Value], span: Span) -> Halving:
    """Fold-in, then halving: each rank gets its partner's partial of the
    half it keeps and combines (the lower rank's operand first)."""
    p, devs = len(at), e.devices
    part = [e.x[i] for i in at]
    tok: list[list[Dep]] = [[] for _ in at]
    for q in range(e.n - p):  # fold-in, operands in device order
        r = e.scratch(devs[at[q]], e.numel)
        tok[q] = [e.combine(r, [e.x[at[q]]], acc[q], [e.copy(e.x[at[q] - 1], r)])]
        part[q] = acc[q]
    held = [(0, p)] * p  # the chunks rank q is responsible for
    d = p // 2
    while d:
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
    return held, tok


def _halve_contributions(e: _Emitter, at: list[int], acc: list[ir.Value], span: Span) -> Halving:
    """Fold-in and halving that move the contributions as they are (no
    partial sums): rank q ends with all N of its chunk and combines them in
    device order. The same rounds and copies as partials; only the copies
    of a round carry every contribution the partner holds of the half."""
    p, devs = len(at), e.devices
    have = [{i: (e.x[i], 0)} for i in at]  # rank -> {device index: (buffer, its offset)}
    tok: list[list[Dep]] = [[] for _ in at]
    for q in range(e.n - p):  # fold-in: 2q's input to 2q+1
        r = e.scratch(devs[at[q]], e.numel)
        tok[q] = [e.copy(e.x[at[q] - 1], r)]
        have[q][at[q] - 1] = (r, 0)
    held = [(0, p)] * p
    d = p // 2
    while d:
        after = []
        for q in range(p):
            lo, hi = held[q]
            keep = (lo, (lo + hi) // 2) if q & d == 0 else ((lo + hi) // 2, hi)
            s, size = span(*keep)
            got, t = dict(have[q]), list(tok[q])
            for i, (buf, base) in have[q ^ d].items() if size else ():
                r = e.scratch(devs[at[q]], size)
                t.append(e.copy(e.slice(buf, s - base, size), r, tok[q ^ d]))
                got[i] = (r, s)
            after.append((keep, got, t))
        held, have, tok = [a[0] for a in after], [a[1] for a in after], [a[2] for a in after]
        d //= 2
    for q in range(p):
        s, size = span(*held[q])
        if size:
            parts = [e.slice(buf, s - base, size) for _, (buf, base) in sorted(have[q].items())]
            tok[q] = [e.in_order(parts, e.slice(acc[q], s, size), tok[q])]
    return held, tok


@AllReduce.defines("tree")
def tree(e: _Emitter) -> None:
    """Binomial tree reduce to the first device (or the target), then a
    binomial tree broadcast from it: every replica gets the same bits."""
    if e.to_device is not None:  # (canonical: reduce_tree gathers in device order)
        reduce_tree(e, e.x, e.devices, e.y[0], e.to_device)
        return
    done = reduce_tree(e, e.x, e.devices, e.y[0], e.devices[0])
    broadcast_tree(e, e.y[0], e.devices[0], e.y, e.devices, after=done)


# Where devices address each other's memory (coll.peer_access, ir/peers.py),
# combines read peer buffers in place: small and medium buffers need no
# copies, or half of them. Inputs are read in device order, x_0 first.
@AllReduce.defines("oneshot", needs=(PEER_ACCESS,))
def oneshot(e: _Emitter) -> None:
    """Each output device runs one combine over all N inputs, read in place
    on their devices, into its result: N kernels, no copies."""
    n, devs = e.n, e.devices
    targets = [e.to_device] if e.to_device is not None else devs
    # In place, every device still reads every input: results go to scratch
    # first and into the outputs once all combines are done.
    in_place = any(y in e.x for y in e.y)
    done, results = [], []
    for y, dev in zip(e.y, targets):
        ins = [peer_view(e.x[i], dev) for i in range(n)]
        out = e.scratch(dev, e.numel) if in_place else y
        done.append(e.combine(ins[0], ins[1:], out))
        results.append(out)
    if in_place:
        for r, y in zip(results, e.y):
            e.copy(r, y, done)


@AllReduce.defines("twoshot", needs=(PEER_ACCESS,))
def twoshot(e: _Emitter) -> None:
    """Reduce-scatter by peer reads: device c combines chunk c of all N
    inputs in place into its result slice. All-gather by peer writes: device
    c's reduced chunk is copied into the others' results. N kernels,
    N(N-1) copies of a chunk (single-device output: chunks go straight to
    the target)."""
    n, devs = e.n, e.devices
    for c, (s, size) in enumerate(chunks(e.numel, n, e.elem_bytes)):
        if size == 0:
            continue
        owner = devs[c]
        ins = [peer_view(e.slice(e.x[i], s, size), owner) for i in range(n)]
        scratch = e.to_device is not None and owner != e.to_device
        # Without scratch the owner holds a result: no default is needed.
        default = e.scratch(owner, size) if scratch else cast(ir.Value, None)
        out = e.result_slice(owner, s, size, default=default)
        done = e.combine(ins[0], ins[1:], out)
        e.deliver(owner, out, s, size, done, hops=[(c, j) for j in range(n) if j != c])
