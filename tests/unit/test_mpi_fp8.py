"""fp8 under mpirun (lowering/mpi): messages of fp8 are bytes, the ring's
f32 partials f32 messages; the bits are the f32 device-order sum's,
rounded once (fp8_cases.want_of); coll-build --emit=mpi-exe fills fp8
inputs. Runs with the other MPI files (Makefile MPI_TESTS)."""
import subprocess
import sys

import numpy as np
import pytest
from fp8_cases import FP8, run, want_of

from coll.ir import make_context
from coll.ir.generate import collective_module
from coll.lowering import mpi

OK, WHY = mpi.available()
pytestmark = pytest.mark.skipif(not OK, reason=f"MPI back end not available: {WHY}")


@pytest.mark.parametrize("op,strategy,n,element", [("all_reduce", "ring", 3, "f8E4M3FN"),
                                                   ("all_reduce", "rhd", 4, "f8E5M2"),
                                                   ("reduce_scatter", "ring", 4, "f8E5M2"),
                                                   ("reduce", "tree", 2, "f8E4M3FN")])
def test_mpi_ranks_get_the_f32_device_order_bits(op, strategy, n, element):
    """Under mpirun, fp8 messages are bytes and the ring's f32 partials
    f32 messages; the bits are still the device-order f32 sum's."""
    numel = n * 129 if op == "reduce_scatter" else 1001
    xs, ys = run(op, n, numel, element, strategy, backend=mpi, seed=5)
    assert all(np.array_equal(y, w) for y, w in zip(ys, want_of(op, n, element, xs)))


@pytest.mark.parametrize("element", FP8)
def test_mpi_exe_fills_rank_plus_one_as_fp8(element, tmp_path):
    """coll-build --emit=mpi-exe: the default inputs, rank + 1, are fp8
    bits (lowering/mpi/exe.py fp8_of); 3 ranks sum to 6 in every element."""
    from coll.lowering.mpi.toolchain import find
    with make_context():
        text = collective_module("all_reduce", 3, [100], element, strategy="ring")
    src, exe = tmp_path / "p.mlir", tmp_path / "p"
    src.write_text(text)
    r = subprocess.run([sys.executable, "-m", "coll.tools.coll_build", str(src), "--emit=mpi-exe", "-o", str(exe)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run(mpi.mpirun_command(find(), 3) + [str(exe), "--out", "out"], capture_output=True, text=True,
                       timeout=120, cwd=tmp_path, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stdout + r.stderr
    for rank in range(3):
        got = np.fromfile(tmp_path / f"out{rank}.bin", np.uint8)
        assert np.array_equal(got, np.full(100, 6.0).astype(FP8[element]).view(np.uint8))
