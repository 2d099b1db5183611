"""Every collective x every strategy the CPU back end can run, on CPU-simulated
devices, against the numpy reference: the one numeric grid, built from the
registry (coll.collectives.COLLECTIVES: each class's runnable strategies,
its facts HAS_KIND, ROOTED, IN_PLACE, GEN and its `sample` shapes), so a
new collective or strategy is in it without a test edit.

Covering design, per (collective, strategy) `family` (each case compiles
one program, cached; the (type, kind) pairs rotate with an offset per
family, so every family sees many types and every pair many families):
  - devices: N = 1..8 on the collective's `sample(n)` shape (odd numel:
    uneven chunks; rank 2 and, with axes, a non-leading axis on even N);
  - sizes: fewer elements than devices (empty chunks), no elements, rank
    0 (collectives without axes) and large buffers (1000 elements or 67
    rows) in tiles of 64 elements and untiled;
  - kinds x types: every valid (element type, kind) pair (ir/kinds.py,
    the verifier's rule) with two strategies of each reducing collective
    at N = 3 (the strategies rotate, so every strategy sees about a
    quarter of the pairs, with both binary and N-ary combines); every
    element type with every strategy of a collective that moves data;
  - in place (IN_PLACE), roots outside the group (ROOTED), single-device
    outputs inside and outside the group (coll-gen's to_device, GEN), also
    on the other sizes;
  - hypothesis: random points between these (family, N, size, type,
    output or root, in place, tiling, order).

Shuffled orders. Every case runs in a token order of its own: `seed` is
SEEDS[(case number within its family + family number) % 4], None (the
lowering's order) or a coll-shuffle seed 1, 2, 3 (cpu.compile
shuffle_seed: another order its token graph allows; the CPU runs ops in
program order, so an order a missing token permits shows as a wrong
result). Coverage: the device cases of a family are 8 consecutive case
numbers, so N = 3..8 alone (where independent copies exist to reorder)
hits every residue mod 4: every (collective, strategy) runs under each of
seeds 1, 2 and 3 at some N >= 3, and unshuffled, and its other cases
(sizes, kinds, in place, roots, outputs) spread over all four. The earlier
suite ran the whole grid once per seed (3 more passes); here each pass
over the grid covers every seed, every program is statically checked by
coll-check-order when it compiles (cpu.compile), and the shuffle's own
tests (test_shuffle_cpu.py) show it reorders and exposes a dropped token.
COLL_SHUFFLE_SEED=K adds K to every seed (other orders on another run).
"""
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mlir import ir

from coll.collectives import COLLECTIVES
from coll.execution import check
from coll.ir import KINDS, make_context
from coll.ir.generate import collective_module
from coll.ir.types import ELEMENT_TYPES
from coll.ir.verifier import _kind_error
from coll.lowering import cpu

BASE = int(os.environ.get("COLL_SHUFFLE_SEED") or 0)
SEEDS = (None, 1, 2, 3)
PAIRS = [(el, k) for k in KINDS for el in ELEMENT_TYPES if _kind_error(k, el) is None]
FAMILIES = [(cls, s) for cls in COLLECTIVES for s in cls.runnable(cpu.BACKEND.capabilities)]


class Case:
    def __init__(self, cls, strategy, n, shape, attrs, dtype, kind, seed, in_place=False, tile=-1, what=""):
        self.cls, self.strategy, self.n, self.shape, self.attrs = cls, strategy, n, shape, attrs
        self.dtype, self.kind, self.seed, self.in_place, self.tile = dtype, kind, seed, in_place, tile
        self.id = (f"{cls.short_name()}-{strategy}-N{n}-{'x'.join(map(str, shape)) or 'scalar'}-{dtype}"
                   f"{'-' + kind if kind else ''}{'-' + what if what else ''}-seed{seed}")

    def run(self):
        """Compiles (cached), runs, checks; returns (ok, worst error, program)."""
        with make_context():
            text = collective_module(self.cls.short_name(), self.n, self.shape, self.dtype, kind=self.kind,
                                     strategy=self.strategy, in_place=self.in_place, **self.attrs)
            problem = check.describe(ir.Module.parse(text))
        seed = None if self.seed is None else self.seed + BASE
        prog = cpu.compile(text, tile=self.tile, shuffle_seed=seed)
        inputs = check.make_inputs(problem, seed=self.n + len(self.shape))
        given = [x.copy() for x in inputs]  # in place, the run overwrites them
        outputs = check.make_outputs(problem)
        prog.run(given, outputs)
        ok, worst = check.check(problem, inputs, check.op_outputs(problem, given, outputs))
        cpu.clear_cache()  # no case compiles another's program: keep the memory flat
        return ok, worst, prog


def _typed(cls):
    """The (dtype, kind) values a collective takes: every valid pair when it
    reduces, every element type (no kind) when it moves data."""
    return PAIRS if cls.HAS_KIND else [(el, None) for el in ELEMENT_TYPES]


def _family(f, cls, strategy):
    """The cases of one (collective, strategy), family number f."""
    typed = _typed(cls)
    k = 0

    def case(n, shape_attrs, typed_at, **kw):
        nonlocal k
        shape, attrs = shape_attrs
        dtype, kind = typed_at
        c = Case(cls, strategy, n, list(shape), dict(attrs), dtype, kind, SEEDS[(k + f) % len(SEEDS)], **kw)
        k += 1
        return c

    def rot(i):
        return typed[(7 * f + i) % len(typed)]

    out = [case(n, cls.sample(n), rot(n)) for n in range(1, 9)]
    for i, (size, ns) in enumerate((("small", (3, 8)), ("empty", (2, 5)), ("scalar", (3,)))):
        out += [case(n, cls.sample(n, size), rot(11 * i + n), what=size) for n in ns
                if cls.sample(n, size) is not None]
    for n, tile in ((2, 64), (3, 0), (5, 64), (8, 64)):
        out.append(case(n, cls.sample(n, "large"), rot(3 * n), tile=tile, what=f"tile{tile}"))
    if cls.IN_PLACE:
        for n in (1, 2, 3, 5, 8):
            shape, attrs = cls.sample(n)
            if cls.ROOTED:
                attrs["root"] = n - 1
            out.append(case(n, (shape, attrs), rot(5 * n), in_place=True, what="in-place"))
        if "to_device" in cls.GEN:
            shape, attrs = cls.sample(4)
            out.append(case(4, (shape, {**attrs, "to_device": 2}), rot(1), in_place=True, what="in-place-to2"))
    if cls.ROOTED:
        for n in (1, 2, 3, 6):
            shape, attrs = cls.sample(n)
            out.append(case(n, (shape, {**attrs, "root": n}), rot(13 * n), what="root-outside"))
    if "to_device" in cls.GEN:
        for n, to in ((1, 1), (2, 1), (2, 2), (3, 0), (3, 3), (4, 0), (5, 2), (5, 5), (8, 4), (8, 8)):
            shape, attrs = cls.sample(n)
            out.append(case(n, (shape, {**attrs, "to_device": to}), rot(n + to), what=f"to{to}"))
        for n, to, size, tile in ((3, 3, "large", 64), (8, 8, "large", 64), (3, 3, "scalar", -1),
                                  (2, 0, "empty", -1), (5, 5, "small", -1)):
            shape, attrs = cls.sample(n, size)
            out.append(case(n, (shape, {**attrs, "to_device": to}), rot(n + to), tile=tile,
                            what=f"{size}-tile{tile}-to{to}"))
    return out


def _kinds_and_types():
    """Every (dtype, kind) with two strategies of each reducing collective,
    every element type with every strategy of the others, at N = 3."""
    out = []
    for f, cls in enumerate(COLLECTIVES):
        strategies = cls.runnable(cpu.BACKEND.capabilities)
        shape, attrs = cls.sample(3)
        for i, (dtype, kind) in enumerate(_typed(cls)):
            picked = ([strategies[(i + j) % len(strategies)] for j in (0, len(strategies) // 2)]
                      if cls.HAS_KIND else strategies)
            for s in dict.fromkeys(picked):
                out.append(Case(cls, s, 3, list(shape), dict(attrs), dtype, kind,
                                SEEDS[(i + f) % len(SEEDS)], what="types"))
    return out


GRID = [c for f, (cls, s) in enumerate(FAMILIES) for c in _family(f, cls, s)] + _kinds_and_types()


def test_the_grid_covers_the_registry():
    """Every runnable (collective, strategy) is in the grid at every N, under
    every shuffle seed at some N >= 3 and unshuffled; every valid (type,
    kind) pair with every reducing collective, every type with every other."""
    for cls, s in FAMILIES:
        mine = [c for c in GRID if c.cls is cls and c.strategy == s]
        assert {c.n for c in mine} >= set(range(1, 9)), (cls.NAME, s)
        assert {c.seed for c in mine if c.n >= 3} >= {1, 2, 3} and None in {c.seed for c in mine}, (cls.NAME, s)
    for cls in COLLECTIVES:
        assert {(c.dtype, c.kind) for c in GRID if c.cls is cls} == set(_typed(cls)), cls.NAME
    assert len({(cls, s) for cls, s in FAMILIES}) >= 19 and len(PAIRS) == 55  # fp8: 2 types x 4 float kinds


@pytest.mark.parametrize("case", GRID, ids=[c.id for c in GRID])
def test_matches_numpy(case):
    ok, worst, prog = case.run()
    assert prog.strategies == [case.strategy]
    assert ok, f"max error {worst}"


@settings(max_examples=50, deadline=None)
@given(family=st.sampled_from(FAMILIES), n=st.integers(1, 8), size=st.sampled_from(("uneven", "small", "empty", "scalar")),
       pick=st.integers(0, 1000), where=st.sampled_from((None, "first", "last", "outside")),
       in_place=st.booleans(), tile=st.sampled_from((-1, 0, 16)), seed=st.sampled_from(SEEDS))
def test_random_configs(family, n, size, pick, where, in_place, tile, seed):
    """Random points between the grid's: any family, N, size, type, output
    or root, in place or not, tiling and order."""
    cls, strategy = family
    sample = cls.sample(n, size) or cls.sample(n)
    shape, attrs = sample
    place = {None: None, "first": 0, "last": n - 1, "outside": n}[where]
    if cls.ROOTED and place is not None:
        attrs["root"] = place
    elif "to_device" in cls.GEN and place is not None:
        attrs["to_device"] = place
    target = attrs.get("root", attrs.get("to_device"))
    in_place = in_place and cls.IN_PLACE and (target is None or target < n)
    dtype, kind = _typed(cls)[pick % len(_typed(cls))]
    ok, worst, prog = Case(cls, strategy, n, shape, attrs, dtype, kind, seed, in_place, tile).run()
    assert prog.strategies == [strategy]
    assert ok, f"max error {worst}"
