// coll-check-semantics on hand-written explicit programs that are ordered
// (coll-check-order passes on each) but compute the wrong thing: each error
// is at the claim (coll.implements), says which output region holds what and
// what it should hold, with a note at the op that last wrote it.
// RUN: coll-opt %s --split-input-file --verify-diagnostics --coll-check-semantics
// RUN: coll-opt %s --split-input-file --coll-check-order > /dev/null

!a = memref<4xi32>
!d0 = memref<4xi32, #coll.device<0>>
!d1 = memref<4xi32, #coll.device<1>>
!d2 = memref<4xi32, #coll.device<2>>
!t = !coll.token
func.func @dropped_contribution(%a0: !a, %a1: !a, %a2: !a, %b: !a) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %x1 = memref.memory_space_cast %a1 : !a to !d1
  %x2 = memref.memory_space_cast %a2 : !a to !d2
  %y = memref.memory_space_cast %b : !a to !d0
  %r1 = "coll.alloc"() : () -> !d0
  %r2 = "coll.alloc"() : () -> !d0
  %c1 = "coll.copy"(%x1, %r1) : (!d1, !d0) -> !t
  %c2 = "coll.copy"(%x2, %r2) : (!d2, !d0) -> !t
  // expected-note @+1 {{last written by this coll.combine}}
  %s = "coll.combine"(%x0, %r1, %y, %c1, %c2) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 2>} : (!d0, !d0, !d0, !t, !t) -> !t
  // expected-error @+1 {{output #0 (%arg3 on device 0) [0, 4) holds sum(x0[0:4], x1[0:4]) but should hold sum(x0[0:4], x1[0:4], x2[0:4]): x2 is missing}}
  "coll.implements"(%a0, %a1, %a2, %b, %s) {op = "all_reduce", kind = "sum", devices = array<i64: 0, 1, 2>, to_device = 0, operandSegmentSizes = array<i32: 3, 1, 1>} : (!a, !a, !a, !a, !t) -> ()
  "coll.wait"(%s) : (!t) -> ()
  return
}

// -----
!a = memref<4xi32>
!d0 = memref<4xi32, #coll.device<0>>
!d1 = memref<4xi32, #coll.device<1>>
!t = !coll.token
func.func @doubled_contribution(%a0: !a, %a1: !a, %b: !a) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %x1 = memref.memory_space_cast %a1 : !a to !d1
  %y = memref.memory_space_cast %b : !a to !d0
  %r1 = "coll.alloc"() : () -> !d0
  %c1 = "coll.copy"(%x1, %r1) : (!d1, !d0) -> !t
  // expected-note @+1 {{last written by this coll.combine}}
  %s = "coll.combine"(%x0, %r1, %r1, %y, %c1) {kind = "sum", operandSegmentSizes = array<i32: 1, 2, 1, 1>} : (!d0, !d0, !d0, !d0, !t) -> !t
  // expected-error @+1 {{output #0 (%arg2 on device 0) [0, 4) holds sum(x0[0:4], x1[0:4], x1[0:4]) but should hold sum(x0[0:4], x1[0:4]): x1 contributes 2 times}}
  "coll.implements"(%a0, %a1, %b, %s) {op = "all_reduce", kind = "sum", devices = array<i64: 0, 1>, to_device = 0, operandSegmentSizes = array<i32: 2, 1, 1>} : (!a, !a, !a, !t) -> ()
  "coll.wait"(%s) : (!t) -> ()
  return
}

// -----
!a = memref<4xi32>
!d0 = memref<4xi32, #coll.device<0>>
!d1 = memref<4xi32, #coll.device<1>>
!t = !coll.token
func.func @wrong_combine_kind(%a0: !a, %a1: !a, %b: !a) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %x1 = memref.memory_space_cast %a1 : !a to !d1
  %y = memref.memory_space_cast %b : !a to !d0
  %r1 = "coll.alloc"() : () -> !d0
  %c1 = "coll.copy"(%x1, %r1) : (!d1, !d0) -> !t
  // expected-note @+1 {{last written by this coll.combine}}
  %s = "coll.combine"(%x0, %r1, %y, %c1) {kind = "max", operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!d0, !d0, !d0, !t) -> !t
  // expected-error @+1 {{output #0 (%arg2 on device 0) [0, 4) holds max(x0[0:4], x1[0:4]) but should hold sum(x0[0:4], x1[0:4]): combined with 'max', expected 'sum'}}
  "coll.implements"(%a0, %a1, %b, %s) {op = "all_reduce", kind = "sum", devices = array<i64: 0, 1>, to_device = 0, operandSegmentSizes = array<i32: 2, 1, 1>} : (!a, !a, !a, !t) -> ()
  "coll.wait"(%s) : (!t) -> ()
  return
}

// -----
// all2all on 2 devices, chunks [0, 2) and [2, 4): the allgather copy of
// chunk 1 lands in y0[0:2] (over chunk 0) instead of y0[2:4].
!a = memref<4xi32>
!d0 = memref<4xi32, #coll.device<0>>
!d1 = memref<4xi32, #coll.device<1>>
!e0 = memref<2xi32, #coll.device<0>>
!e1 = memref<2xi32, #coll.device<1>>
!l0 = memref<2xi32, strided<[1]>, #coll.device<0>>
!l1 = memref<2xi32, strided<[1]>, #coll.device<1>>
!u0 = memref<2xi32, strided<[1], offset: 2>, #coll.device<0>>
!u1 = memref<2xi32, strided<[1], offset: 2>, #coll.device<1>>
!t = !coll.token
func.func @chunk_to_the_wrong_slice(%a0: !a, %a1: !a, %b0: !a, %b1: !a) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %x1 = memref.memory_space_cast %a1 : !a to !d1
  %y0 = memref.memory_space_cast %b0 : !a to !d0
  %y1 = memref.memory_space_cast %b1 : !a to !d1
  %x0l = memref.subview %x0[0] [2] [1] : !d0 to !l0
  %x1l = memref.subview %x1[0] [2] [1] : !d1 to !l1
  %y0l = memref.subview %y0[0] [2] [1] : !d0 to !l0
  %y1l = memref.subview %y1[0] [2] [1] : !d1 to !l1
  %x0u = memref.subview %x0[2] [2] [1] : !d0 to !u0
  %x1u = memref.subview %x1[2] [2] [1] : !d1 to !u1
  %y1u = memref.subview %y1[2] [2] [1] : !d1 to !u1
  %r0 = "coll.alloc"() : () -> !e0
  %r1 = "coll.alloc"() : () -> !e1
  %c0 = "coll.copy"(%x1l, %r0) : (!l1, !e0) -> !t
  %c1 = "coll.copy"(%x0u, %r1) : (!u0, !e1) -> !t
  %k0 = "coll.combine"(%x0l, %r0, %y0l, %c0) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!l0, !e0, !l0, !t) -> !t
  %k1 = "coll.combine"(%x1u, %r1, %y1u, %c1) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!u1, !e1, !u1, !t) -> !t
  %g0 = "coll.copy"(%y0l, %y1l, %k0) : (!l0, !l1, !t) -> !t
  // expected-note @+1 {{last written by this coll.copy}}
  %g1 = "coll.copy"(%y1u, %y0l, %k1, %g0) : (!u1, !l0, !t, !t) -> !t
  %j = "coll.join"(%g1) : (!t) -> !t
  // expected-error @+2 {{output #0 (%arg2 on device 0) [0, 2) holds sum(x0[2:4], x1[2:4]) but should hold sum(x0[0:2], x1[0:2]): x0 comes from x0[2:4] instead of x0[0:2] (the wrong slice); x1 comes from x1[2:4] instead of x1[0:2] (the wrong slice)}}
  // expected-error @+1 {{output #0 (%arg2 on device 0) [2, 4) holds nothing (never written) but should hold sum(x0[2:4], x1[2:4]): it is never written}}
  "coll.implements"(%a0, %a1, %b0, %b1, %j) {op = "all_reduce", kind = "sum", devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 2, 1>} : (!a, !a, !a, !a, !t) -> ()
  "coll.wait"(%j) : (!t) -> ()
  return
}

// -----
// One scratch buffer for both messages; the second combine runs before the
// second message arrives and reads the first one again (stale).
!a = memref<4xi32>
!d0 = memref<4xi32, #coll.device<0>>
!d1 = memref<4xi32, #coll.device<1>>
!d2 = memref<4xi32, #coll.device<2>>
!t = !coll.token
func.func @stale_scratch_read(%a0: !a, %a1: !a, %a2: !a, %b: !a) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %x1 = memref.memory_space_cast %a1 : !a to !d1
  %x2 = memref.memory_space_cast %a2 : !a to !d2
  %y = memref.memory_space_cast %b : !a to !d0
  %s = "coll.alloc"() : () -> !d0
  %t1 = "coll.copy"(%x1, %s) : (!d1, !d0) -> !t
  %t2 = "coll.combine"(%x0, %s, %y, %t1) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!d0, !d0, !d0, !t) -> !t
  // expected-note @+1 {{last written by this coll.combine}}
  %t4 = "coll.combine"(%y, %s, %y, %t2) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!d0, !d0, !d0, !t) -> !t
  %t3 = "coll.copy"(%x2, %s, %t4) : (!d2, !d0, !t) -> !t
  %j = "coll.join"(%t3, %t4) : (!t, !t) -> !t
  // expected-error @+1 {{output #0 (%arg3 on device 0) [0, 4) holds sum(x0[0:4], x1[0:4], x1[0:4]) but should hold sum(x0[0:4], x1[0:4], x2[0:4]): x1 contributes 2 times; x2 is missing}}
  "coll.implements"(%a0, %a1, %a2, %b, %j) {op = "all_reduce", kind = "sum", devices = array<i64: 0, 1, 2>, to_device = 0, operandSegmentSizes = array<i32: 3, 1, 1>} : (!a, !a, !a, !a, !t) -> ()
  "coll.wait"(%j) : (!t) -> ()
  return
}

// -----
// y1 gets only its first half.
!a = memref<4xi32>
!d0 = memref<4xi32, #coll.device<0>>
!d1 = memref<4xi32, #coll.device<1>>
!l1 = memref<2xi32, strided<[1]>, #coll.device<1>>
!t = !coll.token
func.func @output_partly_written(%a0: !a, %a1: !a, %b0: !a, %b1: !a) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %x1 = memref.memory_space_cast %a1 : !a to !d1
  %y0 = memref.memory_space_cast %b0 : !a to !d0
  %y1 = memref.memory_space_cast %b1 : !a to !d1
  %r0 = "coll.alloc"() : () -> !d0
  %r1 = "coll.alloc"() : () -> !d1
  %c0 = "coll.copy"(%x1, %r0) : (!d1, !d0) -> !t
  %c1 = "coll.copy"(%x0, %r1) : (!d0, !d1) -> !t
  %k0 = "coll.combine"(%x0, %r0, %y0, %c0) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!d0, !d0, !d0, !t) -> !t
  %x1l = memref.subview %x1[0] [2] [1] : !d1 to !l1
  %r1l = memref.subview %r1[0] [2] [1] : !d1 to !l1
  %y1l = memref.subview %y1[0] [2] [1] : !d1 to !l1
  %k1 = "coll.combine"(%x1l, %r1l, %y1l, %c1) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!l1, !l1, !l1, !t) -> !t
  %j = "coll.join"(%k0, %k1) : (!t, !t) -> !t
  // expected-error @+1 {{output #1 (%arg3 on device 1) [2, 4) holds nothing (never written) but should hold sum(x0[2:4], x1[2:4]): it is never written}}
  "coll.implements"(%a0, %a1, %b0, %b1, %j) {op = "all_reduce", kind = "sum", devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 2, 1>} : (!a, !a, !a, !a, !t) -> ()
  "coll.wait"(%j) : (!t) -> ()
  return
}

// -----
// all_gather on 2 devices: y1 gets the two sources in swapped places.
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
func.func @gather_sources_swapped(%a0: !a, %a1: !a, %b0: !g, %b1: !g) {
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
  // expected-note @+1 {{last written by this coll.copy}}
  %c2 = "coll.copy"(%x1, %y1l) : (!d1, !l1) -> !t
  // expected-note @+1 {{last written by this coll.copy}}
  %c3 = "coll.copy"(%x0, %y1u) : (!d0, !u1) -> !t
  %j = "coll.join"(%c0, %c1, %c2, %c3) : (!t, !t, !t, !t) -> !t
  // expected-error @+2 {{output #1 (%arg3 on device 1) [0, 2) holds x1[0:2] but should hold x0[0:2]: it holds x1's data instead of x0's}}
  // expected-error @+1 {{output #1 (%arg3 on device 1) [2, 4) holds x0[0:2] but should hold x1[0:2]: it holds x0's data instead of x1's}}
  "coll.implements"(%a0, %a1, %b0, %b1, %j) {op = "all_gather", devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 2, 1>} : (!a, !a, !g, !g, !t) -> ()
  "coll.wait"(%j) : (!t) -> ()
  return
}


// -----
// max is idempotent, but a missing contribution is still wrong.
!a = memref<4xi32>
!d0 = memref<4xi32, #coll.device<0>>
!d1 = memref<4xi32, #coll.device<1>>
!d2 = memref<4xi32, #coll.device<2>>
!t = !coll.token
func.func @max_doubled_and_missing(%a0: !a, %a1: !a, %a2: !a, %b: !a) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %x1 = memref.memory_space_cast %a1 : !a to !d1
  %y = memref.memory_space_cast %b : !a to !d0
  %r1 = "coll.alloc"() : () -> !d0
  %c1 = "coll.copy"(%x1, %r1) : (!d1, !d0) -> !t
  // expected-note @+1 {{last written by this coll.combine}}
  %s = "coll.combine"(%x0, %r1, %r1, %y, %c1) {kind = "max", operandSegmentSizes = array<i32: 1, 2, 1, 1>} : (!d0, !d0, !d0, !d0, !t) -> !t
  // expected-error @+1 {{output #0 (%arg3 on device 0) [0, 4) holds max(x0[0:4], x1[0:4]) but should hold max(x0[0:4], x1[0:4], x2[0:4]): x2 is missing}}
  "coll.implements"(%a0, %a1, %a2, %b, %s) {op = "all_reduce", kind = "max", devices = array<i64: 0, 1, 2>, to_device = 0, operandSegmentSizes = array<i32: 3, 1, 1>} : (!a, !a, !a, !a, !t) -> ()
  "coll.wait"(%s) : (!t) -> ()
  return
}

// -----
// xor is not idempotent: a contribution counted twice cancels.
!a = memref<4xi32>
!d0 = memref<4xi32, #coll.device<0>>
!d1 = memref<4xi32, #coll.device<1>>
!t = !coll.token
func.func @xor_doubled_contribution(%a0: !a, %a1: !a, %b: !a) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %x1 = memref.memory_space_cast %a1 : !a to !d1
  %y = memref.memory_space_cast %b : !a to !d0
  %r1 = "coll.alloc"() : () -> !d0
  %c1 = "coll.copy"(%x1, %r1) : (!d1, !d0) -> !t
  // expected-note @+1 {{last written by this coll.combine}}
  %s = "coll.combine"(%x0, %r1, %r1, %y, %c1) {kind = "xor", operandSegmentSizes = array<i32: 1, 2, 1, 1>} : (!d0, !d0, !d0, !d0, !t) -> !t
  // expected-error @+1 {{output #0 (%arg2 on device 0) [0, 4) holds xor(x0[0:4], x1[0:4], x1[0:4]) but should hold xor(x0[0:4], x1[0:4]): x1 contributes 2 times}}
  "coll.implements"(%a0, %a1, %b, %s) {op = "all_reduce", kind = "xor", devices = array<i64: 0, 1>, to_device = 0, operandSegmentSizes = array<i32: 2, 1, 1>} : (!a, !a, !a, !t) -> ()
  "coll.wait"(%s) : (!t) -> ()
  return
}
