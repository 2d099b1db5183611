"""Static scratch on the CPU (lowering/cpu/scratch.py): one set of buffers
per compiled program, reused by every call. What a call leaves in them must
never reach the next call's results, and calls from several threads must
not share them at once (the runtime runs one call at a time)."""
import threading

import numpy as np
import pytest

from coll.collectives import AllReduce
from coll.ir import make_context
from coll.ir.generate import all_reduce_module
from coll.lowering import cpu


def _module(n, numel, **kw):
    with make_context():
        return all_reduce_module(n, [numel], "f32", "sum", **kw)


def _inputs(n, numel, seed):
    rng = np.random.default_rng(seed)
    # Small integers: every order of the sum is exact, results compare bitwise.
    return [rng.integers(-8, 8, numel).astype(np.float32) for _ in range(n)]


# N = 3: rhd folds a device in first (whole-buffer scratch); tile=0 keeps
# every scratch buffer whole, tile=64 shrinks tiled groups' to static tiles.
@pytest.mark.parametrize("strategy", AllReduce.STRATEGIES)
@pytest.mark.parametrize("tile", [0, 64])
def test_calls_in_a_row_see_only_their_inputs(strategy, tile):
    n, numel = 3, 1000
    prog = cpu.compile(_module(n, numel), strategy=strategy, tile=tile)
    heap = cpu.compile(_module(n, numel), strategy=strategy, tile=tile, scratch="heap")
    for seed in range(3):
        xs = _inputs(n, numel, seed)
        want = np.sum(xs, axis=0)
        ys, ys_heap = ([np.full(numel, np.nan, np.float32) for _ in range(n)] for _ in range(2))
        prog.run(xs, ys)
        heap.run(xs, ys_heap)
        for y, y_heap in zip(ys, ys_heap):
            np.testing.assert_array_equal(y, want)
            np.testing.assert_array_equal(y, y_heap)


def test_scratch_is_allocated_once_per_program():
    """The lowered program of a static form has no malloc; the heap form does."""
    with make_context():
        from mlir import ir

        from coll.lowering import lower
        for scratch, mallocs in (("static", False), ("heap", True)):
            m = ir.Module.parse(_module(3, 1000))
            lower(m.operation, cpu.BACKEND, "rhd", tile=0, scratch=scratch)
            assert ("@malloc" in str(m)) == mallocs


def test_threads_take_turns():
    n, numel = 4, 1 << 16
    prog = cpu.compile(_module(n, numel), strategy="rhd", tile=0)
    errors = []

    def work(seed):
        for k in range(5):
            xs = _inputs(n, numel, 10 * seed + k)
            ys = [np.empty(numel, np.float32) for _ in range(n)]
            prog.run(xs, ys)
            if not all(np.array_equal(y, np.sum(xs, axis=0)) for y in ys):
                errors.append(seed)
    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
