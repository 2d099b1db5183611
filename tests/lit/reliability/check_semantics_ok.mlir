// coll-check-semantics proves hand-written programs of each collective it
// has a specification for (all_reduce: examples/ and every lowering).
// RUN: coll-opt %s --split-input-file --coll-check-order --coll-check-semantics | FileCheck %s

// CHECK-LABEL: func.func @all_gather
// CHECK: "coll.implements"
!a = memref<2xi32>
!g = memref<4xi32>
!d0 = memref<2xi32, #coll.device<0>>
!d1 = memref<2xi32, #coll.device<1>>
!o0 = memref<4xi32, #coll.device<0>>
!o1 = memref<4xi32, #coll.device<1>>
!l0 = memref<2xi32, strided<[1]>, #coll.device<0>>
!l1 = memref<2xi32, strided<[1]>, #coll.device<1>>
!u0 = memref<2xi32, strided<[1], offset: 2>, #coll.device<0>>
!u1 = memref<2xi32, strided<[1], offset: 2>, #coll.device<1>>
!t = !coll.token
func.func @all_gather(%a0: !a, %a1: !a, %b0: !g, %b1: !g) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %x1 = memref.memory_space_cast %a1 : !a to !d1
  %y0 = memref.memory_space_cast %b0 : !g to !o0
  %y1 = memref.memory_space_cast %b1 : !g to !o1
  %y0l = memref.subview %y0[0] [2] [1] : !o0 to !l0
  %y0u = memref.subview %y0[2] [2] [1] : !o0 to !u0
  %y1l = memref.subview %y1[0] [2] [1] : !o1 to !l1
  %y1u = memref.subview %y1[2] [2] [1] : !o1 to !u1
  %c0 = "coll.copy"(%x0, %y0l) : (!d0, !l0) -> !t
  %c1 = "coll.copy"(%x1, %y0u) : (!d1, !u0) -> !t
  %c2 = "coll.copy"(%x0, %y1l) : (!d0, !l1) -> !t
  %c3 = "coll.copy"(%x1, %y1u) : (!d1, !u1) -> !t
  %j = "coll.join"(%c0, %c1, %c2, %c3) : (!t, !t, !t, !t) -> !t
  "coll.implements"(%a0, %a1, %b0, %b1, %j) {op = "all_gather", devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 2, 1>} : (!a, !a, !g, !g, !t) -> ()
  "coll.wait"(%j) : (!t) -> ()
  return
}

// -----
// CHECK-LABEL: func.func @reduce_scatter
// CHECK: "coll.implements"
!a = memref<4xi32>
!s = memref<2xi32>
!d0 = memref<4xi32, #coll.device<0>>
!d1 = memref<4xi32, #coll.device<1>>
!e0 = memref<2xi32, #coll.device<0>>
!e1 = memref<2xi32, #coll.device<1>>
!l0 = memref<2xi32, strided<[1]>, #coll.device<0>>
!l1 = memref<2xi32, strided<[1]>, #coll.device<1>>
!u0 = memref<2xi32, strided<[1], offset: 2>, #coll.device<0>>
!u1 = memref<2xi32, strided<[1], offset: 2>, #coll.device<1>>
!t = !coll.token
func.func @reduce_scatter(%a0: !a, %a1: !a, %b0: !s, %b1: !s) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %x1 = memref.memory_space_cast %a1 : !a to !d1
  %y0 = memref.memory_space_cast %b0 : !s to !e0
  %y1 = memref.memory_space_cast %b1 : !s to !e1
  %x0l = memref.subview %x0[0] [2] [1] : !d0 to !l0
  %x1l = memref.subview %x1[0] [2] [1] : !d1 to !l1
  %x0u = memref.subview %x0[2] [2] [1] : !d0 to !u0
  %x1u = memref.subview %x1[2] [2] [1] : !d1 to !u1
  %r0 = "coll.alloc"() : () -> !e0
  %r1 = "coll.alloc"() : () -> !e1
  %c0 = "coll.copy"(%x1l, %r0) : (!l1, !e0) -> !t
  %c1 = "coll.copy"(%x0u, %r1) : (!u0, !e1) -> !t
  %k0 = "coll.combine"(%x0l, %r0, %y0, %c0) {kind = "max", operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!l0, !e0, !e0, !t) -> !t
  %k1 = "coll.combine"(%r1, %x1u, %y1, %c1) {kind = "max", operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!e1, !u1, !e1, !t) -> !t
  %j = "coll.join"(%k0, %k1) : (!t, !t) -> !t
  "coll.implements"(%a0, %a1, %b0, %b1, %j) {op = "reduce_scatter", kind = "max", devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 2, 1>} : (!a, !a, !s, !s, !t) -> ()
  "coll.wait"(%j) : (!t) -> ()
  return
}
