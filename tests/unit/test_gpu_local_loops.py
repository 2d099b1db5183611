"""The iteration spaces of the GPU route's local kernels, run on the CPU.

The GPU route turns each linalg op into a parallel loop, collapses it to
one dimension (coll-gpu-collapse-parallel) and tiles it by the block size
before mapping tiles to blocks and elements to threads
(lowering/gpu/__init__.py GPU_LOCAL_WORK). The loops before the mapping
are run here on the CPU (scf.parallel lowered sequentially), against
numpy: every element once, at the right indices, for ranks 1 to 3, a
non-unit step, a transposed operand and a matmul (whose reduction stays a
loop inside each thread)."""
import ctypes

import numpy as np
from mlir import ir
from mlir.execution_engine import ExecutionEngine
from mlir.runtime import get_ranked_memref_descriptor

from coll.core import routes
from coll.core.pipeline import run
from coll.ir import make_context
from coll.ir.walk import find_ops
from coll.lowering import cpu, gpu

PROGRAM = """
#id2 = affine_map<(i, j) -> (i, j)>
#tr = affine_map<(i, j) -> (j, i)>
func.func @local(%a: memref<7x5xf32>, %b: memref<5x3xf32>, %c: memref<7x3xf32>,
                 %t: memref<6x10xf32>, %u: memref<10x6xf32>,
                 %p: memref<2x3x4xf32>, %q: memref<2x3x4xf32>, %v: memref<9xf32>, %w: memref<9xf32>)
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<7x3xf32>)
  linalg.matmul ins(%a, %b : memref<7x5xf32>, memref<5x3xf32>) outs(%c : memref<7x3xf32>)
  linalg.generic {indexing_maps = [#tr, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<6x10xf32>) outs(%u : memref<10x6xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  linalg.add ins(%p, %p : memref<2x3x4xf32>, memref<2x3x4xf32>) outs(%q : memref<2x3x4xf32>)
  %vs = memref.subview %v[1] [4] [2] : memref<9xf32> to memref<4xf32, strided<[2], offset: 1>>
  %ws = memref.subview %w[0] [4] [2] : memref<9xf32> to memref<4xf32, strided<[2]>>
  linalg.exp ins(%vs : memref<4xf32, strided<[2], offset: 1>>) outs(%ws : memref<4xf32, strided<[2]>>)
  return
}
"""
# The GPU route's local steps up to the mapping (GPU_LOCAL_WORK minus the
# gpu-map-parallel-loops onwards), then the CPU's lowering.
LOCAL = [gpu.GPU_LOCAL_WORK[0], gpu.GPU_LOCAL_WORK[1],
         f"func.func(scf-parallel-loop-tiling{{parallel-loop-tile-sizes={gpu.LOCAL_THREADS} "
         "no-min-max-bounds=true})"]


def test_the_route_tiles_what_this_test_runs():
    assert gpu.GPU_LOCAL_WORK[2].startswith("func.func(" + LOCAL[2][len("func.func("):-1] + ",")


def test_collapsed_and_tiled_loops_compute_the_ops():
    with make_context():
        m = ir.Module.parse(PROGRAM)
        run(m.operation, routes.pipeline(LOCAL))
        loops = find_ops(m.operation, "scf.parallel")
        # 5 ops, each a tile loop around a 1-D loop of 256 elements.
        assert len(loops) == 10
        assert all(len(loop.regions[0].blocks[0].arguments) == 1 for loop in loops)
        run(m.operation, routes.pipeline(["convert-scf-to-cf"] + list(cpu.CPU_TO_LLVM)))  # (a coll pass in it)
        engine = ExecutionEngine(m, opt_level=0)
    rng = np.random.default_rng(3)
    a, b = rng.random((7, 5), np.float32), rng.random((5, 3), np.float32)
    t, p, v = rng.random((6, 10), np.float32), rng.random((2, 3, 4), np.float32), rng.random(9, np.float32)
    c, u, q, w = (np.full(s, -1, np.float32) for s in ((7, 3), (10, 6), (2, 3, 4), (9,)))
    arrays = [a, b, c, t, u, p, q, v, w]
    engine.invoke("local", *[ctypes.pointer(ctypes.pointer(get_ranked_memref_descriptor(x))) for x in arrays])
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)
    np.testing.assert_array_equal(u, t.T)
    np.testing.assert_array_equal(q, p + p)
    want = np.full(9, -1, np.float32)
    want[0:8:2] = np.exp(v[1:9:2])
    np.testing.assert_allclose(w, want, rtol=1e-6)
