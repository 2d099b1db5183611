// The `order` attribute of a reducing collective: "canonical" (the default:
// every element sums the contributions in device order, the same bits for
// every strategy) or "any"; anything else, or on a collective that does not
// reduce, is a located error.
// RUN: coll-opt %s --split-input-file --verify-diagnostics

func.func @any_is_accepted(%x0: memref<8xf32>, %x1: memref<8xf32>, %y0: memref<8xf32>, %y1: memref<8xf32>, %z0: memref<4xf32>, %z1: memref<4xf32>) {
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {kind = "sum", devices = array<i64: 0, 1>, order = "any", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  %u = "coll.reduce_scatter"(%x0, %x1, %z0, %z1) {kind = "sum", devices = array<i64: 0, 1>, scatter_axis = 0 : i64, order = "canonical", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
  return
}

// -----
func.func @unknown_order(%x0: memref<8xf32>, %x1: memref<8xf32>, %y0: memref<8xf32>) {
  // expected-error @+1 {{unknown order "fast" for reduce; expected one of: canonical, any}}
  %t = "coll.reduce"(%x0, %x1, %y0) {kind = "sum", devices = array<i64: 0, 1>, root = 0 : i64, order = "fast", operandSegmentSizes = array<i32: 2, 1, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  return
}

// -----
func.func @order_not_a_string(%x0: memref<8xf32>, %y0: memref<8xf32>) {
  // expected-error @+1 {{unknown order 1 : i64 for all_reduce; expected one of: canonical, any}}
  %t = "coll.all_reduce"(%x0, %y0) {kind = "sum", devices = array<i64: 0>, order = 1 : i64, operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<8xf32>, memref<8xf32>) -> !coll.token
  return
}

// -----
func.func @order_on_a_gather(%x0: memref<4xf32>, %x1: memref<4xf32>, %y0: memref<8xf32>, %y1: memref<8xf32>) {
  // expected-error @+1 {{'order' applies to reducing collectives only; all_gather does not reduce}}
  %t = "coll.all_gather"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, gather_axis = 0 : i64, order = "any", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4xf32>, memref<4xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  return
}
