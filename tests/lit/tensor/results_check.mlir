// coll-check-results on IR as coll-bufferize tags it: a collective's result
// (coll.result_ids) overwritten before an op that reads it
// (coll.result_readers) is a located error, with notes at both.
// RUN: coll-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(coll-check-results)' > /dev/null

// What a wrong bufferization looks like, as coll-bufferize tags it: the
// result of the all_reduce (id 1) is overwritten by the copy before
// linalg.exp reads it.
func.func @clobbered(%a: memref<4xf32>, %b: memref<4xf32>, %out: memref<4xf32>) attributes {coll.ranks = 2 : i64} {
  %buf = memref.alloc() : memref<4xf32>
  // expected-note @+1 {{the collective whose result is overwritten}}
  %t = "coll.all_reduce"(%a, %buf) {coll.result_ids = array<i64: 1>, devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<4xf32>, memref<4xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  // expected-error @+1 {{'linalg.copy' overwrites the result of 'coll.all_reduce' before 'linalg.exp' reads it}}
  linalg.copy ins(%b : memref<4xf32>) outs(%buf : memref<4xf32>)
  // expected-note @+1 {{a later op that reads that result}}
  linalg.exp {coll.result_readers = array<i64: 1>} ins(%buf : memref<4xf32>) outs(%out : memref<4xf32>)
  return
}

// -----

// The reader itself may write the buffer (an in-place update after its
// last read), and a write into another part of the same allocation is no
// overwrite.
func.func @own_write_and_other_half(%a: memref<4xf32>, %b: memref<4xf32>) attributes {coll.ranks = 2 : i64} {
  %buf = memref.alloc() : memref<8xf32>
  %lo = memref.subview %buf[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  %hi = memref.subview %buf[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  %t = "coll.all_reduce"(%a, %lo) {coll.result_ids = array<i64: 1>, devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<4xf32>, memref<4xf32, strided<[1]>>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  linalg.copy ins(%b : memref<4xf32>) outs(%hi : memref<4xf32, strided<[1], offset: 4>>)
  linalg.exp {coll.result_readers = array<i64: 1>} ins(%lo : memref<4xf32, strided<[1]>>) outs(%lo : memref<4xf32, strided<[1]>>)
  return
}
