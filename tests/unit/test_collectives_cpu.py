"""The collective registry's strategies, inputs that are subviews, and the
per-op numpy references. Every collective x strategy against numpy on
CPU-simulated devices: test_cpu_grid.py (the one registry-driven grid).
"""
import numpy as np
import pytest
from mlir import ir

from coll.collectives import COLLECTIVES
from coll.execution import check
from coll.ir import make_context
from coll.ir.generate import collective_module
from coll.ir.ops import COLLECTIVE_OPS
from coll.lowering import cpu


def test_one_table_of_strategies():
    """The registry is the op layer's list, and every strategy it names has
    its lowering (a function of the collective's file)."""
    assert list(COLLECTIVES) == list(COLLECTIVE_OPS) and COLLECTIVES
    for cls in COLLECTIVE_OPS:
        assert cls.STRATEGIES and all(callable(cls.lowering(s)) for s in cls.STRATEGIES)
        assert cls.lowering(cls.STRATEGIES[0]).__module__ == f"coll.collectives.{cls.short_name()}"


@pytest.mark.parametrize("seed", (None, 1))
def test_subview_inputs_at_an_offset(seed):
    """A reduce-scatter of two 64-element subviews at offset 128 of larger
    buffers: only those elements are read (in the lowering's order and
    another valid one)."""
    text = """
func.func @f(%a0: memref<256xf32>, %a1: memref<256xf32>, %y0: memref<32xf32>, %y1: memref<32xf32>) attributes {llvm.emit_c_interface} {
  %x0 = memref.subview %a0[128] [64] [1] : memref<256xf32> to memref<64xf32, strided<[1], offset: 128>>
  %x1 = memref.subview %a1[128] [64] [1] : memref<256xf32> to memref<64xf32, strided<[1], offset: 128>>
  %t = "coll.reduce_scatter"(%x0, %x1, %y0, %y1) {kind = "sum", devices = array<i64: 0, 1>, scatter_axis = 0 : i64, strategy = "ring", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<64xf32, strided<[1], offset: 128>>, memref<64xf32, strided<[1], offset: 128>>, memref<32xf32>, memref<32xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}"""
    prog = cpu.compile(text, shuffle_seed=seed)
    rng = np.random.default_rng(0)
    a = [rng.standard_normal(256).astype(np.float32) for _ in range(2)]
    y = [np.zeros(32, np.float32) for _ in range(2)]
    prog.run(a, y)
    total = a[0][128:192] + a[1][128:192]
    np.testing.assert_allclose(np.concatenate(y), total, rtol=1e-6)


@pytest.mark.parametrize("op,attrs", [("reduce_scatter", {"axis": 1}), ("all_gather", {"axis": 1}),
                                      ("all_to_all", {"split_axis": 0, "concat_axis": 1}),
                                      ("broadcast", {"root": 1}), ("reduce", {"root": 0})])
def test_reference_rejects_a_wrong_answer(op, attrs):
    """The numpy references are per op: the right outputs pass, outputs
    swapped between devices (or one element off) do not."""
    with make_context():
        problem = check.describe(ir.Module.parse(collective_module(op, 2, [4, 4], "i32", **attrs)))
    inputs = check.make_inputs(problem, 0)
    good = [ref for ref, _ in check._expect(problem, inputs)]
    assert check.check(problem, inputs, good)[0]
    if len(good) > 1 and not np.array_equal(good[0], good[1]):
        assert not check.check(problem, inputs, good[::-1])[0]
    bad = [g.copy() for g in good]
    bad[-1].flat[3] += 1
    assert not check.check(problem, inputs, bad)[0]
