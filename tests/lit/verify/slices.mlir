// Slices out of bounds are rejected (by upstream's memref.subview verifier,
// which coll relies on) with a located diagnostic.
// RUN: coll-opt %s --verify-diagnostics
func.func @slice_out_of_bounds(%a: memref<8xf32, #coll.device<0>>, %b: memref<4xf32, #coll.device<1>>) {
  // expected-error @+1 {{slice along dimension 0 runs out-of-bounds: 9 >= 8}}
  %s = memref.subview %a[6] [4] [1] : memref<8xf32, #coll.device<0>> to memref<4xf32, strided<[1], offset: 6>, #coll.device<0>>
  %t = "coll.copy"(%s, %b) : (memref<4xf32, strided<[1], offset: 6>, #coll.device<0>>, memref<4xf32, #coll.device<1>>) -> !coll.token
  return
}
