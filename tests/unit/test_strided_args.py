"""Entry arguments with a static strided layout (a window of a larger
buffer, as a gradient bucket is: memref<8x6xf32, strided<[6, 1], offset:
16>>) run in a buffer of their span on the CPU and MPI runtimes: results
against numpy, every op. (Found by an outside attack: the runtimes passed
the caller's array as the base, and the compiled code, which reads the
static offset from the type, wrote past it.)"""
import re
import subprocess
import sys

import numpy as np
import pytest

from coll.execution.descriptors import staged
from coll.execution.signature import ArgSpec
from coll.lowering import mpi

GEN = {
    "all_reduce": ["all-reduce", "--kind", "sum"],
    "reduce_scatter": ["reduce-scatter", "--kind", "sum", "--axis", "0"],
    "all_gather": ["all-gather", "--axis", "1"],
    "reduce": ["reduce", "--kind", "max", "--root", "2"],
    "broadcast": ["broadcast", "--root", "1"],
    "all_to_all": ["all-to-all", "--split-axis", "0", "--concat-axis", "1"],
}


def with_layout(text, offset):
    """Every memref<AxBxf32> of `text` given row-major strides and `offset`."""
    def one(m):
        dims = [int(d) for d in m.group(1).split("x")]
        strides = [int(np.prod(dims[i + 1:])) for i in range(len(dims))]
        return f"memref<{m.group(1)}xf32, strided<[{', '.join(map(str, strides))}], offset: {offset}>>"
    return re.sub(r"memref<((?:\d+x)*\d+)xf32>", one, text)


def tool(name):
    return [sys.executable, "-m", f"coll.tools.{name.replace('-', '_')}"]


def gen(op, strategy=None):
    cmd = tool("coll-gen") + GEN[op][:1] + ["--devices", "4", "--shape", "8x12", "--dtype", "f32"] + GEN[op][1:]
    return subprocess.run(cmd + (["--strategy", strategy] if strategy else []), capture_output=True,
                          text=True, check=True).stdout


def run(path, *args):
    return subprocess.run(tool("coll-run") + [str(path), "--repeat", "1", *args], capture_output=True,
                          text=True, timeout=300)


def test_staged_puts_the_array_at_the_layout():
    spec = ArgSpec((2, 3), "f32", (5, (4, 1)))
    assert spec.span == 5 + 4 + 2 + 1
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    view, d, base = staged(a, spec.shape, spec.layout)
    assert d.offset == 5 and list(d.strides) == [4, 1] and list(d.sizes) == [2, 3]
    assert base[5:8].tolist() == [0, 1, 2] and base[9:12].tolist() == [3, 4, 5]
    assert np.shares_memory(view, base) and (view == a).all()


@pytest.mark.parametrize("offset", [16, 0])  # 0: strided<[12, 1]>, a first row block (was refused: invalid IR)
@pytest.mark.parametrize("op", sorted(GEN))
def test_every_op_with_an_offset_layout_on_the_cpu(tmp_path, op, offset):
    path = tmp_path / f"{op}.mlir"
    path.write_text(with_layout(gen(op), offset))
    assert f"offset: {offset}>" in path.read_text()
    r = run(path, "--backend=cpu", "--outputs", str(tmp_path / "y.npz"))
    assert r.returncode == 0 and "FAIL" not in r.stdout, r.stdout + r.stderr
    assert " ok" in r.stdout and (tmp_path / "y.npz").exists()


@pytest.mark.skipif(not mpi.available()[0], reason="MPI back end not available (make setup installs OpenMPI)")
@pytest.mark.parametrize("op,strategy", [("all_reduce", "ring"), ("reduce_scatter", "ring"), ("all_gather", "direct")])
def test_offset_layouts_under_mpirun(tmp_path, op, strategy):
    path = tmp_path / f"{op}.mlir"
    path.write_text(with_layout(gen(op, strategy), 128))
    r = run(path, "--backend=mpi")
    assert r.returncode == 0 and " ok" in r.stdout, r.stdout + r.stderr
