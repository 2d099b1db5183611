// A coll.wait (or coll.join) of a collective's token in a region the
// collective is not in (scf.if, scf.for, scf.index_switch, ...) is refused
// at the wait: the region may run it never, or again (coll-spmd-to-global
// aborted on one, "operation destroyed but still has uses", LLVM 22). In
// the collective's block (an scf.for body with the collective, the top
// level) it is the program's order.
// RUN: coll-opt %s --split-input-file --verify-diagnostics

func.func @in_a_branch(%x: memref<8xf32>, %y: memref<8xf32>, %c: i1) attributes {coll.ranks = 2 : i64} {
  %t = "coll.all_reduce"(%x, %y) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<8xf32>, memref<8xf32>) -> !coll.token
  scf.if %c {
    // expected-error @+1 {{'coll.wait' in 'scf.if' takes the token of a coll.all_reduce made outside it (a region may run it never, or again); expected it in the collective's block}}
    "coll.wait"(%t) : (!coll.token) -> ()
  }
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}

// -----
func.func @joined_in_a_switch(%x0: memref<8xf32>, %x1: memref<8xf32>, %y0: memref<8xf32>, %y1: memref<8xf32>, %i: index) {
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  scf.index_switch %i
  case 0 {
    // expected-error @+1 {{'coll.join' in 'scf.index_switch' takes the token of a coll.all_reduce}}
    %j = "coll.join"(%t) : (!coll.token) -> !coll.token
    "coll.wait"(%j) : (!coll.token) -> ()
    scf.yield
  }
  default {
  }
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}

// -----
// The loop's own collective, waited in its body: accepted.
func.func @in_a_loop(%x: memref<8xf32>, %y: memref<8xf32>) attributes {coll.ranks = 2 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.for %k = %c0 to %c2 step %c1 {
    %t = "coll.all_reduce"(%x, %y) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<8xf32>, memref<8xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
  }
  return
}

// -----
func.func @in_a_loop_of_its_own(%x: memref<8xf32>, %y: memref<8xf32>) attributes {coll.ranks = 2 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = "coll.all_reduce"(%x, %y) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<8xf32>, memref<8xf32>) -> !coll.token
  scf.for %k = %c0 to %c1 step %c1 {
    // expected-error @+1 {{'coll.wait' in 'scf.for' takes the token of a coll.all_reduce made outside it}}
    "coll.wait"(%t) : (!coll.token) -> ()
  }
  return
}
