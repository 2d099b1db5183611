"""Every collective x strategy runs on CPU-simulated devices and matches numpy.

The covering design (each compiled program is cached):
  - devices: every op x strategy x N in 1..8, f32 sum and i32 (max for the
    reducing ops), with shapes whose axis gives uneven chunks (odd numel,
    chunks that are empty for some devices) and, for the blocked ops, a
    non-leading axis on every other N;
  - kinds x types: every valid (type, kind) pair at N = 3 for the reducing
    ops (one strategy each, rotating), every type for the moving ones;
  - in place, roots outside the group, single-device output of the new
    allreduce strategies, and inputs that are subviews at an offset.
`make test` reruns this file under the coll-shuffle seeds.
"""
import os

import numpy as np
import pytest
from mlir import ir

from coll.ir import make_context
from coll.ir.generate import collective_module
from coll.ir.ops import COLLECTIVE_OPS
from coll.collectives import COLLECTIVES
from coll.runtime import check
from coll.backends import cpu

from test_cpu_runtime import PAIRS

SHUFFLE_SEED = int(os.environ["COLL_SHUFFLE_SEED"]) if os.environ.get("COLL_SHUFFLE_SEED") else None
NEW_ALL_REDUCE = ("rhd", "tree")
TYPES = ("f16", "bf16", "f32", "f64", "i1", "i8", "i32", "i64")


def run(op, n, shape, dtype="f32", kind="sum", strategy=None, in_place=False, **attrs):
    """Compiles (cached), runs, checks; returns (ok, worst error, program)."""
    with make_context():
        text = collective_module(op, n, shape, dtype, kind=kind, strategy=strategy,
                                 in_place=in_place, **attrs)
        problem = check.describe(ir.Module.parse(text))
    prog = cpu.compile(text, shuffle_seed=SHUFFLE_SEED)
    inputs = check.make_inputs(problem, seed=n)
    given = [x.copy() for x in inputs]  # in place, the run overwrites them
    outputs = check.make_outputs(problem)
    prog.run(given, outputs)
    ok, worst = check.check(problem, inputs, check.op_outputs(problem, given, outputs))
    return ok, worst, prog


def case(op, n, strategy):
    """(shape, attrs) of the device grid for `op` at N = n."""
    if op == "reduce_scatter":
        return ([2 * n, 3], {"axis": 0}) if n % 2 else ([3, 2 * n], {"axis": 1})
    if op == "all_gather":
        return ([3, 5], {"axis": n % 2})
    if op == "all_to_all":
        return ([2 * n, 3], {"split_axis": 0, "concat_axis": 1}) if n % 2 else \
            ([3, n], {"split_axis": 1, "concat_axis": 0})
    if op in ("reduce", "broadcast"):
        return [13], {"root": (n - 1) // 2}
    return [13], {}


GRID = [(cls.NAME[len("coll."):], s) for cls in COLLECTIVE_OPS for s in cls.STRATEGIES
        if cls.NAME != "coll.all_reduce" or s in NEW_ALL_REDUCE]
REDUCING = {"reduce_scatter", "reduce", "all_reduce"}


def test_one_table_of_strategies():
    """The registry is the op layer's list, and every strategy it names has
    its lowering (a function of the collective's file)."""
    assert list(COLLECTIVES) == list(COLLECTIVE_OPS) and len(COLLECTIVES) == 7
    for cls in COLLECTIVE_OPS:
        assert cls.STRATEGIES and all(callable(cls.lowering(s)) for s in cls.STRATEGIES)
        assert cls.lowering(cls.STRATEGIES[0]).__module__ == f"coll.collectives.{cls.short_name()}"


@pytest.mark.parametrize("n", range(1, 9))
@pytest.mark.parametrize("op,strategy", GRID)
@pytest.mark.parametrize("dtype", ("f32", "i32"))
def test_devices(op, strategy, n, dtype):
    shape, attrs = case(op, n, strategy)
    kind = "sum" if dtype == "f32" else "max"
    ok, worst, prog = run(op, n, shape, dtype, kind, strategy, **attrs)
    assert prog.strategies == [strategy]
    assert ok, f"max error {worst}"


REDUCING_GRID = [("reduce_scatter", "ring"), ("reduce_scatter", "direct"), ("reduce", "direct"),
                 ("reduce", "ring"), ("reduce", "tree"), ("all_reduce", "rhd"), ("all_reduce", "tree")]


@pytest.mark.parametrize("dtype,kind", PAIRS)
def test_kinds_and_types(dtype, kind):
    i = PAIRS.index((dtype, kind))
    op, strategy = REDUCING_GRID[i % len(REDUCING_GRID)]
    shape, attrs = case(op, 3, strategy)
    ok, worst, _ = run(op, 3, [5, 7] if op != "reduce_scatter" else [6, 7], dtype, kind, strategy,
                       **(attrs if op != "reduce_scatter" else {"axis": 0}))
    assert ok, f"{op} {strategy}: max error {worst}"


@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize("op,strategy", [("all_gather", "ring"), ("broadcast", "tree"),
                                         ("all_to_all", "direct")])
def test_types_of_moving_ops(op, strategy, dtype):
    shape, attrs = case(op, 3, strategy)
    ok, worst, _ = run(op, 3, shape, dtype, None, strategy, **attrs)
    assert ok, f"max error {worst}"


@pytest.mark.parametrize("n", (1, 2, 3, 5, 8))
@pytest.mark.parametrize("op,strategy", [("all_reduce", s) for s in ("naive", "ring", "all2all", "rhd", "tree")]
                         + [("reduce", s) for s in ("direct", "ring", "tree")]
                         + [("broadcast", s) for s in ("direct", "ring", "tree")])
def test_in_place(op, strategy, n):
    attrs = {"root": n - 1} if op in ("reduce", "broadcast") else {}
    ok, worst, _ = run(op, n, [13], "f32", "sum", strategy, in_place=True, **attrs)
    assert ok, f"max error {worst}"


@pytest.mark.parametrize("n", (1, 2, 3, 6))
@pytest.mark.parametrize("op,strategy", [("reduce", s) for s in ("direct", "ring", "tree")]
                         + [("broadcast", s) for s in ("direct", "ring", "tree")])
def test_root_outside_the_group(op, strategy, n):
    ok, worst, _ = run(op, n, [2, 7], "i32", "sum", strategy, root=n)
    assert ok, f"max error {worst}"


@pytest.mark.parametrize("n", (2, 3, 5, 8))
@pytest.mark.parametrize("strategy", NEW_ALL_REDUCE)
@pytest.mark.parametrize("to", ("inside", "outside"))
def test_single_device_output(strategy, n, to):
    target = n // 2 if to == "inside" else n
    ok, worst, _ = run("all_reduce", n, [9], "f64", "prod", strategy, to_device=target)
    assert ok, f"max error {worst}"


def test_subview_inputs_at_an_offset():
    """A reduce-scatter of two 64-element subviews at offset 128 of larger
    buffers: only those elements are read."""
    text = """
func.func @f(%a0: memref<256xf32>, %a1: memref<256xf32>, %y0: memref<32xf32>, %y1: memref<32xf32>) attributes {llvm.emit_c_interface} {
  %x0 = memref.subview %a0[128] [64] [1] : memref<256xf32> to memref<64xf32, strided<[1], offset: 128>>
  %x1 = memref.subview %a1[128] [64] [1] : memref<256xf32> to memref<64xf32, strided<[1], offset: 128>>
  %t = "coll.reduce_scatter"(%x0, %x1, %y0, %y1) {kind = "sum", devices = array<i64: 0, 1>, scatter_axis = 0 : i64, strategy = "ring", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<64xf32, strided<[1], offset: 128>>, memref<64xf32, strided<[1], offset: 128>>, memref<32xf32>, memref<32xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}"""
    prog = cpu.compile(text, shuffle_seed=SHUFFLE_SEED)
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
