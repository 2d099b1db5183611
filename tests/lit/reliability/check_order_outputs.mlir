// An argument that the function's coll.implements claims as an output (and
// not as an input) holds nothing at entry: reading it before it is written
// is an error, as for scratch. Without a claim an argument may be in place,
// so it counts as initialised.
// RUN: coll-opt %s --split-input-file --verify-diagnostics --coll-check-order

!h = memref<8xf32>
!d0 = memref<8xf32, #coll.device<0>>
!d1 = memref<8xf32, #coll.device<1>>
!t = !coll.token
!q = memref<4xf32, strided<[1]>, #coll.device<0>>
!q1 = memref<4xf32, strided<[1]>, #coll.device<1>>
func.func @half_written_output(%a0: !h, %b0: !h, %b1: !h) {
  %x0 = memref.memory_space_cast %a0 : !h to !d0
  %y0 = memref.memory_space_cast %b0 : !h to !d0
  %y1 = memref.memory_space_cast %b1 : !h to !d1
  %s = memref.subview %x0[0] [4] [1] : !d0 to !q
  %s1 = memref.subview %y1[0] [4] [1] : !d1 to !q1
  %c1 = "coll.copy"(%s, %s1) : (!q, !q1) -> !t
  // expected-error @+1 {{coll-check-order: coll.copy reads %arg2[0, 8) on device 1, which is only partly written by the ops ordered before it}}
  %c2 = "coll.copy"(%y1, %y0, %c1) : (!d1, !d0, !t) -> !t
  "coll.implements"(%a0, %b0, %b1, %c2) {op = "broadcast", root = 0 : i64, devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 1, 2, 1>} : (!h, !h, !h, !t) -> ()
  "coll.wait"(%c2) : (!t) -> ()
  return
}

// -----

// In place (the claimed output is also the claimed input): initialised.
!h = memref<8xf32>
!d0 = memref<8xf32, #coll.device<0>>
!d1 = memref<8xf32, #coll.device<1>>
!t = !coll.token
func.func @in_place(%a0: !h, %a1: !h) {
  %x0 = memref.memory_space_cast %a0 : !h to !d0
  %x1 = memref.memory_space_cast %a1 : !h to !d1
  %c1 = "coll.copy"(%x0, %x1) : (!d0, !d1) -> !t
  "coll.implements"(%a0, %a0, %a1, %c1) {op = "broadcast", root = 0 : i64, devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 1, 2, 1>} : (!h, !h, !h, !t) -> ()
  "coll.wait"(%c1) : (!t) -> ()
  return
}
