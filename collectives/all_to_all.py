"""coll.all_to_all: outputs[j] = block j (along `split_axis`) of every
input, concatenated in device order along `concat_axis`."""
from typing import Any

import numpy as np

from ..ir.ops import Placement, register_op
from . import spec
from .base import Collective, Expected, Fold
from .emit import Emitter, block_pairs
from .spec import Claim, Spec


@register_op
class AllToAll(Collective):
    """outputs[j] = block j (along `split_axis`) of every input, concatenated
    in device order along `concat_axis`."""
    NAME = "coll.all_to_all"
    PLACEMENT = Placement(scatters="split_axis", gathers="concat_axis")
    HAS_KIND = False
    SHARD = ("shard.all_to_all", {"split_axis": "split_axis", "concat_axis": "concat_axis"})
    STABLEHLO = ("stablehlo.all_to_all", {"split_axis": "split_dimension", "concat_axis": "concat_dimension"})
    GEN = ("split_axis", "concat_axis")
    EMITTER = Emitter

    @staticmethod
    def spec(claim: Claim, shape: list[int]) -> Spec:
        """Block i of y_j along the concat axis = block j of x_i along the split axis."""
        n = len(claim.inputs)
        spec.n_outputs(claim, n)
        split, concat = claim.axis(0), claim.axis(1)
        return {j: [p for i in range(n) for p in spec.pieces(spec.block(claim.out_shape, concat, i, n),
                                                             spec.block(shape, split, j, n), None, [i])]
                for j in range(n)}

    @staticmethod
    def reference(x: list[np.ndarray], values: list[np.ndarray], fold: Fold, attrs: dict[str, Any], n: int,
                  n_out: int) -> Expected:
        blocks = [np.split(v, n, axis=attrs["split_axis"]) for v in values]
        return [(np.concatenate([b[j] for b in blocks], axis=attrs["concat_axis"]), None) for j in range(n)]


@AllToAll.defines("direct")
def direct(e: Emitter) -> None:
    """Block j (along split_axis) of x_i goes straight into block i (along
    concat_axis) of y_j."""
    n, ins, outs = e.n, list(e.in_type.shape), list(e.out_type.shape)
    split, concat = e.c.axis("split_axis"), e.c.axis("concat_axis")
    for i in range(n):
        for j in range(n):
            xs, ys = block_pairs((ins, split, n), j, (outs, concat, n), i)
            e.copy(e.pieces(e.x[i], xs), e.pieces(e.y[j], ys))
