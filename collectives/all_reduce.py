"""coll.all_reduce: every output (or the one on `to_device`) = (+)_i inputs[i].

Everything that is the all_reduce's: its op class, its strategies (the
reference compiler's naive, ring and all2all, docs/algorithm.md; rhd and
tree; oneshot and twoshot where devices address each other's memory), its
default rule, its specification and numpy reference, its shard mapping.
Every replica combines in device order x_0 .. x_{N-1}, so replicas agree
bit for bit.
"""
from collections.abc import Iterable, Sequence
from typing import Any, cast

import numpy as np
from mlir import ir
from mlir.dialects import memref

from ..ir.ops import EACH, EACH_OR_TO_DEVICE, PEER_ACCESS, Placement, register_op
from ..ir.peers import peer_view
from . import spec
from .base import DEFAULT_THRESHOLD, Collective, Expected, Fold, buffer_ops
from .broadcast import broadcast_tree
from .chunking import chunks
from .emit import Dep, Emitter
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


def _one_type(values: list[ir.Value]) -> list[ir.Value]:
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


def _combine_in_order(e: Emitter, operands: list[ir.Value], out: ir.Value, deps: Iterable[Dep]) -> ir.Value:
    """One combine of `operands` in device order x_0 .. x_{N-1}: every
    device computes the same expression, so every replica rounds alike."""
    return e.combine(operands[0], _one_type(operands[1:]), out, deps)


@AllReduce.defines("naive")
def naive(e: _Emitter) -> None:
    n, devs = e.n, e.devices
    if e.to_device is None:
        # In place (y_j is x_j) every copy is emitted first, and device j
        # combines only after the copies that read x_j as well. Device j
        # reads its own input in place, at its position in device order.
        in_place = e.y[0] == e.x[0]
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
                _combine_in_order(e, operands[j], e.y[j], into[j] + (out_of[j] if in_place else []))
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
    _combine_in_order(e, srcs, y, deps)


@AllReduce.defines("ring")
def ring(e: _Emitter) -> None:
    n, devs = e.n, e.devices
    for c, (s, size) in enumerate(chunks(e.numel, n, e.elem_bytes)):
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


@AllReduce.defines("all2all")
def all2all(e: _Emitter) -> None:
    n, devs = e.n, e.devices
    for c, (s, size) in enumerate(chunks(e.numel, n, e.elem_bytes)):
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


@AllReduce.defines("rhd")
def rhd(e: _Emitter) -> None:
    """Recursive halving reduce-scatter, then recursive doubling allgather,
    over the largest power of two p <= N (ranks in device order); the first
    2(N - p) devices fold in pairwise first (2i sends to 2i+1) and get the
    result back at the end."""
    n, devs, multi = e.n, e.devices, e.to_device is None
    p = 1 << (n.bit_length() - 1)
    extra = n - p
    at = [2 * i + 1 for i in range(extra)] + list(range(2 * extra, n))  # rank -> device index
    acc = [e.y[i] if multi else e.scratch(devs[i], e.numel) for i in at]  # its partials
    part = [e.x[i] for i in at]
    tok: list[list[Dep]] = [[] for _ in at]
    for q in range(extra):  # fold-in, operands in device order
        r = e.scratch(devs[at[q]], e.numel)
        tok[q] = [e.combine(r, [e.x[at[q]]], acc[q], [e.copy(e.x[at[q] - 1], r)])]
        part[q] = acc[q]
    cuts = [s for s, _ in chunks(e.numel, p, e.elem_bytes)] + [e.numel]
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


@AllReduce.defines("tree")
def tree(e: _Emitter) -> None:
    """Binomial tree reduce to the first device (or the target), then a
    binomial tree broadcast from it: every replica gets the same bits."""
    if e.to_device is not None:
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
