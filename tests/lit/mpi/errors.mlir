// coll-to-mpi needs an explicit program whose devices are ranks 0..N-1 and
// whose local work each device does on its own buffers (or on inputs it
// only reads). What is not is a located error, and nothing is printed.
// RUN: coll-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(coll-lower-collectives,coll-to-mpi)'
// RUN: not coll-opt %s --split-input-file --pass-pipeline='builtin.module(coll-lower-collectives,coll-to-mpi)' 2>&1 | FileCheck %s
// CHECK: errors.mlir:[[# @LINE + 6]]:{{[0-9]+}}: error: coll-to-mpi: the arguments are on devices [0, 2]; expected devices 0..N-1, one rank each
// CHECK-NOT: module

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

// Local work on two devices' buffers: data moves between them only
// through collectives (lowering/mpi/local_work.py).
module {
  func.func @cross(%x0: memref<4xf32>, %x1: memref<4xf32>, %y0: memref<4xf32>, %y1: memref<4xf32>) {
    %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    // expected-error @below {{'memref.copy' works on the buffers of devices [0, 1]}}
    memref.copy %y0, %y1 : memref<4xf32> to memref<4xf32>
    return
  }
}

// -----

// Device 0's result, needed by device 1's work.
module {
  func.func @needed(%x0: memref<4xf32>, %x1: memref<4xf32>, %y0: memref<4xf32>, %y1: memref<4xf32>) {
    %s = memref.alloc() : memref<4xf32>
    %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    // expected-error @below {{'linalg.exp' works on device 0's buffers, and device(s) [1] use what it writes}}
    linalg.exp ins(%y0 : memref<4xf32>) outs(%s : memref<4xf32>)
    linalg.add ins(%s, %y1 : memref<4xf32>, memref<4xf32>) outs(%y1 : memref<4xf32>)
    return
  }
}

// -----

// An input both devices' work writes: each rank would write its own copy.
module {
  func.func @twice(%w: memref<4xf32>, %x0: memref<4xf32>, %x1: memref<4xf32>, %y0: memref<4xf32>, %y1: memref<4xf32>) {
    linalg.add ins(%x0, %w : memref<4xf32>, memref<4xf32>) outs(%x0 : memref<4xf32>)
    // expected-error @below {{'linalg.exp' writes argument #0, which ranks [0, 1] hold}}
    linalg.exp ins(%w : memref<4xf32>) outs(%w : memref<4xf32>)
    linalg.add ins(%x1, %w : memref<4xf32>, memref<4xf32>) outs(%x1 : memref<4xf32>)
    %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    return
  }
}

// -----

// A buffer that is device 1's in one collective and device 0's in the next.
module {
  func.func @moves(%a: memref<4xf32>, %b: memref<4xf32>, %y0: memref<4xf32>, %y1: memref<4xf32>) {
    %t = "coll.all_reduce"(%a, %b, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    // expected-error @below {{argument #3 is device 1's in an earlier collective and device 0's here}}
    %t2 = "coll.all_reduce"(%y1, %y0, %y1, %y0) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
    "coll.wait"(%t2) : (!coll.token) -> ()
    return
  }
}
