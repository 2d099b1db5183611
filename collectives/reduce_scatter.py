"""coll.reduce_scatter: outputs[j] = block j of (+)_i inputs[i] along `scatter_axis`.

A block of a non-leading axis is one strided view, moved by one copy or
combine (collectives/emit.py).
"""
from typing import Any

import numpy as np

from ..ir.ops import Placement, register_op
from . import spec
from .base import Collective, Expected, Fold
from .emit import Buf, Dep, Emitter, block_pairs, device_order_path
from .spec import Claim, Spec


@register_op
class ReduceScatter(Collective):
    """outputs[j] = slice j of (+)_i inputs[i] along `scatter_axis`."""
    NAME = "coll.reduce_scatter"
    PLACEMENT = Placement(scatters="scatter_axis")
    SHARD = ("shard.reduce_scatter", {"scatter_axis": "scatter_axis"})
    STABLEHLO = ("stablehlo.reduce_scatter", {"scatter_axis": "scatter_dimension"})
    GEN = ("kind", "axis")
    EMITTER = Emitter

    @staticmethod
    def spec(claim: Claim, shape: list[int]) -> Spec:
        """y_j = block j of (+)_i x_i along the scatter axis."""
        n = len(claim.inputs)
        spec.n_outputs(claim, n)
        out, kind = claim.out_shape, spec.reduction_kind(claim, n)
        return {j: spec.pieces(spec.block(out, None, 0, 1), spec.block(shape, claim.axis(0), j, n), kind, range(n))
                for j in range(n)}

    @staticmethod
    def reference(x: list[np.ndarray], values: list[np.ndarray], fold: Fold, attrs: dict[str, Any], n: int,
                  n_out: int) -> Expected:
        ax = attrs["scatter_axis"]
        parts = np.split(fold(x), n, axis=ax)
        return [(p, [np.split(v, n, axis=ax)[j] for v in x]) for j, p in enumerate(parts)]


def _scatter_blocks(e: Emitter, axis: int | None) -> list[tuple[list[spec.View], list[spec.View]]]:
    """[(view of block c in the inputs, view of output c)] for each c."""
    shape, out = list(e.in_type.shape), list(e.out_type.shape)
    return [block_pairs((shape, axis, e.n), c, (out, None, 1), 0) for c in range(e.n)]


def _reduce_scatter(e: Emitter, how: str) -> None:
    """Block c is reduced into y_c: `direct` copies every other device's
    block to device c, which combines them in device order; `ring` passes
    the partial from c+1 around to c (in device order, canonical: along
    d0 -> .. -> d(N-1), then one copy to c)."""
    n, devs = e.n, e.devices
    for c, (xs, ys) in enumerate(_scatter_blocks(e, e.c.axis("scatter_axis"))):
        if not xs:
            continue
        sizes, out = [sizes for _, sizes, _ in ys], e.pieces(e.y[c], ys)
        mine = lambda i: e.pieces(e.x[i], xs)  # noqa: E731, B023 - used in this iteration only
        if n == 1:
            e.copy(mine(0), out)
        elif how == "direct":  # own block read in place, at its position
            parts = [mine(i) if i == c else e.scratch(devs[c], sizes) for i in range(n)]
            deps = [e.copy(mine(i), parts[i]) for i in range(n) if i != c]
            e.in_order(parts, out, deps)
        else:
            path = device_order_path(n, c) if e.canonical else [(c + 1 + k) % n for k in range(n)]
            part: Buf = mine(path[0])
            tok: Dep = None
            for k, i in enumerate(path[1:], 1):
                last = k == n - 1
                own = lambda: mine(i)  # noqa: E731, B023 - called in this iteration
                part, tok = e.hop(part, devs[i], sizes, own, last, out if last and i == c else None, [tok])
            if part is not out:
                e.copy(part, out, [tok])


@ReduceScatter.defines("ring")
def ring(e: Emitter) -> None:
    _reduce_scatter(e, "ring")


@ReduceScatter.defines("direct")
def direct(e: Emitter) -> None:
    _reduce_scatter(e, "direct")
