// coll.permute (direct): one round of copies, x_s straight into y_t for every
// (source, target) pair; (s, s) is a local copy; an output no pair targets
// is not written. The claim carries the pairs and coll-check-semantics
// proves every lowering (the untouched outputs too).
// GEN: swap2 = coll-gen permute --devices 2 --shape 8
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/permute.swap2.mlir | FileCheck %s --check-prefix=SWAP2
// GEN: partial3 = coll-gen permute --devices 3 --shape 5 --pairs 0:2,2:1
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/permute.partial3.mlir | FileCheck %s --check-prefix=PARTIAL3
// GEN: ring4 = coll-gen permute --devices 4 --shape 2x3 --dtype i32 --strategy direct
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/permute.ring4.mlir | FileCheck %s --check-prefix=RING4
// GEN: ident3 = coll-gen permute --devices 3 --shape 5 --pairs 0:0,1:1,2:2
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/permute.ident3.mlir | FileCheck %s --check-prefix=IDENT3
// GEN: none3 = coll-gen permute --devices 3 --shape 5 --pairs none
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/permute.none3.mlir | FileCheck %s --check-prefix=NONE3
// GEN: empty = coll-gen permute --devices 4 --shape 0x3 --pairs shift:2
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/permute.empty.mlir | FileCheck %s --check-prefix=EMPTY
// GEN: proved = coll-gen permute --devices 4 --shape 6 --pairs 3:0,1:2
// RUN: coll-opt --pass-pipeline='builtin.module(coll-lower-collectives,coll-check-order,coll-check-semantics)' < %S/Inputs/gen/permute.proved.mlir | FileCheck %s --check-prefix=PROVED
// GEN: proved2 = coll-gen permute --devices 3 --shape 2x2 --pairs 2:0,0:1,1:2
// RUN: coll-opt --pass-pipeline='builtin.module(coll-lower-collectives,coll-check-order,coll-check-semantics)' < %S/Inputs/gen/permute.proved2.mlir | FileCheck %s --check-prefix=PROVED
// Upstream mlir-opt knows the op from the IRDL file alone:
// GEN: irdl = coll-gen permute --devices 3 --shape 4 --pairs 0:2
// RUN: %mlir-opt --irdl-file=%irdl < %S/Inputs/gen/permute.irdl.mlir | FileCheck %s --check-prefix=IRDL
// The verifier's refusals (this file's own chunks):
// RUN: coll-opt %s --split-input-file --verify-diagnostics
// RUN: not coll-gen permute --devices 3 --shape 4 --pairs 0:1,2:1 2>&1 | FileCheck %s --check-prefix=GENDUP
// RUN: not coll-gen permute --devices 3 --shape 4 --pairs 0:x 2>&1 | FileCheck %s --check-prefix=GENBAD
// RUN: not coll-gen permute --devices 3 --shape 4 --pairs 0:99999999999999999999 2>&1 | FileCheck %s --check-prefix=GENBIG

// N = 2, the default pairs (a ring shift by one): a swap.
// SWAP2-LABEL: func.func @permute
// SWAP2: %[[X0:.*]] = memref.memory_space_cast %arg0 : memref<8xf32> to memref<8xf32, #coll.device<0 : i64>>
// SWAP2: %[[X1:.*]] = memref.memory_space_cast %arg1 : memref<8xf32> to memref<8xf32, #coll.device<1 : i64>>
// SWAP2: %[[Y0:.*]] = memref.memory_space_cast %arg2 : memref<8xf32> to memref<8xf32, #coll.device<0 : i64>>
// SWAP2: %[[Y1:.*]] = memref.memory_space_cast %arg3 : memref<8xf32> to memref<8xf32, #coll.device<1 : i64>>
// SWAP2: %[[A:.*]] = "coll.copy"(%[[X0]], %[[Y1]])
// SWAP2: %[[B:.*]] = "coll.copy"(%[[X1]], %[[Y0]])
// SWAP2-NOT: "coll.copy"
// SWAP2: %[[J:.*]] = "coll.join"(%[[A]], %[[B]])
// SWAP2: "coll.implements"(%arg0, %arg1, %arg2, %arg3, %[[J]]) {devices = array<i64: 0, 1>, lowered, op = "permute", operandSegmentSizes = array<i32: 2, 2, 1>, pairs = array<i64: 0, 1, 1, 0>}

// Partial: 0 -> 2, 2 -> 1; device 0 receives nothing, device 1 sends nothing.
// PARTIAL3-LABEL: func.func @permute
// PARTIAL3: %[[X0:.*]] = memref.memory_space_cast %arg0 {{.*}} #coll.device<0 : i64>>
// PARTIAL3: %[[X2:.*]] = memref.memory_space_cast %arg2 {{.*}} #coll.device<2 : i64>>
// PARTIAL3: %[[Y1:.*]] = memref.memory_space_cast %arg4 {{.*}} #coll.device<1 : i64>>
// PARTIAL3: %[[Y2:.*]] = memref.memory_space_cast %arg5 {{.*}} #coll.device<2 : i64>>
// PARTIAL3: "coll.copy"(%[[X0]], %[[Y2]]) : (memref<5xf32, #coll.device<0 : i64>>, memref<5xf32, #coll.device<2 : i64>>)
// PARTIAL3: "coll.copy"(%[[X2]], %[[Y1]]) : (memref<5xf32, #coll.device<2 : i64>>, memref<5xf32, #coll.device<1 : i64>>)
// PARTIAL3-NOT: "coll.copy"
// PARTIAL3: pairs = array<i64: 0, 2, 2, 1>

// N = 4 on 2x3 buffers (flattened once each): four copies, one per edge of the ring.
// RING4-COUNT-4: "coll.copy"({{.*}}) : (memref<6xi32, #coll.device<{{[0-3]}} : i64>>, memref<6xi32, #coll.device<{{[0-3]}} : i64>>)
// RING4-NOT: "coll.copy"
// RING4: pairs = array<i64: 0, 1, 1, 2, 2, 3, 3, 0>

// Identity pairs: a local copy on each device.
// IDENT3: "coll.copy"({{.*}}) : (memref<5xf32, #coll.device<0 : i64>>, memref<5xf32, #coll.device<0 : i64>>)
// IDENT3: "coll.copy"({{.*}}) : (memref<5xf32, #coll.device<1 : i64>>, memref<5xf32, #coll.device<1 : i64>>)
// IDENT3: "coll.copy"({{.*}}) : (memref<5xf32, #coll.device<2 : i64>>, memref<5xf32, #coll.device<2 : i64>>)
// IDENT3-NOT: "coll.copy"

// No pairs: nothing moves; the claim says so.
// NONE3-NOT: "coll.copy"
// NONE3: %[[J:.*]] = "coll.join"() : () -> !coll.token
// NONE3: "coll.implements"({{.*}}, %[[J]]) {devices = array<i64: 0, 1, 2>, lowered, op = "permute", operandSegmentSizes = array<i32: 3, 3, 1>, pairs = array<i64>}

// Empty buffers: no copy at all.
// EMPTY-NOT: "coll.copy"
// EMPTY: "coll.join"() : () -> !coll.token

// PROVED: "coll.implements"

// IRDL: "coll.permute"(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5) {devices = array<i64: 0, 1, 2>, operandSegmentSizes = array<i32: 3, 3, 0>, pairs = array<i64: 0, 2>}

// GENDUP: coll-gen: error: invalid --pairs '0:1,2:1': position 1 is the target of pairs #0 and #1; expected each device at most once as a target
// GENBAD: coll-gen: error: invalid --pairs '0:x'; expected source:target positions like 0:1,1:2, shift:K or none
// GENBIG: coll-gen: error: invalid --pairs '0:99999999999999999999': pair #0 (0, 99999999999999999999) names target position 99999999999999999999, outside the group of 3 devices

func.func @duplicate_source(%x0: memref<4xf32>, %x1: memref<4xf32>, %x2: memref<4xf32>, %y0: memref<4xf32>, %y1: memref<4xf32>, %y2: memref<4xf32>) {
  // expected-error @+1 {{position 0 is the source of pairs #0 and #1; expected each device at most once as a source}}
  %t = "coll.permute"(%x0, %x1, %x2, %y0, %y1, %y2) {devices = array<i64: 0, 1, 2>, pairs = array<i64: 0, 1, 0, 2>, operandSegmentSizes = array<i32: 3, 3, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
  return
}

// -----
func.func @duplicate_target(%x0: memref<4xf32>, %x1: memref<4xf32>, %x2: memref<4xf32>, %y0: memref<4xf32>, %y1: memref<4xf32>, %y2: memref<4xf32>) {
  // expected-error @+1 {{position 2 is the target of pairs #0 and #2; expected each device at most once as a target}}
  %t = "coll.permute"(%x0, %x1, %x2, %y0, %y1, %y2) {devices = array<i64: 0, 1, 2>, pairs = array<i64: 0, 2, 2, 0, 1, 2>, operandSegmentSizes = array<i32: 3, 3, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
  return
}

// -----
// Positions, not device ids: devices 5 and 7 are positions 0 and 1.
func.func @outside_the_group(%x0: memref<4xf32>, %x1: memref<4xf32>, %y0: memref<4xf32>, %y1: memref<4xf32>) {
  // expected-error @+1 {{pair #0 (0, 5) names target position 5, outside the group of 2 devices; expected 0 <= position < 2 (positions in 'devices')}}
  %t = "coll.permute"(%x0, %x1, %y0, %y1) {devices = array<i64: 5, 7>, pairs = array<i64: 0, 5>, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
  return
}

// -----
func.func @negative_position(%x0: memref<4xf32>, %x1: memref<4xf32>, %y0: memref<4xf32>, %y1: memref<4xf32>) {
  // expected-error @+1 {{pair #1 (-1, 0) names source position -1, outside the group of 2 devices}}
  %t = "coll.permute"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, pairs = array<i64: 0, 1, -1, 0>, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
  return
}

// -----
func.func @odd_pairs(%x0: memref<4xf32>, %x1: memref<4xf32>, %y0: memref<4xf32>, %y1: memref<4xf32>) {
  // expected-error @+1 {{'pairs' holds 3 values, an odd count; expected (source, target) pairs: array<i64: s0, t0, s1, t1, ...>}}
  %t = "coll.permute"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, pairs = array<i64: 0, 1, 1>, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
  return
}

// -----
func.func @pairs_of_i32(%x0: memref<4xf32>, %x1: memref<4xf32>, %y0: memref<4xf32>, %y1: memref<4xf32>) {
  // expected-error @+1 {{'pairs' must be an array<i64: s0, t0, s1, t1, ...> of (source, target) positions in 'devices'}}
  %t = "coll.permute"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, pairs = array<i32: 0, 1>, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
  return
}

// -----
func.func @no_pairs(%x0: memref<4xf32>, %x1: memref<4xf32>, %y0: memref<4xf32>, %y1: memref<4xf32>) {
  // expected-error @+1 {{attribute "pairs" is expected but not provided}}
  %t = "coll.permute"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
  return
}

// -----
// No in-place form: a device that sends and receives in the one round
// would overwrite what it still sends.
func.func @in_place(%x0: memref<4xf32>, %x1: memref<4xf32>) {
  // expected-error @+1 {{output #0 is also input #0; coll.permute has no in-place form, expected distinct buffers}}
  %t = "coll.permute"(%x0, %x1, %x0, %x1) {devices = array<i64: 0, 1>, pairs = array<i64: 0, 1, 1, 0>, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
  return
}

// -----
// SPMD form: the pairs are positions in the group, checked against its size.
func.func @spmd_outside(%x: memref<4xf32>, %y: memref<4xf32>) attributes {coll.ranks = 2 : i64} {
  // expected-error @+1 {{pair #0 (1, 2) names target position 2, outside the group of 2 devices}}
  %t = "coll.permute"(%x, %y) {devices = array<i64: 0, 1>, pairs = array<i64: 1, 2>, operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<4xf32>, memref<4xf32>) -> !coll.token
  return
}

// -----
// A valid one, with devices that are not 0..N-1 (positions 0, 1, 2 are
// devices 3, 1, 0).
func.func @valid(%x0: memref<4xf32>, %x1: memref<4xf32>, %x2: memref<4xf32>, %y0: memref<4xf32>, %y1: memref<4xf32>, %y2: memref<4xf32>) {
  %t = "coll.permute"(%x0, %x1, %x2, %y0, %y1, %y2) {devices = array<i64: 3, 1, 0>, pairs = array<i64: 0, 2, 2, 1>, operandSegmentSizes = array<i32: 3, 3, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
