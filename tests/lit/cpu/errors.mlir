// coll-to-cpu needs the explicit level: a collective left over is a located
// error, and nothing is printed.
// RUN: coll-opt %s --coll-to-cpu --verify-diagnostics
// RUN: not coll-opt %s --coll-to-cpu 2>&1 | FileCheck %s
// RUN: not coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce,coll-to-cpu{tile=-2})' 2>&1 | FileCheck %s --check-prefix=TILE
// TILE: error: coll-to-cpu: tile must be -1 (sized by cache), 0 (no tiling) or a number of elements, got -2
// CHECK: errors.mlir:[[# @LINE + 6]]:{{[0-9]+}}: error: coll-to-cpu: 'coll.all_reduce' has no CPU lowering; lower it to the explicit level first (coll-lower-all-reduce)
// CHECK-NOT: module

module {
  func.func @all_reduce(%x0: memref<8xf32>, %x1: memref<8xf32>, %y0: memref<8xf32>, %y1: memref<8xf32>) {
    // expected-error @below {{'coll.all_reduce' has no CPU lowering}}
    %t = "coll.all_reduce"(%x0, %x1, %y0, %y1)
        {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>}
        : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    return
  }
}

// coll-cpu-to-llvm takes what coll-to-cpu left: a coll op (a collective, or
// the explicit program's first op) is a located error, and nothing is printed.
// RUN: not coll-opt %s --coll-cpu-to-llvm 2>&1 | FileCheck %s --check-prefix=LLVM
// RUN: not coll-opt %s --coll-lower-collectives --coll-cpu-to-llvm 2>&1 | FileCheck %s --check-prefix=EXPLICIT
// LLVM: errors.mlir:13:{{[0-9]+}}: error: coll-cpu-to-llvm: 'coll.all_reduce' is not lowered for the CPU; expected the explicit program lowered by coll-to-cpu first
// LLVM-NOT: module
// EXPLICIT: errors.mlir:{{[0-9]+}}:{{[0-9]+}}: error: coll-cpu-to-llvm: 'coll.{{[a-z_]+}}' is not lowered for the CPU
// EXPLICIT-NOT: module
