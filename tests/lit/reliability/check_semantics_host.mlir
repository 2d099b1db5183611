// coll-check-semantics follows what upstream host ops write (the effects
// coll-check-order knows): a memref.copy or linalg.copy moves slices as
// coll.copy does; any other write (a store, a linalg op, a loop, a call)
// leaves its region holding a value the check does not follow, reported at
// the claim when an output depends on it, with a note at that op. The ops
// after a claim that no claim covers (writes after the final wait) count.
// Every program here is ordered (coll-check-order passes on each).
// RUN: coll-opt %s --split-input-file --verify-diagnostics --coll-check-semantics
// RUN: coll-opt %s --split-input-file --coll-check-order > /dev/null

// A store into scratch between the copy that fills it and the combine that
// reads it: y0[0] = x0[0] + 100.
!a = memref<4xi32>
!d0 = memref<4xi32, #coll.device<0>>
!d1 = memref<4xi32, #coll.device<1>>
!t = !coll.token
func.func @store_into_scratch(%a0: !a, %a1: !a, %b: !a) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %x1 = memref.memory_space_cast %a1 : !a to !d1
  %y = memref.memory_space_cast %b : !a to !d0
  %r1 = "coll.alloc"() : () -> !d0
  %c1 = "coll.copy"(%x1, %r1) : (!d1, !d0) -> !t
  "coll.wait"(%c1) : (!t) -> ()
  %c100 = arith.constant 100 : i32
  %i0 = arith.constant 0 : index
  // expected-note @+1 {{this memref.store wrote a value it depends on}}
  memref.store %c100, %r1[%i0] : !d0
  // expected-note @+1 {{last written by this coll.combine}}
  %s = "coll.combine"(%x0, %r1, %y) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (!d0, !d0, !d0) -> !t
  // expected-error @+1 {{output #0 (%arg2 on device 0) [0, 1) holds a value from a memref.store (not followed) but should hold sum(x0[0:1], x1[0:1]): it depends on what this memref.store writes (see the note); coll-check-semantics follows the values of coll.copy, coll.combine, memref.copy and linalg.copy only}}
  "coll.implements"(%a0, %a1, %b, %s) {op = "all_reduce", kind = "sum", devices = array<i64: 0, 1>, to_device = 0, operandSegmentSizes = array<i32: 2, 1, 1>} : (!a, !a, !a, !t) -> ()
  "coll.wait"(%s) : (!t) -> ()
  return
}

// -----
// A host copy clobbers input x0 with x1 before the program runs.
!a = memref<4xi32>
!d0 = memref<4xi32, #coll.device<0>>
!d1 = memref<4xi32, #coll.device<1>>
!t = !coll.token
func.func @copy_clobbers_input(%a0: !a, %a1: !a, %b: !a) {
  memref.copy %a1, %a0 : !a to !a
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %x1 = memref.memory_space_cast %a1 : !a to !d1
  %y = memref.memory_space_cast %b : !a to !d0
  %r1 = "coll.alloc"() : () -> !d0
  %c1 = "coll.copy"(%x1, %r1) : (!d1, !d0) -> !t
  // expected-note @+1 {{last written by this coll.combine}}
  %s = "coll.combine"(%x0, %r1, %y, %c1) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!d0, !d0, !d0, !t) -> !t
  // expected-error @+1 {{output #0 (%arg2 on device 0) [0, 4) holds sum(x1[0:4], x1[0:4]) but should hold sum(x0[0:4], x1[0:4]): x0 is missing; x1 contributes 2 times}}
  "coll.implements"(%a0, %a1, %b, %s) {op = "all_reduce", kind = "sum", devices = array<i64: 0, 1>, to_device = 0, operandSegmentSizes = array<i32: 2, 1, 1>} : (!a, !a, !a, !t) -> ()
  "coll.wait"(%s) : (!t) -> ()
  return
}

// -----
// A store into the output after the final wait: what the caller gets.
!a = memref<4xi32>
!d0 = memref<4xi32, #coll.device<0>>
!d1 = memref<4xi32, #coll.device<1>>
!t = !coll.token
func.func @store_after_final_wait(%a0: !a, %a1: !a, %b: !a) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %x1 = memref.memory_space_cast %a1 : !a to !d1
  %y = memref.memory_space_cast %b : !a to !d0
  %r1 = "coll.alloc"() : () -> !d0
  %c1 = "coll.copy"(%x1, %r1) : (!d1, !d0) -> !t
  %s = "coll.combine"(%x0, %r1, %y, %c1) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!d0, !d0, !d0, !t) -> !t
  // expected-error @+1 {{output #0 (%arg2 on device 0) [3, 4) holds a value from a memref.store (not followed) but should hold sum(x0[3:4], x1[3:4])}}
  "coll.implements"(%a0, %a1, %b, %s) {op = "all_reduce", kind = "sum", devices = array<i64: 0, 1>, to_device = 0, operandSegmentSizes = array<i32: 2, 1, 1>} : (!a, !a, !a, !t) -> ()
  "coll.wait"(%s) : (!t) -> ()
  %c7 = arith.constant 7 : i32
  %i3 = arith.constant 3 : index
  // expected-note @+1 {{last written by this memref.store}}
  memref.store %c7, %b[%i3] : !a
  return
}

// -----
// A linalg op overwrites the whole output after the final wait.
!a = memref<4xi32>
!d0 = memref<4xi32, #coll.device<0>>
!d1 = memref<4xi32, #coll.device<1>>
!t = !coll.token
func.func @linalg_after_final_wait(%a0: !a, %a1: !a, %b: !a) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %x1 = memref.memory_space_cast %a1 : !a to !d1
  %y = memref.memory_space_cast %b : !a to !d0
  %r1 = "coll.alloc"() : () -> !d0
  %c1 = "coll.copy"(%x1, %r1) : (!d1, !d0) -> !t
  %s = "coll.combine"(%x0, %r1, %y, %c1) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!d0, !d0, !d0, !t) -> !t
  // expected-error @+1 {{output #0 (%arg2 on device 0) [0, 4) holds a value from a linalg.fill (not followed) but should hold sum(x0[0:4], x1[0:4])}}
  "coll.implements"(%a0, %a1, %b, %s) {op = "all_reduce", kind = "sum", devices = array<i64: 0, 1>, to_device = 0, operandSegmentSizes = array<i32: 2, 1, 1>} : (!a, !a, !a, !t) -> ()
  "coll.wait"(%s) : (!t) -> ()
  %c0 = arith.constant 0 : i32
  // expected-note @+1 {{last written by this linalg.fill}}
  linalg.fill ins(%c0 : i32) outs(%b : !a)
  return
}

// -----
// A loop of stores into scratch (its accesses are known only as somewhere
// in the buffer): every element of it is not followed.
!a = memref<4xi32>
!d0 = memref<4xi32, #coll.device<0>>
!d1 = memref<4xi32, #coll.device<1>>
!t = !coll.token
func.func @loop_writes_scratch(%a0: !a, %a1: !a, %b: !a) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %x1 = memref.memory_space_cast %a1 : !a to !d1
  %y = memref.memory_space_cast %b : !a to !d0
  %r1 = "coll.alloc"() : () -> !d0
  %c1 = "coll.copy"(%x1, %r1) : (!d1, !d0) -> !t
  "coll.wait"(%c1) : (!t) -> ()
  %lo = arith.constant 0 : index
  %hi = arith.constant 2 : index
  %one = arith.constant 1 : index
  %v = arith.constant 5 : i32
  // expected-note @+1 {{this scf.for wrote a value it depends on}}
  scf.for %i = %lo to %hi step %one {
    memref.store %v, %r1[%i] : !d0
  }
  // expected-note @+1 {{last written by this coll.combine}}
  %s = "coll.combine"(%x0, %r1, %y) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (!d0, !d0, !d0) -> !t
  // expected-error @+1 {{output #0 (%arg2 on device 0) [0, 4) holds a value from a scf.for (not followed) but should hold sum(x0[0:4], x1[0:4])}}
  "coll.implements"(%a0, %a1, %b, %s) {op = "all_reduce", kind = "sum", devices = array<i64: 0, 1>, to_device = 0, operandSegmentSizes = array<i32: 2, 1, 1>} : (!a, !a, !a, !t) -> ()
  "coll.wait"(%s) : (!t) -> ()
  return
}

// -----
// A call may write every buffer it takes.
!a = memref<4xi32>
!d0 = memref<4xi32, #coll.device<0>>
!d1 = memref<4xi32, #coll.device<1>>
!t = !coll.token
func.func private @scribble(!a)
func.func @call_writes_input(%a0: !a, %a1: !a, %b: !a) {
  // expected-note @+1 {{this func.call wrote a value it depends on}}
  func.call @scribble(%a1) : (!a) -> ()
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %x1 = memref.memory_space_cast %a1 : !a to !d1
  %y = memref.memory_space_cast %b : !a to !d0
  %r1 = "coll.alloc"() : () -> !d0
  %c1 = "coll.copy"(%x1, %r1) : (!d1, !d0) -> !t
  // expected-note @+1 {{last written by this coll.combine}}
  %s = "coll.combine"(%x0, %r1, %y, %c1) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!d0, !d0, !d0, !t) -> !t
  // expected-error @+1 {{output #0 (%arg2 on device 0) [0, 4) holds a value from a func.call (not followed) but should hold sum(x0[0:4], x1[0:4])}}
  "coll.implements"(%a0, %a1, %b, %s) {op = "all_reduce", kind = "sum", devices = array<i64: 0, 1>, to_device = 0, operandSegmentSizes = array<i32: 2, 1, 1>} : (!a, !a, !a, !t) -> ()
  "coll.wait"(%s) : (!t) -> ()
  return
}

// -----
// An unclaimed coll.copy after the final wait overwrites half the output
// (followed: it moves x1's first half there).
!a = memref<4xi32>
!d0 = memref<4xi32, #coll.device<0>>
!d1 = memref<4xi32, #coll.device<1>>
!h0 = memref<2xi32, strided<[1], offset: 2>, #coll.device<0>>
!l1 = memref<2xi32, strided<[1]>, #coll.device<1>>
!t = !coll.token
func.func @unclaimed_copy_after_final_wait(%a0: !a, %a1: !a, %b: !a) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %x1 = memref.memory_space_cast %a1 : !a to !d1
  %y = memref.memory_space_cast %b : !a to !d0
  %r1 = "coll.alloc"() : () -> !d0
  %c1 = "coll.copy"(%x1, %r1) : (!d1, !d0) -> !t
  %s = "coll.combine"(%x0, %r1, %y, %c1) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!d0, !d0, !d0, !t) -> !t
  // expected-error @+1 {{output #0 (%arg2 on device 0) [2, 4) holds x1[0:2] but should hold sum(x0[2:4], x1[2:4]): x0 is missing; x1 comes from x1[0:2] instead of x1[2:4] (the wrong slice)}}
  "coll.implements"(%a0, %a1, %b, %s) {op = "all_reduce", kind = "sum", devices = array<i64: 0, 1>, to_device = 0, operandSegmentSizes = array<i32: 2, 1, 1>} : (!a, !a, !a, !t) -> ()
  "coll.wait"(%s) : (!t) -> ()
  %yh = memref.subview %y[2] [2] [1] : !d0 to !h0
  %x1l = memref.subview %x1[0] [2] [1] : !d1 to !l1
  // expected-warning @+2 {{this coll.copy belongs to no coll.implements claim}}
  // expected-note @+1 {{last written by this coll.copy}}
  %c2 = "coll.copy"(%x1l, %yh) : (!l1, !h0) -> !t
  "coll.wait"(%c2) : (!t) -> ()
  return
}
