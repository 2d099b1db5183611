"""lowering/gpu/runtime.py: compiling needs no GPU (tested everywhere); running
needs one (those tests skip, with the reason, when there is none)."""
import numpy as np
import pytest

from coll.ir import make_context
from coll.ir.generate import all_reduce_module
from coll.lowering import gpu as cuda
from coll.lowering.gpu import driver as cuda_driver

GPU, WHY = cuda.available()
needs_gpu = pytest.mark.skipif(not GPU, reason=f"no GPU: {WHY}")


def _text(n, shape, dtype="f32", kind="sum", to_device=None):
    with make_context():
        return all_reduce_module(n, shape, dtype, kind, to_device=to_device)


def test_compile_needs_no_gpu(tmp_path):
    prog = cuda.compile(_text(4, [1000]), strategy="ring", out_dir=tmp_path)
    assert prog.path.exists() and prog.path.name == "liball_reduce.so"
    assert prog.n_inputs == 4 and len(prog.specs) == 8
    assert prog.strategies == ["ring"]
    assert prog.workspace_bytes == 12288   # 4 chunks x 3 scratch slots of 1 KiB
    assert prog.traffic_bytes == 4 * (6 * 1000 * 2 + 3 * 1000 * 3)
    assert prog.device == 0


def test_compile_rejects_unknown_strategy():
    with pytest.raises(ValueError, match="unknown strategy"):
        cuda.compile(_text(2, [8]), strategy="bogus")


@pytest.mark.skipif(GPU, reason="a GPU is present")
def test_unavailable_says_why():
    ok, why = cuda.available()
    assert not ok and why
    with pytest.raises(cuda_driver.CudaError):
        cuda_driver.Driver()


EMULATED_RUN = r"""
import ctypes, sys
import numpy as np
sys.path.insert(0, sys.argv[2])
from gpu_emulator import Emulator, build_emulator
# A host-memory libcuda.so.1 and libmlir_cuda_runtime.so, loaded first: the
# runtime's dlopen of either name then finds them.
ctypes.CDLL(str(build_emulator(sys.argv[1], "libcuda.so.1", ["-DEMULATE_DRIVER"])),
            mode=ctypes.RTLD_GLOBAL)
emu = Emulator(sys.argv[1])
from coll.ir import make_context
from coll.ir.generate import all_reduce_module
from coll.lowering import gpu as cuda
assert cuda.available() == (True, ""), cuda.available()
rng = np.random.default_rng(0)
for strategy, workspace, to_device in [("ring", "arg", None), ("naive", "alloc", None),
                                       ("all2all", "arg", 1)]:
    with make_context():
        text = all_reduce_module(3, [4, 25], "f32", "sum", to_device=to_device)
    prog = cuda.compile(text, strategy=strategy, workspace=workspace)
    xs = [rng.random((4, 25)).astype(np.float32) for _ in range(3)]
    ys = [np.full((4, 25), np.nan, np.float32) for _ in range(1 if to_device else 3)]
    # Reset before the first run loads the library: its constructor makes
    # the streams, events and pool that every call then reuses.
    emu.lib.mgpuEmuReset(1, emu._cb)
    prog.run(xs, ys)
    assert emu.lib.mgpuEmuPending() == 0, "work still queued after the call"
    for y in ys:
        np.testing.assert_allclose(y, xs[0] + xs[1] + xs[2], rtol=1e-6)
    times = prog.time(xs, ys, repeat=2)
    assert len(times) == 2, times
    prog.close()
    err = emu.lib.mgpuEmuError().decode()  # after the unload: nothing may leak
    assert not err and not emu.error, (err, emu.error)
# coll-run --backend=cuda, in this process (it imports coll.lowering.gpu).
import contextlib, io, os
from coll.tools.coll_run import run
path = os.path.join(sys.argv[1], "in.mlir")
with open(path, "w") as f:
    with make_context():
        f.write(all_reduce_module(4, [3, 7], "f32", "sum"))
out = io.StringIO()
with contextlib.redirect_stdout(out):
    emu.lib.mgpuEmuReset(3, emu._cb)
    code = run([path, "--backend=cuda", "--strategy=all", "--repeat=1"])
assert code == 0, (code, out.getvalue())
print(out.getvalue())
print("emulated runtime ok")
"""


def test_runtime_on_an_emulated_gpu(tmp_path):
    """run()/time() end to end (buffers, upload, call, download, workspace)
    with host-memory stand-ins for libcuda.so.1 and libmlir_cuda_runtime.so,
    in a subprocess so that no other test sees the fake GPU."""
    import subprocess
    import sys
    from pathlib import Path
    r = subprocess.run([sys.executable, "-c", EMULATED_RUN, str(tmp_path),
                        str(Path(__file__).parent)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "emulated runtime ok" in r.stdout


def _inputs(dtype, n, shape, rng):
    if dtype == "i1":
        return [rng.random(shape) > 0.5 for _ in range(n)]
    if dtype.startswith("i"):
        return [rng.integers(-50, 50, shape).astype(np.dtype("int" + dtype[1:])) for _ in range(n)]
    return [(rng.random(shape) + 0.5).astype({"f16": np.float16, "f32": np.float32,
                                              "f64": np.float64}[dtype]) for _ in range(n)]


def _reference(kind, xs):
    fn = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum,
          "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[kind]
    out = xs[0].copy()
    for x in xs[1:]:
        out = fn(out, x)
    return out


@needs_gpu
@pytest.mark.parametrize("strategy", ["naive", "ring", "all2all"])
@pytest.mark.parametrize("n", [2, 3, 4, 8])
@pytest.mark.parametrize("workspace,streams", [("arg", "device"), ("alloc", "device"),
                                               ("arg", "single")])
def test_allreduce_on_gpu(strategy, n, workspace, streams):
    rng = np.random.default_rng(n)
    shape = [1000003]
    prog = cuda.compile(_text(n, shape), strategy=strategy, workspace=workspace, streams=streams)
    xs = _inputs("f32", n, shape, rng)
    ys = [np.full(shape, np.nan, np.float32) for _ in range(n)]
    prog.run(xs, ys)
    ref = _reference("sum", [x.astype(np.float64) for x in xs])
    for y in ys:
        np.testing.assert_allclose(y, ref, rtol=1e-5)


@needs_gpu
@pytest.mark.parametrize("dtype,kind", [("f16", "sum"), ("f64", "prod"), ("i1", "xor"),
                                        ("i8", "min"), ("i32", "and"), ("i64", "max")])
def test_types_on_gpu(dtype, kind):
    rng = np.random.default_rng(3)
    for strategy in ("naive", "ring", "all2all"):
        prog = cuda.compile(_text(3, [4, 257], dtype, kind), strategy=strategy)
        xs = _inputs(dtype, 3, [4, 257], rng)
        ys = [np.zeros_like(xs[0]) for _ in range(3)]
        prog.run(xs, ys)
        wide = dtype == "f16"
        ref = _reference(kind, [x.astype(np.float32) if wide else x for x in xs])
        for y in ys:
            if wide:
                np.testing.assert_allclose(y.astype(np.float32), ref, rtol=1e-2)
            elif dtype.startswith("f"):
                np.testing.assert_allclose(y, ref, rtol=1e-12)
            else:
                np.testing.assert_array_equal(y, ref)


@needs_gpu
def test_single_device_output_and_time():
    rng = np.random.default_rng(5)
    prog = cuda.compile(_text(4, [1 << 20], to_device=2), strategy="ring")
    xs = _inputs("f32", 4, [1 << 20], rng)
    y = np.zeros(1 << 20, np.float32)
    times = prog.time(xs, [y], repeat=3)
    assert len(times) == 3 and all(t > 0 for t in times)
    np.testing.assert_allclose(y, _reference("sum", xs), rtol=1e-5)
