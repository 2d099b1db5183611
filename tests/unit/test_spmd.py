"""The SPMD form (one rank's buffers, coll.ranks = N, collectives naming
their group) on a runtime without MPI: every runtime takes its global view
(argument i of rank r is global argument i * N + r)."""
import numpy as np

from coll.runtime import cpu

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
    for strategy in ("naive", "ring", "all2all"):
        prog = cpu.compile(SPMD, strategy=strategy)
        assert prog.n_inputs == 4 and len(prog.specs) == 8 and prog.strategies == [strategy]
        xs = [np.full((3, 5), 10 * r, np.int32) - np.arange(15, dtype=np.int32).reshape(3, 5) * r
              for r in range(4)]
        ys = [np.zeros((3, 5), np.int32) for _ in range(4)]
        prog.run(xs, ys)
        for y in ys:
            assert np.array_equal(y, np.maximum.reduce(xs))
