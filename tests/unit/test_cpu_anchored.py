"""Tiling groups whose ops have several lengths (lowering/cpu/fuse.py,
anchors): rhd's halving steps work on halves, quarters, ... of the buffer,
each step's scratch holding one of them. Every element of every buffer has
one place in the group's range, so each tile runs every op on its part of
the tile, in program order; the results are the bits of the untiled form."""
import numpy as np
import pytest
from mlir import ir

from coll.ir import make_context
from coll.ir.generate import all_reduce_module
from coll.lowering import cpu
from coll.lowering.cpu import fuse
from coll.passes.lower_collectives import lower_collectives


def test_rhd_halves_are_anchored_groups():
    """N = 8, 1000 elements (chunks of 128 x 4, then 120, 120, 124, 124):
    the first halving step splits the devices' work into [0, 512) and
    [512, 1000), which never meet again: two groups, each of ops on a half,
    a quarter and an eighth of the buffer. (order = "any": the rhd of
    partial sums; the device-order form moves the contributions, more
    copies in the same two groups.)"""
    with make_context():
        m = ir.Module.parse(all_reduce_module(8, [1000], "f32", "sum"))
        lower_collectives(m.operation, "rhd", order="any")
        groups, acc = fuse.plan(m.body.operations[0].regions[0].blocks[0])
        assert [(len(g.ops), g.length) for g in groups] == [(36, 512), (36, 488)]
        assert all(g.anchors is not None for g in groups)
        assert sorted({acc[op][0].length for op in groups[0].ops}) == [128, 256, 512]
        # every halving step's scratch (4 devices x 3 steps) shrinks to a tile
        assert [len(g.scratch) for g in groups] == [12, 12]


def test_inconsistent_places_are_not_anchored():
    """Two ops that put one buffer's elements at different places: None."""
    with make_context():
        m = ir.Module.parse(all_reduce_module(2, [8], "f32", "sum"))
        x0, x1 = m.body.operations[0].regions[0].blocks[0].arguments[:2]

        class Op:  # stand-ins: only accesses are read
            pass
        a, b = Op(), Op()
        acc = {a: [fuse.Access(x0, 0, 4, False), fuse.Access(x1, 0, 4, True)],
               b: [fuse.Access(x0, 2, 4, False), fuse.Access(x1, 0, 4, True)]}
        assert fuse._anchors([a, b], acc) is None
        acc[b] = [fuse.Access(x0, 2, 2, False), fuse.Access(x1, 2, 2, True)]
        assert fuse._anchors([a, b], acc) == {a: 0, b: 2}


@pytest.mark.parametrize("n", [3, 5, 6, 8])
@pytest.mark.parametrize("numel,tile", [(1000, 64), (4099, 256), (37, 16)])
def test_tiled_rhd_matches_untiled_bits(n, numel, tile):
    with make_context():
        text = all_reduce_module(n, [numel], "f32", "sum")
    rng = np.random.default_rng(n * numel)
    xs = [rng.standard_normal(numel).astype(np.float32) for _ in range(n)]
    got, want = ([np.zeros(numel, np.float32) for _ in range(n)] for _ in range(2))
    cpu.compile(text, strategy="rhd", tile=tile).run(xs, got)
    cpu.compile(text, strategy="rhd", tile=0).run(xs, want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_allclose(got[0], np.sum(xs, axis=0, dtype=np.float64), rtol=1e-4, atol=1e-4)
