// What coll-spmd-to-global cannot expand into one clone per rank, as located
// errors: collectives in control flow (which may depend on the rank) but for
// scf.for loops with constant bounds (unrolled), several blocks, results,
// and collectives still on tensors.
// RUN: coll-opt %s --split-input-file --verify-diagnostics --coll-spmd-to-global

func.func @control_flow(%x: memref<4xf32>, %y: memref<4xf32>, %c: i1) attributes {coll.ranks = 2 : i64} {
  // expected-error @+1 {{'scf.if' holds collectives in its regions (control flow that may depend on the data or the rank); coll-spmd-to-global expands collectives at the top level and in scf.for loops with constant bounds (unrolled)}}
  scf.if %c {
    %t = "coll.all_reduce"(%y, %y) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 1, 1, 0>}
        : (memref<4xf32>, memref<4xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
  }
  memref.copy %x, %y : memref<4xf32> to memref<4xf32>
  return
}

// -----
// A trip count the data decides.
func.func @loop(%x: memref<4xf32>, %n: memref<index>) attributes {coll.ranks = 2 : i64} {
  %c0 = arith.constant 0 : index
  %c2 = memref.load %n[] : memref<index>
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'scf.for' holds collectives in its regions}}
  scf.for %i = %c0 to %c2 step %c1 {
    %t = "coll.all_reduce"(%x, %x) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 1, 1, 0>}
        : (memref<4xf32>, memref<4xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
  }
  %u = "coll.all_reduce"(%x, %x) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 1, 1, 0>}
      : (memref<4xf32>, memref<4xf32>) -> !coll.token
  "coll.wait"(%u) : (!coll.token) -> ()
  return
}

// -----
// expected-error @+1 {{coll-spmd-to-global expands straight-line SPMD functions; this one has 2 blocks (control flow)}}
func.func @blocks(%x: memref<4xf32>) attributes {coll.ranks = 2 : i64} {
  %c = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  cf.br ^next
^next:
  memref.store %c, %x[%c0] : memref<4xf32>
  %t = "coll.all_reduce"(%x, %x) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 1, 1, 0>}
      : (memref<4xf32>, memref<4xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}

// -----
func.func @results(%x: memref<4xf32>) -> memref<4xf32> attributes {coll.ranks = 2 : i64} {
  %y = memref.alloc() : memref<4xf32>
  %t = "coll.all_reduce"(%x, %y) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 1, 1, 0>}
      : (memref<4xf32>, memref<4xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  // expected-error @+1 {{an SPMD function returns values; expected its results as output arguments (buffer-results-to-out-params)}}
  return %y : memref<4xf32>
}

// -----
func.func @tensors(%x: tensor<4xf32>) -> tensor<4xf32> attributes {coll.ranks = 2 : i64} {
  %e = tensor.empty() : tensor<4xf32>
  %n = linalg.negf ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{'coll.all_reduce' is in the tensor form; bufferize the SPMD function first (coll-bufferize, one-shot-bufferize)}}
  %tok, %r = "coll.all_reduce"(%n) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 1, 0, 0>}
      : (tensor<4xf32>) -> (!coll.token, tensor<4xf32>)
  return %r : tensor<4xf32>
}

// -----
func.func @tensor_only(%t: tensor<8xf32>) -> tensor<8xf32> attributes {coll.ranks = 4 : i64} {
  // expected-error @+1 {{'coll.all_reduce' is in the tensor form; bufferize the SPMD function first}}
  %tok, %r = "coll.all_reduce"(%t) {devices = array<i64: 0, 1, 2, 3>, kind = "sum", operandSegmentSizes = array<i32: 1, 0, 0>}
      : (tensor<8xf32>) -> (!coll.token, tensor<8xf32>)
  return %r : tensor<8xf32>
}

// -----

// Found by an outside attack: a bad coll.ranks was taken for the global view
// (the only error named the op's devices).
// expected-error @below {{coll.ranks = 0 : i64: expected the number of ranks of this SPMD function, a positive integer}}
func.func @zero(%x: memref<8xf32>) attributes {coll.ranks = 0 : i64} {
  return
}

// -----

// expected-error @below {{coll.ranks = "two": expected the number of ranks of this SPMD function, a positive integer}}
func.func @text(%x: memref<8xf32>) attributes {coll.ranks = "two"} {
  return
}

// -----
// Counted loops around collectives are unrolled, at most 4096 iterations in
// all: the outer loop's 100 copies of the inner one run out on the 41st.
func.func @too_many(%x: memref<8xi32>) attributes {coll.ranks = 2 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c100 = arith.constant 100 : index
  scf.for %i = %c0 to %c100 step %c1 {
    // expected-error @+1 {{'scf.for' of 100 iterations around collectives: the global view unrolls at most 4096 iterations in all}}
    scf.for %j = %c0 to %c100 step %c1 {
      %t = "coll.all_reduce"(%x, %x) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<8xi32>, memref<8xi32>) -> !coll.token
      "coll.wait"(%t) : (!coll.token) -> ()
    }
  }
  return
}
