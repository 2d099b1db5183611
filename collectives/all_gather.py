"""coll.all_gather: outputs[j] = the inputs concatenated along `gather_axis`."""
from typing import Any

import numpy as np

from ..ir.ops import Placement, register_op
from . import spec
from .base import Collective, Expected, Fold
from .emit import Emitter, block_pairs
from .spec import Claim, Spec


@register_op
class AllGather(Collective):
    """outputs[j] = the inputs concatenated along `gather_axis`."""
    NAME = "coll.all_gather"
    PLACEMENT = Placement(gathers="gather_axis")
    HAS_KIND = False
    REPLICATED = True
    SHARD = ("shard.all_gather", {"gather_axis": "gather_axis"})
    STABLEHLO = ("stablehlo.all_gather", {"gather_axis": "all_gather_dim"})
    GEN = ("axis",)
    EMITTER = Emitter

    @staticmethod
    def spec(claim: Claim, shape: list[int]) -> Spec:
        """Block i of every y_j along the gather axis = x_i."""
        n = len(claim.inputs)
        spec.n_outputs(claim, n)
        every = [p for i in range(n)
                 for p in spec.pieces(spec.block(claim.out_shape, claim.axis(0), i, n), spec.block(shape, None, 0, 1),
                                      None, [i])]
        return {j: every for j in range(n)}

    @staticmethod
    def reference(x: list[np.ndarray], values: list[np.ndarray], fold: Fold, attrs: dict[str, Any], n: int,
                  n_out: int) -> Expected:
        return [(np.concatenate(values, axis=attrs["gather_axis"]), None)] * n


def _all_gather(e: Emitter, how: str) -> None:
    """x_i goes into block i of every output: `direct` from device i to
    each; `ring` hop by hop from i around the ring."""
    n = e.n
    for i in range(n):
        ys, xs = block_pairs((list(e.out_type.shape), e.c.axis("gather_axis"), n), i,
                             (list(e.in_type.shape), None, 1), 0)
        if not xs:
            continue
        src = e.pieces(e.x[i], xs)
        if how == "direct":
            for j in range(n):
                e.copy(src, e.pieces(e.y[j], ys))
            continue
        e.copy(src, e.pieces(e.y[i], ys))
        prev, tok = src, None
        for k in range(1, n):
            dst = e.pieces(e.y[(i + k) % n], ys)
            tok = e.copy(prev, dst, [tok])
            prev = dst


@AllGather.defines("ring")
def ring(e: Emitter) -> None:
    _all_gather(e, "ring")


@AllGather.defines("direct")
def direct(e: Emitter) -> None:
    _all_gather(e, "direct")
