"""Structure of the explicit programs that coll-lower-all-reduce emits."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mlir import ir

from coll.analysis.stats import analyze, ring_edges
from coll.collectives.all_reduce import AllReduce
from coll.collectives.chunking import chunks, granule
from coll.ir.generate import all_reduce_module
from coll.ir.types import device_of
from coll.ir.verifier import verify
from coll.ir.walk import find_ops
from coll.passes.lower_collectives import lower_collectives


def lowered(n, shape, strategy, dtype="f32", kind="sum", to_device=None):
    m = ir.Module.parse(all_reduce_module(n, shape, dtype, kind, to_device=to_device, strategy=strategy))
    lower_collectives(m.operation)
    m.operation.verify()
    assert verify(m.operation) == []
    return m


def ops(m, name):
    return find_ops(m, name)


@pytest.mark.parametrize("n", range(2, 17))
def test_copy_counts(ctx, n):
    numel = 32 * n * 3  # no empty chunk
    for strategy, expected in (("naive", n * (n - 1)), ("ring", 2 * n * (n - 1)), ("all2all", 2 * n * (n - 1))):
        s = analyze(lowered(n, [numel], strategy).operation)["all_reduce"]
        assert s["copies"] == expected, strategy
        assert s["local_copies"] == 0
        assert s["kernels"] == (n if strategy == "naive" else (n * (n - 1) if strategy == "ring" else n))


@pytest.mark.parametrize("n", [2, 3, 4, 7, 16])
def test_ring_uses_exactly_the_ring_edges(ctx, n):
    m = lowered(n, [64 * n], "ring")
    (f,) = ops(m, "func.func")
    assert ring_edges(f) == {(i, (i + 1) % n) for i in range(n)}


@pytest.mark.parametrize("n", [3, 5])
def test_pairs(ctx, n):
    for strategy, pairs in (("naive", n * (n - 1)), ("ring", n), ("all2all", n * (n - 1))):
        assert analyze(lowered(n, [32 * n], strategy).operation)["all_reduce"]["pairs"] == pairs


def test_all2all_balances_bytes(ctx):
    # Each device sends and receives 2(N-1) chunk-sized messages.
    n, numel = 4, 4096
    s = analyze(lowered(n, [numel], "all2all").operation)["all_reduce"]
    assert set(s["bytes_sent"].values()) == {2 * (n - 1) * numel // n * 4}
    assert set(s["bytes_received"].values()) == {2 * (n - 1) * numel // n * 4}


def test_identity_has_no_cross_device_copy(ctx):
    for strategy in ("naive", "ring", "all2all"):
        s = analyze(lowered(1, [5, 3], strategy).operation)["all_reduce"]
        assert (s["copies"], s["local_copies"], s["kernels"]) == (0, 1, 0)


def test_no_kernel_copies_within_a_device(ctx):
    # Reductions write straight into their final slice: every combine has at
    # least two inputs, and no copy stays on one device.
    for strategy in ("naive", "ring", "all2all"):
        for to in (None, 0, 5):
            m = lowered(4, [400], strategy, to_device=to)
            for op in ops(m, "coll.combine"):
                seg = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
                assert seg[0] + seg[1] >= 2
            for op in ops(m, "coll.copy"):
                a, b = list(op.operands)[:2]
                assert device_of(a.type) != device_of(b.type)


@pytest.mark.parametrize("numel,n,elem_bytes,sizes", [
    (400, 4, 4, [112, 96, 96, 96]), (1000, 3, 4, [336, 336, 328]),
    (256, 6, 4, [64, 64, 32, 32, 32, 32]), (64, 6, 4, [32, 32, 0, 0, 0, 0]),
    # Not a whole number of 16-byte vectors: units of one vector, the rest
    # on the last non-empty chunk.
    (10, 4, 4, [4, 6, 0, 0]), (7, 4, 4, [7, 0, 0, 0]), (3, 4, 4, [3, 0, 0, 0]),
    (1001, 4, 2, [256, 248, 248, 249]), (1001, 4, 8, [250, 250, 250, 251]),
    (1000, 4, 1, [256, 256, 240, 248]), (2**20 + 3, 8, 4, [2**17] * 7 + [2**17 + 3])])
def test_chunk_examples_from_the_algorithm(numel, n, elem_bytes, sizes):
    assert [s for _, s in chunks(numel, n, elem_bytes)] == sizes


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 10**7), st.integers(1, 256), st.sampled_from([1, 2, 4, 8]))
def test_chunk_rule(numel, n, elem_bytes):
    vector = 16 // elem_bytes
    f = next((g for g in (32, 16, 8, 4, 2) if numel % g == 0 and g >= vector), vector)
    assert granule(numel, elem_bytes) == f
    units, rest = divmod(numel, f)
    base, left = divmod(units, n)
    cs = chunks(numel, n, elem_bytes)
    assert len(cs) == n
    edge = max([c for c in range(n) if cs[c][1]], default=0)
    start = 0
    for c, (s, size) in enumerate(cs):
        assert s == start
        assert size == ((base + 1) * f if c < left else base * f) + (rest if c == edge else 0)
        if size:
            assert s * elem_bytes % 16 == 0  # every non-empty chunk starts on a 16-byte boundary
        start += size
    assert start == numel


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 2000), st.integers(2, 9))
def test_emitted_slices_follow_the_rule(numel, n):
    with ir.Context() as c:
        from coll.ir import load_dialect
        load_dialect(c)
        m = lowered(n, [numel], "all2all")
        seen = set()
        for op in ops(m, "memref.subview"):
            off = list(ir.DenseI64ArrayAttr(op.attributes["static_offsets"]))[0]
            size = list(ir.DenseI64ArrayAttr(op.attributes["static_sizes"]))[0]
            seen.add((off, size))
        expected = {(s, z) for s, z in chunks(numel, n, 4) if z and z != numel}
        assert seen == expected


def test_single_device_output_counts(ctx):
    n = 4
    # Target inside the group: naive copies N-1 inputs there.
    assert analyze(lowered(n, [400], "naive", to_device=2).operation)["all_reduce"]["copies"] == n - 1
    # Target outside: N copies; chunked strategies add one per chunk.
    assert analyze(lowered(n, [400], "naive", to_device=9).operation)["all_reduce"]["copies"] == n
    for strategy in ("ring", "all2all"):
        s = analyze(lowered(n, [400], strategy, to_device=9).operation)["all_reduce"]
        assert s["copies"] == n * (n - 1) + n


def test_auto_rule():
    assert AllReduce.choose("auto", 4, 256001) == "ring"
    assert AllReduce.choose("auto", 4, 256000) == "naive"
    assert AllReduce.choose("auto", 2, 10**9) == "naive"
    assert AllReduce.choose(None, 3, 10, threshold=5) == "ring"
    assert AllReduce.choose("all2all", 2, 1) == "all2all"


def test_final_token_orders_everything(ctx):
    # Every async op reaches the collective's join through token edges.
    for strategy in ("naive", "ring", "all2all"):
        m = lowered(4, [100], strategy)
        (join,) = ops(m, "coll.join")
        reached, stack = set(), list(join.operands)
        while stack:
            v = stack.pop()
            owner = v.owner
            key = str(owner.result.get_name()) if hasattr(owner, "result") else None
            if key in reached:
                continue
            reached.add(key)
            stack += [o for o in owner.operands if str(o.type) == "!coll.token"]
        names = {op.result.get_name() for op in ops(m, "coll.copy") + ops(m, "coll.combine")}
        assert names <= reached
