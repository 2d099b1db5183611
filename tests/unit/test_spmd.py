"""The SPMD form (one rank's buffers, coll.ranks = N, collectives naming
their group) on a runtime without MPI: every runtime takes its global view
(argument i of rank r is global argument i * N + r)."""
import numpy as np

from coll.collectives import AllReduce
from coll.lowering import cpu

SPMD = """
module {
  func.func @all_reduce(%x: memref<3x5xi32>, %y: memref<3x5xi32>) attributes {coll.ranks = 4 : i64} {
    %t = "coll.all_reduce"(%x, %y) {devices = array<i64: 0, 1, 2, 3>, kind = "max",
        operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<3x5xi32>, memref<3x5xi32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    return
  }
}
"""


def test_spmd_form_runs_as_its_global_view_on_the_cpu():
    for strategy in AllReduce.runnable(cpu.BACKEND.capabilities):
        prog = cpu.compile(SPMD, strategy=strategy)
        assert prog.n_inputs == 4 and len(prog.specs) == 8 and prog.strategies == [strategy]
        xs = [np.full((3, 5), 10 * r, np.int32) - np.arange(15, dtype=np.int32).reshape(3, 5) * r
              for r in range(4)]
        ys = [np.zeros((3, 5), np.int32) for _ in range(4)]
        prog.run(xs, ys)
        for y in ys:
            assert np.array_equal(y, np.maximum.reduce(xs))


ROOTED = """
func.func @f(%x: memref<6xf32>, %y: memref<6xf32>) attributes {{coll.ranks = 3 : i64}} {{
  %t = "coll.{op}"(%x, %y) {{devices = array<i64: 0, 1, 2>, {kind}root = {root} : i64,
      operandSegmentSizes = array<i32: 1, 1, 0>}} : (memref<6xf32>, memref<6xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}}
"""


def test_spmd_reduce_and_broadcast_are_checked_by_their_root():
    """In the SPMD form every rank holds an input and an output: a reduce
    defines only the root's output, a broadcast sends only the root's input
    (coll-run's reference check reads them so)."""
    from mlir import ir

    from coll.execution.check import check, describe
    from coll.ir import make_context
    for op, kind in (("reduce", 'kind = "sum", '), ("broadcast", "")):
        for root in (0, 2):
            text = ROOTED.format(op=op, kind=kind, root=root)
            prog = cpu.compile(text)
            xs = [np.arange(6, dtype=np.float32) + 10 * r for r in range(3)]
            ys = [np.full(6, -1, np.float32) for _ in range(3)]
            prog.run(xs, ys)
            with make_context():
                problem = describe(ir.Module.parse(text))
            assert check(problem, xs, ys)[0], (op, root)
            want = sum(xs) if op == "reduce" else xs[root]
            assert np.array_equal(ys[root], want)
            wrong = [y.copy() for y in ys]
            wrong[root][3] += 1  # the root's result off by one element
            assert not check(problem, xs, wrong)[0], (op, root)
            if op == "broadcast":
                assert all(np.array_equal(y, xs[root]) for y in ys)
                wrong = [y.copy() for y in ys]
                wrong[(root + 1) % 3][0] += 1  # another rank's copy
                assert not check(problem, xs, wrong)[0]
