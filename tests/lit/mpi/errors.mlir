// coll-to-mpi needs an SPMD explicit program: every device a rank holding
// the same buffers. What is not is a located error, and nothing is printed.
// RUN: coll-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(coll-lower-all-reduce,coll-to-mpi)'
// RUN: not coll-opt %s --split-input-file --pass-pipeline='builtin.module(coll-lower-all-reduce,coll-to-mpi)' 2>&1 | filecheck %s
// CHECK: errors.mlir:[[# @LINE + 6]]:{{[0-9]+}}: error: coll-to-mpi: every rank must hold the same buffers (an SPMD program); arguments per device: device 0: 2, device 1: 1 (a single-device output is not SPMD)
// CHECK-NOT: module

// A single-device output: only device 0 holds an output.
module {
  // expected-error @below {{every rank must hold the same buffers}}
  func.func @to_one(%x0: memref<8xf32>, %x1: memref<8xf32>, %y: memref<8xf32>) {
    %t = "coll.all_reduce"(%x0, %x1, %y) {devices = array<i64: 0, 1>, kind = "sum", to_device = 0 : i64,
        operandSegmentSizes = array<i32: 2, 1, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
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
