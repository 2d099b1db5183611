"""coll-shuffle: the shuffled programs are other valid orders of the same
ops, and they still compute the exact allreduce on CPU-simulated devices
(the CPU lowering runs ops in program order, so a bad order would show)."""
import itertools

import numpy as np
import pytest
from mlir import ir

from coll.collectives import AllReduce
from coll.execution.signature import from_bf16, to_bf16
from coll.ir import make_context
from coll.ir.generate import all_reduce_module
from coll.lowering import cpu
from coll.passes.check_order import check_module
from coll.passes.lower_collectives import lower_collectives
from coll.passes.shuffle import shuffle

SEEDS = (1, 2, 3)


def explicit(n, numel, dtype, kind, strategy, to_device=None):
    m = ir.Module.parse(all_reduce_module(n, [numel], dtype, kind, to_device=to_device, strategy=strategy,
                                          peer_access=bool(AllReduce.needs(strategy))))
    lower_collectives(m.operation)
    return m


def shuffled(m, seed):
    m2 = ir.Module.parse(str(m))
    shuffle(m2.operation, seed)
    m2.operation.verify()
    return m2


def block_ops(m):
    (f,) = m.body.operations
    return [op.operation for op in f.regions[0].blocks[0].operations]


def tagged(m):
    """A copy of m with each op tagged by its position (`tid`)."""
    m2 = ir.Module.parse(str(m))
    i64 = ir.IntegerType.get_signless(64)
    for i, op in enumerate(block_ops(m2)):
        op.attributes["tid"] = ir.IntegerAttr.get(i64, i)
    return m2


def tid(op):
    return ir.IntegerAttr(op.attributes["tid"]).value


def graph(m):
    """{tid: (name, operands as tids or argument numbers)}: the program
    without its order."""
    out = {}
    for op in block_ops(m):
        operands = tuple(("arg", v.arg_number) if isinstance(v, ir.BlockArgument)
                         else tid(v.owner.operation) for v in op.operands)
        out[tid(op)] = (op.name, operands)
    return out


def coll_order(m):
    return [tid(op) for op in block_ops(m) if op.name.startswith("coll.")]


# -- structure ------------------------------------------------------------------

@pytest.mark.parametrize("strategy", ["naive", "ring", "all2all"])
@pytest.mark.parametrize("n", [2, 3, 5, 8])
def test_shuffle_is_a_valid_new_order(ctx, strategy, n):
    for to_device in (None, 0, n):
        m = tagged(explicit(n, 10 * n + 3, "f32", "sum", strategy, to_device))
        orders = set()
        for seed in SEEDS:
            s = shuffled(m, seed)
            assert check_module(s.operation) == []
            assert graph(s) == graph(m)  # the same ops on the same operands
            assert [op.name for op in block_ops(s)][-2:] == ["coll.wait", "func.return"]
            assert [tid(op) for op in block_ops(s)] != [tid(op) for op in block_ops(m)]
            orders.add(tuple(coll_order(s)))
        if n >= 3:  # independent copies: the coll ops themselves move
            assert tuple(coll_order(m)) not in orders
            assert len(orders) >= 2


def test_shuffle_is_deterministic(ctx):
    m = explicit(4, 100, "i32", "sum", "ring")
    assert str(shuffled(m, 7)) == str(shuffled(m, 7))
    assert str(shuffled(m, 7)) != str(shuffled(m, 8))


def test_wait_is_a_barrier(ctx):
    # Two programs in one function, each with its wait: nothing crosses a wait.
    text = """
func.func @f(%a: memref<4xi32, #coll.device<0>>, %b: memref<4xi32, #coll.device<1>>, %c: memref<4xi32, #coll.device<2>>, %d: memref<4xi32, #coll.device<0>>) {
  %t0 = "coll.copy"(%a, %b) : (memref<4xi32, #coll.device<0>>, memref<4xi32, #coll.device<1>>) -> !coll.token
  %t1 = "coll.copy"(%a, %c) : (memref<4xi32, #coll.device<0>>, memref<4xi32, #coll.device<2>>) -> !coll.token
  "coll.wait"(%t0, %t1) : (!coll.token, !coll.token) -> ()
  %t2 = "coll.copy"(%b, %a) : (memref<4xi32, #coll.device<1>>, memref<4xi32, #coll.device<0>>) -> !coll.token
  %t3 = "coll.copy"(%c, %d) : (memref<4xi32, #coll.device<2>>, memref<4xi32, #coll.device<0>>) -> !coll.token
  "coll.wait"(%t2, %t3) : (!coll.token, !coll.token) -> ()
  return
}"""
    m = tagged(ir.Module.parse(text))
    assert check_module(m.operation) == []
    seen = set()
    for seed in range(20):
        s = shuffled(m, seed)
        order = coll_order(s)
        assert (order[2], order[5]) == (2, 5)  # the waits stay put
        assert check_module(s.operation) == []
        seen.add(tuple(order))
    assert len(seen) == 3  # both halves swap independently; never the original order


# -- numbers --------------------------------------------------------------------

REDUCE = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum,
          "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}

# (dtype, kind): integers exact, floats with a tolerance.
TYPED = [("i32", "sum"), ("i64", "prod"), ("i8", "xor"), ("i1", "or"), ("i16", "min"),
         ("f32", "sum"), ("f64", "max"), ("f16", "sum"), ("bf16", "sum")]


def inputs(rng, dtype, n, numel):
    if dtype == "i1":
        return [rng.integers(0, 2, numel).astype(np.bool_) for _ in range(n)]
    if dtype.startswith("i"):
        return [rng.integers(-5, 6, numel).astype(f"int{dtype[1:]}") for _ in range(n)]
    if dtype == "bf16":
        return [to_bf16(rng.uniform(-2, 2, numel)) for _ in range(n)]
    return [rng.uniform(-2, 2, numel).astype({"f16": np.float16, "f32": np.float32, "f64": np.float64}[dtype])
            for _ in range(n)]


def reference(xs, dtype, kind):
    if dtype == "bf16":
        xs = [from_bf16(x) for x in xs]
    elif dtype.startswith("f"):
        xs = [x.astype(np.float64) for x in xs]
    return REDUCE[kind].reduce(np.stack(xs), axis=0)


def check(got, want, dtype):
    if dtype == "bf16":
        np.testing.assert_allclose(from_bf16(got), want, rtol=2e-2, atol=5e-2)
    elif dtype == "f16":
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=1e-2, atol=2e-2)
    elif dtype.startswith("f"):
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_array_equal(got, want.astype(got.dtype))


# Every strategy and output form at N = 3 and 4, with the dtype/kind pairs
# rotated across cases so that each appears without a full cross product.
CASES = [(strategy, n, out, TYPED[i % len(TYPED)])
         for i, (strategy, n, out) in enumerate(itertools.product(
             AllReduce.runnable(cpu.BACKEND.capabilities), (3, 4), ("multi", "member", "host")))]


@pytest.mark.parametrize("strategy,n,out,typed", CASES)
def test_shuffled_programs_compute_the_allreduce(strategy, n, out, typed):
    from coll.lowering.cpu import compile
    dtype, kind = typed
    numel = 37 * n + 5  # uneven chunks
    to_device = {"member": 1, "host": n}.get(out)
    rng = np.random.default_rng(n * 31 + len(strategy))
    xs = inputs(rng, dtype, n, numel)
    want = reference(xs, dtype, kind)
    with make_context():
        m = explicit(n, numel, dtype, kind, strategy, to_device)
        texts = [str(shuffled(m, seed)) for seed in SEEDS]
    assert len(set(texts)) == len(SEEDS)
    for text in texts:
        prog = compile(text)
        ys = [np.zeros_like(xs[0]) for _ in range(1 if to_device is not None else n)]
        prog.run(xs, ys)
        for y in ys:
            check(y, want, dtype)


def test_shuffle_exposes_a_missing_dependency():
    # The test above can fail: with one token edge of a ring program dropped
    # (a hop copied before the combine that feeds it), some shuffles run the
    # copy too early and the CPU result is wrong.
    from test_order_mutation import body_ops, drop_operand

    from coll.lowering.cpu import compile
    n, numel = 3, 30
    xs = [np.arange(numel, dtype=np.int32) * (i + 1) for i in range(n)]
    want = sum(xs)
    with make_context():
        m = explicit(n, numel, "i32", "sum", "ring")
        hop = next(op for op in body_ops(m) if op.name == "coll.copy" and len(op.operands) == 3)
        drop_operand(hop, 2)
        assert check_module(m.operation)  # the check sees it statically
        texts = {str(shuffled(m, seed)) for seed in range(8)}
    wrong = 0
    for text in texts:
        ys = [np.zeros(numel, np.int32) for _ in range(n)]
        compile(text, check_order=False).run(xs, ys)  # run the racy program on purpose
        wrong += any(not np.array_equal(y, want) for y in ys)
    assert wrong > 0
    # By default the runtime refuses it, with the order check's diagnostic.
    with pytest.raises(ir.MLIRError, match="coll-check-order"):
        compile(next(iter(texts)))


def test_runtime_runs_the_shuffled_program(monkeypatch):
    # cpu.compile(shuffle_seed=K) is what `make test` uses to rerun the whole
    # numeric suite in other orders: the shuffle must really be applied.
    from coll.core.registry import load_all
    from coll.execution import check
    from coll.lowering import cpu
    seen = []
    info = load_all()["coll-shuffle"]
    real = info.fn
    monkeypatch.setattr(info, "fn", lambda op, seed=0: (seen.append(seed), real(op, seed)))
    with make_context():
        text = all_reduce_module(4, [37], "i32", "sum", strategy="ring")
        problem = check.describe(ir.Module.parse(text))
    prog = cpu.compile(text, shuffle_seed=11)
    assert seen == [11]
    inputs, outputs = check.make_inputs(problem, 3), check.make_outputs(problem)
    prog.run(inputs, outputs)
    assert check.check(problem, inputs, outputs)[0]
