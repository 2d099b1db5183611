"""Chunk boundaries on 16-byte multiples (collectives/chunking.py) keep a
GPU combine in its vector loop. First, which loop a kernel takes, observed
on the CPU: thread 0 of a grid-stride loop over 16-byte vectors writes
elements 4k..4k+3 of every T-th vector, the scalar loop every T-th element.
Then a ring at 2^20 + 3 floats on 8 devices, run on the emulator: every
combine's operands start on a 16-byte boundary, so every chunk but the edge
one is all vectors (the edge chunk has 3 elements left for the scalar tail);
under the old rule (granule 1 for an odd size) 7 of 8 chunks started
misaligned and took the scalar loop throughout."""
import numpy as np
import pytest
from gpu_emulator import Emulator, Kernels
from mlir import ir

from coll.ir import make_context
from coll.ir.generate import all_reduce_module
from coll.lowering.gpu import kernels as gpu_kernels
from coll.lowering.gpu.nvvm import compile_module
from coll.lowering.gpu.to_gpu import to_gpu
from coll.passes.lower_collectives import lower_collectives

KERNELS = Kernels()
NAME = gpu_kernels.kernel_name("sum", "f32", 2)


def _written_by_thread_zero(offsets, n, threads=4):
    """Elements of the output that thread 0 of a 1-block grid writes, for
    operands starting `offsets` elements into 16-byte-aligned buffers."""
    bufs = [np.zeros(64, np.float32) for _ in range(3)]
    assert all(b.ctypes.data % 16 == 0 for b in bufs)
    out = bufs[2]
    out[:] = np.nan
    params = [b.ctypes.data + 4 * o for b, o in zip(bufs, offsets)] + [n]
    KERNELS.run_thread(NAME, params, 0, 0, threads, 1)
    return set(np.flatnonzero(~np.isnan(out[offsets[2]:offsets[2] + n])).tolist())


def test_aligned_operands_take_the_vector_loop():
    # 37 elements: vectors 0..8 (thread 0: vectors 0, 4, 8), then the tail element 36.
    assert _written_by_thread_zero((0, 0, 0), 37) == {0, 1, 2, 3, 16, 17, 18, 19, 32, 33, 34, 35, 36}


def test_equally_misaligned_operands_take_a_scalar_head_then_vectors():
    # One element in: a head of 3 scalars, vectors over [3, 35), a tail of 2;
    # thread 0: head element 0, vectors at 3 and 19, tail element 36 (the
    # scalar loop's 5th item: 3 head + 2 tail items, stride 4).
    assert _written_by_thread_zero((1, 1, 1), 37) == {0, 3, 4, 5, 6, 19, 20, 21, 22, 36}


def test_differently_misaligned_operands_take_the_scalar_loop():
    assert _written_by_thread_zero((0, 1, 0), 37) == set(range(0, 37, 4))


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    return Emulator(tmp_path_factory.mktemp("emu_aligned"))


def test_ring_chunks_are_vectors_but_the_edge(emu, tmp_path):
    n, numel = 8, 2**20 + 3
    with make_context():
        m = ir.Module.parse(all_reduce_module(n, [numel], "f32", "sum", strategy="ring"))
        lower_collectives(m.operation)
        to_gpu(m.operation)
        path = tmp_path / "libring.so"
        compile_module(m.operation, path, fmt="isa", runtime_dir=emu.dir)
    rng = np.random.default_rng(0)
    xs = [rng.random(numel, dtype=np.float32) for _ in range(n)]
    ys = [np.zeros(numel, np.float32) for _ in range(n)]
    assert all(a.ctypes.data % 16 == 0 for a in xs + ys)
    emu.run(path, "all_reduce", xs + ys)
    want = xs[0].copy()
    for x in xs[1:]:
        want += x
    np.testing.assert_allclose(ys[0], want, rtol=1e-5)
    sizes = {}
    for name, params, _, _ in emu.launches:
        assert name == NAME
        *addresses, count = params
        assert [a % 16 for a in addresses] == [0, 0, 0], "a chunk starts off a 16-byte boundary"
        sizes[count] = sizes.get(count, 0) + 1
    # 8 chunks x 7 hops: 7 chunks of 2^17 floats (whole vectors), the edge
    # chunk with 3 more (its last 3 in the scalar tail).
    assert sizes == {2**17: 49, 2**17 + 3: 7}
