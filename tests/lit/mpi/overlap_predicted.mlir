// coll-spmd-to-mpi with a cost-model profile puts on each collective's rank
// switch the predicted time of the local work right around it in tiles and
// whole (lowering/mpi/overlap.py `predict`, analysis/overlap.py), and
// whether that work is compute-bound; coll-mpi-overlap{cores=N} (the
// default, --epilogues=auto) tiles by it. A matmul on a gathered input
// is compute-bound; an elementwise epilogue is not. Without a profile,
// or without local work around the collective, there is no prediction.
// RUN: split-file %s %t
// RUN: coll-opt %t/matmul.mlir --pass-pipeline='builtin.module(coll-spmd-to-mpi{strategy=ring profile=mpi})' | FileCheck %s --check-prefix=MM
// RUN: coll-opt %t/scale.mlir --pass-pipeline='builtin.module(coll-spmd-to-mpi{strategy=ring profile=mpi})' | FileCheck %s --check-prefix=EW
// RUN: coll-opt %t/matmul.mlir --pass-pipeline='builtin.module(coll-spmd-to-mpi{strategy=ring})' | FileCheck %s --check-prefix=NONE
// RUN: coll-opt %t/alone.mlir --pass-pipeline='builtin.module(coll-spmd-to-mpi{strategy=ring profile=mpi})' | FileCheck %s --check-prefix=NONE

// MM-LABEL: func.func @step(
// MM: scf.index_switch %{{.*}} {coll.overlap_predicted = {compute_bound = true, tiles = {{[0-9.eE+-]+}} : f64, whole = {{[0-9.eE+-]+}} : f64}}
// MM-NEXT: case 0 {
// MM-NOT: coll.overlap_predicted

// EW-LABEL: func.func @step(
// EW: scf.index_switch %{{.*}} {coll.overlap_predicted = {compute_bound = false, tiles = {{[0-9.eE+-]+}} : f64, whole = {{[0-9.eE+-]+}} : f64}}

// NONE-LABEL: func.func @step(
// NONE-NOT: coll.overlap_predicted

//--- matmul.mlir
module {
func.func @step(%x: memref<256x512xf32>, %w: memref<512x64xf32>, %c: memref<1024x64xf32>) attributes {coll.ranks = 4 : i64} {
  %g = memref.alloc() : memref<1024x512xf32>
  %t = "coll.all_gather"(%x, %g) {devices = array<i64: 0, 1, 2, 3>, gather_axis = 0 : i64, operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<256x512xf32>, memref<1024x512xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<1024x64xf32>)
  linalg.matmul ins(%g, %w : memref<1024x512xf32>, memref<512x64xf32>) outs(%c : memref<1024x64xf32>)
  memref.dealloc %g : memref<1024x512xf32>
  return
}
}
//--- scale.mlir
module {
func.func @step(%x: memref<256x512xf32>, %s: memref<512xf32>, %y: memref<256x512xf32>) attributes {coll.ranks = 2 : i64} {
  %r = memref.alloc() : memref<256x512xf32>
  %t = "coll.all_reduce"(%x, %r) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<256x512xf32>, memref<256x512xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%r, %s : memref<256x512xf32>, memref<512xf32>) outs(%y : memref<256x512xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  }
  memref.dealloc %r : memref<256x512xf32>
  return
}
}
//--- alone.mlir
module {
func.func @step(%x: memref<256x512xf32>, %g: memref<1024x512xf32>) attributes {coll.ranks = 4 : i64} {
  %t = "coll.all_gather"(%x, %g) {devices = array<i64: 0, 1, 2, 3>, gather_axis = 0 : i64, operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<256x512xf32>, memref<1024x512xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
}
