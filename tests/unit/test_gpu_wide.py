"""Wide combines on the GPU route, run on the emulator (gpu_emulator.py): a
combine of more than MAX_ARITY inputs is a chain of kernels that folds
them, in device order, through a per-device accumulator (f32 for f16 and
bf16). The results must be bit for bit the one left fold in the combine
type, rounded once: what one kernel of that arity (and the CPU route)
computes. Inputs start one element past a 16-byte boundary, so the vector
loops run only if the accumulator is skewed like the inputs."""
import numpy as np
import pytest
from gpu_emulator import Emulator
from mlir import ir

from coll.ir import make_context
from coll.ir.generate import collective_module
from coll.lowering.gpu import kernels as gpu_kernels
from coll.lowering.gpu.nvvm import compile_module
from coll.lowering.gpu.to_gpu import to_gpu
from coll.passes.lower_collectives import lower_collectives

M = gpu_kernels.MAX_ARITY


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    return Emulator(tmp_path_factory.mktemp("emu_wide"))


def test_chain_folds_in_device_order():
    """Inputs 0..M-1 first, then M-1 more per kernel behind the accumulator;
    the last writes the output."""
    assert gpu_kernels.chain("sum", "f32", M) == [(gpu_kernels.Kernel("sum", "f32", M), 0, M)]
    steps = gpu_kernels.chain("sum", "f16", 2 * M + 3)
    assert [(k.name, start, take) for k, start, take in steps] == [
        (f"combine_sum_f16_x{M}_tof32", 0, M),
        (f"combine_sum_f16_x{M}_fromf32_tof32", M, M - 1),
        ("combine_sum_f16_x5_fromf32", 2 * M - 1, 4)]
    # i1 is stored as i8, and an accumulator of the element type needs no variant.
    assert [k.name for k, _, _ in gpu_kernels.chain("or", "i1", M + 1)] == [
        f"combine_or_i8_x{M}", "combine_or_i8_x2"]
    for k, _, _ in steps:
        assert gpu_kernels.Kernel.parse(k.name) == k
    assert all(k.arity <= M for n in range(1, 300) for k, _, _ in gpu_kernels.chain("max", "f64", n))


def _left_fold(kind, dtype, xs):
    """The combine of one wide kernel: a left fold in the combine type,
    rounded once to the element type."""
    fn = {"sum": np.add, "max": np.maximum, "prod": np.multiply}[kind]
    if dtype == "bf16":
        acc = (xs[0].astype(np.uint32) << 16).view(np.float32)
        for x in xs[1:]:
            acc = fn(acc, (x.astype(np.uint32) << 16).view(np.float32))
        bits = acc.view(np.uint32)
        return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)  # round to nearest even
    wide = np.float32 if dtype == "f16" else xs[0].dtype
    acc = xs[0].astype(wide)
    for x in xs[1:]:
        acc = fn(acc, x.astype(wide))
    return acc.astype(xs[0].dtype)


def _inputs(dtype, count, size, rng):
    """Views one element into larger arrays: misaligned by one element."""
    out = []
    for _ in range(count):
        if dtype == "bf16":
            raw = (rng.random(size + 1).astype(np.float32) + 0.5).view(np.uint32)
            a = (raw >> 16).astype(np.uint16)
        elif dtype == "i32":
            a = rng.integers(-1000, 1000, size + 1).astype(np.int32)
        else:
            a = (rng.random(size + 1) + 0.5).astype({"f16": np.float16, "f32": np.float32}[dtype])
        out.append(a[1:])
    return out


def _build(emu, tmp_path, op, n, size, dtype, kind, strategy, in_place=False, **attrs):
    """`size`: elements, or a shape."""
    with make_context():
        shape = [size] if isinstance(size, int) else size
        text = collective_module(op, n, shape, dtype, kind=kind, strategy=strategy,
                                 in_place=in_place, **attrs)
        m = ir.Module.parse(text)
        if strategy in ("oneshot", "twoshot"):
            m.operation.attributes["coll.peer_access"] = ir.UnitAttr.get()
        lower_collectives(m.operation)
        combines = []
        m.operation.walk(lambda o: (combines.append(len(o.operands)) if o.name == "coll.combine"
                                    else None) or ir.WalkResult.ADVANCE)
        to_gpu(m.operation)
        path = tmp_path / f"lib_{op}_{strategy}_{n}_{dtype}_{len(shape)}.so"
        compile_module(m.operation, path, fmt="isa", runtime_dir=emu.dir)
        entry = ir.StringAttr(m.body.operations[0].attributes["sym_name"]).value \
            if "sym_name" in m.body.operations[0].attributes else op
    return path, entry


@pytest.mark.parametrize("dtype,kind", [("f32", "sum"), ("f16", "sum"), ("bf16", "sum"),
                                        ("i32", "max")])
@pytest.mark.parametrize("n", [M + 4, 2 * M + 3])
def test_naive_bits(emu, tmp_path, dtype, kind, n):
    """naive: every device folds all n inputs itself; every replica equals
    the one-kernel left fold bit for bit; a chain of kernels per combine."""
    size = 37
    path, entry = _build(emu, tmp_path, "all_reduce", n, size, dtype, kind, "naive")
    xs = _inputs(dtype, n, size, np.random.default_rng(n))
    ys = [np.zeros_like(xs[0]) for _ in range(n)]
    counts = emu.run(path, entry, xs + ys, seed=n)
    want = _left_fold(kind, dtype, xs)
    for y in ys:
        np.testing.assert_array_equal(y, want)
    assert counts["per_call"][0]["kernels"] == n * len(gpu_kernels.chain(kind, dtype, n))


def test_naive_in_place(emu, tmp_path):
    """In place, a device's output is one of its combine's inputs: the chain
    writes it only in its last kernel, after every kernel read it."""
    n, size = 2 * M + 3, 40
    path, entry = _build(emu, tmp_path, "all_reduce", n, size, "f16", "sum", "naive", in_place=True)
    xs = _inputs("f16", n, size, np.random.default_rng(2))
    want = _left_fold("sum", "f16", xs)
    emu.run(path, entry, xs, seed=3)
    for x in xs:
        np.testing.assert_array_equal(x, want)


@pytest.mark.parametrize("op,strategy", [("all_reduce", "all2all"), ("all_reduce", "oneshot"),
                                         ("all_reduce", "twoshot"), ("reduce", "direct"),
                                         ("reduce_scatter", "direct")])
def test_wide_strategies(emu, tmp_path, op, strategy):
    """The other strategies with one combine over all n inputs; each checked
    against the left fold in device order (the order contract)."""
    n, root = M + 2, 3
    size = n * 3
    attrs = {"root": root} if op == "reduce" else {"axis": 0} if op == "reduce_scatter" else {}
    path, entry = _build(emu, tmp_path, op, n, size, "f32", "sum", strategy, **attrs)
    xs = _inputs("f32", n, size, np.random.default_rng(5))
    want = _left_fold("sum", "f32", xs)
    if op == "reduce":
        ys, wants = [np.zeros(size, np.float32)], [want]
    elif op == "reduce_scatter":
        ys = [np.zeros(3, np.float32) for _ in range(n)]
        wants = [want[3 * c:3 * c + 3] for c in range(n)]
    else:
        ys = [np.zeros(size, np.float32) for _ in range(n)]
        wants = [want] * n
    emu.run(path, entry, xs + ys, seed=1)
    for y, want in zip(ys, wants):
        np.testing.assert_array_equal(y, want)


def test_wide_strided_chain(emu, tmp_path):
    """reduce_scatter along axis 1: each device's combine of n strided
    blocks is a chain of strided kernels through the (contiguous, f32)
    accumulator, one launch per kernel (its own block among the received
    ones, cast to one type); bits as the left fold in device order."""
    n = M + 2
    path, entry = _build(emu, tmp_path, "reduce_scatter", n, [2, 3 * n], "f16", "sum", "direct", axis=1)
    xs = [x.reshape(2, 3 * n) for x in _inputs("f16", n, 6 * n, np.random.default_rng(6))]
    ys = [np.zeros((2, 3), np.float16) for _ in range(n)]
    emu.run(path, entry, xs + ys, seed=2)
    for c, y in enumerate(ys):
        np.testing.assert_array_equal(y, _left_fold("sum", "f16", [x[:, 3 * c:3 * c + 3] for x in xs]))
    steps = [k.name for k, _, _ in gpu_kernels.chain("sum", "f16", n, strided=True)]
    assert steps == [f"strided_sum_f16_x{M}_tof32", "strided_sum_f16_x3_fromf32"]
    launched = [name for name, *_ in emu.launches if not name.startswith("strided_copy")]
    assert sorted(launched) == sorted(steps * n)


@pytest.mark.parametrize("op", ["all_reduce", "reduce_scatter"])
def test_ring_carries_f32_partials(emu, tmp_path, op):
    """A bf16 ring under the order contract keeps its partials in f32
    between devices (kernels `..._tof32`, then `..._fromf32` at the last
    hop): the bits of the one left fold in f32, rounded once."""
    n, k = 5, 7
    path, entry = _build(emu, tmp_path, op, n, n * k, "bf16", "sum", "ring",
                         **({"axis": 0} if op == "reduce_scatter" else {}))
    xs = _inputs("bf16", n, n * k, np.random.default_rng(8))
    want = _left_fold("sum", "bf16", xs)
    ys = [np.zeros(k if op == "reduce_scatter" else n * k, np.uint16) for _ in range(n)]
    emu.run(path, entry, xs + ys, seed=3)
    for c, y in enumerate(ys):
        np.testing.assert_array_equal(y, want[c * k:c * k + k] if op == "reduce_scatter" else want)
    launched = {name for name, *_ in emu.launches}
    assert {"combine_sum_bf16_x2_tof32", "combine_sum_bf16_x2_fromf32"} <= launched
