"""The user's call of a frontend's program (frontends/run/global_arrays.py
GlobalProgram.run): global arrays in, global arrays out. Its per-call
costs are bounded (output blocks made once and reused, each block copied
out once, replicas compared with memcmp over a moving window after a full
comparison at the first call), and none of that lets a difference between
replicas through: a replica that differs anywhere is found at the first
call, and a later difference within REPLICA_WINDOWS calls. What a call
reuses (the last call's input blocks and packed arguments, a result the
caller dropped) never shows a caller a stale or overwritten value."""
import numpy as np
import pytest

from coll.frontends.run import global_arrays
from coll.frontends.shard import Layout
from coll.lowering import mpi


class Fake:
    """A program of `ranks` ranks whose launch writes what `write` says."""

    def __init__(self, ranks, write):
        self.ranks, self.strategies, self.write, self.calls = ranks, [], write, 0

    def launch(self, ins, outs, repeat=0):
        self.write(self.calls, ins, outs)
        self.calls += 1
        return []


def _program(write, ranks=4, size=64):
    lay_in = Layout((ranks * size,), (size,), "f32", [[0]])
    lay_out = Layout((size,), (size,), "f32", [[]])  # replicated: every rank holds all of it
    return global_arrays.GlobalProgram(Fake(ranks, write), None, [ranks], [lay_in, lay_out], 1, "")


def _sum(call, ins, outs):
    total = np.sum(ins, axis=0)
    for o in outs:
        o[...] = total


def test_results_and_fresh_arrays_per_call():
    prog = _program(_sum)
    x = np.arange(256, dtype=np.float32)
    (y1,) = prog.run([x])
    (y2,) = prog.run([x + 1])
    assert np.array_equal(y1, x.reshape(4, 64).sum(0))
    assert np.array_equal(y2, (x + 1).reshape(4, 64).sum(0))  # y1 is the caller's: not overwritten
    assert np.array_equal(y1, x.reshape(4, 64).sum(0))


@pytest.mark.parametrize("where", [0, 17, 63])
def test_a_replica_that_differs_is_found_at_the_first_call(where):
    def write(call, ins, outs):
        _sum(call, ins, outs)
        outs[2][where] += 1
    with pytest.raises(mpi.MpiError, match="ranks 0 and 2 hold the same block but different values"):
        _program(write).run([np.ones(256, np.float32)])


@pytest.mark.parametrize("where", [0, 33, 63])
def test_a_later_difference_is_found_within_the_windows(where):
    def write(call, ins, outs):
        _sum(call, ins, outs)
        if call >= 1:
            outs[3][where] = np.nan
    prog = _program(write)
    prog.run([np.ones(256, np.float32)])
    with pytest.raises(mpi.MpiError, match="replicas differ"):
        for _ in range(global_arrays.REPLICA_WINDOWS):
            prog.run([np.ones(256, np.float32)])


def test_tiled_outputs_are_copied_whole():
    # Split outputs (each rank its block): every element comes from its rank.
    lay_in = Layout((8,), (2,), "i32", [[0]])
    lay_out = Layout((8,), (2,), "i32", [[0]])

    def write(call, ins, outs):
        for r, o in enumerate(outs):
            o[...] = ins[r] * 10 + r
    prog = global_arrays.GlobalProgram(Fake(4, write), None, [4], [lay_in, lay_out], 1, "")
    x = np.arange(8, dtype=np.int32)
    (y,) = prog.run([x])
    assert y.tolist() == [0, 10, 21, 31, 42, 52, 63, 73]


def test_a_scalar_argument_stays_a_scalar():
    # A 0-d global argument (a learning rate) reaches every rank as 0-d.
    lay_in = Layout((), (), "f32", [])
    lay_out = Layout((4,), (1,), "f32", [[0]])
    seen = []

    def write(call, ins, outs):
        seen.extend(x.shape for x in ins)
        for r, o in enumerate(outs):
            o[...] = ins[r] * r
    prog = global_arrays.GlobalProgram(Fake(4, write), None, [4], [lay_in, lay_out], 1, "")
    (y,) = prog.run([np.float32(0.5)])
    assert seen == [()] * 4 and y.tolist() == [0.0, 0.5, 1.0, 1.5]


def test_a_dropped_result_is_reused_and_a_held_one_is_not():
    prog = _program(_sum)
    x = np.arange(256, dtype=np.float32)
    (y,) = prog.run([x])
    where = y.ctypes.data
    del y
    (y,) = prog.run([x + 1])  # nothing referred to the last result: its memory is written again
    assert y.ctypes.data == where and np.array_equal(y, (x + 1).reshape(4, 64).sum(0))
    part = y[:5]  # a view of it is held: the next call must not write there
    del y
    (y2,) = prog.run([x + 2])
    assert y2.ctypes.data != where and np.array_equal(part, (x + 1).reshape(4, 64).sum(0)[:5])
    assert np.array_equal(y2, (x + 2).reshape(4, 64).sum(0))


def test_inputs_written_in_place_between_calls_are_seen():
    """The same array object again, its values changed in place: the cached
    blocks are views (they see it) or copied again (a block along an inner
    axis is not contiguous in its array)."""
    lay_in = Layout((4, 8), (4, 2), "f32", [[], [0]])  # each rank: 2 columns
    lay_out = Layout((4, 8), (4, 2), "f32", [[], [0]])

    def write(call, ins, outs):
        for r, o in enumerate(outs):
            o[...] = ins[r] + r
    prog = global_arrays.GlobalProgram(Fake(4, write), None, [4], [lay_in, lay_out], 1, "")
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    ranks = np.repeat(np.arange(4, dtype=np.float32), 2)
    (y,) = prog.run([x])
    assert np.array_equal(y, x + ranks)
    x *= 3  # in place: the same object
    (y,) = prog.run([x])
    assert np.array_equal(y, x + ranks)
    row = _program(_sum)
    z = np.ones(256, np.float32)
    (s1,) = row.run([z])
    z[:64] = 5  # a contiguous block: a view
    (s2,) = row.run([z])
    assert np.all(s1 == 4) and np.all(s2 == 8)
    z.resize((100000,), refcheck=False)  # the same object over new memory: its blocks made again
    z.resize((256,), refcheck=False)
    z[:] = 2
    (s3,) = row.run([z])
    assert np.all(s3 == 8)


@pytest.mark.parametrize("replicated", [True, False])
def test_threads_calling_one_program_get_their_own_results(replicated):
    """Calls from several threads run one at a time, scatter to gather: the
    program's buffers (output blocks, cached input blocks, reused results)
    are never shared by two calls (an outside attack got another thread's
    values, or a false 'replicas differ', before the call was locked)."""
    import threading
    import time

    def write(call, ins, outs):
        total = np.sum(ins, axis=0)
        for o in outs:
            time.sleep(0)  # let another thread in, if it can
            o[...] = total
    if replicated:
        prog = _program(write)
    else:
        lay_in = Layout((4, 8), (4, 2), "f32", [[], [0]])
        lay_out = Layout((4, 8), (4, 2), "f32", [[], [0]])

        def write(call, ins, outs):  # noqa: F811 - the tiled case's own
            for r, o in enumerate(outs):
                time.sleep(0)
                o[...] = ins[r] * 2 + 1
        prog = global_arrays.GlobalProgram(Fake(4, write), None, [4], [lay_in, lay_out], 1, "")
    wrong = []

    def worker(v):
        x = np.full(256, v, np.float32) if replicated else np.full((4, 8), v, np.float32)
        want = x.reshape(4, 64).sum(0) if replicated else x * 2 + 1
        for _ in range(200):
            try:
                (y,) = prog.run([x])
            except mpi.MpiError as e:
                wrong.append(str(e))
                continue
            if not np.array_equal(y, want):
                wrong.append(v)
    threads = [threading.Thread(target=worker, args=(v,)) for v in (1.0, 2.0, 3.0)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not wrong, wrong[:3]


def test_ml_dtypes_arrays_are_taken_as_their_bits():
    """JAX's fp8 and bf16 arrays (ml_dtypes) are the bit patterns coll
    stores (uint8, uint16)."""
    import ml_dtypes
    for element, ml, bits in (("f8E4M3FN", ml_dtypes.float8_e4m3fn, np.uint8),
                              ("bf16", ml_dtypes.bfloat16, np.uint16)):
        lay_in = Layout((8,), (2,), element, [[0]])

        def write(call, ins, outs):
            for r, o in enumerate(outs):
                o[...] = ins[r]
        prog = global_arrays.GlobalProgram(Fake(4, write), None, [4], [lay_in, lay_in], 1, "")
        x = np.arange(8).astype(ml)
        (y,) = prog.run([x])
        assert y.dtype == bits and np.array_equal(y, x.view(bits))
