// coll-check-order orders the upstream ops that touch memory as the
// host-synchronous ops they are: each runs when the host reaches it, after
// what the host waited for (copies issued before it may still be running)
// and before everything issued later.
// RUN: coll-opt %s --split-input-file --verify-diagnostics --coll-check-order
!d0 = memref<8xf32, #coll.device<0>>
!d1 = memref<8xf32, #coll.device<1>>
func.func @store_while_a_copy_writes(%x: !d0, %y: !d1) {
  %c0 = arith.constant 0 : index
  %f = arith.constant 1.0 : f32
  // expected-note @+1 {{also written by this coll.copy, not ordered with it}}
  %t0 = "coll.copy"(%x, %y) : (!d0, !d1) -> !coll.token
  // expected-error @+1 {{memref.store writes %arg1[0, 1) on device 1, racing with another write}}
  memref.store %f, %y[%c0] : !d1
  "coll.wait"(%t0) : (!coll.token) -> ()
  return
}

// -----
!d0 = memref<8xf32, #coll.device<0>>
!d1 = memref<8xf32, #coll.device<1>>
func.func @store_and_load_around_a_copy(%x: !d0, %y: !d1) -> f32 {
  %c7 = arith.constant 7 : index
  %f = arith.constant 1.0 : f32
  memref.store %f, %x[%c7] : !d0
  %t0 = "coll.copy"(%x, %y) : (!d0, !d1) -> !coll.token
  "coll.wait"(%t0) : (!coll.token) -> ()
  %v = memref.load %y[%c7] : !d1
  return %v : f32
}

// -----
// A store outside the region a copy writes does not race with it.
!d0 = memref<4xf32, #coll.device<0>>
!d1 = memref<8xf32, #coll.device<1>>
!lo = memref<4xf32, strided<[1]>, #coll.device<1>>
func.func @store_beside_a_copy(%x: !d0, %y: !d1) {
  %c5 = arith.constant 5 : index
  %f = arith.constant 1.0 : f32
  %a = memref.subview %y[0] [4] [1] : !d1 to !lo
  %t0 = "coll.copy"(%x, %a) : (!d0, !lo) -> !coll.token
  memref.store %f, %y[%c5] : !d1
  "coll.wait"(%t0) : (!coll.token) -> ()
  return
}

// -----
// memref.copy and linalg.fill write scratch before a coll.copy reads it.
!d0 = memref<8xf32, #coll.device<0>>
!d1 = memref<8xf32, #coll.device<1>>
func.func @host_writes_scratch(%x: !d0, %y: !d1, %z: !d1) {
  %s = "coll.alloc"() : () -> !d0
  %u = "coll.alloc"() : () -> !d0
  %f = arith.constant 0.0 : f32
  memref.copy %x, %s : !d0 to !d0
  linalg.fill ins(%f : f32) outs(%u : !d0)
  %t0 = "coll.copy"(%s, %y) : (!d0, !d1) -> !coll.token
  %t1 = "coll.copy"(%u, %z) : (!d0, !d1) -> !coll.token
  "coll.wait"(%t0, %t1) : (!coll.token, !coll.token) -> ()
  return
}

// -----
// Function arguments are initialised memory; coll.alloc scratch is not.
!d0 = memref<8xf32, #coll.device<0>>
func.func @load_of_unwritten_scratch(%x: !d0) -> f32 {
  %c0 = arith.constant 0 : index
  %s = "coll.alloc"() : () -> !d0
  %a = memref.load %x[%c0] : !d0
  // expected-error @+1 {{memref.load reads %0[0, 1) on device 0, which is not written by the ops ordered before it}}
  %b = memref.load %s[%c0] : !d0
  %r = arith.addf %a, %b : f32
  return %r : f32
}

// -----
!d0 = memref<8xf32, #coll.device<0>>
!d1 = memref<8xf32, #coll.device<1>>
func.func @linalg_reads_a_buffer_in_flight(%x: !d0, %y: !d1, %z: !d1) {
  // expected-note @+1 {{written by this coll.copy, not ordered with the read}}
  %t0 = "coll.copy"(%x, %y) : (!d0, !d1) -> !coll.token
  // expected-error @+1 {{linalg.copy reads %arg1[0, 8) on device 1 while an unordered op may write it}}
  linalg.copy ins(%y : !d1) outs(%z : !d1)
  "coll.wait"(%t0) : (!coll.token) -> ()
  return
}

// -----
!d0 = memref<8xf32, #coll.device<0>>
!d1 = memref<8xf32, #coll.device<1>>
func.func @vector_store_over_a_copy_source(%x: !d0, %y: !d1) {
  %c2 = arith.constant 2 : index
  %v = arith.constant dense<1.0> : vector<4xf32>
  // expected-note @+1 {{read by this coll.copy, not ordered before the write}}
  %t0 = "coll.copy"(%x, %y) : (!d0, !d1) -> !coll.token
  // expected-error @+1 {{vector.store writes %arg0[2, 6) on device 0 while an unordered op may still read it}}
  vector.store %v, %x[%c2] : !d0, vector<4xf32>
  "coll.wait"(%t0) : (!coll.token) -> ()
  return
}

// -----
!d0 = memref<8xf32, #coll.device<0>>
!d1 = memref<8xf32, #coll.device<1>>
func.func private @consume(!d1)
func.func @call_while_a_copy_writes(%x: !d0, %y: !d1) {
  // expected-note @+2 {{written by this coll.copy, not ordered with the read}}
  // expected-note @+1 {{also written by this coll.copy, not ordered with it}}
  %t0 = "coll.copy"(%x, %y) : (!d0, !d1) -> !coll.token
  // expected-error @+2 {{func.call reads %arg1[0, 8) on device 1 while an unordered op may write it}}
  // expected-error @+1 {{func.call writes %arg1[0, 8) on device 1, racing with another write}}
  func.call @consume(%y) : (!d1) -> ()
  "coll.wait"(%t0) : (!coll.token) -> ()
  return
}

// -----
!d0 = memref<8xf32, #coll.device<0>>
!d1 = memref<8xf32, #coll.device<1>>
func.func @loop_stores_into_a_buffer_in_flight(%x: !d0, %y: !d1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %f = arith.constant 1.0 : f32
  // expected-note @+1 {{also written by this coll.copy}}
  %t0 = "coll.copy"(%x, %y) : (!d0, !d1) -> !coll.token
  // expected-error @+1 {{scf.for writes %arg1[0, 8) on device 1, racing with another write}}
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %f, %y[%i] : !d1
  }
  "coll.wait"(%t0) : (!coll.token) -> ()
  return
}

// -----
!d0 = memref<8xf32, #coll.device<0>>
!d1 = memref<8xf32, #coll.device<1>>
func.func @unknown_memory_op(%x: !d0, %y: !d1) {
  %t0 = "coll.copy"(%x, %y) : (!d0, !d1) -> !coll.token
  "coll.wait"(%t0) : (!coll.token) -> ()
  // expected-error @+1 {{coll-check-order does not know how 'bufferization.clone' accesses its memref operands}}
  %c = bufferization.clone %y : !d1 to !d1
  return
}

// -----
// A host op whose region is unknown (a dynamic offset) may touch all of its
// root buffer; a coll op there would be refused instead.
!d0 = memref<4xf32, #coll.device<0>>
!d1 = memref<8xf32, #coll.device<1>>
!lo = memref<4xf32, strided<[1]>, #coll.device<1>>
!dyn = memref<2xf32, strided<[1], offset: ?>, #coll.device<1>>
func.func @store_at_a_dynamic_offset(%x: !d0, %y: !d1, %z: !d0, %i: index) {
  %c0 = arith.constant 0 : index
  %f = arith.constant 1.0 : f32
  %a = memref.subview %y[0] [4] [1] : !d1 to !lo
  %b = memref.subview %y[%i] [2] [1] : !d1 to !dyn
  // expected-note @+1 {{also written by this coll.copy}}
  %t0 = "coll.copy"(%x, %a) : (!d0, !lo) -> !coll.token
  // expected-error @+1 {{memref.store writes %arg1 (somewhere in it) on device 1, racing with another write}}
  memref.store %f, %b[%c0] : !dyn
  memref.store %f, %z[%c0] : !d0
  "coll.wait"(%t0) : (!coll.token) -> ()
  return
}

// -----
// arith.select of two buffers touches neither; a store through its result
// may write either, so it races with a copy that writes one of them
// (before 2026-12-07 the select itself was refused: "does not know how").
!d1 = memref<8xf32, #coll.device<1>>
func.func @store_through_a_select_while_a_copy_writes(%x: !d1, %y: !d1, %z: !d1, %c: i1) {
  %c2 = arith.constant 2 : index
  %f = arith.constant 1.0 : f32
  // expected-note @+1 {{also written by this coll.copy, not ordered with it}}
  %t0 = "coll.copy"(%x, %y) : (!d1, !d1) -> !coll.token
  %s = arith.select %c, %z, %y : !d1
  // expected-error @+1 {{memref.store writes %arg1[2, 3) on device 1, racing with another write}}
  memref.store %f, %s[%c2] : !d1
  "coll.wait"(%t0) : (!coll.token) -> ()
  return
}

// -----
// The same store after the wait: ordered, whichever buffer it is; and a
// copy from the selected buffer's view, ordered after a store into it.
!d1 = memref<8xf32, #coll.device<1>>
!lo = memref<4xf32, strided<[1], offset: 4>, #coll.device<1>>
func.func @through_a_select_in_order(%x: !d1, %y: !d1, %z: !d1, %c: i1) {
  %c5 = arith.constant 5 : index
  %f = arith.constant 1.0 : f32
  %t0 = "coll.copy"(%x, %y) : (!d1, !d1) -> !coll.token
  "coll.wait"(%t0) : (!coll.token) -> ()
  %s = arith.select %c, %z, %y : !d1
  memref.store %f, %s[%c5] : !d1
  %hi = memref.subview %s[4] [4] [1] : !d1 to !lo
  %lo = memref.subview %x[4] [4] [1] : !d1 to !lo
  %t1 = "coll.copy"(%hi, %lo) : (!lo, !lo) -> !coll.token
  "coll.wait"(%t1) : (!coll.token) -> ()
  return
}

// -----
// A view of the selected buffer: a copy into its upper half may write
// either buffer's upper half (a load there races with it), not the lower.
!d1 = memref<8xf32, #coll.device<1>>
!lo = memref<4xf32, strided<[1], offset: 4>, #coll.device<1>>
func.func @a_view_of_a_select(%x: !d1, %y: !d1, %z: !d1, %c: i1) -> f32 {
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %s = arith.select %c, %z, %y : !d1
  %hi = memref.subview %s[4] [4] [1] : !d1 to !lo
  %src = memref.subview %x[4] [4] [1] : !d1 to !lo
  // expected-note @+1 {{written by this coll.copy, not ordered with the read}}
  %t0 = "coll.copy"(%src, %hi) : (!lo, !lo) -> !coll.token
  %a = memref.load %z[%c1] : !d1
  // expected-error @+1 {{memref.load reads %arg1[6, 7) on device 1 while an unordered op may write it}}
  %b = memref.load %y[%c6] : !d1
  "coll.wait"(%t0) : (!coll.token) -> ()
  %r = arith.addf %a, %b : f32
  return %r : f32
}

// -----
// scf.if yielding one of two buffers hands it on (its scf.yield touches
// neither): a fill of its result may write either, so it races with a
// copy that reads one of them (before 2026-12-08: "does not know how
// 'scf.yield' accesses its memref operands").
!d1 = memref<8xf32, #coll.device<1>>
func.func @fill_through_an_if_while_a_copy_reads(%x: !d1, %y: !d1, %z: !d1, %c: i1) {
  %f = arith.constant 1.0 : f32
  // expected-note @+1 {{read by this coll.copy, not ordered before the write}}
  %t0 = "coll.copy"(%x, %y) : (!d1, !d1) -> !coll.token
  %s = scf.if %c -> !d1 {
    scf.yield %z : !d1
  } else {
    scf.yield %x : !d1
  }
  // expected-error @+1 {{linalg.fill writes %arg0[0, 8) on device 1 while an unordered op may still read it}}
  linalg.fill ins(%f : f32) outs(%s : !d1)
  "coll.wait"(%t0) : (!coll.token) -> ()
  return
}
