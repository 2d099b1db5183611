// coll-to-mpi needs an SPMD explicit program: every device a rank, whose
// buffers fill slots of one type each (the read-only ones, then the written
// ones; a rank may lack a buffer in a slot, as a reduce's non-roots lack
// its output). What is not is a located error, and nothing is printed.
// RUN: coll-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(coll-lower-collectives,coll-to-mpi)'
// RUN: not coll-opt %s --split-input-file --pass-pipeline='builtin.module(coll-lower-collectives,coll-to-mpi)' 2>&1 | FileCheck %s
// CHECK: errors.mlir:[[# @LINE + 6]]:{{[0-9]+}}: error: coll-to-mpi: every rank must hold the same buffer types (an SPMD program); written argument 0 of each device has types device 0: memref<4xi32>, device 1: memref<8xf32>
// CHECK-NOT: module

// Device 0's first written buffer is a reduce's output, device 1's an allreduce's.
module {
  // expected-error @below {{every rank must hold the same buffer types}}
  func.func @mixed(%x0: memref<8xf32>, %x1: memref<8xf32>, %z0: memref<4xi32>, %z1: memref<4xi32>,
                   %w: memref<4xi32>, %y0: memref<8xf32>, %y1: memref<8xf32>) {
    %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum",
        operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
    %u = "coll.reduce"(%z0, %z1, %w) {devices = array<i64: 0, 1>, kind = "sum", root = 0 : i64,
        operandSegmentSizes = array<i32: 2, 1, 0>} : (memref<4xi32>, memref<4xi32>, memref<4xi32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    "coll.wait"(%u) : (!coll.token) -> ()
    return
  }
}

// -----

// Devices must be ranks 0..N-1.
module {
  // expected-error @below {{the arguments are on devices [0, 2]; expected devices 0..N-1, one rank each}}
  func.func @gap(%x0: memref<8xf32>, %x2: memref<8xf32>, %y0: memref<8xf32>, %y2: memref<8xf32>) {
    %t = "coll.all_reduce"(%x0, %x2, %y0, %y2) {devices = array<i64: 0, 2>, kind = "sum",
        operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    return
  }
}

// -----

// An op that has no per-rank projection.
module {
  func.func @other(%x0: memref<8xf32>, %x1: memref<8xf32>, %y0: memref<8xf32>, %y1: memref<8xf32>) {
    %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum",
        operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    // expected-error @below {{'memref.copy' has no per-rank projection}}
    memref.copy %x0, %y0 : memref<8xf32> to memref<8xf32>
    return
  }
}
