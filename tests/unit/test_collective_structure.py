"""Copies and copy rounds (cross-device copies on the longest dependency
chain, analysis/stats.py) of every collective strategy, from the lowered IR.
The partial-sum forms of ring, rhd and tree are pinned with order = "any";
their device-order forms (the default contract) are checked beside them."""
import math

import pytest
from mlir import ir

from coll.analysis.stats import analyze_function, ring_edges
from coll.ir import make_context
from coll.ir.generate import collective_module
from coll.ir.walk import find_ops
from coll.passes.lower_collectives import lower_collectives


def stats(op, n, shape, strategy, order=None, **attrs):
    with make_context():
        m = ir.Module.parse(collective_module(op, n, shape, "f32", strategy=strategy, order=order, **attrs))
        lower_collectives(m.operation)
        f = find_ops(m.operation, "func.func")[0]
        s = analyze_function(f)
        s["edges"] = ring_edges(f)
        return s


def tree_rounds(ranks):
    """A binomial tree over `ranks` is ceil(log2) rounds deep, but a copy
    waits only for the copy that delivered its data: the longest chain has
    floor(log2 ranks) copies (rank 2^k - 1 is reached in k hops)."""
    return ranks.bit_length() - 1


@pytest.mark.parametrize("n", (2, 4, 8, 16, 32))
def test_rhd_power_of_two(n):
    s = stats("all_reduce", n, [64 * n], "rhd", order="any")
    assert s["rounds"] == 2 * int(math.log2(n))
    assert s["copies"] == 2 * n * int(math.log2(n))
    # Each device sends about 2(N-1)/N of its buffer: the bandwidth bound.
    assert s["max_bytes_sent"] == 2 * (n - 1) * 64 * 4
    # In device order the same rounds carry the contributions themselves:
    # more bytes (at N > 2), no more rounds.
    canon = stats("all_reduce", n, [64 * n], "rhd")
    assert canon["rounds"] == s["rounds"]
    assert canon["max_bytes_sent"] >= s["max_bytes_sent"]


@pytest.mark.parametrize("n", (3, 5, 6, 7, 12))
def test_rhd_folds_the_extra_devices(n):
    p = 1 << (n.bit_length() - 1)
    s = stats("all_reduce", n, [64 * n], "rhd", order="any")
    assert s["rounds"] == 2 * int(math.log2(p)) + 2
    assert stats("all_reduce", n, [64 * n], "rhd")["rounds"] == s["rounds"]
    assert s["copies"] == 2 * p * int(math.log2(p)) + 2 * (n - p)


@pytest.mark.parametrize("n", (2, 3, 4, 5, 8))
def test_tree_all_reduce(n):
    s = stats("all_reduce", n, [8], "tree", order="any")
    assert (s["copies"], s["rounds"], s["kernels"]) == (2 * (n - 1), 2 * tree_rounds(n), n - 1)
    # Device order: gathered at the root (one round, one combine), then the tree broadcast.
    canon = stats("all_reduce", n, [8], "tree")
    assert (canon["copies"], canon["rounds"], canon["kernels"]) == (2 * (n - 1), 1 + tree_rounds(n), 1)


@pytest.mark.parametrize("n", (2, 3, 4, 6))
def test_reduce_scatter(n):
    ring = stats("reduce_scatter", n, [2 * n], "ring", order="any", axis=0)
    assert (ring["copies"], ring["rounds"], ring["kernels"]) == (n * (n - 1), n - 1, n * (n - 1))
    assert ring["edges"] == {(i, (i + 1) % n) for i in range(n)}
    # Device order: every block along d0 -> .. -> d(N-1), then one copy
    # from d(N-1) to its owner (at N = 2 block 0 runs d1 -> d0: none).
    canon = stats("reduce_scatter", n, [2 * n], "ring", axis=0)
    extra = n - 1 if n > 2 else 0
    assert (canon["copies"], canon["kernels"]) == (n * (n - 1) + extra, n * (n - 1))
    direct = stats("reduce_scatter", n, [2 * n], "direct", axis=0)
    assert (direct["copies"], direct["rounds"], direct["kernels"]) == (n * (n - 1), 1, n)


@pytest.mark.parametrize("n", (2, 3, 4, 6))
def test_all_gather(n):
    ring = stats("all_gather", n, [3], "ring", axis=0)
    assert (ring["copies"], ring["local_copies"], ring["rounds"]) == (n * (n - 1), n, n - 1)
    assert ring["edges"] == {(i, (i + 1) % n) for i in range(n)}
    direct = stats("all_gather", n, [3], "direct", axis=0)
    assert (direct["copies"], direct["rounds"]) == (n * (n - 1), 1)
    # A non-leading axis: one strided copy per block, whatever its rows.
    assert stats("all_gather", n, [2, 3], "direct", axis=1)["copies"] == n * (n - 1)
    assert stats("all_gather", n, [1000, 3], "direct", axis=1)["copies"] == n * (n - 1)


@pytest.mark.parametrize("n", (2, 3, 4, 5, 8))
def test_reduce(n):
    numel = 32 * n  # n chunks of 32: none empty
    direct = stats("reduce", n, [numel], "direct", root=0)
    assert (direct["copies"], direct["rounds"], direct["kernels"]) == (n - 1, 1, 1)
    tree = stats("reduce", n, [numel], "tree", order="any", root=n - 1)
    assert (tree["copies"], tree["rounds"], tree["kernels"]) == (n - 1, tree_rounds(n), n - 1)
    # Device order: tree is direct's gather.
    canon = stats("reduce", n, [numel], "tree", root=n - 1)
    assert (canon["copies"], canon["rounds"], canon["kernels"]) == (n - 1, 1, 1)
    ring = stats("reduce", n, [numel], "ring", order="any", root=1)
    assert (ring["copies"], ring["rounds"]) == (n * (n - 1), n - 1)
    outside = stats("reduce", n, [numel], "tree", order="any", root=n)
    assert (outside["copies"], outside["rounds"]) == (n, tree_rounds(n) + 1)


@pytest.mark.parametrize("n", (2, 3, 4, 5, 8))
def test_broadcast(n):
    numel = 32 * n
    direct = stats("broadcast", n, [numel], "direct", root=0)
    assert (direct["copies"], direct["rounds"], direct["local_copies"]) == (n - 1, 1, 1)
    tree = stats("broadcast", n, [numel], "tree", root=1)
    assert (tree["copies"], tree["rounds"]) == (n - 1, tree_rounds(n))
    ring = stats("broadcast", n, [numel], "ring", root=n - 1)
    assert (ring["copies"], ring["rounds"]) == (n * (n - 1), n - 1)
    outside = stats("broadcast", n, [numel], "tree", root=n)
    assert (outside["copies"], outside["rounds"]) == (n, tree_rounds(n + 1))


@pytest.mark.parametrize("n", (2, 3, 4))
def test_all_to_all(n):
    s = stats("all_to_all", n, [2 * n, 3], "direct", split_axis=0, concat_axis=0)
    assert (s["copies"], s["local_copies"], s["rounds"]) == (n * (n - 1), n, 1)


COST_CASES = [("reduce_scatter", [8, 512], {"axis": 0}), ("all_gather", [512], {"axis": 0}),
              ("reduce", [4096], {"root": 2}), ("broadcast", [4096], {"root": 8}),
              ("all_to_all", [8, 64], {"split_axis": 0, "concat_axis": 1}), ("all_reduce", [4096], {})]


@pytest.mark.parametrize("op,shape,attrs", COST_CASES)
def test_cost_model_covers_every_strategy(op, shape, attrs):
    from coll.analysis import cost_model
    from coll.ir.ops import OPS
    from coll.passes.choose_strategy import Instance, candidates, choose_strategies
    nv = cost_model.load_profile("nvlink-h200")
    with make_context():
        m = ir.Module.parse(collective_module(op, 8, shape, "f32", **attrs))
        c = Instance.of(find_ops(m.operation, "coll." + op)[0])
        cands = candidates(c, nv)
        cls = OPS["coll." + op]  # the peer strategies only with coll.peer_access
        assert [x["strategy"] for x in cands] == list(cls.runnable(()))
        assert all(x["predicted_s"] > 0 and x["copies"] > 0 for x in cands)
        fastest = min(cands, key=lambda x: x["predicted_s"])["strategy"]
        assert choose_strategies(m.operation, profile="nvlink-h200") == [fastest]


@pytest.mark.parametrize("op,n,numel,want", [
    ("coll.reduce_scatter", 8, 1 << 20, "ring"), ("coll.reduce_scatter", 8, 64, "direct"),
    ("coll.reduce_scatter", 2, 1 << 20, "direct"), ("coll.all_gather", 4, 1 << 20, "ring"),
    ("coll.reduce", 8, 1 << 20, "ring"), ("coll.reduce", 8, 64, "tree"), ("coll.reduce", 2, 64, "direct"),
    ("coll.broadcast", 4, 1 << 20, "ring"), ("coll.broadcast", 4, 64, "tree"),
    ("coll.all_to_all", 8, 1 << 20, "direct"), ("coll.all_reduce", 8, 1 << 20, "ring")])
def test_reference_rule(op, n, numel, want):
    from coll.passes.lower_collectives import reference_rule
    assert reference_rule(op, n, numel) == want
