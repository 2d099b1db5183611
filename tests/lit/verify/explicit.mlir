// Every check of the coll verifier on the explicit level.
// RUN: coll-opt %s --split-input-file --verify-diagnostics

func.func @alloc_without_device() {
  // expected-error @+1 {{coll.alloc result of type memref<8xf32> has no device; expected a memref in memory space #coll.device<i>}}
  %r = "coll.alloc"() : () -> memref<8xf32>
  return
}

// -----
module attributes {coll.num_devices = 2 : i64} {
  func.func @alloc_out_of_range() {
    // expected-error @+1 {{coll.alloc result device id 5 is out of range; expected 0 <= id < 2}}
    %r = "coll.alloc"() : () -> memref<8xf32, #coll.device<5>>
    return
  }
}

// -----
func.func @copy_shapes(%a: memref<8xf32, #coll.device<0>>, %b: memref<4xf32, #coll.device<1>>) {
  // expected-error @+1 {{copy source memref<8xf32> and target memref<4xf32> differ; expected the same shape and element type}}
  %t = "coll.copy"(%a, %b) : (memref<8xf32, #coll.device<0>>, memref<4xf32, #coll.device<1>>) -> !coll.token
  return
}

// -----
func.func @copy_types(%a: memref<8xf32, #coll.device<0>>, %b: memref<8xi32, #coll.device<1>>) {
  // expected-error @+1 {{copy source memref<8xf32> and target memref<8xi32> differ}}
  %t = "coll.copy"(%a, %b) : (memref<8xf32, #coll.device<0>>, memref<8xi32, #coll.device<1>>) -> !coll.token
  return
}

// -----
func.func @copy_unplaced(%a: memref<8xf32>, %b: memref<8xf32, #coll.device<1>>) {
  // expected-error @+1 {{copy source of type memref<8xf32> has no device}}
  %t = "coll.copy"(%a, %b) : (memref<8xf32>, memref<8xf32, #coll.device<1>>) -> !coll.token
  return
}

// -----
func.func @copy_dynamic(%a: memref<?xf32, #coll.device<0>>, %b: memref<?xf32, #coll.device<1>>) {
  // expected-error @+1 {{copy source has a dynamic shape; dynamic shapes are not supported yet}}
  %t = "coll.copy"(%a, %b) : (memref<?xf32, #coll.device<0>>, memref<?xf32, #coll.device<1>>) -> !coll.token
  return
}

// -----
func.func @combine_two_devices(%a: memref<8xf32, #coll.device<0>>, %b: memref<8xf32, #coll.device<1>>, %o: memref<8xf32, #coll.device<0>>) {
  // expected-error @+1 {{combine touches devices [0, 1]; expected all its buffers on one device}}
  %t = "coll.combine"(%a, %b, %o) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (memref<8xf32, #coll.device<0>>, memref<8xf32, #coll.device<1>>, memref<8xf32, #coll.device<0>>) -> !coll.token
  return
}

// -----
func.func @combine_shapes(%a: memref<8xf32, #coll.device<0>>, %b: memref<8xf32, #coll.device<0>>, %o: memref<4xf32, #coll.device<0>>) {
  // expected-error @+1 {{combine lhs is memref<8xf32> but the output is memref<4xf32>; expected the same shape and element type}}
  %t = "coll.combine"(%a, %b, %o) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (memref<8xf32, #coll.device<0>>, memref<8xf32, #coll.device<0>>, memref<4xf32, #coll.device<0>>) -> !coll.token
  return
}

// -----
// A partial result in the accumulator type (f32 for bf16): the lhs and the
// output may hold it; the rhs (the contributions) hold the element type.
func.func @combine_partial_f32(%a: memref<8xbf16, #coll.device<0>>, %b: memref<8xbf16, #coll.device<0>>, %p: memref<8xf32, #coll.device<0>>, %o: memref<8xbf16, #coll.device<0>>) {
  %t = "coll.combine"(%a, %b, %p) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (memref<8xbf16, #coll.device<0>>, memref<8xbf16, #coll.device<0>>, memref<8xf32, #coll.device<0>>) -> !coll.token
  %u = "coll.combine"(%p, %b, %o, %t) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (memref<8xf32, #coll.device<0>>, memref<8xbf16, #coll.device<0>>, memref<8xbf16, #coll.device<0>>, !coll.token) -> !coll.token
  "coll.wait"(%u) : (!coll.token) -> ()
  return
}

// -----
func.func @combine_partial_in_rhs(%a: memref<8xbf16, #coll.device<0>>, %p: memref<8xf32, #coll.device<0>>, %o: memref<8xbf16, #coll.device<0>>) {
  // expected-error @+1 {{combine lhs is memref<8xbf16> but rhs #0 is memref<8xf32>; expected the same shape and element type}}
  %t = "coll.combine"(%a, %p, %o) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (memref<8xbf16, #coll.device<0>>, memref<8xf32, #coll.device<0>>, memref<8xbf16, #coll.device<0>>) -> !coll.token
  return
}

// -----
func.func @combine_f32_has_no_wider_partial(%p: memref<8xf64, #coll.device<0>>, %b: memref<8xf32, #coll.device<0>>, %o: memref<8xf32, #coll.device<0>>) {
  // expected-error @+1 {{combine lhs is memref<8xf64> but rhs #0 is memref<8xf32>; expected the same shape and element type}}
  %t = "coll.combine"(%p, %b, %o) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (memref<8xf64, #coll.device<0>>, memref<8xf32, #coll.device<0>>, memref<8xf32, #coll.device<0>>) -> !coll.token
  return
}

// -----
func.func @combine_bitwise_float(%a: memref<8xf16, #coll.device<0>>, %o: memref<8xf16, #coll.device<0>>) {
  // expected-error @+1 {{bitwise reduction kind 'and' needs an integer or i1 element type, got f16}}
  %t = "coll.combine"(%a, %o) {kind = "and", operandSegmentSizes = array<i32: 1, 0, 1, 0>} : (memref<8xf16, #coll.device<0>>, memref<8xf16, #coll.device<0>>) -> !coll.token
  return
}

// -----
func.func @token_from_argument(%a: memref<8xf32, #coll.device<0>>, %b: memref<8xf32, #coll.device<1>>, %dep: !coll.token) {
  // expected-error @+1 {{token operand is a block argument; expected a token produced by a coll async op}}
  %t = "coll.copy"(%a, %b, %dep) : (memref<8xf32, #coll.device<0>>, memref<8xf32, #coll.device<1>>, !coll.token) -> !coll.token
  return
}

// -----
func.func private @make_token() -> !coll.token
func.func @token_from_call(%a: memref<8xf32, #coll.device<0>>, %b: memref<8xf32, #coll.device<1>>) {
  %dep = func.call @make_token() : () -> !coll.token
  // expected-error @+1 {{token operand comes from 'func.call'; expected a token produced by coll.all_reduce, coll.reduce_scatter, coll.all_gather, coll.reduce, coll.broadcast, coll.all_to_all, coll.permute, coll.copy, coll.combine, coll.join}}
  %t = "coll.join"(%dep) : (!coll.token) -> !coll.token
  return
}

// -----
func.func @wait_on_argument(%dep: !coll.token) {
  // expected-error @+1 {{token operand is a block argument}}
  "coll.wait"(%dep) : (!coll.token) -> ()
  return
}

// -----
// A combine reading a buffer of another device through a peer view needs
// coll.peer_access on the module.
func.func @peer_read_without_peer_access(%a: memref<8xf32, #coll.device<0>>, %b: memref<8xf32, #coll.device<1>>) {
  %p = memref.memory_space_cast %b : memref<8xf32, #coll.device<1>> to memref<8xf32, #coll.device<0>>
  // expected-error @+1 {{combine on device 0 reaches its rhs #0 in the memory of device 1 (a peer view); that needs peer access: expected the module attribute 'coll.peer_access', or a buffer on device 0}}
  %t = "coll.combine"(%a, %p, %a) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (memref<8xf32, #coll.device<0>>, memref<8xf32, #coll.device<0>>, memref<8xf32, #coll.device<0>>) -> !coll.token
  return
}

// -----
module attributes {coll.peer_access} {
  func.func @peer_read_with_peer_access(%a: memref<8xf32, #coll.device<0>>, %b: memref<8xf32, #coll.device<1>>) {
    %p = memref.memory_space_cast %b : memref<8xf32, #coll.device<1>> to memref<8xf32, #coll.device<0>>
    %t = "coll.combine"(%a, %p, %a) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (memref<8xf32, #coll.device<0>>, memref<8xf32, #coll.device<0>>, memref<8xf32, #coll.device<0>>) -> !coll.token
    return
  }
}
