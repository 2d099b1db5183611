"""A global view's local work under MPI (lowering/mpi/local_work.py), on the
programs an outside attack wrote (with the parallel tests: a handful of
small mpiruns, as tests/unit/test_local_work.py's): each runs with coll-run on cpu and on mpi
from the same inputs, and the outputs must be bitwise equal (the same
compiled local work, the same combines in the same order); what cannot be
placed is a located error, exit 1 and no output file."""
import os
import subprocess
import sys

import numpy as np
import pytest

from coll.lowering import mpi

pytestmark = pytest.mark.skipif(not mpi.available()[0], reason=f"no MPI here: {mpi.available()[1]}")
INPUTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs", "global_local")
BIN = os.path.dirname(sys.executable)  # the tools beside the interpreter: any venv, any clone


def coll_run(src, backend, out):
    return subprocess.run([os.path.join(BIN, "coll-run"), src, f"--backend={backend}", "--repeat=1", "--seed=7",
                           "--outputs", str(out)], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("name", ["chain", "scalar_through_arith", "scalar_in_branches", "unused_argument",
                                  "tensor_broadcast_gather", "unclassified_arguments"])
def test_mpi_runs_it_as_the_cpu_does(tmp_path, name):
    src = os.path.join(INPUTS, f"{name}.mlir")
    got = {}
    for backend in ("cpu", "mpi"):
        r = coll_run(src, backend, tmp_path / f"{backend}.npz")
        assert r.returncode == 0, f"{backend}: {r.stdout}{r.stderr}"
        got[backend] = np.load(tmp_path / f"{backend}.npz")
    assert sorted(got["cpu"].files) == sorted(got["mpi"].files) and got["cpu"].files
    for k in got["cpu"].files:
        assert np.array_equal(got["cpu"][k], got["mpi"][k]), k


def test_a_buffer_on_two_devices_is_refused_where_it_moves(tmp_path):
    src = os.path.join(INPUTS, "buffer_on_two_devices.mlir")
    r = coll_run(src, "mpi", tmp_path / "o.npz")
    assert r.returncode == 1 and not (tmp_path / "o.npz").exists()
    assert r.stderr.startswith(f"{src}:5:9: error: coll-to-mpi: argument #3 is device 1's in an earlier collective "
                               "and device 0's here"), r.stderr


def test_a_select_of_two_ranks_buffers_is_refused_where_it_is_used(tmp_path):
    # An outside attack (2026-12-08): located at the function (1:1), as "a
    # buffer of another rank is used on this rank". The store through the
    # select may write either device's buffer.
    src = os.path.join(INPUTS, "select_of_two_ranks.mlir")
    r = coll_run(src, "mpi", tmp_path / "o.npz")
    assert r.returncode == 1 and not (tmp_path / "o.npz").exists()
    assert r.stderr.startswith(f"{src}:11:3: error: coll-to-mpi: 'memref.store' works on the buffers of devices "
                               "[0, 1]"), r.stderr


@pytest.mark.parametrize("form", ["select", "if", "index_switch", "execute_region"])
def test_local_work_on_a_picked_buffer_runs_as_on_the_cpu(tmp_path, form):
    # A second attack (2026-12-08): a fill through a buffer arith.select
    # picked (the argument x0 or z) was placed as if it wrote no argument,
    # and z was not read back: FAIL under MPI, `ok` on the CPU.
    pick = {"select": "%s = arith.select %b, %x0, %z : memref<8xf32>",
            "if": "%s = scf.if %b -> memref<8xf32> {\n    scf.yield %x0 : memref<8xf32>\n  } else {\n"
                  "    scf.yield %z : memref<8xf32>\n  }",
            "index_switch": "%s = scf.index_switch %c0 -> memref<8xf32>\n  case 0 {\n    scf.yield %z : "
                            "memref<8xf32>\n  }\n  default {\n    scf.yield %x0 : memref<8xf32>\n  }",
            "execute_region": "%s = scf.execute_region -> memref<8xf32> {\n    cf.cond_br %b, ^bb1, ^bb2\n"
                              "  ^bb1:\n    scf.yield %x0 : memref<8xf32>\n  ^bb2:\n    scf.yield %z : "
                              "memref<8xf32>\n  }"}[form]
    src = tmp_path / "p.mlir"
    src.write_text(PICKED_LOCAL.replace("PICK", pick))
    got = {}
    for backend in ("cpu", "mpi"):
        r = coll_run(str(src), backend, tmp_path / f"{backend}.npz")
        assert r.returncode == 0 and r.stdout.rstrip().endswith(" ok"), f"{backend}: {r.stdout}{r.stderr}"
        got[backend] = np.load(tmp_path / f"{backend}.npz")
    assert sorted(got["cpu"].files) == sorted(got["mpi"].files)
    assert all(np.array_equal(got["cpu"][k], got["mpi"][k]) for k in got["cpu"].files)


PICKED_LOCAL = """func.func @main(%x0: memref<8xf32>, %x1: memref<8xf32>, %y0: memref<8xf32>, %y1: memref<8xf32>, %z: memref<8xf32>, %iv: memref<1xi32>) {
  %cst = arith.constant 5.0 : f32
  %c0 = arith.constant 0 : index
  %i32 = memref.load %iv[%c0] : memref<1xi32>
  %zero = arith.constant 0 : i32
  %b = arith.cmpi eq, %i32, %zero : i32
  PICK
  linalg.fill ins(%cst : f32) outs(%s : memref<8xf32>)
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
"""


@pytest.mark.parametrize("name,at", [("call_through_a_global", "15:3"),
                                     ("call_through_a_global_exec_region", "17:5"),
                                     ("call_through_a_global_scf_if", "18:5"),
                                     ("call_through_a_global_llvm_global", "26:3")])
def test_a_call_through_a_global_is_refused_where_it_is(tmp_path, name, at):
    """@bump writes a global (memref's, or LLVM's through llvm.mlir.addressof)
    that both devices' local work reads; each rank has its own copy under
    MPI, and the call names no buffer: coll-to-mpi placed it nowhere (MPI
    gave 3.0 where the CPU gives 9.0; also inside scf.if and
    scf.execute_region: outside attacks) before it was refused, at the call."""
    src = os.path.join(INPUTS, f"{name}.mlir")
    r = coll_run(src, "mpi", tmp_path / "o.npz")
    assert r.returncode == 1 and not (tmp_path / "o.npz").exists()
    assert r.stderr.startswith(f"{src}:{at}: error: coll-to-mpi: 'func.call' may touch memory its operands do not "
                               "name"), r.stderr
    assert coll_run(src, "cpu", tmp_path / "c.npz").returncode == 0


def test_a_collective_in_a_called_function_is_refused_at_the_call(tmp_path):
    # An outside attack (2026-12-07): the projection changed @h's signature
    # and the call failed the verifier ("incorrect number of operands").
    src = os.path.join(INPUTS, "collective_in_a_callee.mlir")
    r = coll_run(src, "mpi", tmp_path / "o.npz")
    assert r.returncode == 1 and not (tmp_path / "o.npz").exists()
    assert r.stderr.splitlines() == [
        f"{src}:7:3: error: coll-to-mpi: '@h' holds collectives and is called: coll-to-mpi projects it to one "
        "rank's buffers, which changes its signature; expected the collectives in the function that runs, not in "
        "one it calls", f"{src}:1:1: note: @h is here"], r.stderr
