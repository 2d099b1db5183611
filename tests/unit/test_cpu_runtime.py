"""The CPU runtime's API on allreduce programs (compile, cache, run, time,
argument checks, bf16, every level of input, errors), tiling that keeps
each element's order of operations, and the checker the grids rely on.
Every collective x strategy against numpy: test_cpu_grid.py.
"""
import numpy as np
import pytest
from mlir import ir

from coll.collectives import AllReduce
from coll.execution import check
from coll.ir import make_context
from coll.ir.generate import all_reduce_module, collective_module
from coll.lowering import cpu


def test_tiled_and_untiled_agree_bitwise():
    """Tiling changes the loop order, not the order of operations on any one
    element: float results are identical."""
    with make_context():
        text = all_reduce_module(5, [999], "f32", "sum", strategy="ring")
        problem = check.describe(ir.Module.parse(text))
    inputs = check.make_inputs(problem, 7)
    results = []
    for tile in (0, 32, -1):
        outs = check.make_outputs(problem)
        cpu.compile(text, tile=tile).run(inputs, outs)
        results.append(outs)
    for outs in results[1:]:
        for a, b in zip(results[0], outs):
            assert np.array_equal(a, b)


def test_check_catches_a_wrong_result():
    """The checker the grid relies on fails on a result that is off by one
    ulp-sized error too many, and on any integer difference."""
    with make_context():
        problem = check.describe(ir.Module.parse(all_reduce_module(4, [64], "f32", "sum")))
        iproblem = check.describe(ir.Module.parse(all_reduce_module(4, [64], "i32", "xor")))
    xs = check.make_inputs(problem, 1)
    good = sum(x.astype(np.float64) for x in xs).astype(np.float32)
    assert check.check(problem, xs, [good] * 4)[0]
    bad = good.copy()
    bad[3] += 1e-3
    assert not check.check(problem, xs, [good, good, bad, good])[0]
    ixs = check.make_inputs(iproblem, 1)
    iref = ixs[0] ^ ixs[1] ^ ixs[2] ^ ixs[3]
    assert check.check(iproblem, ixs, [iref] * 4)[0]
    ibad = iref.copy()
    ibad[0] ^= 1
    assert not check.check(iproblem, ixs, [iref, iref, iref, ibad])[0]


# -- runtime API -------------------------------------------------------------

def _text(n=2, shape=(4,), dtype="f32", kind="sum", **kw):
    with make_context():
        return all_reduce_module(n, list(shape), dtype, kind, **kw)


def test_available():
    assert cpu.available() == (True, "")


def test_compile_is_cached_per_text_and_strategy():
    text = _text(3, (10,))
    assert cpu.compile(text, strategy="ring") is cpu.compile(text, strategy="ring")
    assert cpu.compile(text, strategy="ring") is not cpu.compile(text, strategy="naive")


def test_auto_strategy_follows_threshold_without_a_profile():
    assert cpu.compile(_text(3, (10,)), strategy="auto", profile="").strategies == ["naive"]
    assert cpu.compile(_text(3, (10,)), strategy="auto", threshold=5, profile="").strategies == ["ring"]
    assert cpu.compile(_text(2, (10,)), strategy="auto", threshold=5, profile="").strategies == ["naive"]


@pytest.mark.parametrize("n,shape", [(2, (16,)), (3, (1000,)), (8, (1 << 16,))])
def test_auto_strategy_is_the_cpu_models_pick_among_every_strategy(n, shape):
    """By default `auto` is the cost model's pick on the CPU profile, among
    every strategy the CPU runs (peer ones too: its devices share memory)."""
    from coll.analysis import cost_model
    from coll.passes import choose_strategy
    coll = choose_strategy.Instance(tuple(range(n)), int(np.prod(shape)), "f32", "sum", peer_access=True)
    cands = choose_strategy.candidates(coll, cost_model.load_profile(cpu.BACKEND.profile))
    assert {c["strategy"] for c in cands} == set(AllReduce.STRATEGIES)
    assert cpu.compile(_text(n, shape, "f32", "sum"), strategy="auto").strategies == [choose_strategy.pick(cands)]


def test_signature_and_traffic():
    prog = cpu.compile(_text(3, (2, 8), "i16", "max"), strategy="naive")
    assert prog.n_inputs == 3 and len(prog.specs) == 6
    assert str(prog.specs[0]) == "memref<2x8xi16>"
    # naive: 6 copies of 32 bytes (read + write), 3 combines reading 3, writing 1
    assert prog.traffic_bytes == 6 * 2 * 32 + 3 * 4 * 32


def test_time_returns_one_duration_per_run():
    prog = cpu.compile(_text())
    xs = [np.ones(4, np.float32), np.full(4, 2, np.float32)]
    ys = [np.zeros(4, np.float32) for _ in range(2)]
    times = prog.time(xs, ys, repeat=4)
    assert len(times) == 4 and all(t > 0 for t in times)
    assert all(np.array_equal(y, np.full(4, 3, np.float32)) for y in ys)


@pytest.mark.parametrize("inputs,outputs,message", [
    (1, 2, "expected 2 inputs and 2 outputs, got 1 inputs and 2 outputs"),
    (2, 3, "expected 2 inputs and 2 outputs"),
])
def test_wrong_number_of_arrays(inputs, outputs, message):
    prog = cpu.compile(_text())
    with pytest.raises(ValueError, match=message):
        prog.run([np.ones(4, np.float32)] * inputs, [np.zeros(4, np.float32) for _ in range(outputs)])


def test_wrong_shape_and_dtype():
    prog = cpu.compile(_text())
    ok = [np.ones(4, np.float32), np.ones(4, np.float32)]
    with pytest.raises(ValueError, match=r"input 1: shape \(5,\) does not match memref<4xf32>"):
        prog.run([ok[0], np.ones(5, np.float32)], [np.zeros(4, np.float32)] * 2)
    with pytest.raises(ValueError, match="output 0: dtype float64 does not match memref<4xf32>"):
        prog.run(ok, [np.zeros(4), np.zeros(4, np.float32)])
    with pytest.raises(ValueError, match="expected a numpy array"):
        prog.run([[1.0] * 4, ok[1]], [np.zeros(4, np.float32) for _ in range(2)])


def test_outputs_must_be_writable_contiguous_and_separate():
    prog = cpu.compile(_text())
    xs = [np.ones(4, np.float32), np.ones(4, np.float32)]
    strided = np.zeros(8, np.float32)[::2]
    with pytest.raises(ValueError, match="C-contiguous"):
        prog.run(xs, [strided, np.zeros(4, np.float32)])
    frozen = np.zeros(4, np.float32)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        prog.run(xs, [frozen, np.zeros(4, np.float32)])
    with pytest.raises(ValueError, match="overlaps"):
        prog.run(xs, [xs[0], np.zeros(4, np.float32)])


def test_strided_inputs_are_accepted():
    prog = cpu.compile(_text())
    x0 = np.arange(8, dtype=np.float32)[::2]
    ys = [np.zeros(4, np.float32) for _ in range(2)]
    prog.run([x0, np.ones(4, np.float32)], ys)
    assert np.array_equal(ys[1], x0 + 1)


def test_bf16_convention_is_uint16_bits():
    from coll.execution.signature import from_bf16, to_bf16
    prog = cpu.compile(_text(2, (3,), "bf16", "sum"))
    xs = [to_bf16(np.array([1.0, 2.5, -3.0])), to_bf16(np.array([0.5, 0.25, 1.0]))]
    ys = [np.zeros(3, np.uint16) for _ in range(2)]
    prog.run(xs, ys)
    assert np.array_equal(from_bf16(ys[0]), np.array([1.5, 2.75, -2.0], np.float32))
    with pytest.raises(ValueError, match="uint16 bit patterns"):
        prog.run([np.zeros(3, np.float32)] * 2, ys)


def test_to_bf16_rounds_to_nearest_even():
    from coll.execution.signature import from_bf16, to_bf16
    x = np.array([1.0, 1.0 + 2 ** -8, 1.0 + 3 * 2 ** -8, np.inf, -0.0], np.float32)
    assert np.array_equal(from_bf16(to_bf16(x)), np.array([1.0, 1.0, 1.0 + 2 ** -6, np.inf, -0.0], np.float32))
    assert np.isnan(from_bf16(to_bf16(np.array([np.nan])))[0])


def test_every_level_compiles():
    """Collective, explicit and memref-level text all run the same."""
    from coll.lowering.cpu.to_cpu import to_cpu
    from coll.passes.lower_collectives import lower_collectives
    text = _text(3, (9,), "i32", "sum", strategy="ring")
    with make_context():
        m = ir.Module.parse(text)
        lower_collectives(m.operation)
        explicit = str(m)
        to_cpu(m.operation)
        memref_level = str(m)
    xs = [np.arange(9, dtype=np.int32) * (i + 1) for i in range(3)]
    for t in (text, explicit, memref_level):
        ys = [np.zeros(9, np.int32) for _ in range(3)]
        cpu.compile(t).run(xs, ys)
        assert all(np.array_equal(y, np.arange(9, dtype=np.int32) * 6) for y in ys)


def test_compile_errors():
    from coll.ir.verifier import VerifyError
    with pytest.raises(ValueError, match="unknown strategy 'bogus'"):
        cpu.compile(_text(), strategy="bogus")
    with pytest.raises(ir.MLIRError):
        cpu.compile("func.func @f( {")
    bad_kind = _text().replace('kind = "sum"', 'kind = "xor"')
    with pytest.raises(VerifyError, match="bitwise reduction kind 'xor'"):
        cpu.compile(bad_kind)
    with pytest.raises(ValueError, match="no function @g"):
        cpu.compile(_text(), entry="g")
    from coll.lowering import lower
    with make_context():
        m = ir.Module.parse(_text())
        lower(m.operation, "cpu")
        llvm_text = str(m)
    with pytest.raises(ValueError, match="already in the LLVM dialect"):
        cpu.compile(llvm_text)


@pytest.mark.parametrize("strategy", ["naive", "ring", "twoshot", "tree"])
def test_inputs_written_in_place_must_be_writable_contiguous_and_separate(strategy):
    """In place, an input is written too: a contiguous copy of a strided
    array would lose the result, and inputs that are one array (or overlap)
    would see each other's writes. Refused as outputs are; read-only inputs
    of an out-of-place program stay accepted."""
    with make_context():
        text = collective_module("all_reduce", 3, [4, 6], "i32", "sum", in_place=True)
    prog = cpu.compile(text, strategy=strategy)
    assert prog.written == (0, 1, 2)
    xs = [np.full((4, 6), i + 1, np.int32) for i in range(3)]
    with pytest.raises(ValueError, match=r"input 0 \(written in place\): must be C-contiguous"):
        prog.run([np.asfortranarray(xs[0]), xs[1], xs[2]], [])
    with pytest.raises(ValueError, match="input 0, which the program writes in place, overlaps"):
        prog.run([xs[0], xs[0], xs[2]], [])
    big = np.ones(48, np.int32)
    with pytest.raises(ValueError, match="overlaps"):
        prog.run([big[:24].reshape(4, 6), big[12:36].reshape(4, 6), xs[2]], [])
    frozen = xs[2].copy()
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match=r"input 2 \(written in place\): the array is read-only"):
        prog.run([xs[0], xs[1], frozen], [])
    prog.run(xs, [])
    for x in xs:
        np.testing.assert_array_equal(x, np.full((4, 6), 6, np.int32))
    out_of_place = cpu.compile(_text())
    assert out_of_place.written == (2, 3)
    ro = np.ones(4, np.float32)
    ro.flags.writeable = False
    ys = [np.zeros(4, np.float32) for _ in range(2)]
    out_of_place.run([ro, np.ones(4, np.float32)[::1]], ys)
    np.testing.assert_array_equal(ys[0], np.full(4, 2, np.float32))


@pytest.mark.parametrize("shape,dtype", [((5,), np.float32), ((3, 7), np.float16), ((), np.int64), ((0,), np.int8),
                                         ((1000003,), np.float64)])
def test_tools_allocate_buffers_on_cache_lines(shape, dtype):
    """What coll-run and coll-perf allocate starts on a 64-byte boundary, so
    a program's streamed results take whole-line stores (kernels.py)."""
    from coll.execution.signature import BUFFER_ALIGN, aligned_copy, aligned_zeros
    z = aligned_zeros(shape, dtype)
    assert z.shape == shape and z.dtype == dtype and z.flags.c_contiguous and z.flags.writeable
    assert not z.any() and (z.size == 0 or z.ctypes.data % BUFFER_ALIGN == 0)
    x = (np.arange(max(z.size, 1))[:z.size] % 7).astype(dtype).reshape(shape)
    c = aligned_copy(x[()] if shape == () else x[::-1] if len(shape) == 1 else x)
    assert (c.size == 0 or c.ctypes.data % BUFFER_ALIGN == 0) and c.flags.c_contiguous
    np.testing.assert_array_equal(c, x[()] if shape == () else x[::-1] if len(shape) == 1 else x)


def test_the_same_arrays_again_reuse_the_packed_call_and_see_new_values():
    """CpuProgram caches the last call's checked and packed arguments for
    the same array objects: values written in place since are seen, and an
    array reshaped in place or made read-only is checked again (refused)."""
    with make_context():
        prog = cpu.compile(all_reduce_module(2, [8], "f32", "sum"))
    xs = [np.ones(8, np.float32), np.full(8, 2, np.float32)]
    ys = [np.zeros(8, np.float32) for _ in range(2)]
    prog.run(xs, ys)
    assert all(np.all(y == 3) for y in ys)
    xs[0][:] = 10
    prog.run(xs, ys)
    assert all(np.all(y == 12) for y in ys)
    xs[1].shape = (2, 4)
    with pytest.raises(ValueError, match="input 1"):
        prog.run(xs, ys)
    xs[1].shape = (8,)
    ys[1].flags.writeable = False
    with pytest.raises(ValueError, match="output 1"):
        prog.run(xs, ys)
    ys[1].flags.writeable = True
    # The same objects over other memory (an outside attack read freed memory
    # and wrote into it): a buffer replaced by resize, a layout by strides.
    xs[0].resize((1000,), refcheck=False)
    xs[0].resize((8,), refcheck=False)
    xs[0][:] = 5
    ys[0].resize((1000,), refcheck=False)
    ys[0].resize((8,), refcheck=False)
    prog.run(xs, ys)
    assert all(np.all(y == 7) for y in ys)
    big = np.arange(16, dtype=np.float32)
    xs[1] = big[:8]
    prog.run(xs, ys)
    xs[1].strides = (8,)  # the same object, every other element
    prog.run(xs, ys)
    assert np.array_equal(ys[0], 5 + big[::2])


@pytest.mark.parametrize("layout", ["strided", "fortran"])
def test_an_input_copied_by_the_check_is_copied_again_each_call(layout):
    # An outside attack (2026-12-08): an input that is not C-contiguous is
    # copied by the check, and the same array objects again reused that
    # copy: the second call summed the first call's values, silently.
    with make_context():
        prog = cpu.compile(all_reduce_module(2, [4, 4], "f32", "sum"), strategy="ring")
    base = np.arange(32, dtype=np.float32).reshape(4, 8)
    x0 = base[:, ::2] if layout == "strided" else np.asfortranarray(np.arange(16, dtype=np.float32).reshape(4, 4))
    xs = [x0, np.ones((4, 4), np.float32)]
    ys = [np.zeros((4, 4), np.float32) for _ in range(2)]
    for value in (None, 100.0, -3.0):
        if value is not None:
            x0[...] = value
        prog.run(xs, ys)
        assert all(np.array_equal(y, x0 + 1) for y in ys), (value, ys[0])
