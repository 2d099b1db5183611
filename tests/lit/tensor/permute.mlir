// The tensor form of coll.permute: an output no pair targets holds zeros
// (StableHLO's collective_permute). coll-bufferize allocates it and fills
// it with zeros before the collective (local work: a linalg.fill), which
// then leaves it alone; a full permutation fills nothing. In an SPMD
// function the rank's one output is filled whenever some rank of the group
// receives nothing (a receive overwrites it).
// RUN: coll-opt %s --split-input-file --coll-bufferize | FileCheck %s
// The whole bufferize route, then the global view and the explicit level
// (the fill stays local work next to the proved copies):
// RUN: coll-opt %s --split-input-file --pass-pipeline='builtin.module(coll-bufferize,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map allow-return-allocs-from-loops},coll-check-results,coll-distinct-results,buffer-results-to-out-params{hoist-static-allocs modify-public-functions},coll-free-local-buffers,coll-spmd-to-global,coll-lower-collectives,coll-check-order,coll-check-semantics)' | FileCheck %s --check-prefix=LOW
// On the CPU route i1 is stored as i8 (lowering/stored_types.py): the bool
// fill fills the zero-extended value.
// RUN: coll-opt %s --split-input-file --pass-pipeline='builtin.module(coll-bufferize,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map allow-return-allocs-from-loops},coll-check-results,coll-distinct-results,buffer-results-to-out-params{hoist-static-allocs modify-public-functions},coll-free-local-buffers,coll-spmd-to-global,coll-lower-collectives,coll-to-cpu)' | FileCheck %s --check-prefix=CPU

// CHECK-LABEL: func.func @partial
// CHECK: %[[B0:.*]] = bufferization.to_buffer %arg0 read_only
// CHECK: %[[B1:.*]] = bufferization.to_buffer %arg1 read_only
// CHECK: %[[B2:.*]] = bufferization.to_buffer %arg2 read_only
// CHECK: %[[Y0:.*]] = memref.alloc() : memref<2x3xf32>
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: linalg.fill ins(%[[Z]] : f32) outs(%[[Y0]] : memref<2x3xf32>)
// CHECK-NEXT: %[[Y1:.*]] = memref.alloc() : memref<2x3xf32>
// CHECK-NEXT: %[[Y2:.*]] = memref.alloc() : memref<2x3xf32>
// CHECK-NEXT: "coll.permute"(%[[B0]], %[[B1]], %[[B2]], %[[Y0]], %[[Y1]], %[[Y2]]) {coll.result_ids = array<i64: {{[0-9, ]+}}>, devices = array<i64: 0, 1, 2>, operandSegmentSizes = array<i32: 3, 3, 0>, pairs = array<i64: 0, 2, 2, 1>}
// CHECK-NOT: linalg.fill
// CPU-LABEL: func.func @partial
// LOW-LABEL: func.func @partial(%arg0: memref<2x3xf32>, %arg1: memref<2x3xf32>, %arg2: memref<2x3xf32>, %arg3: memref<2x3xf32>, %arg4: memref<2x3xf32>, %arg5: memref<2x3xf32>)
// LOW: linalg.fill ins(%{{.*}} : f32) outs(%arg3 : memref<2x3xf32>)
// LOW-NOT: linalg.fill
// LOW-COUNT-2: "coll.copy"
// LOW-NOT: "coll.copy"
// LOW: "coll.implements"
func.func @partial(%t0: tensor<2x3xf32>, %t1: tensor<2x3xf32>, %t2: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %tok, %r0, %r1, %r2 = "coll.permute"(%t0, %t1, %t2) {devices = array<i64: 0, 1, 2>, pairs = array<i64: 0, 2, 2, 1>, operandSegmentSizes = array<i32: 3, 0, 0>}
      : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> (!coll.token, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
  return %r0, %r1, %r2 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----
// A full permutation: every output receives, nothing is filled.
// CHECK-LABEL: func.func @swap
// CHECK-NOT: linalg.fill
// CHECK: "coll.permute"
// CPU-LABEL: func.func @swap
// LOW-LABEL: func.func @swap
// LOW-NOT: linalg.fill
// LOW-COUNT-2: "coll.copy"
func.func @swap(%t0: tensor<4xi32>, %t1: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
  %tok, %r0, %r1 = "coll.permute"(%t0, %t1) {devices = array<i64: 0, 1>, pairs = array<i64: 0, 1, 1, 0>, operandSegmentSizes = array<i32: 2, 0, 0>}
      : (tensor<4xi32>, tensor<4xi32>) -> (!coll.token, tensor<4xi32>, tensor<4xi32>)
  return %r0, %r1 : tensor<4xi32>, tensor<4xi32>
}

// -----
// SPMD, a shift without wrap-around (rank 0 receives nothing): the rank's
// output is filled, i1 with false.
// CHECK-LABEL: func.func @spmd_shift
// CHECK: %[[Y:.*]] = memref.alloc() : memref<8xi1>
// CHECK-NEXT: %[[F:.*]] = arith.constant false
// CHECK-NEXT: linalg.fill ins(%[[F]] : i1) outs(%[[Y]] : memref<8xi1>)
// CHECK-NEXT: "coll.permute"(%{{.*}}, %[[Y]]) {coll.result_ids = array<i64: {{[0-9, ]+}}>, devices = array<i64: 0, 1, 2, 3>, operandSegmentSizes = array<i32: 1, 1, 0>, pairs = array<i64: 0, 1, 1, 2, 2, 3>}
// Its global view: one fill per rank (coll.device = r), then the copies.
// LOW-LABEL: func.func @spmd_shift
// LOW: linalg.fill {coll.device = 0 : i64} ins(%{{.*}} : i1) outs(%arg4 : memref<8xi1>)
// LOW: linalg.fill {coll.device = 3 : i64} ins(%{{.*}} : i1) outs(%arg7 : memref<8xi1>)
// LOW-COUNT-3: "coll.copy"
// LOW-NOT: "coll.copy"
// LOW: "coll.implements"
// CPU-LABEL: func.func @spmd_shift(%arg0: memref<8xi8>
// CPU: %[[Z:.*]] = arith.extui %{{.*}} : i1 to i8
// CPU-NEXT: linalg.fill {coll.device = 0 : i64} ins(%[[Z]] : i8) outs(%arg4 : memref<8xi8>)
func.func @spmd_shift(%t: tensor<8xi1>) -> tensor<8xi1> attributes {coll.ranks = 4 : i64} {
  %tok, %r = "coll.permute"(%t) {devices = array<i64: 0, 1, 2, 3>, pairs = array<i64: 0, 1, 1, 2, 2, 3>, operandSegmentSizes = array<i32: 1, 0, 0>}
      : (tensor<8xi1>) -> (!coll.token, tensor<8xi1>)
  return %r : tensor<8xi1>
}

// -----
// SPMD ring: every rank receives, nothing is filled.
// CHECK-LABEL: func.func @spmd_ring
// CHECK-NOT: linalg.fill
// CHECK: "coll.permute"
// CPU-LABEL: func.func @spmd_ring
// LOW-LABEL: func.func @spmd_ring
// LOW-NOT: linalg.fill
// LOW-COUNT-2: "coll.copy"({{.*}}bf16
func.func @spmd_ring(%t: tensor<8xbf16>) -> tensor<8xbf16> attributes {coll.ranks = 2 : i64} {
  %tok, %r = "coll.permute"(%t) {devices = array<i64: 0, 1>, pairs = array<i64: 0, 1, 1, 0>, operandSegmentSizes = array<i32: 1, 0, 0>}
      : (tensor<8xbf16>) -> (!coll.token, tensor<8xbf16>)
  return %r : tensor<8xbf16>
}
