"""fp8 element types (f8E4M3FN, f8E5M2; ir/kinds.py): summed in f32 in
device order ((x_0 + x_1) + x_2) ... and rounded once, bit for bit against
ml_dtypes, on CPU-simulated devices and under MPI; their conversions
(coll-fp8-conversions, lowering/cpu/fp8.py) against ml_dtypes; every bit
pattern moved unchanged; the GPU kernels and route without a GPU. (MPI:
test_mpi_fp8.py; the lowering of an fp8 combine:
tests/lit/cpu/fp8.mlir; what the verifier refuses: tests/lit/verify/fp8.mlir.)

Covering design: every strategy of every reducing collective (from the
registry), N = 2, 3, 5, 8, both fp8 types, a size that is no multiple of
N nor of a vector (reduce_scatter: N chunks of an odd length).
"""
import ctypes

import ml_dtypes
import numpy as np
import pytest
from fp8_cases import FP8, attrs_of, inputs, run, want_of
from mlir import ir
from mlir.execution_engine import ExecutionEngine
from mlir.runtime import get_ranked_memref_descriptor

from coll.collectives import COLLECTIVES
from coll.core.pipeline import build
from coll.execution import check
from coll.execution.signature import ArgSpec, as_array, from_stored
from coll.ir import make_context
from coll.ir.generate import collective_module
from coll.ir.kinds import ELEMENTS
from coll.lowering import cpu
from coll.lowering.cpu.route import CPU_TO_LLVM

REDUCING = [cls for cls in COLLECTIVES if cls.HAS_KIND]
FAMILIES = [(cls.short_name(), s) for cls in REDUCING for s in cls.runnable(cpu.BACKEND.capabilities)]
NS = (2, 3, 5, 8)


def cases():
    for op, s in FAMILIES:
        for n in NS:
            for element in FP8:
                numel = n * 131 if op == "reduce_scatter" else 1001
                yield pytest.param(op, s, n, numel, element, id=f"{op}-{s}-n{n}-{element}")


@pytest.mark.parametrize("op,strategy,n,numel,element", list(cases()))
def test_every_strategy_is_the_f32_device_order_sum_rounded_once(op, strategy, n, numel, element):
    xs, ys = run(op, n, numel, element, strategy)
    wants = want_of(op, n, element, xs)
    assert len(ys) == len(wants)
    for y, w in zip(ys, wants):
        assert np.array_equal(y, w), f"{int(np.sum(y != w))} of {w.size} elements differ"


@pytest.mark.parametrize("strategy", ["ring", "rhd", "tree"])
@pytest.mark.parametrize("element", FP8)
def test_any_order_rounds_per_hop_within_the_recursive_bound(strategy, element):
    """order = "any": fp8 partials between devices (the pointer-level
    lowering's fp8 addresses at N = 8, 1 KiB, which once reached LLVM as an
    fp8 GEP); replicas agree, the error is within (N - 1) roundings."""
    n, numel = 8, 1024
    with make_context():
        text = collective_module("all_reduce", n, [numel], element, strategy=strategy, order="any")
    xs = inputs(n, numel, element, seed=2)
    ys = [np.zeros(numel, np.uint8) for _ in range(n)]
    cpu.compile(text).run(xs, ys)
    assert all(np.array_equal(y, ys[0]) for y in ys)
    f = [check.as_float(x, element) for x in xs]
    exact, scale = sum(f), sum(np.abs(v) for v in f)
    got = check.as_float(ys[0], element)
    finite = np.isfinite(got) & (scale * 2 < ELEMENTS[element].max_finite)
    assert finite.sum() > numel // 2
    err = np.abs(got[finite] - exact[finite])
    assert np.all(err <= (n - 1) * ELEMENTS[element].eps * scale[finite] + 2 ** -20)


def test_a_rounding_per_hop_would_differ():
    """The test can fail: rounding the partial sums to fp8 at every step
    (what a ring without f32 partials does) changes many elements."""
    for element, md in FP8.items():
        xs = inputs(8, 1001, element)
        acc = xs[0].view(md)
        for x in xs[1:]:
            acc = (acc.astype(np.float32) + x.view(md).astype(np.float32)).astype(md)
        assert np.sum(acc.view(np.uint8) != want_of("all_reduce", 8, element, xs)[0]) > 50


@pytest.mark.parametrize("element", FP8)
def test_every_bit_pattern_moves_unchanged(element):
    """all_gather, broadcast, all_to_all and permute copy bits: each of the
    256 patterns (both zeros, subnormals, NaNs, E5M2's infinities) comes
    out as it went in."""
    bits = np.arange(256, dtype=np.uint8)
    n = 2
    with make_context():
        texts = {
            "all_gather": collective_module("all_gather", n, [256], element, axis=0),
            "broadcast": collective_module("broadcast", n, [256], element, root=0),
            "all_to_all": collective_module("all_to_all", n, [256], element, split_axis=0, concat_axis=0),
            "permute": collective_module("permute", n, [256], element, pairs=[0, 1, 1, 0]),
        }
    xs = [bits.copy(), bits[::-1].copy()]
    outs = {"all_gather": [np.concatenate(xs)] * n, "broadcast": [bits] * n,
            "all_to_all": [np.concatenate([xs[0][:128], xs[1][:128]]), np.concatenate([xs[0][128:], xs[1][128:]])],
            "permute": [xs[1], xs[0]]}
    for op, text in texts.items():
        want = outs[op]
        ins = xs[:1] if op == "broadcast" else xs
        ys = [np.zeros(w.size, np.uint8) for w in want]
        cpu.compile(text).run([x.copy() for x in ins], ys)
        assert all(np.array_equal(y, w) for y, w in zip(ys, want)), op


def test_ml_dtypes_arrays_are_taken_as_their_bits():
    spec = ArgSpec((16,), "f8E4M3FN")
    x = np.linspace(-4, 4, 16).astype(ml_dtypes.float8_e4m3fn)
    assert as_array(x, spec, "x0").dtype == np.uint8
    with pytest.raises(ValueError, match=r"f8E4M3FN arrays are uint8 bit patterns or ml_dtypes.float8_e4m3fn"):
        as_array(x.astype(ml_dtypes.float8_e5m2), spec, "x0")
    assert np.array_equal(from_stored(x.view(np.uint8), "f8E4M3FN"), x.astype(np.float32))


# -- the conversions --------------------------------------------------------------

CONVERT = """
func.func @ext(%a: memref<?x{t}>, %b: memref<?xf32>) attributes {{llvm.emit_c_interface}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?x{t}>
  scf.for %i = %c0 to %n step %c1 {{
    %x = memref.load %a[%i] : memref<?x{t}>
    %y = arith.extf %x : {t} to f32
    memref.store %y, %b[%i] : memref<?xf32>
  }}
  return
}}
func.func @trunc(%a: memref<?xf32>, %b: memref<?x{t}>) attributes {{llvm.emit_c_interface}} {{
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  scf.for %i = %c0 to %n step %c8 {{
    %x = vector.load %a[%i] : memref<?xf32>, vector<8xf32>
    %y = arith.truncf %x : vector<8xf32> to vector<8x{t}>
    vector.store %y, %b[%i] : memref<?x{t}>, vector<8x{t}>
  }}
  return
}}"""


def _ptr(x):
    return ctypes.pointer(ctypes.pointer(get_ranked_memref_descriptor(x)))


@pytest.mark.parametrize("element", FP8)
def test_conversions_match_ml_dtypes_bit_for_bit(element):
    """extf of all 256 patterns (scalar), truncf (vectors) of 2^21 random
    f32 patterns, every f32 around the fp8 range's ends (subnormal, largest
    finite, overflow), infinities and NaNs of both signs: the bits
    ml_dtypes gives (round to nearest even; E4M3FN has no infinity: NaN)."""
    md = FP8[element]
    with make_context():
        m = ir.Module.parse(CONVERT.format(t=element))
        build("builtin.module(" + ",".join(CPU_TO_LLVM) + ")").run(m.operation)
        engine = ExecutionEngine(m, opt_level=2)
    bits = np.arange(256, dtype=np.uint8)
    got = np.zeros(256, np.float32)
    engine.invoke("ext", _ptr(bits), _ptr(got))
    assert np.array_equal(got.view(np.uint32), bits.view(md).astype(np.float32).view(np.uint32))
    rng = np.random.default_rng(1)
    tiny, big = ELEMENTS[element].tiny, ELEMENTS[element].max_finite
    edges = [np.float32(v).view(np.uint32) for v in (tiny * ELEMENTS[element].eps / 2, tiny, big, big * 1.1)]
    f = np.concatenate([rng.integers(0, 2 ** 32, 1 << 21, dtype=np.uint64).astype(np.uint32)]
                       + [np.arange(int(e) - 4096, int(e) + 4096, dtype=np.uint32) for e in edges]
                       + [np.array([0, 0x7F800000, 0x7FC00000, 0x7F800001, 0x7FFFFFFF], np.uint32)])
    f = np.concatenate([f, f ^ np.uint32(0x80000000)])
    f = f[:len(f) // 8 * 8].view(np.float32).copy()
    out = np.zeros(f.size, np.uint8)
    engine.invoke("trunc", _ptr(f), _ptr(out))
    want = f.astype(md).view(np.uint8)
    bad = np.nonzero(out != want)[0]
    assert bad.size == 0, (f"{bad.size} differ, e.g. f32 {f[bad[:4]].view(np.uint32)}: got {out[bad[:4]]}, "
                           f"want {want[bad[:4]]}")


# -- GPU (no GPU here: the kernels on the CPU, the route on the emulator; their PTX through ptxas: test_gpu_resources) --

@pytest.mark.parametrize("element", FP8)
@pytest.mark.parametrize("n,offsets", [(203, (0, 0, 0, 0)), (77, (1, 0, 3, 2))])
def test_gpu_kernel_sums_in_f32_and_rounds_once(element, n, offsets):
    """The combine kernel of three fp8 inputs, run thread by thread on the
    CPU (gpu_emulator.Kernels): vectors of 16 fp8 (i8 loads, bitcast) and
    the scalar head and tail; a chain's first kernel writes the f32
    accumulator, its last reads it."""
    from gpu_emulator import Kernels

    from coll.lowering.gpu import kernels as gpu_kernels
    kernels = Kernels()
    xs = inputs(3, 256, element, seed=n)
    want = np.zeros(256, np.uint8)
    want[offsets[3]:offsets[3] + n] = want_of("all_reduce", 3, element, [x[o:o + n] for x, o in zip(xs, offsets)])[0]
    out = np.zeros(256, np.uint8)
    kernels.run_one(gpu_kernels.kernel_name("sum", element, 3), xs + [out], offsets, n)
    assert np.array_equal(out, want)
    first = gpu_kernels.Kernel.make("sum", element, 2, acc_out=True)
    last = gpu_kernels.Kernel.make("sum", element, 2, acc_in=True)
    assert gpu_kernels.Kernel.parse(last.name) == last
    acc, out2 = np.zeros(256, np.float32), np.zeros(256, np.uint8)
    kernels.run_one(first.name, xs[:2] + [acc], offsets[:2] + (offsets[3],), n)
    kernels.run_one(last.name, [acc, xs[2], out2], (offsets[3], offsets[2], offsets[3]), n)
    assert np.array_equal(out2, want)


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    from gpu_emulator import Emulator
    return Emulator(tmp_path_factory.mktemp("emu_fp8"))


@pytest.mark.parametrize("op,strategy,element", [("all_reduce", "ring", "f8E4M3FN"), ("all_reduce", "rhd", "f8E5M2"),
                                                 ("all_reduce", "oneshot", "f8E5M2"),
                                                 ("reduce_scatter", "ring", "f8E5M2"),
                                                 ("reduce", "tree", "f8E4M3FN"), ("all_gather", "ring", "f8E4M3FN")])
def test_gpu_route_on_the_emulator(emu, tmp_path, op, strategy, element):
    """The GPU route (coll-to-gpu, NVVM, the host library) on the emulator
    of libmlir_cuda_runtime.so, 3 devices, two stream orders: the bits of
    the f32 device-order sum rounded once (all_gather: the bits moved)."""
    from coll.lowering.gpu.nvvm import compile_module
    from coll.lowering.gpu.to_gpu import to_gpu
    from coll.passes.lower_collectives import lower_collectives
    n, numel = 3, 3 * 67
    with make_context():
        text = collective_module(op, n, [numel], element, strategy=strategy, **attrs_of(op, n))
        if strategy == "oneshot":
            text = text.replace("module {", "module attributes {coll.peer_access} {", 1)
        m = ir.Module.parse(text)
        lower_collectives(m.operation)
        to_gpu(m.operation)
        f = m.body.operations[0]
        ws = ir.IntegerAttr(f.attributes["coll.workspace_bytes"]).value if "coll.workspace_bytes" in f.attributes \
            else 0
        path = tmp_path / "libprog.so"
        compile_module(m.operation, path, fmt="isa", runtime_dir=emu.dir)
    xs = inputs(n, numel, element, seed=7)
    if op == "all_gather":
        wants = [np.concatenate(xs)] * n
    else:
        wants = want_of(op, n, element, xs)
    for seed in (0, 1):
        ys = [np.zeros(w.size, np.uint8) for w in wants]
        extra = [np.zeros(ws, np.uint8)] if ws else []
        emu.run(path, op, [x.copy() for x in xs] + ys + extra, seed=seed)
        assert all(np.array_equal(y, w) for y, w in zip(ys, wants)), f"seed {seed}"
