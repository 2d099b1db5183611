"""Every collective x strategy under mpirun, one process per rank, against numpy.

Covering design: one mpirun per group size (2, 3, 4 ranks) runs every
program of that size (lowering/mpi/runtime.py launch: each program once, in turn),
so the grid costs three mpirun starts; compiling (about 1 s a program on 2
cores) is what the grid size buys.
  - every collective x every strategy (the peer ones excepted: ranks share
    no memory) at N = 2, 3, 4 on the CPU suite's shapes (uneven chunks,
    empty ones, a non-leading axis on odd N); f32 sum on even N, i32 max on
    N = 3; the roots in the middle of the group. all_reduce's strategies
    run in test_mpi_runtime.py, and here under the shuffle seeds;
  - in place (all_reduce, reduce, broadcast), every strategy once, spread
    over the three sizes;
  - a root outside the group (reduce, broadcast: N devices and one more
    rank that holds only the root's buffer), every strategy once, on 3 and
    4 ranks;
  - chained collectives ordered by a token: reduce_scatter then all_gather
    through intermediate buffers (4 ranks), reduce then broadcast from the
    root (3 ranks).
Under COLL_SHUFFLE_SEED=s (`make test` sets 1 2 3) each program is first put
in another valid order (coll-shuffle, which changes the order every rank
posts its messages in), and seed s runs the grid of one size, 2 + (s-1) % 3,
all_reduce included: every size once over the seeds, at a third of the cost.
"""
import os

import numpy as np
import pytest
from mlir import ir

from coll.collectives import by_short_name
from coll.execution import check
from coll.ir import make_context
from coll.ir.generate import collective_module
from coll.ir.ops import COLLECTIVE_OPS
from coll.lowering import mpi

OK, WHY = mpi.available()
pytestmark = pytest.mark.skipif(not OK, reason=f"MPI back end not available: {WHY}")

SEED = int(os.environ["COLL_SHUFFLE_SEED"]) if os.environ.get("COLL_SHUFFLE_SEED") else None
SIZES = (2, 3, 4) if SEED is None else (2 + (SEED - 1) % 3,)
TIMEOUT = 90
GRID = [(cls.NAME[len("coll."):], s) for cls in COLLECTIVE_OPS for s in cls.STRATEGIES
        if not cls.needs(s) and (cls.NAME != "coll.all_reduce" or SEED is not None)]
IN_PLACE = {2: [("all_reduce", "naive"), ("all_reduce", "all2all"), ("reduce", "direct"), ("broadcast", "tree")],
            3: [("all_reduce", "ring"), ("all_reduce", "tree"), ("reduce", "ring"), ("broadcast", "direct")],
            4: [("all_reduce", "rhd"), ("reduce", "tree"), ("broadcast", "ring")]}
ROOT_OUTSIDE = {3: [("reduce", "direct"), ("broadcast", "ring"), ("reduce", "tree")],
                4: [("broadcast", "direct"), ("reduce", "ring"), ("broadcast", "tree")]}


class Case:
    """A one-collective program, checked by the numpy reference."""

    def __init__(self, label, text):
        self.label, self.text = label, text
        with make_context():
            self.problem = check.describe(ir.Module.parse(text))
        self.inputs = check.make_inputs(self.problem, seed=len(label))
        self.given = [x.copy() for x in self.inputs]  # in place, the run writes them
        self.outputs = check.make_outputs(self.problem)

    def verdict(self):
        ok, worst = check.check(self.problem, self.inputs,
                                check.op_outputs(self.problem, self.given, self.outputs))
        return None if ok else f"max error {worst}"


def _module(op, n, strategy, dtype, **extra):
    shape, attrs = by_short_name(op).sample(n)  # the registry's test shapes (as the CPU grid's)
    attrs.update(extra)
    kind = "max" if dtype == "i32" else "sum"
    with make_context():
        return collective_module(op, n, shape, dtype, kind=kind, strategy=strategy, **attrs)


def cases(ranks):
    """Every one-collective program that runs on `ranks` ranks."""
    dtype = "i32" if ranks == 3 else "f32"
    found = [Case(f"{op} {s} N={ranks}", _module(op, ranks, s, dtype)) for op, s in GRID]
    for op, s in IN_PLACE[ranks]:
        root = {"reduce": {"root": ranks - 1}, "broadcast": {"root": 0}}.get(op, {})
        with make_context():
            text = collective_module(op, ranks, [13], "f32", strategy=s, in_place=True, **root)
        found.append(Case(f"{op} {s} N={ranks} in place", text))
    for op, s in ROOT_OUTSIDE.get(ranks, []):
        with make_context():  # devices 0..N-1, the root on device N
            text = collective_module(op, ranks - 1, [2, 7], "i32", strategy=s, root=ranks - 1)
        found.append(Case(f"{op} {s} N={ranks - 1} root outside", text))
    return found


def _chain(n, first, second, ins, mids, outs, attrs1, attrs2):
    """A function running `first`, then `second` after its token, over
    arguments ins + mids + outs (types as text)."""
    args = [f"%a{i}: {t}" for i, t in enumerate(ins + mids + outs)]
    a = [f"%a{i}" for i in range(len(args))]
    x, m, y = a[:len(ins)], a[len(ins):len(ins) + len(mids)], a[len(ins) + len(mids):]
    devs = ", ".join(map(str, range(n)))
    return f"""
func.func @chain({", ".join(args)}) attributes {{llvm.emit_c_interface}} {{
  %t1 = "coll.{first}"({", ".join(x + m)}) {{devices = array<i64: {devs}>, {attrs1},
      operandSegmentSizes = array<i32: {len(x)}, {len(m)}, 0>}} : ({", ".join(ins + mids)}) -> !coll.token
  %t2 = "coll.{second}"({", ".join(m + y)}, %t1) {{devices = array<i64: {devs}>, {attrs2},
      operandSegmentSizes = array<i32: {len(m)}, {len(y)}, 1>}} : ({", ".join(mids + outs)}, !coll.token) -> !coll.token
  "coll.wait"(%t2) : (!coll.token) -> ()
  return
}}"""


CHAINS = {  # ranks: (label, text, input shape, intermediate shapes, number of outputs, dtype)
    4: ("reduce_scatter ring then all_gather direct", _chain(
        4, "reduce_scatter", "all_gather", ["memref<8x3xf32>"] * 4, ["memref<2x3xf32>"] * 4,
        ["memref<8x3xf32>"] * 4, 'kind = "sum", scatter_axis = 0 : i64, strategy = "ring"',
        'gather_axis = 0 : i64, strategy = "direct"'), (8, 3), [(2, 3)] * 4, 4, np.float32),
    3: ("reduce tree to rank 1 then broadcast ring", _chain(
        3, "reduce", "broadcast", ["memref<10xi32>"] * 3, ["memref<10xi32>"], ["memref<10xi32>"] * 3,
        'kind = "sum", root = 1 : i64, strategy = "tree"', 'root = 1 : i64, strategy = "ring"'),
        (10,), [(10,)], 3, np.int32),
}


@pytest.mark.parametrize("ranks", SIZES)
def test_every_collective_and_strategy(ranks):
    found = cases(ranks)
    runs = [(mpi.compile(c.text, strategy="auto", timeout=TIMEOUT, shuffle_seed=SEED), c.given, c.outputs)
            for c in found]
    label, text, shape, mid_shapes, n_out, dtype = CHAINS.get(ranks, (None,) * 6)
    if label:  # the chain computes an allreduce: the sum on every output
        rng = np.random.default_rng(ranks)
        xs = [rng.integers(-50, 50, size=shape).astype(dtype) for _ in range(ranks)]
        mids = [np.zeros(m, dtype) for m in mid_shapes]
        ys = [np.zeros(shape, dtype) for _ in range(n_out)]
        runs.append((mpi.compile(text, timeout=TIMEOUT, shuffle_seed=SEED), xs, mids + ys))
    assert all(p.ranks == ranks for p, _, _ in runs), [(c.label, p.ranks) for c, (p, _, _) in zip(found, runs)]
    mpi.launch(runs, 0)
    failed = [f"{c.label}: {why}" for c in found if (why := c.verdict())]
    if label:
        failed += [f"{label}: output {j} differs" for j, y in enumerate(ys) if not np.array_equal(y, sum(xs))]
    assert not failed, "\n".join(failed)
    # The strategies asked for are the ones that ran.
    assert [p.strategies for p, _, _ in runs[:len(found)]] == [[c.problem.strategy] for c in found]
