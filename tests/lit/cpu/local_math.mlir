// Local work for LLVM's loop vectorizer (lowering/cpu/local_math.py).
// RUN: coll-opt %s --split-input-file --pass-pipeline='builtin.module(coll-approximate-math)' | FileCheck %s --check-prefix=MATH
// RUN: coll-opt %s --split-input-file --pass-pipeline='builtin.module(coll-reassociate-local-reductions)' | FileCheck %s --check-prefix=REASSOC

// f32 tanh and exp become inline arithmetic (no libm call is left to
// stop a loop from vectorizing); f64 keeps math (libm).
// MATH-LABEL: func.func @math
// MATH-NOT: math.tanh {{.*}} : f32
// MATH-NOT: math.exp {{.*}} : f32
// MATH: arith.divf
// MATH: arith.fptosi {{.*}} : f32 to i32
// MATH: arith.shli
// MATH: arith.bitcast {{.*}} : i32 to f32
// MATH: math.tanh {{.*}} : f64
// MATH: math.exp {{.*}} : f64
func.func @math(%x: f32, %y: f64) -> (f32, f32, f64, f64) {
  %t = math.tanh %x : f32
  %e = math.exp %x : f32
  %u = math.tanh %y : f64
  %f = math.exp %y : f64
  return %t, %e, %u, %f : f32, f32, f64, f64
}

// -----

// Vectors of f32 too, with splat constants.
// MATH-LABEL: func.func @vector
// MATH-NOT: math.
// MATH: arith.constant dense<{{.*}}> : vector<8xf32>
// MATH: arith.divf {{.*}} : vector<8xf32>
func.func @vector(%x: vector<8xf32>) -> vector<8xf32> {
  %t = math.tanh %x : vector<8xf32>
  return %t : vector<8xf32>
}

// -----

// A row sum over rows of 64's add is marked reassoc (LLVM may split it
// into lanes; coll-outline-row-reductions fixes the lanes per kind of
// row), and only the accumulation (the square beside it keeps its order:
// (x * 1e30) * 1e-30 must not fold into x); the elementwise op beside it
// is not, nor a sum over rows of 8
// (not outlined: in order, so that what surrounds it cannot change it).
// REASSOC-LABEL: func.func @rows
// REASSOC: arith.mulf %{{.*}}, %{{.*}} : f32
// REASSOC-NOT: fastmath
// REASSOC: linalg.generic
// REASSOC: arith.mulf %{{.*}}, %{{.*}} : f32
// REASSOC: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc> : f32
// REASSOC: linalg.generic
// REASSOC-NOT: fastmath
// REASSOC: return
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @rows(%a: memref<4x64xf32>, %b: memref<4x64xf32>, %s: memref<4xf32>, %c: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x64xf32>) outs(%b : memref<4x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.mulf %x, %x : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%b : memref<4x64xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %w = arith.mulf %x, %x : f32
    %r = arith.addf %w, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%c : memref<4x8xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// linalg.reduce is generalized first on the routes
// (linalg-generalize-named-ops); as itself it stays in order.
// REASSOC-LABEL: func.func @reduce
// REASSOC-NOT: fastmath
// REASSOC: return
func.func @reduce(%a: memref<4x64xf32>, %s: memref<4xf32>) {
  linalg.reduce ins(%a : memref<4x64xf32>) outs(%s : memref<4xf32>) dimensions = [1]
    (%x: f32, %acc: f32) {
      %m = arith.maximumf %x, %acc : f32
      linalg.yield %m : f32
    }
  return
}
