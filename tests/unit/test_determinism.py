"""The order contract (ir/ops.py ORDERS). By default every strategy of every
reducing collective, at every size, N and element type, computes each
element as the device-order fold ((x_0 + x_1) + x_2) ..., accumulated in
f32 for f16 and bf16 and rounded once (execution/check.py canonical), bit
for bit, on CPU-simulated devices; an
element's result does not depend on the message it is in (batch
invariance); and order = "any" keeps the strategies the cost model picked
before the contract, whose bits differ.

Covering design, per (collective, strategy) family (from the registry, so a
new strategy is in it without a test edit): N = 2, 3, 5, 8, the element
types f32, f16, bf16 and two sizes (uneven chunks) rotating with N and the
family; all_reduce also to one device and in place. Inputs span 16
binades, so any other association rounds differently somewhere. Under
mpirun, every family MPI ranks can run, each at one N of 2..4, one mpirun
per N.
"""
import math

import numpy as np
import pytest
from mlir import ir

from coll.analysis import cost_model, taskgraph
from coll.collectives import COLLECTIVES
from coll.collectives.reduce_scatter import ReduceScatter
from coll.execution import check
from coll.execution.signature import to_bf16
from coll.ir import make_context
from coll.ir.generate import collective_module
from coll.ir.kinds import order_matters
from coll.ir.ops import Combine
from coll.ir.walk import find_ops
from coll.lowering import cpu
from coll.passes import choose_strategy
from coll.passes.lower_collectives import lower_collectives

REDUCING = [cls for cls in COLLECTIVES if cls.HAS_KIND]
FAMILIES = [(cls, s) for cls in REDUCING for s in cls.runnable(cpu.BACKEND.capabilities)]
NS, TYPES, SIZES = (2, 3, 5, 8), ("f32", "f16", "bf16"), (1000, 4099)


def inputs(n, numel, element, seed=0):
    """n arrays of `numel` values over 16 binades, stored as `element` is."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        v = rng.standard_normal(numel) * 2.0 ** rng.integers(-8, 8, numel)
        out.append(to_bf16(v.astype(np.float32)) if element == "bf16"
                   else v.astype(check.NUMPY_DTYPES[element]))
    return out


def run(op, n, numel, element, strategy="auto", order=None, to_device=None, in_place=False, seed=0, xs=None,
        **options):
    """(inputs, outputs, the strategies run) of `op` (sum) on the CPU, on
    `xs` or `inputs(...)`; auto: the CPU back end's choice (its profile;
    options profile="": the reference rule)."""
    attrs = {"root": (n - 1) // 2} if op == "reduce" else {"axis": 0} if op == "reduce_scatter" else {}
    with make_context():
        text = collective_module(op, n, [numel], element, strategy=None if strategy == "auto" else strategy,
                                 order=order, to_device=to_device, in_place=in_place, **attrs)
    prog = cpu.compile(text, **options)
    xs = inputs(n, numel, element, seed) if xs is None else xs
    size = numel // n if op == "reduce_scatter" else numel
    count = 1 if op == "reduce" or to_device is not None else n
    ys = [] if in_place else [np.zeros(size, xs[0].dtype) for _ in range(count)]
    given = [x.copy() for x in xs]
    prog.run(given, ys)
    return xs, given if in_place else ys, prog.strategies


def same_bits(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a.view(np.uint8), b.view(np.uint8))


def cases():
    for f, (cls, s) in enumerate(FAMILIES):
        op = cls.short_name()
        for i, n in enumerate(NS):
            numel = SIZES[(i + f) % 2] // n * n if op == "reduce_scatter" else SIZES[(i + f) % 2]
            yield pytest.param(op, s, n, numel, TYPES[(i + f) % 3], {}, id=f"{op}-{s}-n{n}-{TYPES[(i + f) % 3]}")
        if op == "all_reduce":
            yield pytest.param(op, s, 5, 4099, "f32", {"to_device": 2}, id=f"{op}-{s}-to_device")
            yield pytest.param(op, s, 4, 1000, "bf16", {"in_place": True}, id=f"{op}-{s}-in_place")


@pytest.mark.parametrize("op,strategy,n,numel,element,extra", list(cases()))
def test_every_strategy_is_the_device_order_sum(op, strategy, n, numel, element, extra):
    xs, ys, _ = run(op, n, numel, element, strategy, **extra)
    want = check.canonical("sum", element, xs)
    if op == "reduce_scatter":
        assert all(same_bits(y, w) for y, w in zip(ys, np.split(want, n)))
    else:
        assert ys and all(same_bits(y, want) for y in ys)


@pytest.mark.parametrize("op", ["all_reduce", "reduce"])
def test_a_prefix_of_a_long_message_is_the_short_message(op):
    """Batch invariance: above its threshold the default rule picks ring
    (all_reduce: naive below, reduce: tree); the first elements of the long
    message come out as the short message does."""
    short, long_ = 1000, 300_000
    xl = inputs(4, long_, "f32")
    _, ys, picked = run(op, 4, short, "f32", xs=[x[:short].copy() for x in xl], profile="")
    _, yl, picked_long = run(op, 4, long_, "f32", xs=xl, profile="")
    assert picked_long == ["ring"] != picked
    assert same_bits(yl[0][:short], ys[0])


def test_any_order_is_todays_association():
    """order = "any": the ring of old (chunk c starts on device c), which
    rounds differently from the device order in many elements."""
    xs, ys, _ = run("all_reduce", 8, 4099, "f32", "ring", order="any")
    differ = int(np.sum(ys[0] != check.canonical("sum", "f32", xs)))
    assert differ > 100
    assert all(same_bits(y, ys[0]) for y in ys)  # its replicas still agree


@pytest.mark.parametrize("profile,n,numel,today", [("mpi", 4, 4099, "tree"), ("cpu", 8, 4099, "ring"),
                                                   ("nvlink-h200", 8, 1 << 24, "all2all")])
def test_any_order_keeps_todays_picks(profile, n, numel, today):
    """The cost model under order = "any" costs the programs of old: its
    picks are the ones it made before the contract (pinned here); the
    default contract chooses among the device-order forms."""
    prof = cost_model.load_profile(profile)
    coll = choose_strategy.Instance(tuple(range(n)), numel, "f32", "sum", order="any")
    assert choose_strategy.pick(choose_strategy.candidates(coll, prof)) == today


def test_only_a_rounding_float_kind_has_an_order_to_fix():
    """A max (or an integer sum) associates exactly: it lowers by the
    strategy's own association under either contract."""
    assert order_matters("sum", "f16") and order_matters("prod", "f32")
    assert not order_matters("max", "f32") and not order_matters("sum", "i32")
    texts = []
    for order in (None, "any"):
        with make_context():
            m = ir.Module.parse(collective_module("all_reduce", 3, [64], "f32", kind="max", strategy="ring",
                                                  order=order))
            lower_collectives(m.operation)
            texts.append(str(m))
    assert texts[0] == texts[1]


def _ring(op, element, order=None, n=4, numel=64):
    """(element types of the copies, (lhs, output) element types of the
    combines) of `op`'s ring, and its task graph's bytes copied."""
    with make_context():
        attrs = {"root": 1} if op == "reduce" else {"axis": 0} if op == "reduce_scatter" else {}
        m = ir.Module.parse(collective_module(op, n, [numel], element, strategy="ring", order=order, **attrs))
        lower_collectives(m.operation)
        f = next(iter(find_ops(m.operation, lambda name: name == "func.func")))
        ty = lambda v: str(ir.MemRefType(v.type).element_type)  # noqa: E731
        copies = [(ty(c.operands[0]), math.prod(ir.MemRefType(c.operands[0].type).shape))
                  for c in find_ops(m.operation, lambda name: name == "coll.copy")]
        combines = [(ty(Combine.of(c).inputs[0]), ty(Combine.of(c).out))
                    for c in find_ops(m.operation, lambda name: name == "coll.combine")]
        return copies, combines, sum(t.bytes for t in taskgraph.from_function(f).tasks if t.kind == "copy")


@pytest.mark.parametrize("op", ["all_reduce", "reduce", "reduce_scatter"])
def test_a_16_bit_chain_carries_f32_partials(op):
    """A partial sum stored in bf16 between devices would round at every
    hop: under the contract a bf16 chain keeps its partials in f32 (the
    first hop moves a contribution, the last combine rounds once to bf16),
    and the cost model counts the f32 bytes they move; order = "any"
    keeps them in bf16."""
    copies, combines, nbytes = _ring(op, "bf16")
    assert {t for t, _ in copies} == {"f32", "bf16"}
    assert ("bf16", "f32") in combines and ("f32", "bf16") in combines
    assert all(lhs == "f32" for lhs, out in combines if out == "bf16")  # one rounding, at the end
    any_copies, any_combines, any_bytes = _ring(op, "bf16", order="any")
    assert {t for t, _ in any_copies} == {"bf16"} and set(any_combines) == {("bf16", "bf16")}
    assert nbytes == sum(k * (4 if t == "f32" else 2) for t, k in copies) > any_bytes


@pytest.mark.parametrize("strategy", ReduceScatter.STRATEGIES)
@pytest.mark.parametrize("element", ["f32", "bf16"])
def test_a_strided_block_is_reduced_in_device_order(strategy, element):
    """reduce_scatter along an inner axis: each block is one strided view,
    its own one read in place among the received ones (one combine's rhs
    cast to one type); the bits are still the canonical sum's."""
    n, shape = 4, [3, 8]
    with make_context():
        text = collective_module("reduce_scatter", n, shape, element, strategy=strategy, axis=1)
    xs = [x.reshape(shape) for x in inputs(n, 24, element, seed=3)]
    ys = [np.zeros((3, 2), xs[0].dtype) for _ in range(n)]
    cpu.compile(text).run(xs, ys)
    want = np.split(check.canonical("sum", element, [x.ravel() for x in xs]).reshape(shape), n, axis=1)
    assert all(same_bits(y, np.ascontiguousarray(w)) for y, w in zip(ys, want))


@pytest.mark.parametrize("op,element", [("all_reduce", "bf16"), ("reduce_scatter", "f16")])
def test_mpi_ranks_get_the_canonical_bits(op, element):
    """Under MPI the ring's f32 partials are messages between ranks; the
    bits are still the canonical sum's."""
    from coll.lowering import mpi
    ok, why = mpi.available()
    if not ok:
        pytest.skip(why)
    n, numel = 3, 4098
    xs = inputs(n, numel, element, seed=4)
    with make_context():
        text = collective_module(op, n, [numel], element, strategy="ring",
                                 **({"axis": 0} if op == "reduce_scatter" else {}))
    ys = [np.zeros(numel // n if op == "reduce_scatter" else numel, xs[0].dtype) for _ in range(n)]
    mpi.compile(text).run(xs, ys)
    want = check.canonical("sum", element, xs)
    wants = np.split(want, n) if op == "reduce_scatter" else [want] * n
    assert all(same_bits(y, w) for y, w in zip(ys, wants))


def test_every_mpi_strategy_gives_the_canonical_bits():
    """The MPI grid: every strategy MPI ranks can run (no peer access) of
    every reducing collective, under mpirun, bitwise the canonical sum; each
    family at one of N = 2, 3, 4 and one element type (rotating), one
    mpirun per N."""
    from coll.lowering import mpi
    ok, why = mpi.available()
    if not ok:
        pytest.skip(why)
    groups: dict[int, list] = {}
    families = [(c, s) for c in REDUCING for s in c.runnable(mpi.BACKEND.capabilities)]
    for f, (cls, s) in enumerate(families):
        op, n, element = cls.short_name(), (2, 3, 4)[f % 3], TYPES[f // 3 % 3]
        numel = 4098 // n * n if op == "reduce_scatter" else 4099
        attrs = {"root": (n - 1) // 2} if op == "reduce" else {"axis": 0} if op == "reduce_scatter" else {}
        with make_context():
            text = collective_module(op, n, [numel], element, strategy=s, **attrs)
        xs = inputs(n, numel, element, seed=f)
        size, count = (numel // n, n) if op == "reduce_scatter" else (numel, 1 if op == "reduce" else n)
        ys = [np.zeros(size, xs[0].dtype) for _ in range(count)]
        groups.setdefault(n, []).append((f"{op}-{s}-n{n}-{element}", mpi.compile(text), xs, ys))
    for n, runs in groups.items():
        mpi.launch([(p, xs, ys) for _, p, xs, ys in runs], 0)
    bad = []
    for runs in groups.values():
        for name, _, xs, ys in runs:
            want = check.canonical("sum", name.rsplit("-", 1)[1], xs)
            wants = np.split(want, len(xs)) if name.startswith("reduce_scatter") else [want] * len(ys)
            if not all(same_bits(y, w) for y, w in zip(ys, wants)):
                bad.append(name)
    assert sum(len(r) for r in groups.values()) >= 9 and not bad, bad


@pytest.mark.parametrize("strategy", ["ring"])
def test_the_pointer_level_keeps_the_canonical_bits(strategy):
    """N = 64: the CPU route emits the program on pointers
    (lowering/cpu/pointer_level.py), the 16-bit chain's f32 partials through
    shared kernels of mixed operand types."""
    xs, ys, _ = run("all_reduce", 64, 4099, "bf16", strategy, seed=1)
    want = check.canonical("sum", "bf16", xs)
    assert all(same_bits(y, want) for y in ys)
