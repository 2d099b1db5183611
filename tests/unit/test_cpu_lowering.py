"""coll-to-cpu and coll-cpu-to-llvm at the IR level: what is left, what the
tiling plan groups, and that copies become memcpy."""
import re

import pytest
from mlir import ir

from coll.core.errors import PassError
from coll.core.registry import load_all
from coll.ir.generate import all_reduce_module
from coll.ir.ops import SLOT_ATTR
from coll.lowering.cpu import fuse as cpu_fuse
from coll.lowering.cpu.to_cpu import cpu_to_llvm, to_cpu
from coll.lowering.stored_types import stored_type
from coll.passes.lower_collectives import lower_collectives


def explicit(n, shape, strategy, dtype="f32", kind="sum", to_device=None):
    m = ir.Module.parse(all_reduce_module(n, shape, dtype, kind, to_device=to_device, strategy=strategy))
    lower_collectives(m.operation)
    return m


def ops_named(m, prefix):
    found = []

    def visit(op):
        if op.name.startswith(prefix):
            found.append(op.name)
        return ir.WalkResult.ADVANCE
    m.operation.walk(visit)
    return found


def test_passes_are_registered():
    passes = load_all()
    assert "coll-to-cpu" in passes and "coll-cpu-to-llvm" in passes
    assert passes["coll-to-cpu"].parse_options("tile=32") == {"tile": 32, "kernels": "shared", "split": 128, "epilogues": "on",
                                                             "scratch": "static", "nontemporal": 0, "workers": 1}


@pytest.mark.parametrize("tile", (0, 16, -1))
@pytest.mark.parametrize("strategy", ("naive", "ring", "all2all"))
def test_nothing_of_coll_is_left(ctx, strategy, tile):
    m = explicit(4, [3, 37], strategy, "i1", "or", to_device=None if tile else 4)
    to_cpu(m.operation, tile)
    assert m.operation.verify()
    text = str(m)
    # (coll.slot: a split part's buffer, ir/ops.py SLOT_ATTR, a marker for the
    # analyses after it, gone with the casts it sits on)
    assert "coll." not in text.replace(f"{{{SLOT_ATTR} = ", "") and "memory_space_cast" not in text
    assert not re.search(r"\bi1\b", text)  # i1 buffers are stored as i8
    # every scratch buffer is freed
    assert text.count("memref.alloc(") == text.count("memref.dealloc")


@pytest.mark.parametrize("strategy", ("naive", "ring", "all2all"))
def test_copies_become_memcpy(ctx, strategy):
    m = explicit(3, [1001], strategy)  # odd chunks: slices at odd offsets
    to_cpu(m.operation, 64)
    cpu_to_llvm(m.operation)
    text = str(m)
    assert '"llvm.intr.memcpy"' in text
    assert "memrefCopy" not in text
    assert set(ops_named(m, "")) <= {n for n in ops_named(m, "llvm.")} | {"builtin.module"}


def test_plan_groups_ring_chunks(ctx):
    """Ring on 4 devices: one group per chunk (its 3 copies + 3 combines and
    3 allgather copies), each shrinking the chunk's 3 scratch buffers."""
    m = explicit(4, [4096], "ring")
    block = m.body.operations[0].regions[0].blocks[0]
    groups, _ = cpu_fuse.plan(block)
    assert len(groups) == 4
    assert all(len(g.ops) == 9 and len(g.scratch) == 3 and g.length == 1024 for g in groups)


def test_plan_groups_naive_per_device_then_joins_them_by_shared_reads(ctx):
    """Each device's reduction (2 copies + 1 combine) is a group by its
    writes; all three read every input whole at offset 0, so they are tiled
    as one group (an input tile is read from memory once)."""
    m = explicit(3, [100], "naive")
    block = m.body.operations[0].regions[0].blocks[0]
    groups, _ = cpu_fuse.plan(block)
    assert [len(g.ops) for g in groups] == [9]


def test_plan_joins_oneshot_combines(ctx):
    """oneshot: N combines of the same N inputs, each into its own output,
    share no write, only reads: one group, tiled together."""
    m = ir.Module.parse(all_reduce_module(4, [100], "f32", "sum", peer_access=True))
    lower_collectives(m.operation, "oneshot")
    groups, _ = cpu_fuse.plan(m.body.operations[0].regions[0].blocks[0])
    assert [(len(g.ops), g.length) for g in groups] == [(4, 100)]


def test_plan_keeps_disjoint_chunks_apart(ctx):
    """ring: chunks read disjoint slices, so they stay groups of their own."""
    m = explicit(3, [99], "ring")
    groups, _ = cpu_fuse.plan(m.body.operations[0].regions[0].blocks[0])
    assert len(groups) == 3


def test_plan_cuts_blocks_at_unknown_ops(ctx):
    """An op the analysis does not understand (a frontend's local work) cuts
    the block into segments, each planned on its own: no group spans it, so
    nothing moves across it."""
    m = explicit(2, [100], "ring")
    func_op = m.body.operations[0]
    block = func_op.regions[0].blocks[0]
    from mlir.dialects import memref
    work = [op for op in block.operations if op.operation.name in ("coll.copy", "coll.combine")]
    middle = work[len(work) // 2]
    with ir.InsertionPoint(middle), ir.Location.unknown():
        cut = memref.alloca(ir.MemRefType.get([4], ir.F32Type.get()), [], []).owner
    position = {op.operation: i for i, op in enumerate(block.operations)}
    groups, _ = cpu_fuse.plan(block)
    assert groups
    for g in groups:
        sides = {position[op.operation] < position[cut.operation] for op in g.ops}
        assert len(sides) == 1, "a group spans the unknown op"
    to_cpu(m.operation)
    assert "coll." not in str(m)


def test_stored_type(ctx):
    t = ir.Type.parse("memref<3xi1, strided<[1], offset: 2>, #coll.device<1>>")
    assert str(stored_type(t)) == "memref<3xi8, strided<[1], offset: 2>>"
    plain = ir.Type.parse("memref<3xf32, 1>")
    assert stored_type(plain) == plain


def test_token_escaping_to_another_op_is_an_error(ctx):
    m = ir.Module.parse("""
      func.func @f(%a: memref<4xf32>, %b: memref<4xf32>) -> !coll.token {
        %x = memref.memory_space_cast %a : memref<4xf32> to memref<4xf32, #coll.device<0>>
        %y = memref.memory_space_cast %b : memref<4xf32> to memref<4xf32, #coll.device<1>>
        %t = "coll.copy"(%x, %y) : (memref<4xf32, #coll.device<0>>, memref<4xf32, #coll.device<1>>) -> !coll.token
        return %t : !coll.token
      }""")
    with pytest.raises(PassError, match="still used by 'func.return'"):
        to_cpu(m.operation)
