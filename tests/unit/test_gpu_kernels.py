"""The combine kernels' bodies, run on the CPU thread by thread (no GPU):
vector main loop, scalar head and tail, offsets that share or break
16-byte alignment, grid sizes that leave threads idle."""
import numpy as np
import pytest
from gpu_emulator import Kernels, reference
from mlir import ir

from coll.lowering.gpu import kernels as gpu_kernels

KERNELS = Kernels()


def _buffers(dtype, arity, size, rng):
    if dtype == np.int8:
        return [rng.integers(-100, 100, size, dtype=np.int8) for _ in range(arity)]
    return [rng.random(size).astype(dtype) for _ in range(arity)]


@pytest.mark.parametrize("offsets", [(0, 0, 0), (1, 1, 1), (3, 3, 3), (0, 1, 0), (2, 0, 5)])
@pytest.mark.parametrize("n", [0, 1, 3, 4, 5, 17, 64, 203])
def test_sum_f32_every_offset(offsets, n):
    """Equal offsets: a scalar head aligns all operands, then vectors. Mixed
    offsets: all scalar. Either way every element once, none outside."""
    rng = np.random.default_rng(n)
    ins = _buffers(np.float32, 2, 256, rng)
    out = np.full(256, -1.0, np.float32)
    KERNELS.run_one(gpu_kernels.kernel_name("sum", "f32", 2), ins + [out], offsets, n)
    a, b, o = offsets
    want = np.full(256, -1.0, np.float32)
    want[o:o + n] = ins[0][a:a + n] + ins[1][b:b + n]
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("grid,block", [(1, 1), (1, 7), (3, 32), (40, 64)])
def test_grid_stride(grid, block):
    """Any grid covers all elements (more threads than vectors too)."""
    rng = np.random.default_rng(grid)
    n = 1000
    ins = _buffers(np.int8, 3, n, rng)
    out = np.zeros(n, np.int8)
    name = gpu_kernels.kernel_name("max", "i8", 3)
    KERNELS.run_one(name, ins + [out], (0, 0, 0, 0), n, grid=grid, block=block)
    np.testing.assert_array_equal(out, reference("max", ins))


def test_output_aliases_input():
    """The ring writes the combined chunk over the received one."""
    rng = np.random.default_rng(1)
    a, b = _buffers(np.float32, 2, 37, rng)
    want = a + b
    KERNELS.run_one(gpu_kernels.kernel_name("sum", "f32", 2), [a, b, a], (0, 0, 0), 37)
    np.testing.assert_array_equal(a, want)


@pytest.mark.parametrize("elem,kind", [("f16", "prod"), ("f64", "min"), ("i16", "xor"),
                                       ("i64", "sum"), ("i1", "or"), ("bf16", "sum")])
def test_types(elem, kind):
    """Every stored type, with a misaligned tail; f16/bf16 combined in f32,
    rounded to their type after every step."""
    rng = np.random.default_rng(7)
    n = 77
    if elem == "bf16":
        raw = [rng.random(n).astype(np.float32) for _ in range(3)]
        bits = [(r.view(np.uint32) >> 16).astype(np.uint16) for r in raw]
        out = np.zeros(n, np.uint16)
        KERNELS.run_one(gpu_kernels.kernel_name(kind, elem, 3), bits + [out], (0, 0, 0, 0), n)
        as_f32 = [(b.astype(np.uint32) << 16).view(np.float32) for b in bits]
        got = (out.astype(np.uint32) << 16).view(np.float32)
        np.testing.assert_allclose(got, reference(kind, as_f32), rtol=1e-2)
        return
    dtype = {"f16": np.float16, "f64": np.float64, "i16": np.int16, "i64": np.int64,
             "i1": np.bool_}[elem]
    if elem == "i1":
        ins = [rng.random(n) > 0.5 for _ in range(3)]
    elif elem.startswith("i"):
        ins = [rng.integers(-1000, 1000, n).astype(dtype) for _ in range(3)]
    else:
        ins = [(rng.random(n) + 0.5).astype(dtype) for _ in range(3)]
    out = np.zeros(n, dtype)
    KERNELS.run_one(gpu_kernels.kernel_name(kind, elem, 3), ins + [out], (0, 0, 0, 0), n)
    want = reference(kind, ins)
    # f16: combined in f32 and rounded after every step, the bits of numpy's
    # own f16 arithmetic (each combine of the order contract's chain)
    np.testing.assert_array_equal(out, want)


def test_kernel_text_parses_for_every_kind_and_type():
    with ir.Context():
        for elem in ("f16", "bf16", "f32", "f64"):
            for kind in ("sum", "prod", "max", "min"):
                ir.Module.parse("module attributes {gpu.container_module} { gpu.module @m { "
                                + gpu_kernels.gpu_func_text(kind, elem, 2) + " } }")
        for elem in ("i1", "i8", "i16", "i32", "i64"):
            for kind in ("sum", "prod", "max", "min", "and", "or", "xor"):
                ir.Module.parse("module attributes {gpu.container_module} { gpu.module @m { "
                                + gpu_kernels.gpu_func_text(kind, elem, 2) + " } }")
    with pytest.raises(ValueError, match="not valid"):
        gpu_kernels.gpu_func_text("xor", "f32", 2)
