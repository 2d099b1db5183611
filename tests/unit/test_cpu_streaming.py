"""Non-temporal result copies on the CPU (coll-to-cpu{nontemporal=B},
backends/cpu/shared.py coll_copy_streaming): a scalar head up to the
destination's 64-byte boundary, aligned vector stores, a scalar tail. The
results are the same bits as plain copies, whatever the alignment of the
caller's arrays and the chunk offsets."""
import numpy as np
import pytest

from coll.collectives import AllReduce
from coll.ir import make_context
from coll.ir.generate import all_reduce_module
from coll.backends import cpu


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
    assert "coll-to-cpu{tile=64 nontemporal=1}" in streamed.pipeline
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
