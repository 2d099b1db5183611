// coll-parallel-devices: a device id that is not an integer, located at
// its op.
// RUN: not coll-opt %s --coll-parallel-devices 2>&1 | FileCheck %s
func.func @bad_device(%x: memref<4xf32>, %y: memref<4xf32>) {
  // CHECK: parallel_errors.mlir:[[@LINE+1]]:3: error: coll-parallel-devices: 'coll.device' is "zero"; expected a device id (an integer, i64)
  memref.copy %x, %y {coll.device = "zero"} : memref<4xf32> to memref<4xf32>
  memref.copy %x, %y {coll.device = 1 : i64} : memref<4xf32> to memref<4xf32>
  return
}
