"""coll.broadcast: the one input is on `root`; outputs[j] (on devices[j]) get a copy.

Its strategies broadcast a whole buffer: `direct`, `ring` (chunked, hop by
hop from the root) and binomial `tree` (also the second half of the tree
all_reduce). Each returns the tokens that finish writing the outputs;
`after` are tokens to start after.
"""
from collections.abc import Sequence
from typing import Any

import numpy as np
from mlir import ir

from ..ir.ops import EACH, ROOT, Placement, register_op
from . import spec
from .base import Collective, Expected, Fold
from .chunking import chunks
from .emit import Dep, Emitter
from .spec import Claim, Spec


@register_op
class Broadcast(Collective):
    """The one input is on `root`; outputs[j] (on devices[j]) get a copy."""
    NAME = "coll.broadcast"
    HAS_KIND = False
    IN_PLACE = True
    PLACEMENT = Placement(ROOT, EACH)
    REPLICATED = True
    SHARD = ("shard.broadcast", {})
    # The first process of each group is the root (StableHLO's collective_broadcast).
    STABLEHLO = ("stablehlo.collective_broadcast", {})
    GEN = ("root", "in_place")
    EMITTER = Emitter

    @classmethod
    def busbw(cls, n: int) -> float:
        return 1.0  # nccl-tests: the root's link carries the whole buffer, whatever N

    def emit(self, e: Emitter, strategy: str) -> None:
        if e.numel:
            self.lowering(strategy)(e, e.x[0], self.root, e.y, e.devices)

    @staticmethod
    def spec(claim: Claim, shape: list[int]) -> Spec:
        """One input (the root's buffer); every output y_j = x_0."""
        if len(claim.inputs) != 1:
            raise spec.Unsupported(f"claims broadcast from {len(claim.inputs)} inputs; expected 1 (the root's buffer)")
        return {j: spec.everywhere(shape, None, [0]) for j in range(len(claim.outputs))}

    @staticmethod
    def reference(x: list[np.ndarray], values: list[np.ndarray], fold: Fold, attrs: dict[str, Any], n: int,
                  n_out: int) -> Expected:
        return [(values[0], None)] * n


def _ranks(src: ir.Value, root: int, outs: list[ir.Value],
           devs: list[int]) -> tuple[list[tuple[ir.Value, int]], ir.Value | None]:
    """[(buffer, device)]: the root's source first, then the outputs from
    the root's successor around the ring; and the root's own output, if any."""
    n = len(outs)
    if root in devs:
        r = devs.index(root)
        order = [(r + k) % n for k in range(1, n)]
        return [(src, root)] + [(outs[j], devs[j]) for j in order], outs[r]
    return [(src, root)] + list(zip(outs, devs)), None


@Broadcast.defines("direct")
def broadcast_direct(e: Emitter, src: ir.Value, root: int, outs: list[ir.Value], devs: list[int],
                     after: Sequence[Dep] = ()) -> list[Dep]:
    return [e.copy(src, o, after) for o in outs if o != src]


@Broadcast.defines("ring")
def broadcast_ring(e: Emitter, src: ir.Value, root: int, outs: list[ir.Value], devs: list[int],
                   after: Sequence[Dep] = ()) -> list[Dep]:
    """Chunk by chunk, hop by hop from the root around the ring."""
    ranks, own = _ranks(src, root, outs, devs)
    done = [e.copy(src, own, after)] if own is not None and own != src else []
    for s, size in chunks(e.numel, len(outs), e.elem_bytes):
        if not size:
            continue
        prev, tok = e.slice(src, s, size), list(after)
        for buf, _ in ranks[1:]:
            dst = e.slice(buf, s, size)
            tok = e.copy(prev, dst, [tok])
            prev = dst
        done.append(tok)
    return done


@Broadcast.defines("tree")
def broadcast_tree(e: Emitter, src: ir.Value, root: int, outs: list[ir.Value], devs: list[int],
                   after: Sequence[Dep] = ()) -> list[Dep]:
    """Binomial tree: in round d, ranks q < d send to rank q + d."""
    ranks, own = _ranks(src, root, outs, devs)
    done = [e.copy(src, own, after)] if own is not None and own != src else []
    tok = [list(after)] + [None] * (len(ranks) - 1)
    d = 1
    while d < len(ranks):
        for q in range(min(d, len(ranks) - d)):
            tok[q + d] = e.copy(ranks[q][0], ranks[q + d][0], [tok[q]])
        d *= 2
    return done + tok[1:]
