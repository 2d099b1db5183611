"""Routes are data (core/routes.py): pipeline text that coll-opt accepts and
that reproduces what the runtimes do, coll pass options included; and the
CPU route lowers the upstream ops a frontend puts around a collective."""
import subprocess
import sys

import numpy as np
import pytest
from mlir import ir

from coll.core import routes
from coll.ir import make_context
from coll.ir.generate import all_reduce_module
from coll.lowering import cpu, lower
from coll.lowering.cpu.route import cores
from coll.lowering.cpu.route import workers as cpu_workers

COLL_OPT = [sys.executable, "-c", "from coll.tools.coll_opt import main; main()"]


def _coll_opt(text, pipeline):
    r = subprocess.run(COLL_OPT + ["-", f"--pass-pipeline={pipeline}"], input=text,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize("backend,options", [
    ("cpu", {"tile": 0}), ("cpu", {}), ("gpu", {"streams": "single"}), ("mpi", {"implementation": "MPICH"}),
    (None, {})])
def test_printed_route_reproduces_the_runtime_lowering(backend, options):
    with make_context():
        text = all_reduce_module(3, [40], "f32", "sum")
        m = ir.Module.parse(text)
        low = lower(m.operation, backend, "ring", **options)
        want = str(m)
    assert "coll-choose-strategy{strategy=ring" in low.pipeline  # (and the back end's profile)
    for k, v in options.items():
        assert f"{k}={v}" in low.pipeline
    got = _coll_opt(text, low.pipeline)
    with make_context():  # same printer on both sides
        assert str(ir.Module.parse(got)) == want


def test_route_text_round_trips_through_the_builder():
    from coll.core.pipeline import build
    text = routes.pipeline(routes.explicit("all2all", 10, None, check_order=True),
                           cpu.route(tile=256, shuffle_seed=3, epilogues="on"))
    workers = f" workers={cpu_workers()}" if cores() > 1 else ""  # (the tiles of large groups on every core)
    assert text.startswith("builtin.module(coll-choose-strategy{strategy=all2all threshold=10},"
                           "coll-lower-collectives,coll-check-order,coll-shuffle{seed=3},"
                           f"coll-static-local-buffers,coll-to-cpu{{tile=256{workers}}},")
    with make_context():
        build(text)  # every element is a registered coll pass or an upstream pass


def test_explicit_input_is_order_checked_on_the_route():
    with make_context():
        m = ir.Module.parse(all_reduce_module(2, [8], "f32", "sum"))
        lower(m.operation, None, "naive")
        low = lower(m.operation, "cpu")
    assert "coll-check-order" in low.pipeline and low.strategies == []


# A frontend's function: linalg (generic with math, fill), affine and scf
# loops on memrefs around a coll.all_reduce, lowered and run by the CPU route
# with no extra passes.
FRONTEND = """
#id = affine_map<(d0) -> (d0)>
func.func @step(%a0: memref<16xf32>, %a1: memref<16xf32>, %y0: memref<16xf32>, %y1: memref<16xf32>)
    attributes {llvm.emit_c_interface} {
  %g0 = memref.alloc() : memref<16xf32>
  %g1 = memref.alloc() : memref<16xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a0 : memref<16xf32>) outs(%g0 : memref<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  }
  %c2 = arith.constant 2.0 : f32
  affine.for %i = 0 to 16 {
    %v = affine.load %a1[%i] : memref<16xf32>
    %w = arith.mulf %v, %c2 : f32
    affine.store %w, %g1[%i] : memref<16xf32>
  }
  %t = "coll.all_reduce"(%g0, %g1, %y0, %y1) {kind = "sum", devices = array<i64: 0, 1>,
         operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<16xf32>, memref<16xf32>, memref<16xf32>, memref<16xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    %v = memref.load %y1[%i] : memref<16xf32>
    %s = math.sqrt %v : f32
    memref.store %s, %y1[%i] : memref<16xf32>
  }
  memref.dealloc %g0 : memref<16xf32>
  memref.dealloc %g1 : memref<16xf32>
  return
}
"""


def test_cpu_route_runs_a_frontends_upstream_ops():
    prog = cpu.compile(FRONTEND, strategy="ring")
    a0 = np.linspace(-1, 1, 16, dtype=np.float32)
    a1 = np.linspace(0, 3, 16, dtype=np.float32)
    y0, y1 = np.zeros(16, np.float32), np.zeros(16, np.float32)
    prog.run([a0, a1], [y0, y1])
    want = np.exp(a0) + 2 * a1
    np.testing.assert_allclose(y0, want, rtol=1e-6)
    np.testing.assert_allclose(y1, np.sqrt(want), rtol=1e-6)


def test_coll_run_prints_the_route_it_ran(tmp_path):
    with make_context():
        text = all_reduce_module(2, [16], "i32", "sum")
    f = tmp_path / "in.mlir"
    f.write_text(text)
    r = subprocess.run([sys.executable, "-c", "from coll.tools.coll_run import main; main()",
                        str(f), "--backend=cpu", "--strategy=all2all", "--repeat=1",
                        "--dump-pass-pipeline"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    route = r.stderr.strip().splitlines()[-1]
    with make_context():
        m = ir.Module.parse(text)
        # The CPU runtime streams results past this machine's cache size.
        want = lower(m.operation, "cpu", "all2all", nontemporal=cpu.NONTEMPORAL or None).pipeline
    assert route == want
