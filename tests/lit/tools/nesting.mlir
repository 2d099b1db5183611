// coll passes nest like upstream ones: inside func.func(...) or any(...)
// they run on each function, between the upstream passes of the same
// nested pipeline, and give the same IR as at module level. A pass that
// needs the whole module says where it must run.
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=ring},cse)' -o %t.module.mlir
// RUN: coll-opt %s --pass-pipeline='builtin.module(func.func(coll-lower-all-reduce{strategy=ring},cse))' -o %t.func.mlir
// RUN: coll-opt %s --pass-pipeline='builtin.module(any(coll-lower-all-reduce{strategy=ring}),func.func(cse))' -o %t.any.mlir
// RUN: diff %t.module.mlir %t.func.mlir
// RUN: diff %t.module.mlir %t.any.mlir
// RUN: FileCheck %s --input-file=%t.func.mlir
// RUN: not coll-opt %s --pass-pipeline='builtin.module(func.func(coll-to-gpu))' 2>&1 | FileCheck %s --check-prefix=ANCHOR
// RUN: not coll-opt %s --pass-pipeline='builtin.module(func.func(coll-lower-all-reduce{strategy=bogus}))' 2>&1 | FileCheck %s --check-prefix=OPTION

// Each function lowered on its own: ring at N = 2 is 4 copies.
// CHECK-LABEL: func.func @a
// CHECK-COUNT-4: "coll.copy"
// CHECK-LABEL: func.func @b
// CHECK-COUNT-4: "coll.copy"
// CHECK-NOT: coll.all_reduce

// ANCHOR: error: invalid pass pipeline: 'coll-to-gpu' runs on the whole module: put it at the top level, 'builtin.module(coll-to-gpu)', not inside 'func.func(...)'
// OPTION: error: invalid pass pipeline: invalid value 'bogus' for option 'strategy' of pass 'coll-lower-all-reduce'

func.func @a(%x0: memref<64xf32>, %x1: memref<64xf32>, %y0: memref<64xf32>, %y1: memref<64xf32>) {
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {kind = "sum", devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<64xf32>, memref<64xf32>, memref<64xf32>, memref<64xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
func.func @b(%x0: memref<64xf32>, %x1: memref<64xf32>, %y0: memref<64xf32>, %y1: memref<64xf32>) {
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {kind = "max", devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<64xf32>, memref<64xf32>, memref<64xf32>, memref<64xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
