// The collective-level checks of reduce_scatter, all_gather, reduce,
// broadcast and all_to_all (and the deps of every collective), as located
// diagnostics.
// RUN: coll-opt %s --split-input-file --verify-diagnostics

func.func @scatter_not_divisible(%x0: memref<6x4xf32>, %x1: memref<6x4xf32>, %x2: memref<6x4xf32>, %x3: memref<6x4xf32>, %y0: memref<1x4xf32>, %y1: memref<1x4xf32>, %y2: memref<1x4xf32>, %y3: memref<1x4xf32>) {
  // expected-error @+1 {{scatter_axis 0 has size 6, which the 4 devices do not divide; expected a multiple of 4}}
  %t = "coll.reduce_scatter"(%x0, %x1, %x2, %x3, %y0, %y1, %y2, %y3) {kind = "sum", devices = array<i64: 0, 1, 2, 3>, scatter_axis = 0 : i64, operandSegmentSizes = array<i32: 4, 4, 0>} : (memref<6x4xf32>, memref<6x4xf32>, memref<6x4xf32>, memref<6x4xf32>, memref<1x4xf32>, memref<1x4xf32>, memref<1x4xf32>, memref<1x4xf32>) -> !coll.token
  return
}

// -----
func.func @scatter_axis_range(%x0: memref<8xf32>, %x1: memref<8xf32>, %y0: memref<4xf32>, %y1: memref<4xf32>) {
  // expected-error @+1 {{scatter_axis 1 is out of range for rank 1; expected 0 <= axis < 1}}
  %t = "coll.reduce_scatter"(%x0, %x1, %y0, %y1) {kind = "sum", devices = array<i64: 0, 1>, scatter_axis = 1 : i64, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
  return
}

// -----
func.func @scatter_output_shape(%x0: memref<8xf32>, %x1: memref<8xf32>, %y0: memref<8xf32>, %y1: memref<8xf32>) {
  // expected-error @+1 {{output #0 is memref<8xf32> but reduce_scatter over 2 devices of memref<8xf32> inputs gives memref<4xf32>; expected that shape}}
  %t = "coll.reduce_scatter"(%x0, %x1, %y0, %y1) {kind = "sum", devices = array<i64: 0, 1>, scatter_axis = 0 : i64, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  return
}

// -----
func.func @scatter_no_in_place(%x0: memref<4xf32>) {
  // expected-error @+1 {{output #0 is also input #0; coll.reduce_scatter has no in-place form, expected distinct buffers}}
  %t = "coll.reduce_scatter"(%x0, %x0) {kind = "sum", devices = array<i64: 0>, scatter_axis = 0 : i64, operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<4xf32>, memref<4xf32>) -> !coll.token
  return
}

// -----
func.func @gather_output_shape(%x0: memref<2x3xf32>, %x1: memref<2x3xf32>, %y0: memref<4x3xf32>, %y1: memref<4x3xf32>) {
  // expected-error @+1 {{output #0 is memref<4x3xf32> but all_gather over 2 devices of memref<2x3xf32> inputs gives memref<2x6xf32>; expected that shape}}
  %t = "coll.all_gather"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, gather_axis = 1 : i64, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<2x3xf32>, memref<2x3xf32>, memref<4x3xf32>, memref<4x3xf32>) -> !coll.token
  return
}

// -----
func.func @gather_no_axis(%x0: memref<2xf32>, %y0: memref<2xf32>) {
  // IRDL checks the attribute's kind.
  // expected-error @+1 {{expected base attribute 'builtin.integer' but got 'builtin.string'}}
  %t = "coll.all_gather"(%x0, %y0) {devices = array<i64: 0>, gather_axis = "x", operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<2xf32>, memref<2xf32>) -> !coll.token
  return
}

// -----
func.func @gather_in_place(%x0: memref<2xf32>) {
  // expected-error @+1 {{output #0 is also input #0; coll.all_gather has no in-place form, expected distinct buffers}}
  %t = "coll.all_gather"(%x0, %x0) {devices = array<i64: 0>, gather_axis = 0 : i64, operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<2xf32>, memref<2xf32>) -> !coll.token
  return
}

// -----
func.func @reduce_two_outputs(%x0: memref<4xf32>, %x1: memref<4xf32>, %y0: memref<4xf32>, %y1: memref<4xf32>) {
  // expected-error @+1 {{reduce expects 1 output buffer(s), got 2}}
  %t = "coll.reduce"(%x0, %x1, %y0, %y1) {kind = "sum", devices = array<i64: 0, 1>, root = 0 : i64, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
  return
}

// -----
func.func @reduce_no_root(%x0: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{'coll.reduce' op attribute "root" is expected but not provided}}
  %t = "coll.reduce"(%x0, %y) {kind = "sum", devices = array<i64: 0>, operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<4xf32>, memref<4xf32>) -> !coll.token
  return
}

// -----
module attributes {coll.num_devices = 4 : i64} {
  func.func @reduce_root_range(%x0: memref<4xf32>, %y: memref<4xf32>) {
    // expected-error @+1 {{root device id 9 is out of range; expected 0 <= id < 4}}
    %t = "coll.reduce"(%x0, %y) {kind = "sum", devices = array<i64: 0>, root = 9 : i64, operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<4xf32>, memref<4xf32>) -> !coll.token
    return
  }
}

// -----
func.func @reduce_in_place_wrong_device(%x0: memref<4xf32>, %x1: memref<4xf32>) {
  // expected-error @+1 {{output #0 (device 1) is input #0 (device 0); in place, an output must be the input on its own device}}
  %t = "coll.reduce"(%x0, %x1, %x0) {kind = "sum", devices = array<i64: 0, 1>, root = 1 : i64, operandSegmentSizes = array<i32: 2, 1, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
  return
}

// -----
func.func @reduce_bad_kind(%x0: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{bitwise reduction kind 'xor' needs an integer or i1 element type, got f32}}
  %t = "coll.reduce"(%x0, %y) {kind = "xor", devices = array<i64: 0>, root = 0 : i64, operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<4xf32>, memref<4xf32>) -> !coll.token
  return
}

// -----
func.func @broadcast_two_inputs(%x0: memref<4xf32>, %x1: memref<4xf32>, %y0: memref<4xf32>, %y1: memref<4xf32>) {
  // expected-error @+1 {{broadcast expects 1 input buffer(s), got 2}}
  %t = "coll.broadcast"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, root = 0 : i64, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
  return
}

// -----
func.func @broadcast_devices(%x: memref<4xf32>, %y0: memref<4xf32>, %y1: memref<4xf32>) {
  // expected-error @+1 {{'devices' names 1 devices but the op has 2 outputs; expected one device per output}}
  %t = "coll.broadcast"(%x, %y0, %y1) {devices = array<i64: 0>, root = 0 : i64, operandSegmentSizes = array<i32: 1, 2, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
  return
}

// -----
func.func @broadcast_in_place_wrong_device(%x: memref<4xf32>, %y0: memref<4xf32>) {
  // expected-error @+1 {{output #1 (device 1) is input #0 (device 0); in place, an output must be the input on its own device}}
  %t = "coll.broadcast"(%x, %y0, %x) {devices = array<i64: 0, 1>, root = 0 : i64, operandSegmentSizes = array<i32: 1, 2, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
  return
}

// -----
func.func @all_to_all_split(%x0: memref<3x2xf32>, %x1: memref<3x2xf32>, %y0: memref<3x2xf32>, %y1: memref<3x2xf32>) {
  // expected-error @+1 {{split_axis 0 has size 3, which the 2 devices do not divide; expected a multiple of 2}}
  %t = "coll.all_to_all"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, split_axis = 0 : i64, concat_axis = 1 : i64, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<3x2xf32>, memref<3x2xf32>, memref<3x2xf32>, memref<3x2xf32>) -> !coll.token
  return
}

// -----
func.func @all_to_all_shape(%x0: memref<4x2xf32>, %x1: memref<4x2xf32>, %y0: memref<4x2xf32>, %y1: memref<4x2xf32>) {
  // expected-error @+1 {{output #0 is memref<4x2xf32> but all_to_all over 2 devices of memref<4x2xf32> inputs gives memref<2x4xf32>; expected that shape}}
  %t = "coll.all_to_all"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, split_axis = 0 : i64, concat_axis = 1 : i64, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4x2xf32>, memref<4x2xf32>, memref<4x2xf32>, memref<4x2xf32>) -> !coll.token
  return
}

// -----
func.func @all_to_all_strategy(%x0: memref<2xf32>, %y0: memref<2xf32>) {
  // expected-error @+1 {{unknown strategy "ring" for all_to_all; expected one of: auto, direct}}
  %t = "coll.all_to_all"(%x0, %y0) {devices = array<i64: 0>, split_axis = 0 : i64, concat_axis = 0 : i64, strategy = "ring", operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<2xf32>, memref<2xf32>) -> !coll.token
  return
}

// -----
func.func @non_contiguous(%x0: memref<4xf32, strided<[2], offset: 8>>, %y0: memref<4xf32>) {
  // expected-error @+1 {{input #0 has layout strided<[2], offset: 8>; expected a contiguous layout}}
  %t = "coll.reduce"(%x0, %y0) {kind = "sum", devices = array<i64: 0>, root = 0 : i64, operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<4xf32, strided<[2], offset: 8>>, memref<4xf32>) -> !coll.token
  return
}

// -----
func.func private @make_token() -> !coll.token
func.func @deps_from_call(%x0: memref<4xf32>, %y0: memref<4xf32>) {
  %d = func.call @make_token() : () -> !coll.token
  // expected-error @+1 {{token operand comes from 'func.call'; expected a token produced by coll.all_reduce}}
  %t = "coll.all_reduce"(%x0, %y0, %d) {kind = "sum", devices = array<i64: 0>, operandSegmentSizes = array<i32: 1, 1, 1>} : (memref<4xf32>, memref<4xf32>, !coll.token) -> !coll.token
  return
}

// -----
// Valid: contiguous strided subviews at an offset (IRDL binds one type per
// group, so every input has that type), and deps chaining two collectives.
func.func @ok(%x0: memref<4xf32, strided<[1], offset: 128>>, %x1: memref<4xf32, strided<[1], offset: 128>>, %y0: memref<4xf32>, %y1: memref<4xf32>, %z0: memref<8xf32>, %z1: memref<8xf32>) {
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {kind = "sum", devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4xf32, strided<[1], offset: 128>>, memref<4xf32, strided<[1], offset: 128>>, memref<4xf32>, memref<4xf32>) -> !coll.token
  %u = "coll.all_gather"(%y0, %y1, %z0, %z1, %t) {devices = array<i64: 0, 1>, gather_axis = 0 : i64, operandSegmentSizes = array<i32: 2, 2, 1>} : (memref<4xf32>, memref<4xf32>, memref<8xf32>, memref<8xf32>, !coll.token) -> !coll.token
  "coll.wait"(%u) : (!coll.token) -> ()
  return
}

// -----
func.func @broadcast_repeated_device(%x: memref<4xf32>, %y0: memref<4xf32>, %y1: memref<4xf32>) {
  // expected-error @+1 {{device 1 is repeated (outputs #0 and #1); expected distinct devices}}
  %t = "coll.broadcast"(%x, %y0, %y1) {devices = array<i64: 1, 1>, root = 0 : i64, operandSegmentSizes = array<i32: 1, 2, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
  return
}

// -----
func.func @dynamic_output(%x0: memref<4xf32>, %x1: memref<4xf32>, %y0: memref<?xf32>, %y1: memref<?xf32>) {
  // expected-error @+1 {{output #0 has dynamic shape memref<?xf32>; dynamic shapes are not supported yet, expected a static shape}}
  %t = "coll.all_gather"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, gather_axis = 0 : i64, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4xf32>, memref<4xf32>, memref<?xf32>, memref<?xf32>) -> !coll.token
  return
}
