// coll-to-cpu drops the tokens wherever they flow among coll ops (program
// order honours them): into a region, across blocks, through joins
// (token_errors.mlir: a token that reaches an op that is not coll's).
// RUN: coll-opt %s --split-input-file --coll-to-cpu | FileCheck %s

// CHECK-LABEL: func.func @into_region
// CHECK: memref.copy %arg0, %arg1
// CHECK: scf.if %arg2 {
// CHECK-NEXT: memref.copy %arg1, %arg0
// CHECK-NEXT: }
// CHECK-NEXT: return
// CHECK-NOT: coll.
// CHECK-NOT: unrealized_conversion_cast
func.func @into_region(%a: memref<8xf32, #coll.device<0>>, %b: memref<8xf32, #coll.device<0>>, %c: i1) {
  %t = "coll.copy"(%a, %b) : (memref<8xf32, #coll.device<0>>, memref<8xf32, #coll.device<0>>) -> !coll.token
  scf.if %c {
    %u = "coll.copy"(%b, %a, %t) : (memref<8xf32, #coll.device<0>>, memref<8xf32, #coll.device<0>>, !coll.token) -> !coll.token
    "coll.wait"(%u) : (!coll.token) -> ()
  }
  %j = "coll.join"(%t) : (!coll.token) -> !coll.token
  "coll.wait"(%j) : (!coll.token) -> ()
  return
}

// -----

// CHECK-LABEL: func.func @across_blocks
// CHECK: memref.copy %arg0, %arg1
// CHECK-NEXT: cf.br ^bb1
// CHECK: ^bb1:
// CHECK-NEXT: memref.copy %arg1, %arg0
// CHECK-NEXT: return
func.func @across_blocks(%a: memref<8xf32, #coll.device<0>>, %b: memref<8xf32, #coll.device<0>>) {
  %t = "coll.copy"(%a, %b) : (memref<8xf32, #coll.device<0>>, memref<8xf32, #coll.device<0>>) -> !coll.token
  cf.br ^next
^next:
  %u = "coll.copy"(%b, %a, %t) : (memref<8xf32, #coll.device<0>>, memref<8xf32, #coll.device<0>>, !coll.token) -> !coll.token
  "coll.wait"(%u) : (!coll.token) -> ()
  return
}
