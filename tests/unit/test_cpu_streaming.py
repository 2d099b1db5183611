"""Non-temporal result copies on the CPU (coll-to-cpu{nontemporal=B},
lowering/cpu/shared.py coll_copy_streaming): a scalar head up to the
destination's 64-byte boundary, aligned vector stores, a scalar tail. The
results are the same bits as plain copies, whatever the alignment of the
caller's arrays and the chunk offsets."""
import re

import numpy as np
import pytest
from mlir import ir

from coll.collectives import AllReduce
from coll.ir import make_context
from coll.ir.generate import all_reduce_module, collective_module
from coll.lowering import cpu
from coll.lowering.driver import lower
from coll.passes.lower_collectives import set_order


def _unaligned(numel, shift, dtype):
    """A C-contiguous array whose data starts `shift` elements past a
    64-byte boundary."""
    size = np.dtype(dtype).itemsize
    raw = np.zeros(numel + 64 // size + shift, dtype)
    skip = (-raw.ctypes.data % 64) // size + shift
    return raw[skip:skip + numel]


@pytest.mark.parametrize("strategy", AllReduce.STRATEGIES)
@pytest.mark.parametrize("n,numel,shift", [(3, 1001, 1), (4, 4099, 0), (2, 70, 3)])
def test_streamed_results_are_exact(strategy, n, numel, shift):
    with make_context():
        text = all_reduce_module(n, [numel], "f32", "sum")
    streamed = cpu.compile(text, strategy=strategy, tile=64, nontemporal=1)
    plain = cpu.compile(text, strategy=strategy, tile=64, nontemporal=0)
    assert re.search(r"coll-to-cpu\{tile=64 nontemporal=1( epilogues=off)?( workers=\d+)?\}", streamed.pipeline)
    rng = np.random.default_rng(numel)
    xs = [rng.random(numel, dtype=np.float32) for _ in range(n)]
    ys = [_unaligned(numel, shift + i, np.float32) for i in range(n)]
    want = [np.empty(numel, np.float32) for _ in range(n)]
    streamed.run(xs, ys)
    plain.run(xs, want)
    for y, w in zip(ys, want):
        np.testing.assert_array_equal(y, w)


def test_bytes_of_any_width_stream_exactly():
    """i8 elements: any byte offset, heads and tails of every length."""
    with make_context():
        text = all_reduce_module(3, [333], "i8", "sum")
    prog = cpu.compile(text, strategy="all2all", tile=64, nontemporal=1)
    rng = np.random.default_rng(1)
    xs = [rng.integers(-40, 40, 333).astype(np.int8) for _ in range(3)]
    ys = [_unaligned(333, k, np.int8) for k in (5, 17, 63)]
    prog.run(xs, ys)
    for y in ys:
        np.testing.assert_array_equal(y, (xs[0] + xs[1] + xs[2]).astype(np.int8))


def _element(dtype):
    return np.dtype(dtype).name.replace("float", "f").replace("int", "i")


def _programs(strategy, dtype, kind, n, numel):
    """(streamed program, plain program, inputs) of an all_reduce of
    `kind` on `n` x `numel` of `dtype`, tiles of 256."""
    with make_context():
        text = all_reduce_module(n, [numel], _element(dtype), kind)
    streamed = cpu.compile(text, strategy=strategy, tile=256, nontemporal=1)
    plain = cpu.compile(text, strategy=strategy, tile=256, nontemporal=0)
    rng = np.random.default_rng(7)
    if np.issubdtype(dtype, np.integer):
        xs = [rng.integers(-3, 4, numel).astype(dtype) for _ in range(n)]
    else:
        xs = [(rng.random(numel) * 4 - 2).astype(dtype) for _ in range(n)]
    return streamed, plain, xs


def _outputs(n, numel, shift, dtype, same):
    return [_unaligned(numel, shift if same else shift + i, dtype) for i in range(n)]


@pytest.mark.parametrize("strategy", AllReduce.STRATEGIES)
@pytest.mark.parametrize("dtype,kind", [(np.float32, "sum"), (np.float16, "sum"), (np.int32, "prod"),
                                        (np.float64, "max")])
@pytest.mark.parametrize("same", [True, False])
def test_folded_kernels_are_exact(strategy, dtype, kind, same):
    """Copies folded into their combine (fuse.folds): with every output at
    one offset from a 64-byte boundary (`same`) the kernels take their
    streamed path, a scalar head of 5 elements first; else their plain one.
    Either way the bits of the plain program's results."""
    n, numel = 4, 2053
    streamed, plain, xs = _programs(strategy, dtype, kind, n, numel)
    ys = _outputs(n, numel, 5, dtype, same)
    want = [np.empty(numel, dtype) for _ in range(n)]
    streamed.run(xs, ys)
    plain.run(xs, want)
    for y, w in zip(ys, want):
        np.testing.assert_array_equal(y, w)


@pytest.mark.parametrize("strategy,kernel", [("twoshot", "coll_combine_sum_f32_x4_to_ssss"),
                                             ("all2all", "coll_combine_sum_f32_x4_to_ssss"),
                                             ("tree", "coll_combine_sum_f32_x2_to_psss")])
def test_streamed_programs_fold_their_copies(strategy, kernel):
    """At the streaming size the allgather's copies are gone into the
    combine's kernel, whose every output streams where it is a result no
    earlier op wrote; tree's root result, which held partial sums, does
    not (order = "any": the tree of partial sums; in device order the
    root gathers and combines once). Below it nothing folds."""
    def lowered(nontemporal):
        with make_context():
            module = ir.Module.parse(all_reduce_module(4, [4096], "f32", "sum"))
            set_order(module.operation, "any")
            lower(module.operation, cpu.BACKEND, strategy, tile=256, nontemporal=nontemporal)
            return str(module)
    streamed = lowered(1)
    assert f"@{kernel}(" in streamed
    assert "_to_" not in lowered(0)
    if strategy != "tree":  # (the kernel's own fallback calls it)
        program = next(f for f in streamed.split("llvm.func @") if f.startswith("all_reduce("))
        assert "coll_copy_streaming" not in program


def _at(numel, offset, dtype):
    """A C-contiguous array whose data starts `offset` bytes past a 64-byte
    boundary (not always a whole number of elements: numpy allows it)."""
    size = np.dtype(dtype).itemsize
    raw = np.zeros(numel * size + 128, np.uint8)
    skip = -raw.ctypes.data % 64 + offset
    return raw[skip:skip + numel * size].view(dtype)


# (the inputs' byte offsets from a line, the outputs'): each of the loops a
# streamed kernel picks at run time (Combine.emit_1d_streaming,
# tests/lit/cpu/stream_alignment.mlir), with heads of every length.
LAYOUTS = {
    "on lines": ([0] * 4, [0] * 4),
    "outputs on one offset": ([0] * 4, [16] * 4),
    "outputs 16 bytes apart": ([0] * 4, [0, 16, 32, 48]),
    "outputs 8 off 16 bytes": ([0] * 4, [8, 24, 40, 56]),
    "inputs 16 bytes apart": ([16, 32, 48, 0], [0] * 4),
    "all 16 bytes apart": ([48, 0, 32, 16], [32, 16, 16, 48]),
    "outputs 4 bytes apart": ([0] * 4, [4, 8, 12, 20]),
    "outputs off elements": ([2, 6, 10, 14], [2, 2, 2, 2]),
    "outputs off elements apart": ([0] * 4, [2, 4, 6, 10]),
}


@pytest.mark.parametrize("strategy", AllReduce.STRATEGIES)
@pytest.mark.parametrize("dtype,kind", [(np.float32, "sum"), (np.float16, "sum"), (np.float64, "max"),
                                        (np.int8, "sum")])
def test_streamed_kernels_on_any_alignment(strategy, dtype, kind):
    """Buffers as an allocator hands them out (16 bytes, or anything):
    every streamed loop's results are the plain program's bits, one
    streamed output (oneshot's kernels) or several (the folded copies)."""
    n, numel = 4, 2053
    streamed, plain, pristine = _programs(strategy, dtype, kind, n, numel)
    with make_context():  # (the program streams: its kernels take the loops under test)
        module = ir.Module.parse(all_reduce_module(n, [numel], _element(dtype), kind))
        lower(module.operation, cpu.BACKEND, strategy, tile=256, nontemporal=1)
        assert re.search(r"_to_[ps]*s|coll_copy_streaming", str(module))
    want = [np.empty(numel, dtype) for _ in range(n)]
    plain.run(pristine, want)
    for layout, (ins, outs) in LAYOUTS.items():
        xs = [_at(numel, o, dtype) for o in ins]
        for x, p in zip(xs, pristine):
            x[...] = p
        ys = [_at(numel, o, dtype) for o in outs]
        streamed.run(xs, ys)
        for y, w in zip(ys, want):
            np.testing.assert_array_equal(y, w, err_msg=layout)
        for x, p in zip(xs, pristine):
            np.testing.assert_array_equal(x, p, err_msg=layout)


@pytest.mark.parametrize("strategy", AllReduce.STRATEGIES)
@pytest.mark.parametrize("offsets", [[12] * 4, [0, 16, 32, 48], [48, 32, 16, 0], [4, 8, 20, 36]])
def test_in_place_streamed_results(strategy, offsets):
    """Outputs that are the inputs (coll-perf's in-place form): each folded
    kernel reads a tile of every input before it stores into any, also
    where the outputs' lines begin before the step's elements (buffers 16
    bytes apart: the shuffled stores) or the result goes through the stack
    (4 bytes apart)."""
    n, numel = 4, 3001
    with make_context():
        text = collective_module("all_reduce", n, [numel], "f32", "sum", strategy=strategy, in_place=True)
    prog = cpu.compile(text, strategy=strategy, tile=256, nontemporal=1)
    rng = np.random.default_rng(3)
    xs = [_at(numel, o, np.float32) for o in offsets]
    for x in xs:
        x[...] = rng.integers(-8, 8, numel)
    want = np.sum(xs, axis=0)
    prog.run(xs, [])
    for x in xs:
        np.testing.assert_array_equal(x, want)


@pytest.mark.parametrize("strategy", ["oneshot", "twoshot", "all2all"])
@pytest.mark.parametrize("numel", [16, 17, 31, 33, 48, 65, 100])
def test_streamed_kernels_of_a_few_vectors(strategy, numel):
    """Kernels of one, two or no whole vectors after their head (tiles of
    32 elements): the first and the last vector of a shifted output go by
    masked stores, and must neither miss an element nor write past one."""
    n = 4
    with make_context():
        text = all_reduce_module(n, [numel], "f32", "sum")
    streamed = cpu.compile(text, strategy=strategy, tile=32, nontemporal=1)
    rng = np.random.default_rng(numel)
    xs = [rng.integers(-8, 8, numel).astype(np.float32) for _ in range(n)]
    for ins, outs in [([0] * 4, [16, 32, 48, 0]), ([16] * 4, [0, 0, 32, 16]), ([0] * 4, [4, 8, 12, 20])]:
        xa = [_at(numel, o, np.float32) for o in ins]
        for x, p in zip(xa, xs):
            x[...] = p
        guards = [_at(numel + 32, o, np.float32) for o in outs]  # a guard band of 16 elements each side
        for g in guards:
            g[...] = -99
        streamed.run(xa, [g[16:16 + numel] for g in guards])
        for g in guards:
            np.testing.assert_array_equal(g[16:16 + numel], np.sum(xs, axis=0), err_msg=str(outs))
            assert (g[:16] == -99).all() and (g[16 + numel:] == -99).all(), outs


def _sysfs(tmp_path, caches):
    for i, (level, kind, size) in enumerate(caches):
        d = tmp_path / f"index{i}"
        d.mkdir()
        (d / "level").write_text(f"{level}\n")
        (d / "type").write_text(f"{kind}\n")
        (d / "size").write_text(f"{size}\n")
    return str(tmp_path)


def test_stream_threshold_from_the_caches(tmp_path):
    """Results stream from 16 L2s of buffers, at most the last-level
    cache; never where sysfs says nothing."""
    from coll.lowering.cpu.runtime import _caches, stream_threshold
    root = _sysfs(tmp_path, [(1, "Data", "48K"), (1, "Instruction", "64K"), (2, "Unified", "2048K"),
                             (3, "Unified", "491520K")])
    assert _caches(root) == {1: 48 << 10, 2: 2 << 20, 3: 480 << 20}
    assert stream_threshold(_caches(root)) == 32 << 20
    assert stream_threshold({2: 1 << 20, 3: 8 << 20}) == 8 << 20
    assert stream_threshold({3: 6 << 20}) == 6 << 20
    assert stream_threshold({}) == 0
    assert _caches(str(tmp_path / "absent")) == {}
