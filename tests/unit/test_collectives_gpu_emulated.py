"""Every collective through the GPU route without a GPU: lowered, taken to
the gpu dialect, compiled into the host library exactly as for the GPU, run
on the emulator of libmlir_cuda_runtime.so (gpu_emulator.py) in seeded
orders of the streams, checked against numpy (execution/check.py)."""
import numpy as np
import pytest
from gpu_emulator import Emulator
from mlir import ir

from coll.execution import check
from coll.ir import make_context
from coll.ir.generate import collective_module
from coll.ir.ops import Combine, Copy
from coll.ir.types import contiguous
from coll.ir.walk import find_ops
from coll.lowering.gpu.nvvm import compile_module
from coll.lowering.gpu.to_gpu import to_gpu
from coll.passes.lower_collectives import lower_collectives


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    return Emulator(tmp_path_factory.mktemp("emu_collectives"))


CASES = [
    ("reduce_scatter", "ring", [3, 6], {"axis": 1}), ("reduce_scatter", "direct", [6, 2], {"axis": 0}),
    ("all_gather", "ring", [2, 5], {"axis": 1}), ("all_gather", "direct", [5], {"axis": 0}),
    ("reduce", "direct", [33], {"root": 1}), ("reduce", "ring", [33], {"root": 3}),
    ("reduce", "tree", [33], {"root": 2}),
    ("broadcast", "direct", [33], {"root": 0}), ("broadcast", "ring", [33], {"root": 2}),
    ("broadcast", "tree", [33], {"root": 3}),
    ("all_to_all", "direct", [6, 3], {"split_axis": 0, "concat_axis": 1}),
    ("all_reduce", "rhd", [33], {}), ("all_reduce", "tree", [33], {}),
]


# The in-place forms: the ops that have one, with their root in the group.
IN_PLACE = [c + (True,) for c in CASES
            if c[0] in ("reduce", "broadcast", "all_reduce") and c[3].get("root", 0) < 3]


def _run_checked(emu, tmp_path, op, strategy, shape, attrs, in_place=False, dtype="f32", kind="sum",
                 seeds=(0, 1, 2)):
    """Compiles collective `op` for 3 devices, runs it on the emulator with
    each seed and checks it against numpy. A block along a non-leading axis
    (an explicit-level op with a strided view) must run as one launch of a
    strided kernel, whatever its rows."""
    with make_context():
        m = ir.Module.parse(collective_module(op, 3, shape, dtype, kind=kind, strategy=strategy,
                                              in_place=in_place, **attrs))
        problem = check.describe(m)
        lower_collectives(m.operation)
        strided = [o.name for o in find_ops(m.operation, lambda n: n in (Copy.NAME, Combine.NAME))
                   if not all(contiguous(v.type) for v in o.operands if isinstance(v.type, ir.MemRefType))]
        to_gpu(m.operation)
        f = m.body.operations[0]
        ws = f.attributes["coll.workspace_bytes"] if "coll.workspace_bytes" in f.attributes else None
        ws = ir.IntegerAttr(ws).value if ws is not None else 0
        path = tmp_path / "libprog.so"
        compile_module(m.operation, path, fmt="isa", runtime_dir=emu.dir)
    for seed in seeds:
        inputs = check.make_inputs(problem, seed)
        given, outputs = [x.copy() for x in inputs], check.make_outputs(problem)
        extra = [np.zeros(ws, np.uint8)] if ws else []
        emu.run(path, problem.entry, given + outputs + extra, seed=seed)
        ok, worst = check.check(problem, inputs, check.op_outputs(problem, given, outputs))
        assert ok, f"seed {seed}: max error {worst}"
        launched = sorted(name.split("_")[1] for name, *_ in emu.launches if name.startswith("strided_"))
        assert launched == sorted("copy" if n == Copy.NAME else kind for n in strided)
    return strided


@pytest.mark.parametrize("op,strategy,shape,attrs,in_place", [c + (False,) for c in CASES] + IN_PLACE)
def test_gpu_route(emu, tmp_path, op, strategy, shape, attrs, in_place):
    _run_checked(emu, tmp_path, op, strategy, shape, attrs, in_place)


# Blocks along a non-leading axis in the other stored types (f32: CASES):
# rank-2 views, rank-3 ones (all_to_all of 2x6x4 from axis 1 to axis 2),
# copies and combines (bf16 combined in f32; i1 stored as bytes).
STRIDED = [
    ("all_to_all", "direct", [6, 4], {"split_axis": 0, "concat_axis": 1}, "bf16", "sum"),
    ("all_to_all", "direct", [2, 6, 4], {"split_axis": 1, "concat_axis": 2}, "i1", "sum"),
    ("all_to_all", "direct", [2, 6, 4], {"split_axis": 1, "concat_axis": 2}, "f32", "sum"),
    ("reduce_scatter", "direct", [2, 6], {"axis": 1}, "bf16", "sum"),
    ("reduce_scatter", "ring", [2, 6], {"axis": 1}, "i1", "or"),
    ("all_gather", "direct", [2, 3, 2], {"axis": 1}, "bf16", "sum"),
    ("all_gather", "ring", [3, 2], {"axis": 1}, "i1", "sum"),
]


@pytest.mark.parametrize("op,strategy,shape,attrs,dtype,kind", STRIDED)
def test_strided_blocks(emu, tmp_path, op, strategy, shape, attrs, dtype, kind):
    assert _run_checked(emu, tmp_path, op, strategy, shape, attrs, dtype=dtype, kind=kind, seeds=(0,))


def test_two_programs_with_one_entry_name_in_one_process(emu, tmp_path):
    """Two loaded libraries with the same entry name (as coll-run
    --strategy=all loads them) each run their own code: the libraries bind
    their own symbols (-Bsymbolic), or the second would run the first."""
    from coll.lowering.gpu import driver as cuda_driver
    for kind in ("sum", "max"):
        with make_context():
            m = ir.Module.parse(collective_module("all_reduce", 2, [8], "f32", kind=kind,
                                                  strategy="naive", name="f"))
            lower_collectives(m.operation)
            to_gpu(m.operation, workspace="arg")
            compile_module(m.operation, tmp_path / f"lib{kind}.so", fmt="isa", runtime_dir=emu.dir)
    progs = {k: cuda_driver.Program(tmp_path / f"lib{k}.so", "f") for k in ("sum", "max")}
    try:
        xs = [np.arange(8, dtype=np.float32), np.full(8, 3, np.float32)]
        for kind, want in (("max", np.maximum(xs[0], xs[1])), ("sum", xs[0] + xs[1])):
            ys, ws = [np.zeros(8, np.float32) for _ in range(2)], np.zeros(4096, np.uint8)
            arrays = xs + ys + [ws]
            prog = progs[kind]  # streams and events live from load (no reset between calls)
            prog.call(prog.bind([a.ctypes.data for a in arrays], [a.shape for a in arrays]))
            for y in ys:
                np.testing.assert_array_equal(y, want)
    finally:
        for p in progs.values():
            p.close()


IN_PLACE_ON_CUDA = r"""
import os
from coll.tools.coll_run import run
from coll.ir.generate import collective_module
from coll.ir.ops import Combine, Copy
from coll.ir.types import contiguous
from coll.ir.walk import find_ops
for op, kw in [("reduce", dict(root=1, in_place=True)), ("all_reduce", dict(in_place=True)),
               ("broadcast", dict(root=0, in_place=True)), ("all_to_all", dict(split_axis=0, concat_axis=0))]:
    path = os.path.join(sys.argv[1], op + ".mlir")
    with open(path, "w") as f:
        with make_context():
            f.write(collective_module(op, 3, [6], "f32", **kw))
    emu.lib.mgpuEmuReset(3, emu._cb)
    assert run([path, "--backend=cuda", "--strategy=all", "--repeat=1"]) == 0, op
print("collectives on the emulated runtime ok")
"""


def test_coll_run_cuda_every_collective_in_place(tmp_path):
    """coll-run --backend=cuda on the emulated driver and runtime (a
    subprocess, as test_cuda_runtime.py does): every strategy of in-place
    collectives, whose results are the inputs read back from the device."""
    import subprocess
    import sys
    from pathlib import Path

    from test_cuda_runtime import EMULATED_RUN
    script = EMULATED_RUN.split("rng = np.random.default_rng(0)")[0] + IN_PLACE_ON_CUDA
    r = subprocess.run([sys.executable, "-c", script, str(tmp_path), str(Path(__file__).parent)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "collectives on the emulated runtime ok" in r.stdout
    assert "FAIL" not in r.stdout
