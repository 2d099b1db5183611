"""coll-blas-contractions (passes/blas_contractions.py) on the CPU and under
mpirun: one SPMD program of two ranks whose local work is contractions in
every form the pass rewrites (transposed operands, a sub-view, a
column-major output, batch_matmul, matvec, f64, bf16 inputs) and one it
leaves to loops (a non-unit inner stride), around an all_reduce; the
results against numpy. The FileCheck of the rewrite:
tests/lit/cpu/blas_contractions.mlir."""
import numpy as np
import pytest
from mlir import ir

from coll.core.pipeline import run as run_pipeline
from coll.ir import make_context
from coll.lowering import cpu, mpi
from coll.passes.blas_contractions import library

pytestmark = pytest.mark.skipif(library() is None, reason="scipy-openblas32 is not installed")

MAC = """{
  ^bb0(%l: f32, %m: f32, %o: f32):
    %pr = arith.mulf %l, %m : f32
    %sm = arith.addf %o, %pr : f32
    linalg.yield %sm : f32
  }"""
NT = ('{indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, '
      'affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]}')

# c += a @ bt^T; c += p[8:40, 4:28] @ bt^T (a sub-view); c += q[:, ::2] @ b
# (non-unit inner stride: loops); the all_reduce of c; et^T += c @ w (a
# column-major output); e[i] += x[i] @ v[i] (batch); y += a @ u (matvec);
# g += h @ k in f64; f += r @ s in bf16 (f32 output); z += q[:, 5] @ c (a
# strided vector).
PROGRAM = f"""
func.func @f(%a: memref<32x24xf32>, %bt: memref<16x24xf32>, %pp: memref<48x40xf32>, %q: memref<32x48xf32>,
             %b: memref<24x16xf32>, %w: memref<16x8xf32>, %x: memref<2x32x16xf32>, %v: memref<2x16x8xf32>,
             %u: memref<24xf32>, %h: memref<8x12xf64>, %k: memref<12x4xf64>, %r: memref<8x16xbf16>,
             %s: memref<16x4xbf16>,
             %c: memref<32x16xf32>, %et: memref<8x32xf32>, %e: memref<2x32x8xf32>, %y: memref<32xf32>,
             %g: memref<8x4xf64>, %fo: memref<8x4xf32>, %z: memref<16xf32>)
    attributes {{coll.ranks = 2 : i64, llvm.emit_c_interface}} {{
  linalg.generic {NT} ins(%a, %bt : memref<32x24xf32>, memref<16x24xf32>) outs(%c : memref<32x16xf32>) {MAC}
  %sub = memref.subview %pp[8, 4] [32, 24] [1, 1] : memref<48x40xf32> to memref<32x24xf32, strided<[40, 1], offset: 324>>
  linalg.generic {NT} ins(%sub, %bt : memref<32x24xf32, strided<[40, 1], offset: 324>>, memref<16x24xf32>)
      outs(%c : memref<32x16xf32>) {MAC}
  %odd = memref.subview %q[0, 0] [32, 24] [1, 2] : memref<32x48xf32> to memref<32x24xf32, strided<[48, 2]>>
  linalg.matmul ins(%odd, %b : memref<32x24xf32, strided<[48, 2]>>, memref<24x16xf32>) outs(%c : memref<32x16xf32>)
  %t = "coll.all_reduce"(%c, %c) {{devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 1, 1, 0>}}
      : (memref<32x16xf32>, memref<32x16xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  %e2 = memref.transpose %et (i, j) -> (j, i) : memref<8x32xf32> to memref<32x8xf32, strided<[1, 32]>>
  linalg.matmul ins(%c, %w : memref<32x16xf32>, memref<16x8xf32>) outs(%e2 : memref<32x8xf32, strided<[1, 32]>>)
  linalg.batch_matmul ins(%x, %v : memref<2x32x16xf32>, memref<2x16x8xf32>) outs(%e : memref<2x32x8xf32>)
  linalg.matvec ins(%a, %u : memref<32x24xf32>, memref<24xf32>) outs(%y : memref<32xf32>)
  linalg.matmul ins(%h, %k : memref<8x12xf64>, memref<12x4xf64>) outs(%g : memref<8x4xf64>)
  linalg.matmul ins(%r, %s : memref<8x16xbf16>, memref<16x4xbf16>) outs(%fo : memref<8x4xf32>)
  %col = memref.subview %q[0, 5] [32, 1] [1, 1] : memref<32x48xf32> to memref<32xf32, strided<[48], offset: 5>>
  linalg.vecmat ins(%col, %c : memref<32xf32, strided<[48], offset: 5>>, memref<32x16xf32>) outs(%z : memref<16xf32>)
  return
}}
"""
SHAPES = [((32, 24), "f4"), ((16, 24), "f4"), ((48, 40), "f4"), ((32, 48), "f4"), ((24, 16), "f4"),
          ((16, 8), "f4"), ((2, 32, 16), "f4"), ((2, 16, 8), "f4"), ((24,), "f4"), ((8, 12), "f8"),
          ((12, 4), "f8"), ((8, 16), "bf16"), ((16, 4), "bf16"),
          ((32, 16), "f4"), ((8, 32), "f4"), ((2, 32, 8), "f4"), ((32,), "f4"), ((8, 4), "f8"), ((8, 4), "f4"),
          ((16,), "f4")]


def _bf16(x: np.ndarray) -> np.ndarray:
    """f32 -> bf16 bits (uint16), rounded to nearest even; the values
    exact in bf16 (small integers here), so truncation is exact too."""
    return (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)


def _rank_inputs(rng: np.random.Generator) -> list[np.ndarray]:
    out = []
    for shape, kind in SHAPES:
        x = rng.integers(-3, 4, shape).astype(np.float32)  # small integers: exact sums in any order
        out.append(_bf16(x) if kind == "bf16" else x.astype(np.float64 if kind == "f8" else np.float32))
    return out


def _expected(ranks: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
    want = []
    for xs in ranks:
        a, bt, pp, q, b, w, x, v, u, h, k, r, s, c, et, e, y, g, fo, z = [t.copy() for t in xs]
        r, s = (r.astype(np.uint32) << 16).view(np.float32), (s.astype(np.uint32) << 16).view(np.float32)
        c += a @ bt.T + pp[8:40, 4:28] @ bt.T + q[:, ::2] @ b
        want.append([a, bt, pp, q, b, w, x, v, u, h, k, xs[11], xs[12], c, et, e + x @ v, y + a @ u, g + h @ k,
                     fo + r @ s, z])
    total = sum(w[13] for w in want)
    for w in want:
        w[13] = total
        w[14] = w[14] + (total @ w[5]).T
        w[19] = w[19] + w[3][:, 5] @ total
    return want


def _global(ranks: list[list[np.ndarray]]) -> list[np.ndarray]:
    """Argument i of rank r is global argument i * 2 + r (the SPMD form)."""
    return [ranks[r][i] for i in range(len(SHAPES)) for r in range(2)]


@pytest.mark.parametrize("backend", ["cpu", "mpi"])
def test_contractions_match_numpy(backend):
    if backend == "mpi" and not mpi.available()[0]:
        pytest.skip(f"no MPI here: {mpi.available()[1]}")
    rng = np.random.default_rng(5)
    ranks = [_rank_inputs(rng) for _ in range(2)]
    want = _global(_expected(ranks))
    xs = _global(ranks)
    prog = {"cpu": cpu, "mpi": mpi}[backend].compile(PROGRAM)
    assert "coll-blas-contractions" in prog.pipeline
    prog.run(xs, [])
    for i, (got, exp) in enumerate(zip(xs, want)):
        assert np.array_equal(got, exp), f"global argument {i}"


def test_the_opt_out_leaves_contractions_to_loops():
    on, off = cpu.compile(PROGRAM), cpu.compile(PROGRAM, blas="off")
    assert "coll-blas-contractions" in on.pipeline and "coll-blas-contractions" not in off.pipeline
    rng = np.random.default_rng(6)
    ranks = [_rank_inputs(rng) for _ in range(2)]
    x_on, x_off = _global(ranks), [z.copy() for z in _global(ranks)]
    on.run(x_on, [])
    off.run(x_off, [])
    assert all(np.array_equal(p, q) for p, q in zip(x_on, x_off))


def test_random_floats_within_f32_rounding():
    """Random (not integer) data: the library's sums are in another order
    than the loops', within a few ulps of the f64 product."""
    text = """func.func @mm(%a: memref<96x80xf32>, %b: memref<80x72xf32>, %c: memref<96x72xf32>)
        attributes {llvm.emit_c_interface} {
      linalg.matmul ins(%a, %b : memref<96x80xf32>, memref<80x72xf32>) outs(%c : memref<96x72xf32>)
      return
    }"""
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((96, 80), np.float32), rng.standard_normal((80, 72), np.float32)
    c = rng.standard_normal((96, 72), np.float32)
    want = c.astype(np.float64) + a.astype(np.float64) @ b.astype(np.float64)
    cpu.compile(text).run([a, b, c], [])
    assert np.abs(c - want).max() < 1e-4


def _weight_gradient(transposed):
    """dp_mlp_step's weight gradient after linalg-fuse-elementwise-ops: w +=
    select(x > z, g, z)^T @ d, one factor an expression of three inputs;
    `transposed`: as coll-transposes-into-producers (frontends/fusion.py)
    leaves it, the parameter's (in, out) layout written by the contraction
    itself, wt^T += ..."""
    out_map, out = ("(n, m)", "16x32") if transposed else ("(m, n)", "32x16")
    return f"""func.func @f(%x: memref<64x32xf32>, %z: memref<64x32xf32>, %g: memref<64x32xf32>, %d: memref<64x16xf32>,
                        %w: memref<{out}xf32>) attributes {{llvm.emit_c_interface}} {{
      linalg.generic {{indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, m)>,
                                       affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>,
                                       affine_map<(m, n, k) -> {out_map}>],
                      iterator_types = ["parallel", "parallel", "reduction"]}}
          ins(%x, %z, %g, %d : memref<64x32xf32>, memref<64x32xf32>, memref<64x32xf32>, memref<64x16xf32>)
          outs(%w : memref<{out}xf32>) {{
      ^bb0(%a: f32, %b: f32, %c: f32, %e: f32, %o: f32):
        %gt = arith.cmpf ogt, %a, %b : f32
        %s = arith.select %gt, %c, %b : f32
        %p = arith.mulf %s, %e : f32
        %r = arith.addf %o, %p : f32
        linalg.yield %r : f32
      }}
      return
    }}"""


@pytest.mark.parametrize("transposed", [False, True])
def test_a_fused_factor_is_computed_first_then_one_call(transposed):
    text = _weight_gradient(transposed)
    rng = np.random.default_rng(8 + transposed)
    x, z, g = (rng.integers(-3, 4, (64, 32)).astype(np.float32) for _ in range(3))
    d = rng.integers(-3, 4, (64, 16)).astype(np.float32)
    w = rng.integers(-3, 4, (16, 32) if transposed else (32, 16)).astype(np.float32)
    grad = np.where(x > z, g, z).T @ d
    want = w + (grad.T if transposed else grad)
    prog = cpu.compile(text)
    assert "coll-blas-contractions" in prog.pipeline
    prog.run([x, z, g, d, w], [])
    assert np.array_equal(w, want)
    with make_context():
        low = ir.Module.parse(text)
        run_pipeline(low.operation, "builtin.module(coll-blas-contractions)")
        calls = [line for line in str(low).splitlines() if "call @scipy_cblas_sgemm" in line]
        assert len(calls) == 1, str(low)  # the factor's copy, then one call: no loops around it
