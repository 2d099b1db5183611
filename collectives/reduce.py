"""coll.reduce: the one output, on `root` (in the group or not), = (+)_i inputs[i].

Its strategies reduce whole buffers to one device: `direct`, `ring`
(chunked, pipelined along the ring), binomial `tree`, and `oneshot` where
devices address each other's memory (one combine on the root); the tree
all_reduce is a tree reduce then a tree broadcast (collectives/all_reduce.py).
srcs[i] lives on devs[i]; each returns the tokens that finish writing the
output; `after` are tokens to start after.
"""
from collections.abc import Sequence
from typing import Any, cast

import numpy as np
from mlir import ir

from ..ir.ops import EACH, PEER_ACCESS, ROOT, Placement, register_op
from ..ir.peers import peer_view
from . import spec
from .base import Collective, Expected, Fold
from .chunking import chunks
from .emit import Buf, Dep, Emitter, device_order_path
from .spec import Claim, Spec


@register_op
class Reduce(Collective):
    """The one output, on `root` (in the group or not), = (+)_i inputs[i]."""
    NAME = "coll.reduce"
    IN_PLACE = True
    PLACEMENT = Placement(EACH, ROOT)
    SHARD = ("shard.reduce", {})
    GEN = ("kind", "root", "in_place")
    EMITTER = Emitter

    @classmethod
    def busbw(cls, n: int) -> float:
        return 1.0  # nccl-tests: the root's link carries the whole buffer, whatever N

    def emit(self, e: Emitter, strategy: str) -> None:
        if e.numel:
            self.lowering(strategy)(e, e.x, e.devices, e.y[0], self.root)

    @staticmethod
    def spec(claim: Claim, shape: list[int]) -> Spec:
        n = len(claim.inputs)
        spec.n_outputs(claim, 1)
        return {0: spec.everywhere(shape, spec.reduction_kind(claim, n), range(n))}

    @staticmethod
    def reference(x: list[np.ndarray], values: list[np.ndarray], fold: Fold, attrs: dict[str, Any], n: int,
                  n_out: int) -> Expected:
        return [(fold(x), x)] * n_out


@Reduce.defines("direct")
def reduce_direct(e: Emitter, srcs: list[ir.Value], devs: list[int], out: ir.Value, root: int,
                  after: Sequence[Dep] = ()) -> list[Dep]:
    """Every source not on the root is copied there; one combine of them
    all in device order, the root's own input read in place at its
    position."""
    if len(srcs) == 1:
        return [] if srcs[0] == out else [e.copy(srcs[0], out, after)]
    parts = [s if d == root else e.scratch(root, e.numel) for s, d in zip(srcs, devs)]
    deps = [e.copy(s, part, after) for s, part in zip(srcs, parts) if part is not s]
    return [e.in_order(parts, out, deps + list(after))]


@Reduce.defines("ring")
def reduce_ring(e: Emitter, srcs: list[ir.Value], devs: list[int], out: ir.Value, root: int,
                after: Sequence[Dep] = ()) -> list[Dep]:
    """Chunk by chunk along the ring that ends at the root (in device
    order, canonical, or with the root outside the group: along devs[0] ..
    devs[-1], then one copy to the root): each hop copies the partial to
    the next device, which combines its own slice into it."""
    n = len(srcs)
    end = devs.index(root) if root in devs else n - 1
    order = device_order_path(n, end) if e.canonical else [(end + 1 + k) % n for k in range(n)]
    done: list[Dep] = []
    for s, size in chunks(e.numel, n, e.elem_bytes):
        if not size:
            continue
        target = e.slice(out, s, size)
        part: Buf = e.slice(srcs[order[0]], s, size)
        tok: Dep = list(after)
        for k, i in enumerate(order[1:], 1):
            last = k == n - 1
            own = lambda: e.slice(srcs[i], s, size)  # noqa: E731, B023 - called in this iteration
            part, tok = e.hop(part, devs[i], size, own, last,
                              target if last and devs[i] == root else None, [tok])
        if part != target:
            tok = e.copy(part, target, [tok])
        done.append(tok)
    return done


@Reduce.defines("tree")
def reduce_tree(e: Emitter, srcs: list[ir.Value], devs: list[int], out: ir.Value, root: int,
                after: Sequence[Dep] = ()) -> list[Dep]:
    """Binomial tree rooted at the root (rank q is devs[(r + q) % n]): in
    round d, rank q + d sends its partial to rank q, which combines
    (lower ranks first). In device order (canonical) no tree sums in it:
    the sources are gathered at the root (`reduce_direct`)."""
    if e.canonical:
        return cast(list[Dep], reduce_direct(e, srcs, devs, out, root, after))  # (a Strategy returns object)
    n = len(srcs)
    r = devs.index(root) if root in devs else 0
    at = [(r + q) % n for q in range(n)]
    part, tok, own = [srcs[i] for i in at], [list(after)] * n, [False] * n
    d = 1
    while d < n:
        for q in range(0, n - d, 2 * d):
            dev = devs[at[q]]
            recv = e.scratch(dev, e.numel)
            t = e.copy(part[q + d], recv, [tok[q + d]])
            if q == 0 and dev == root:
                dst = out
            elif own[q]:
                dst = part[q]
            else:
                dst, own[q] = e.scratch(dev, e.numel), True
            tok[q] = e.combine(part[q], [recv], dst, [tok[q], t])
            part[q] = dst
        d *= 2
    if part[0] != out:
        tok[0] = e.copy(part[0], out, [tok[0]])
    return [tok[0]]


# Where devices address each other's memory (coll.peer_access, ir/peers.py;
# the CPU's simulated devices, one GPU), the root's combine reads every
# input in place: no copies, each input read once and the output written
# once, as numpy's chain of adds cannot (it rereads its partial sum).
@Reduce.defines("oneshot", needs=(PEER_ACCESS,))
def reduce_oneshot(e: Emitter, srcs: list[ir.Value], devs: list[int], out: ir.Value, root: int,
                   after: Sequence[Dep] = ()) -> list[Dep]:
    """One combine on the root over all N inputs, read in place on their
    devices in device order (in place, the root's input is its output:
    each element is read before it is written)."""
    if len(srcs) == 1:
        return [] if srcs[0] == out else [e.copy(srcs[0], out, after)]
    ins = [peer_view(s, root) for s in srcs]
    return [e.combine(ins[0], ins[1:], out, list(after))]
