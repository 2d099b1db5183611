// Every check of the coll verifier on the collective level, as a located
// diagnostic.
// RUN: coll-opt %s --split-input-file --verify-diagnostics

func.func @zero_devices() {
  // expected-error @+1 {{expected at least one input buffer (zero devices)}}
  %t = "coll.all_reduce"() {kind = "sum", devices = array<i64>, operandSegmentSizes = array<i32: 0, 0, 0>} : () -> !coll.token
  return
}

// -----
func.func @devices_mismatch(%x0: memref<8xf32>, %y0: memref<8xf32>) {
  // expected-error @+1 {{'devices' names 2 devices but the op has 1 inputs}}
  %t = "coll.all_reduce"(%x0, %y0) {kind = "sum", devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<8xf32>, memref<8xf32>) -> !coll.token
  return
}

// -----
func.func @negative_device(%x0: memref<8xf32>, %y0: memref<8xf32>) {
  // expected-error @+1 {{input #0 device id -1 is out of range; expected 0 <= id < 1024}}
  %t = "coll.all_reduce"(%x0, %y0) {kind = "sum", devices = array<i64: -1>, operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<8xf32>, memref<8xf32>) -> !coll.token
  return
}

// -----
module attributes {coll.num_devices = 4 : i64} {
  func.func @device_out_of_range(%x0: memref<8xf32>, %x1: memref<8xf32>, %y0: memref<8xf32>, %y1: memref<8xf32>) {
    // expected-error @+1 {{input #1 device id 7 is out of range; expected 0 <= id < 4}}
    %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {kind = "sum", devices = array<i64: 0, 7>, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
    return
  }
}

// -----
func.func @repeated_device(%x0: memref<8xf32>, %x1: memref<8xf32>, %y0: memref<8xf32>, %y1: memref<8xf32>) {
  // expected-error @+1 {{device 1 is repeated (inputs #0 and #1); expected distinct devices}}
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {kind = "sum", devices = array<i64: 1, 1>, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  return
}

// -----
module attributes {coll.num_devices = 3 : i64} {
  func.func @target_out_of_range(%x0: memref<8xf32>, %x1: memref<8xf32>, %y: memref<8xf32>) {
    // expected-error @+1 {{destination device id 3 is out of range; expected 0 <= id < 3}}
    %t = "coll.all_reduce"(%x0, %x1, %y) {kind = "sum", devices = array<i64: 0, 1>, to_device = 3 : i64, operandSegmentSizes = array<i32: 2, 1, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
    return
  }
}

// -----
func.func @unknown_strategy(%x0: memref<8xf32>, %y0: memref<8xf32>) {
  // expected-error @+1 {{unknown strategy "direct" for all_reduce; expected one of: auto, naive, ring, all2all, rhd, tree}}
  %t = "coll.all_reduce"(%x0, %y0) {kind = "sum", devices = array<i64: 0>, strategy = "direct", operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<8xf32>, memref<8xf32>) -> !coll.token
  return
}

// -----
func.func @negative_threshold(%x0: memref<8xf32>, %y0: memref<8xf32>) {
  // expected-error @+1 {{'threshold' must be a non-negative integer (elements)}}
  %t = "coll.all_reduce"(%x0, %y0) {kind = "sum", devices = array<i64: 0>, threshold = -5 : i64, operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<8xf32>, memref<8xf32>) -> !coll.token
  return
}

// -----
func.func @too_few_outputs(%x0: memref<8xf32>, %x1: memref<8xf32>, %y0: memref<8xf32>) {
  // expected-error @+1 {{multi-device output expects 2 output buffer(s), got 1}}
  %t = "coll.all_reduce"(%x0, %x1, %y0) {kind = "sum", devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 1, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  return
}

// -----
func.func @single_device_two_outputs(%x0: memref<8xf32>, %x1: memref<8xf32>, %y0: memref<8xf32>, %y1: memref<8xf32>) {
  // expected-error @+1 {{single-device output (to_device) expects 1 output buffer(s), got 2}}
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {kind = "sum", devices = array<i64: 0, 1>, to_device = 0 : i64, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  return
}

// -----
func.func @dynamic_shape(%x0: memref<?xf32>, %y0: memref<?xf32>) {
  // expected-error @+1 {{dynamic shapes are not supported yet, expected a static shape}}
  %t = "coll.all_reduce"(%x0, %y0) {kind = "sum", devices = array<i64: 0>, operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<?xf32>, memref<?xf32>) -> !coll.token
  return
}

// -----
func.func @memory_space(%x0: memref<8xf32, #coll.device<0>>, %y0: memref<8xf32>) {
  // expected-error @+1 {{input #0 has memory space #coll.device<0 : i64>; collective-level buffers carry none}}
  %t = "coll.all_reduce"(%x0, %y0) {kind = "sum", devices = array<i64: 0>, operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<8xf32, #coll.device<0>>, memref<8xf32>) -> !coll.token
  return
}

// -----
func.func @strided(%x0: memref<8xf32, strided<[2]>>, %y0: memref<8xf32>) {
  // expected-error @+1 {{expected a contiguous layout (identity, or strided row-major with any offset)}}
  %t = "coll.all_reduce"(%x0, %y0) {kind = "sum", devices = array<i64: 0>, operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<8xf32, strided<[2]>>, memref<8xf32>) -> !coll.token
  return
}

// -----
func.func @output_shape(%x0: memref<8xf32>, %y0: memref<4xf32>) {
  // expected-error @+1 {{output #0 is memref<4xf32> but input #0 is memref<8xf32>; expected the same shape and element type on every device}}
  %t = "coll.all_reduce"(%x0, %y0) {kind = "sum", devices = array<i64: 0>, operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<8xf32>, memref<4xf32>) -> !coll.token
  return
}

// -----
func.func @output_type(%x0: memref<8xf32>, %y0: memref<8xf16>) {
  // expected-error @+1 {{output #0 is memref<8xf16> but input #0 is memref<8xf32>}}
  %t = "coll.all_reduce"(%x0, %y0) {kind = "sum", devices = array<i64: 0>, operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<8xf32>, memref<8xf16>) -> !coll.token
  return
}

// -----
func.func @in_place_other_device(%x0: memref<8xf32>, %x1: memref<8xf32>, %y1: memref<8xf32>) {
  // expected-error @+1 {{output #1 (device 1) is input #0 (device 0); in place, an output must be the input on its own device}}
  %t = "coll.all_reduce"(%x0, %x1, %y1, %x0) {kind = "sum", devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  return
}

// -----
func.func @repeated_output(%x0: memref<8xf32>, %x1: memref<8xf32>, %y: memref<8xf32>) {
  // expected-error @+1 {{an output buffer is repeated}}
  %t = "coll.all_reduce"(%x0, %x1, %y, %y) {kind = "sum", devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  return
}

// -----
func.func @bitwise_on_float(%x0: memref<8xf32>, %y0: memref<8xf32>) {
  // expected-error @+1 {{bitwise reduction kind 'xor' needs an integer or i1 element type, got f32}}
  %t = "coll.all_reduce"(%x0, %y0) {kind = "xor", devices = array<i64: 0>, operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<8xf32>, memref<8xf32>) -> !coll.token
  return
}

// -----
func.func @sum_on_i1(%x0: memref<8xi1>, %y0: memref<8xi1>) {
  // expected-error @+1 {{i1 buffers support only the bitwise kinds (and, or, xor), got 'sum'}}
  %t = "coll.all_reduce"(%x0, %y0) {kind = "sum", devices = array<i64: 0>, operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<8xi1>, memref<8xi1>) -> !coll.token
  return
}

// -----
func.func @unsupported_type(%x0: memref<8xindex>, %y0: memref<8xindex>) {
  // expected-error @+1 {{unsupported element type index; expected one of: f16, bf16, f8E4M3FN, f8E5M2, f32, f64, i1, i8, i16, i32, i64}}
  %t = "coll.all_reduce"(%x0, %y0) {kind = "sum", devices = array<i64: 0>, operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<8xindex>, memref<8xindex>) -> !coll.token
  return
}
