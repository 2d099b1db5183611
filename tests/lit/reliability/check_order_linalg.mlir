// coll-check-order knows every linalg structured op's accesses from its
// destination-passing structure (ir/structured.py): the inputs and inits
// its body uses are read, its inits written. Each op below runs while a
// coll.copy still writes one of its operands: the error says which access
// races. A linalg op without that structure (no body ending in a yield) is
// refused, named.
// RUN: coll-opt %s --split-input-file --verify-diagnostics --coll-check-order
!d0 = memref<8xf32, #coll.device<0>>
!d1 = memref<8xf32, #coll.device<1>>
func.func @map_reads_its_inputs(%x: !d0, %y: !d1, %z: !d1) {
  // expected-note @+1 {{written by this coll.copy, not ordered with the read}}
  %t0 = "coll.copy"(%x, %y) : (!d0, !d1) -> !coll.token
  // expected-error @+1 {{linalg.map reads %arg1[0, 8) on device 1 while an unordered op may write it}}
  linalg.map { math.exp } ins(%y : !d1) outs(%z : !d1)
  "coll.wait"(%t0) : (!coll.token) -> ()
  return
}

// -----
// map's init has no block argument: written, not read (no error for an
// unwritten coll.alloc).
!d1 = memref<8xf32, #coll.device<1>>
func.func @map_writes_its_init(%y: !d1) {
  %s = "coll.alloc"() : () -> !d1
  linalg.map { math.absf } ins(%y : !d1) outs(%s : !d1)
  linalg.copy ins(%s : !d1) outs(%y : !d1)
  return
}

// -----
!d0 = memref<8xf32, #coll.device<0>>
!d1 = memref<8xf32, #coll.device<1>>
!s1 = memref<f32, #coll.device<1>>
func.func @reduce_reads_its_accumulator(%x: !d0, %y: !d1) {
  %acc = "coll.alloc"() : () -> !s1
  // expected-error @+1 {{linalg.reduce reads %0[0, 1) on device 1, which is not written by the ops ordered before it}}
  linalg.reduce { arith.addf } ins(%y : !d1) outs(%acc : !s1) dimensions = [0]
  return
}

// -----
!d0 = memref<8xf32, #coll.device<0>>
!m1 = memref<2x4xf32, #coll.device<1>>
!t1 = memref<4x2xf32, #coll.device<1>>
func.func @transpose_writes_its_init(%a: !m1, %b: !t1, %x: !d0) {
  %flat = memref.collapse_shape %b [[0, 1]] : !t1 into memref<8xf32, #coll.device<1>>
  // expected-note @+1 {{also written by this coll.copy, not ordered with it}}
  %t0 = "coll.copy"(%x, %flat) : (!d0, memref<8xf32, #coll.device<1>>) -> !coll.token
  // expected-error @+1 {{linalg.transpose writes %arg1[0, 8) on device 1, racing with another write}}
  linalg.transpose ins(%a : !m1) outs(%b : !t1) permutation = [1, 0]
  "coll.wait"(%t0) : (!coll.token) -> ()
  return
}

// -----
!d0 = memref<4xf32, #coll.device<0>>
!v1 = memref<4xf32, #coll.device<1>>
!m1 = memref<2x4xf32, #coll.device<1>>
func.func @broadcast_reads_its_input(%x: !d0, %v: !v1, %m: !m1) {
  // expected-note @+1 {{written by this coll.copy, not ordered with the read}}
  %t0 = "coll.copy"(%x, %v) : (!d0, !v1) -> !coll.token
  // expected-error @+1 {{linalg.broadcast reads %arg1[0, 4) on device 1 while an unordered op may write it}}
  linalg.broadcast ins(%v : !v1) outs(%m : !m1) dimensions = [0]
  "coll.wait"(%t0) : (!coll.token) -> ()
  return
}

// -----
// A matmul reads its C (it accumulates); so does a dot.
!a1 = memref<2x4xf32, #coll.device<1>>
!b1 = memref<4x2xf32, #coll.device<1>>
!c1 = memref<2x2xf32, #coll.device<1>>
func.func @matmul_reads_its_init(%a: !a1, %b: !b1) {
  %c = "coll.alloc"() : () -> !c1
  // expected-error @+1 {{linalg.matmul reads %0[0, 4) on device 1, which is not written by the ops ordered before it}}
  linalg.matmul ins(%a, %b : !a1, !b1) outs(%c : !c1)
  return
}

// -----
!d0 = memref<8xf32, #coll.device<0>>
!d1 = memref<8xf32, #coll.device<1>>
!s1 = memref<f32, #coll.device<1>>
func.func @dot_reads_both_inputs(%x: !d0, %y: !d1, %z: !d1, %r: !s1) {
  // expected-note @+1 {{written by this coll.copy, not ordered with the read}}
  %t0 = "coll.copy"(%x, %z) : (!d0, !d1) -> !coll.token
  // expected-error @+1 {{linalg.dot reads %arg2[0, 8) on device 1 while an unordered op may write it}}
  linalg.dot ins(%y, %z : !d1, !d1) outs(%r : !s1)
  "coll.wait"(%t0) : (!coll.token) -> ()
  return
}

// -----
// An input the body never uses (reduce_window's window, which only shapes
// the loops) is not read: unwritten scratch there is no error.
#id = affine_map<(d0, d1) -> (d0)>
#win = affine_map<(d0, d1) -> (d1)>
!d1 = memref<8xf32, #coll.device<1>>
!w1 = memref<2xf32, #coll.device<1>>
func.func @generic_leaves_an_unused_input_alone(%y: !d1, %z: !d1) {
  %w = "coll.alloc"() : () -> !w1
  linalg.generic {indexing_maps = [#id, #win, #id], iterator_types = ["parallel", "reduction"]}
      ins(%y, %w : !d1, !w1) outs(%z : !d1) {
  ^bb0(%in: f32, %unused: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  }
  return
}

// -----
!d0 = memref<8xf32, #coll.device<0>>
!d1 = memref<8xf32, #coll.device<1>>
func.func @softmax_is_not_structured(%x: !d0, %y: !d1, %z: !d1) {
  %t0 = "coll.copy"(%x, %y) : (!d0, !d1) -> !coll.token
  "coll.wait"(%t0) : (!coll.token) -> ()
  // expected-error @+1 {{coll-check-order does not know how 'linalg.softmax' accesses its memref operands}}
  linalg.softmax dimension(0) ins(%y : !d1) outs(%z : !d1)
  return
}

// -----
// What a body loads counts too (a gather's body reads a buffer by index):
// somewhere in the buffer, racing with the copy into it (was not seen).
#id = affine_map<(i) -> (i)>
!d0 = memref<8xf32, #coll.device<0>>
!d1 = memref<8xf32, #coll.device<1>>
func.func @body_loads(%x: !d0, %y: !d1, %z: !d1) {
  // expected-note @+1 {{written by this coll.copy, not ordered with the read}}
  %t0 = "coll.copy"(%x, %y) : (!d0, !d1) -> !coll.token
  // expected-error @+1 {{linalg.generic reads %arg1[0, 8) on device 1 while an unordered op may write it}}
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]} outs(%z : !d1) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %v = memref.load %y[%i] : !d1
    linalg.yield %v : f32
  }
  "coll.wait"(%t0) : (!coll.token) -> ()
  return
}
