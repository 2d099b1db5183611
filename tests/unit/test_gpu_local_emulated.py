"""Whole GPU programs, local work included, on the emulated GPU: the host
library built exactly as for a GPU (its local kernels too: GPU_LOCAL_WORK,
coll-gpu-fuse-epilogues), linked against the emulator of
libmlir_cuda_runtime.so (gpu_emulator.py), which runs queued work in seeded
orders, coll's kernels from their names and the program's own kernels from
their gpu.func (Kernels.add_local). No GPU here: what this proves is the
host side (launches, their parameters, the streams' order, the local
stream's waits) and each kernel's index arithmetic, on the CPU."""
import numpy as np
import pytest
from gpu_emulator import Emulator
from mlir import ir
from test_gpu_epilogue import program

from coll.ir import make_context
from coll.lowering import gpu, lower
from coll.lowering.gpu.nvvm import compile_module


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    return Emulator(tmp_path_factory.mktemp("emu"))


def build(emu, path, text, strategy, **options):
    """The library of `text` for the GPU (its pool allocated by the
    library), its local kernels given to the emulator: (entry, argument
    shapes and element types)."""
    with make_context():
        m = ir.Module.parse(text)
        for op in m.body.operations:
            if op.operation.name == "func.func":
                op.operation.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
        lower(m.operation, gpu.BACKEND, strategy, workspace="alloc", **options)
        emu.kernels.add_local(str(m))
        f = next(op for op in m.body.operations if op.operation.name == "func.func"
                 and not op.operation.attributes["sym_name"].value.startswith("__"))
        types = [ir.MemRefType(t) for t in ir.FunctionType(f.attributes["function_type"].value).inputs]
        entry, shapes = f.attributes["sym_name"].value, [(list(t.shape), str(t.element_type)) for t in types]
        compile_module(m.operation, path, fmt="isa", runtime_dir=emu.dir)  # (f is lowered: read it before)
    return entry, shapes


@pytest.mark.parametrize("strategy", ["oneshot", "naive", "twoshot"])
@pytest.mark.parametrize("n", [2, 3])
def test_an_epilogue_fused_or_not_gives_numpys_bits(emu, tmp_path, strategy, n):
    """y = all_reduce(x); z = y + r on each device: fused (one kernel per
    device for oneshot and naive) and unfused, in three orders of the
    streams each, z is x_0 + ... + x_{n-1} + r in that order, bit for bit."""
    text = program(n, "residual")
    got = {}
    for ep in ("on", "off"):
        entry, shapes = build(emu, tmp_path / f"lib{ep}.so", text, strategy, epilogues=ep)
        for seed in (0, 1, 2):
            rng = np.random.default_rng(seed)
            arrays = [rng.uniform(-1, 1, s).astype(np.float32) for s, _ in shapes]
            counts = emu.run(tmp_path / f"lib{ep}.so", entry, arrays, seed=seed)
            xs, rs, zs = arrays[:n], arrays[n:2 * n], arrays[3 * n:]
            want = xs[0].copy()
            for x in xs[1:]:
                want = want + x
            for r, z in zip(rs, zs):
                assert (want + r).tobytes() == z.tobytes()
            got[(ep, seed)] = [a.tobytes() for a in zs]
        got[ep] = counts["kernels"]
    # fused: no combine kernel, one kernel per device; unfused: a combine
    # kernel and an epilogue kernel per device (and twoshot's the same)
    if strategy != "twoshot":
        assert got["on"] == n and got["off"] == 2 * n, got
    else:
        assert got["on"] == got["off"]


@pytest.mark.parametrize("strategy", ["auto", "naive", "oneshot"])
def test_the_mlp_example_runs_on_the_emulated_gpu(emu, tmp_path, strategy):
    """examples/tensor_mlp.mlir: fill, matmul and exp on each device around
    an all_reduce in place, all of it kernels (naive's combines one with
    the exp): numpy's answer."""
    import os
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    text = open(os.path.join(root, "examples", "tensor_mlp.mlir")).read()
    entry, shapes = build(emu, tmp_path / "libmlp.so", text, strategy)
    rng = np.random.default_rng(3)
    arrays = [rng.uniform(-1, 1, s).astype(np.float32) if k < 3 else np.zeros(s, np.float32)
              for k, (s, _) in enumerate(shapes)]
    x0, x1, w = arrays[:3]
    counts = emu.run(tmp_path / "libmlp.so", entry, arrays, seed=5)
    # naive's combines one with the exp (4 + 2 kernels); oneshot in place
    # writes scratch and copies it out: its combines stay (4 + 2 + 2)
    assert counts["kernels"] == {"naive": 6, "oneshot": 8}.get(strategy, counts["kernels"]), counts
    want = np.exp(x0 @ w + x1 @ w)
    for y in arrays[3:]:
        np.testing.assert_allclose(y, want, rtol=1e-5)
