"""coll-check-semantics on the lowering of every collective other than the
all_reduce basics (test_check_semantics.py): every strategy of every
collective, N = 1..16, with blocks along leading and inner axes, rooted ops
with the root in the group and outside it, in-place forms, strided buffers
(windows of larger ones), chained collectives (deps), and the same
programs after coll-shuffle. Each lowering carries one coll.implements per
collective, with the collective's own attributes.

Covering design: per (collective, strategy) one test that loops over N and
the collective's shape/attribute variants (small shapes: the check costs per
piece, a lowering's pieces are N^2 blocks at most)."""
import pytest
from mlir import ir
from mlir.dialects import func
from registry_forms import forms as registry_forms

from coll.ir import builders, peers
from coll.ir.generate import axis_attributes, collective_module
from coll.ir.ops import OPS, Implements, attr_ints, view
from coll.passes.check_semantics import check_module, unclaimed
from coll.passes.lower_collectives import lower_collectives
from coll.passes.shuffle import shuffle

NS = (1, 2, 3, 4, 5, 7, 8, 12, 16)  # up to 16, odd and even, powers of two and not


# Axis and pair choices the registry's samples do not reach, where a
# collective has axes or pairs to choose: blocks along a leading and an inner
# axis, split along one axis and gathered along another; partial pairs,
# identity pairs and none.
def more_forms(cls, n):
    if len(cls.AXES) == 1:  # reduce_scatter, all_gather, ...: both axes of a 2-D buffer
        return [([2, 2 * n], {"axis": 1}, False), ([n, 3], {"axis": 0}, False)]
    if len(cls.AXES) == 2:  # all_to_all: the two axes crossed, and both leading
        split, concat = cls.AXES
        return [([n, 2 * n], {split: 0, concat: 1}, False), ([2, n], {split: 1, concat: 0}, False),
                ([2 * n, 1], {split: 0, concat: 0}, False)]
    if "pairs" in cls.ARRAYS:
        return [([2, 3], {"pairs": partial_pairs(n)}, False),
                ([5], {"pairs": [v for i in range(n) for v in (i, i)]}, False), ([4], {"pairs": []}, False)]
    return []


def variants(cls, n):
    """(shape, attrs, in_place) of each form of `cls` at n devices: the
    registry's (registry_forms.py: its sample, small sample, roots inside and
    outside the group, to_device, in place) and more_forms."""
    out = [(shape, attrs, in_place) for _, shape, attrs, in_place in registry_forms(cls, n)]
    return out + [v for v in more_forms(cls, n) if v not in out]


def partial_pairs(n):
    """Every other device sends to the one two further on (mod n): some
    devices receive nothing, some send nothing (n = 1: no pair)."""
    pairs = {(s, (s + 2) % n) for s in range(0, n, 2) if (s + 2) % n != s} if n > 1 else set()
    out, targets = [], set()
    for s, t in sorted(pairs):
        if t not in targets:
            targets.add(t)
            out += [s, t]
    return out


def lowered(op, n, strategy, shape, attrs, in_place=False):
    m = ir.Module.parse(collective_module(op, n, shape, "i32", strategy=strategy, in_place=in_place,
                                          **attrs))
    if OPS["coll." + op].needs(strategy):
        peers.enable(m.operation)
    lower_collectives(m.operation)
    return m


def claims(m):
    return [view(op) for op in m.body.operations[0].regions[0].blocks[0].operations
            if op.operation.name == Implements.NAME]


CASES = [(cls.NAME[len("coll."):], s) for cls in OPS.values() if hasattr(cls, "STRATEGIES")
         and cls.STRATEGIES for s in cls.STRATEGIES]


@pytest.mark.parametrize("op,strategy", CASES)
def test_every_lowering_is_proved(ctx, op, strategy):
    cls = OPS["coll." + op]
    for n in NS:
        for shape, attrs, in_place in variants(cls, n):
            m = lowered(op, n, strategy, shape, attrs, in_place)
            where = f"{op} {strategy} N={n} {shape} {attrs} in_place={in_place}"
            (c,) = claims(m)
            assert c.collective == op and c.devices == list(range(n)), where
            assert c.axes == (list(axis_attributes(cls, **attrs).values()) or None), where
            assert (c.root, c.to_device) == (attrs.get("root"), attrs.get("to_device")), where
            assert (c.kind is not None) == cls.HAS_KIND, where
            assert {a: attr_ints(c.operation, a) for a in cls.ARRAYS} == \
                {a: attrs.get(a, cls.default_arrays(n).get(a)) for a in cls.ARRAYS}, where
            assert check_module(m.operation) == [], where
            assert unclaimed(m.operation) == [], where


@pytest.mark.parametrize("op,strategy", CASES)
@pytest.mark.parametrize("seed", [1, 2])
def test_shuffled_programs_are_proved(ctx, op, strategy, seed):
    for n in (3, 4, 6):
        for shape, attrs, in_place in variants(OPS["coll." + op], n):
            m = lowered(op, n, strategy, shape, attrs, in_place)
            before = str(m)
            shuffle(m.operation, seed)
            m.operation.verify()
            assert n < 3 or str(m) != before or op == "all_gather"
            assert check_module(m.operation) == [], f"{op} {strategy} N={n} {attrs} seed {seed}"


# -- strided buffers: each device's input and output are a window (one row) of
# a larger buffer, so every view has an offset the lowering must keep.

def strided_module(op, n, strategy, **attrs):
    i32 = ir.IntegerType.get_signless(32)
    k = 2 * n
    out_k = {"all_gather": k * n, "reduce_scatter": 2}.get(op, k)
    n_in = 1 if op == "broadcast" else n
    n_out = 1 if op == "reduce" else n
    with ir.Location.unknown():
        m = ir.Module.create()
        big_in, big_out = ir.MemRefType.get([3, k], i32), ir.MemRefType.get([3, out_k], i32)
        with ir.InsertionPoint(m.body):
            f = func.FuncOp("f", ir.FunctionType.get([big_in] * n_in + [big_out] * n_out, []))
            block = f.add_entry_block()
        with ir.InsertionPoint(block):
            args = list(block.arguments)

            def row(a, width):
                t = ir.MemRefType.get([1, width], i32, ir.StridedLayoutAttr.get(width, [width, 1]))
                return builders.subview(a, [1, 0], [1, width], t)
            ins = [row(a, k) for a in args[:n_in]]
            outs = [row(a, out_k) for a in args[n_in:]]
            if op in ("reduce", "all_reduce", "reduce_scatter"):
                attrs["kind"] = "sum"
            tok = builders.collective(op, ins, outs, list(range(n)), strategy=strategy, **attrs)
            builders.wait([tok])
            func.ReturnOp([])
    m.operation.verify()
    lower_collectives(m.operation)
    return m


@pytest.mark.parametrize("op,strategy,attrs", [
    ("all_reduce", "ring", {}), ("all_reduce", "naive", {}), ("all_reduce", "rhd", {}),
    ("reduce_scatter", "ring", {"scatter_axis": 1}), ("reduce_scatter", "direct", {"scatter_axis": 1}),
    ("all_gather", "ring", {"gather_axis": 1}), ("all_to_all", "direct", {"split_axis": 1, "concat_axis": 1}),
    ("reduce", "tree", {"root": 1}), ("reduce", "ring", {"root": 9}),
    ("broadcast", "ring", {"root": 1}), ("broadcast", "tree", {"root": 9})])
def test_strided_buffers_are_proved(ctx, op, strategy, attrs):
    for n in (2, 3, 5):
        a = {k: (n if v == 9 else v) for k, v in attrs.items()}
        m = strided_module(op, n, strategy, **a)
        (c,) = claims(m)
        assert ir.MemRefType(c.inputs[0].type).get_strides_and_offset()[1] == 2 * n
        assert check_module(m.operation) == [], f"{op} {strategy} N={n}"


# -- chained collectives: each starts after the one before (deps) and reads its
# outputs; each claim covers its own program.

def chain_module(n):
    i32 = ir.IntegerType.get_signless(32)
    t = lambda *s: ir.MemRefType.get(list(s), i32)  # noqa: E731
    with ir.Location.unknown():
        m = ir.Module.create()
        with ir.InsertionPoint(m.body):
            types = [t(2, 3)] * n + [t(2, 3 * n)] * n + [t(2, 3)] * n + [t(2, 3)] * n
            f = func.FuncOp("f", ir.FunctionType.get(types, []))
            block = f.add_entry_block()
        with ir.InsertionPoint(block):
            a = list(block.arguments)
            x, g, z, w = (a[k * n:(k + 1) * n] for k in range(4))
            devs = list(range(n))
            t1 = builders.collective("all_gather", x, g, devs, strategy="ring", gather_axis=1)
            t2 = builders.collective("reduce_scatter", g, z, devs, [t1], kind="max", strategy="ring",
                                     scatter_axis=1)
            t3 = builders.collective("broadcast", [z[n - 1]], w, devs, [t2], strategy="tree", root=n - 1)
            t4 = builders.collective("reduce", w, [z[0]], devs, [t3], kind="sum", strategy="direct", root=0)
            builders.wait([t4])
            func.ReturnOp([])
    m.operation.verify()
    lower_collectives(m.operation)
    return m


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_chained_collectives_are_proved(ctx, n):
    m = chain_module(n)
    assert [c.collective for c in claims(m)] == ["all_gather", "reduce_scatter", "broadcast", "reduce"]
    assert check_module(m.operation) == []
    shuffle(m.operation, 7)
    assert check_module(m.operation) == []

