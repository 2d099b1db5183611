"""The mutation test of coll-check-semantics (test_check_semantics.py's, for
all_reduce's basic strategies) over every other lowering: every strategy of
every collective in the registry (coll.collectives COLLECTIVES, each class's
STRATEGIES) less those, at N = 3 and 4, in the forms the registry gives
(registry_forms.py: each collective's sample, padded; its small sample; its
root or single-device output outside the group; in place), so a new
collective or strategy is in it without an edit. Each single-operand
substitution in a copy or combine (a buffer operand replaced by another
buffer or view of the same type defined before it) must be reported exactly
when it changes what the program computes, as judged independently: numpy
runs the program element by element (random integers, a written-mask per
buffer, in program order) and compares its outputs with numpy's own
reading of the collective (np.split / np.concatenate along its axes).

Where a program has more substitutions than SAMPLE, a fixed-seed sample of
SAMPLE of them is judged (the count is printed), to keep the file within CI
time; the full set is the union over seeds."""
import itertools
import random

import numpy as np
import pytest
from mlir import ir
from registry_forms import forms as registry_forms
from registry_forms import strategies
from test_check_semantics import STRATEGIES as BASIC
from test_check_semantics import apply, body_ops, judge_substitutions, mutants, pad, positions, reference, simulate

from coll.collectives import AllReduce
from coll.ir import peers
from coll.ir.generate import collective_module
from coll.ir.ops import Combine, Copy, Implements, view
from coll.ir.views import root_of
from coll.passes.check_semantics import check_module
from coll.passes.lower_collectives import lower_collectives

SAMPLE = 60


def lowered(cls, n, strategy, shape, attrs, in_place):
    m = ir.Module.parse(collective_module(cls.short_name(), n, shape, "i64", strategy=strategy,
                                          in_place=in_place, **attrs))
    if cls.needs(strategy):
        peers.enable(m.operation)
    lower_collectives(m.operation)
    return str(m)


def forms(cls, n):
    """(shape, attrs, in_place, padded) per form of `cls` at n devices: the
    registry's (the first padded), and a partial permutation where the
    collective has `pairs` (device n-1 receives nothing, device 0 sends
    nothing: outputs that nothing writes)."""
    out = [(shape, attrs, in_place, k == 0) for k, (_, shape, attrs, in_place) in enumerate(registry_forms(cls, n))]
    if "pairs" in cls.ARRAYS:
        ring = [v for i in range(n) for v in (i, (i + 1) % n)]
        out.append(([2, 3], {"pairs": ring[2:]}, False, False))
    return out


CASES = strategies(skip={(AllReduce, s) for s in BASIC})


@pytest.mark.parametrize("cls,strategy", CASES, ids=[f"{cls.short_name()}-{s}" for cls, s in CASES])
@pytest.mark.parametrize("n", [3, 4])
def test_every_substitution_is_reported_or_harmless(ctx, cls, strategy, n):
    op = cls.short_name()
    total = 0
    for shape, attrs, in_place, padded in forms(cls, n):
        text = lowered(cls, n, strategy, shape, attrs, in_place)
        if padded:
            text = pad(text)
        assert simulate(ir.Module.parse(text), 0, op, n, attrs)
        assert check_module(ir.Module.parse(text).operation) == []
        subs = mutants(text)  # none where no two buffers share a type (broadcast direct, root outside)
        total += len(subs)
        picked = subs if len(subs) <= SAMPLE else random.Random(n * 1000 + len(subs)).sample(subs, SAMPLE)
        reported, harmless = judge_substitutions(text, picked, f"{op} {strategy} N={n} {attrs}: ",
                                                 op=op, n=n, attrs=attrs)
        print(f"{op} {strategy} N={n} {attrs}{' in place' if in_place else ''}{' padded' if padded else ''}: "
              f"{len(subs)} substitutions, {len(picked)} judged, {reported} reported, {harmless} harmless")
    assert total


# -- order mutations ---------------------------------------------------------------
# A canonical lowering claims the order too (order = "canonical"): every
# output element the left fold in device order, 16-bit partials held in f32.
# Mutations of how an element sums (operands of one combine permuted, a
# partial rerouted) must be reported exactly when the association an element-level
# simulation computes differs from the canonical fold; some of them the
# multiset check (the same program without the order claim) misses.
ORDER_SAMPLE = 12
REDUCING = [(cls, s) for cls, s in strategies() if cls.HAS_KIND]


class Tree:
    """One element as its association: a leaf ("x", input, index), a node
    ("+", a, b) with its operands sorted (they commute), or ("r", t): t
    rounded to a 16-bit type. `sum` over device order (the registry's
    reference) builds the canonical fold."""
    __slots__ = ("t",)

    def __init__(self, t):
        self.t = t

    def __add__(self, other):
        if isinstance(other, int) and other == 0:  # sum()'s start
            return self
        return Tree(("+",) + tuple(sorted((self.t, other.t), key=repr)))

    __radd__ = __add__

    def __eq__(self, other):
        return isinstance(other, Tree) and self.t == other.t

    __hash__ = None

    def rounded(self):
        return self if self.t[0] in ("x", "r") else Tree(("r", self.t))  # rounding twice to one type: exact


def simulate_order(m, op, n, attrs):
    """True when every output element holds the canonical fold (rounded at
    most once, into the output) and nothing unwritten is read: element by
    element, in program order, each combine a left fold of its operands."""
    ops = body_ops(m)
    (claim,) = [Implements.of(o) for o in ops if o.name == Implements.NAME]
    mem, written = {}, {}

    def buf(value):
        root, _ = root_of(value)
        if root not in mem:
            size = int(np.prod(ir.MemRefType(root.type).shape, dtype=np.int64))
            mem[root], written[root] = np.empty(size, object), np.zeros(size, bool)
        return root, positions(value)

    xs = []
    for i, v in enumerate(claim.inputs):
        root, pos = buf(v)
        leaves = [Tree(("x", i, e)) for e in range(pos.size)]
        mem[root][pos] = np.array(leaves + [None], object)[:-1]
        written[root][pos] = True
        xs.append(mem[root][pos].copy().reshape(ir.MemRefType(v.type).shape))
    ok = True
    for o in ops:
        if o.name not in (Copy.NAME, Combine.NAME):
            continue
        c = view(o)
        ins = [buf(v) for v in c.inputs] if o.name == Combine.NAME else [buf(c.source)]
        dr, dp = buf(c.out if o.name == Combine.NAME else c.target)
        w = np.logical_and.reduce([written[r][p] for r, p in ins])
        ok &= bool(w.all())
        acc = mem[ins[0][0]][ins[0][1]].copy()
        for r, p in ins[1:]:
            acc = np.array([a + b if a is not None and b is not None else None
                            for a, b in zip(acc, mem[r][p])] + [None], object)[:-1]
        if o.name == Combine.NAME and str(ir.MemRefType(c.out.type).element_type) in ("f16", "bf16"):
            acc = np.array([a.rounded() if a is not None else None for a in acc] + [None], object)[:-1]
        mem[dr][dp], written[dr][dp] = acc, w
    want = reference(op, xs, n, attrs, len(claim.outputs))
    for v, y in zip(claim.outputs, want):
        root, pos = buf(v)
        got = [None if t is None else Tree(t.t[1]) if t.t[0] == "r" else t for t in mem[root][pos]]
        ok &= bool(written[root][pos].all()) and got == list(np.asarray(y, object).ravel())
    return ok


def order_mutants(text):
    """("permute"|"reroute", edits) of the order mutations of a lowered
    program: two operands of one combine exchanged (the multiset stays; with
    two operands the bits stay too: they commute); a combine, or a copy of a
    combine's result (a partial on its way), reading another buffer of its
    type (the substitutions above). (Exchanging operands between two
    combines finds no candidate in the lowerings: a device combines only
    its own slices, of other types, and each hop's scratch is made after
    the combines before it.)"""
    m = ir.Module.parse(text)
    ops = body_ops(m)
    combines = [i for i, o in enumerate(ops) if o.name == Combine.NAME]
    out = []
    for i in combines:
        k_in = len(Combine.of(ops[i]).inputs)
        for a, b in itertools.combinations(range(k_in), 2):
            out.append(("permute", [(i, a, b), (i, b, a)]))
    partials = {Combine.of(ops[c]).out for c in combines}
    out += [("reroute", [("sub", i, k, r)]) for i, k, r in mutants(text)
            if ops[i].name == Combine.NAME or ops[i].operands[0] in partials]
    return out


def apply_order(text, edits):
    """The program `text` with the operand edits of one order mutant."""
    if edits[0][0] == "sub":
        _, i, k, r = edits[0]
        return apply(text, i, k, r)
    m = ir.Module.parse(text)
    ops = body_ops(m)
    old = {(i, k): ops[i].operands[k] for i, k, _ in edits}
    for i, k, src in edits:
        ops[i].operands[k] = old[(i, src)]
    return m


def unordered(m):
    """The same program with its claim's order statement dropped (the
    multiset check only)."""
    for o in body_ops(m):
        if o.name == Implements.NAME and "order" in o.attributes:
            del o.attributes["order"]
    return m


def judge_order(text, op, n, attrs, where):
    """{kind: (reported, harmless, missed by the multiset check)} over a
    fixed-seed sample of the order mutants of `text`."""
    counts = {}
    subs = order_mutants(text)
    by_kind = {}
    for kind, edits in subs:
        by_kind.setdefault(kind, []).append(edits)
    for kind, all_edits in by_kind.items():
        rng = random.Random(len(all_edits) * 7 + n)
        picked = all_edits if len(all_edits) <= ORDER_SAMPLE else rng.sample(all_edits, ORDER_SAMPLE)
        reported = harmless = missed = 0
        for edits in picked:
            m = apply_order(text, edits)
            try:
                m.operation.verify()
            except ir.MLIRError:  # not a program (a combine's rhs group is one type): no mutant
                continue
            findings = check_module(m.operation)
            correct = simulate_order(m, op, n, attrs)
            at = f"{where}{kind} {edits}"
            if findings:
                assert not correct, f"false report ({at}): {findings[0][1]}"
                reported += 1
                missed += not check_module(unordered(m).operation)
            else:
                assert correct, f"wrong association not reported ({at})"
                harmless += 1
        counts[kind] = (reported, harmless, missed)
    return counts


def lowered_float(cls, n, strategy, shape, attrs, in_place, dtype):
    m = ir.Module.parse(collective_module(cls.short_name(), n, shape, dtype, strategy=strategy,
                                          in_place=in_place, **attrs))
    if cls.needs(strategy):
        peers.enable(m.operation)
    lower_collectives(m.operation)
    return str(m)


@pytest.mark.parametrize("cls,strategy", REDUCING, ids=[f"{cls.short_name()}-{s}" for cls, s in REDUCING])
@pytest.mark.parametrize("n", [3, 4])
def test_every_order_mutation_is_reported_or_harmless(ctx, cls, strategy, n):
    op = cls.short_name()
    for k, (label, shape, attrs, in_place) in enumerate(registry_forms(cls, n)):
        for dtype in ("f32", "bf16") if k == 0 else ("f32",):
            text = lowered_float(cls, n, strategy, shape, attrs, in_place, dtype)
            assert 'order = "canonical"' in text
            assert simulate_order(ir.Module.parse(text), op, n, attrs)
            assert check_module(ir.Module.parse(text).operation) == []
            counts = judge_order(text, op, n, attrs, f"{op} {strategy} N={n} {label} {dtype}: ")
            print(f"{op} {strategy} N={n} {label} {dtype}: {counts} (reported, harmless, missed by the "
                  "multiset check)")
            # Exchanging two operands of one combine keeps its multiset: every
            # one reported (not the first two: they commute) is one the
            # multiset check misses.
            reported, _, missed = counts.get("permute", (0, 0, 0))
            assert reported == missed


def test_a_permuted_combine_is_missed_by_the_multiset_check(ctx):
    """naive at N = 3 combines x0, x1, x2 in one combine; as x2, x1, x0 it
    sums the same inputs in another association: the multiset check passes
    it, the order check reports it at that combine."""
    text = lowered_float(AllReduce, 3, "naive", [24], {}, False, "f32")
    module = ir.Module.parse(text)  # kept alive while its ops are read
    ops = body_ops(module)
    i = next(i for i, o in enumerate(ops) if o.name == Combine.NAME and len(Combine.of(o).inputs) == 3)
    m = apply_order(text, [(i, 0, 2), (i, 2, 0)])
    assert not simulate_order(m, "all_reduce", 3, {})
    assert check_module(unordered(ir.Module.parse(str(m))).operation) == []
    (loc, msg, notes), *_ = check_module(m.operation)
    assert msg.startswith("coll.combine breaks the canonical order: it starts a partial with x1 and x2")
    assert "holds (x1[0:24] + x2[0:24]) + x0[0:24]" in msg
