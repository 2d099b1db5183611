// -o is written only when every chunk succeeds; on failure an existing
// file is left untouched.
// RUN: rm -f %t.out
// RUN: not coll-opt %s --split-input-file --coll-check-order -o %t.out 2>&1 | FileCheck %s --check-prefix=ERR
// RUN: not test -e %t.out
// RUN: echo sentinel > %t.keep
// RUN: not coll-opt %s --split-input-file --coll-check-order -o %t.keep
// RUN: FileCheck %s --check-prefix=KEEP --input-file=%t.keep
// RUN: not coll-opt %s --split-input-file --coll-lower-all-reduce=threshold=-1 -o %t.keep 2>&1 | FileCheck %s --check-prefix=THRESHOLD
// RUN: FileCheck %s --check-prefix=KEEP --input-file=%t.keep
// Without the order check both chunks are valid: the output is written.
// RUN: coll-opt %s --split-input-file -o %t.good
// RUN: FileCheck %s --check-prefix=GOOD --input-file=%t.good

// ERR: output_file.mlir:32:{{[0-9]+}}: error: coll-check-order: coll.copy writes %arg2[0, 8) on device 1, racing with another write
// ERR-NEXT: output_file.mlir:31:{{[0-9]+}}: note: also written by this coll.copy, not ordered with it
// KEEP: sentinel
// THRESHOLD: error: coll-lower-all-reduce: threshold must be >= 0, got -1
// GOOD: func.func @good
// GOOD: // -----
// GOOD: func.func @race

func.func @good(%x: memref<8xf32, #coll.device<0>>, %y: memref<8xf32, #coll.device<1>>) {
  %t = "coll.copy"(%x, %y) : (memref<8xf32, #coll.device<0>>, memref<8xf32, #coll.device<1>>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}

// -----
func.func @race(%x: memref<8xf32, #coll.device<0>>, %w: memref<8xf32, #coll.device<0>>, %y: memref<8xf32, #coll.device<1>>) {
  %t0 = "coll.copy"(%x, %y) : (memref<8xf32, #coll.device<0>>, memref<8xf32, #coll.device<1>>) -> !coll.token
  %t1 = "coll.copy"(%w, %y) : (memref<8xf32, #coll.device<0>>, memref<8xf32, #coll.device<1>>) -> !coll.token
  "coll.wait"(%t0, %t1) : (!coll.token, !coll.token) -> ()
  return
}
