// coll.permute under MPI: each copy between ranks is one matched
// mpi.isend / mpi.irecv pair (tag 0: the first message between those two
// ranks), receives posted first; an identity pair is a local copy; a rank
// that receives nothing posts no receive.
// GEN: global = coll-gen permute --devices 3 --shape 4 --pairs 0:2,2:0,1:1
// RUN: coll-opt --pass-pipeline='builtin.module(coll-lower-collectives,coll-to-mpi,canonicalize,cse)' < %S/Inputs/gen/permute.global.mlir | FileCheck %s --check-prefix=GLOBAL
// The SPMD form over groups (pairs are positions in each group), expanded
// per group and projected; and with the tensor form's zero fill, which
// stays local work on every rank around the rank's messages.
// RUN: coll-opt %s --split-input-file --pass-pipeline='builtin.module(coll-bufferize,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map allow-return-allocs-from-loops},coll-check-results,coll-distinct-results,buffer-results-to-out-params{hoist-static-allocs modify-public-functions},coll-free-local-buffers,coll-spmd-to-global)' | FileCheck %s --check-prefix=SPMD
// RUN: coll-opt %s --split-input-file --pass-pipeline='builtin.module(coll-bufferize,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map allow-return-allocs-from-loops},coll-check-results,coll-distinct-results,buffer-results-to-out-params{hoist-static-allocs modify-public-functions},coll-free-local-buffers,coll-spmd-to-mpi,canonicalize,cse)' | FileCheck %s --check-prefix=RANK

// GLOBAL-LABEL: func.func @permute(%arg0: memref<4xf32>, %arg1: memref<4xf32>)
// GLOBAL-SAME: coll.global_args = array<i64: 0, 3, 1, 4, 2, 5>, coll.max_tag = 0 : i64, coll.rank_inputs = 1 : i64, coll.ranks = 3 : i64
// GLOBAL: case 0 {
// GLOBAL-NEXT: %[[Y:.*]] = memref.memory_space_cast %arg1
// GLOBAL-NEXT: %[[R:.*]] = mpi.irecv(%[[Y]], %c0_i32, %c2_i32, %{{.*}})
// GLOBAL-NEXT: %[[X:.*]] = memref.memory_space_cast %arg0
// GLOBAL-NEXT: %[[S:.*]] = mpi.isend(%[[X]], %c0_i32, %c2_i32, %{{.*}})
// GLOBAL-NEXT: mpi.wait(%[[R]])
// GLOBAL-NEXT: mpi.wait(%[[S]])
// GLOBAL-NEXT: scf.yield
// GLOBAL: case 1 {
// GLOBAL-NOT: mpi.
// GLOBAL: "coll.copy"
// GLOBAL-NOT: mpi.
// GLOBAL: case 2 {
// GLOBAL-NEXT: %[[Y:.*]] = memref.memory_space_cast %arg1
// GLOBAL-NEXT: %[[R:.*]] = mpi.irecv(%[[Y]], %c0_i32, %c0_i32, %{{.*}})
// GLOBAL-NEXT: %[[X:.*]] = memref.memory_space_cast %arg0
// GLOBAL-NEXT: %[[S:.*]] = mpi.isend(%[[X]], %c0_i32, %c0_i32, %{{.*}})
// GLOBAL: default {

// SPMD-LABEL: func.func @pairs_in_groups(%arg0: memref<8xf32>, %arg1: memref<8xf32>, %arg2: memref<8xf32>, %arg3: memref<8xf32>, %arg4: memref<8xf32>, %arg5: memref<8xf32>, %arg6: memref<8xf32>, %arg7: memref<8xf32>)
// SPMD-NEXT: %[[A:.*]] = "coll.permute"(%arg0, %arg2, %arg4, %arg6) {devices = array<i64: 0, 2>, operandSegmentSizes = array<i32: 2, 2, 0>, pairs = array<i64: 0, 1>}
// SPMD-NEXT: %[[B:.*]] = "coll.permute"(%arg1, %arg3, %arg5, %arg7) {devices = array<i64: 1, 3>, operandSegmentSizes = array<i32: 2, 2, 0>, pairs = array<i64: 0, 1>}
// SPMD-NEXT: %[[J:.*]] = "coll.join"(%[[A]], %[[B]])
// RANK-LABEL: func.func @pairs_in_groups
// RANK: case 0 {
// RANK: mpi.isend(%{{.*}}, %c0_i32, %c2_i32
// RANK: case 1 {
// RANK: mpi.isend(%{{.*}}, %c0_i32, %c3_i32
// RANK: case 2 {
// RANK: mpi.irecv(%{{.*}}, %c0_i32, %c0_i32
// RANK: case 3 {
// RANK: mpi.irecv(%{{.*}}, %c0_i32, %c1_i32
func.func @pairs_in_groups(%x: memref<8xf32>, %y: memref<8xf32>) attributes {coll.ranks = 4 : i64} {
  %t = "coll.permute"(%x, %y) {devices = array<i64: 0, 1>, groups = array<i64: 0, 2, 1, 3>, pairs = array<i64: 0, 1>, operandSegmentSizes = array<i32: 1, 1, 0>}
      : (memref<8xf32>, memref<8xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}

// -----
// A shift without wrap-around on tensors: rank 0 receives nothing, so the
// rank's output is zero-filled first (every rank, before its messages);
// rank 2 sends nothing.
// SPMD-LABEL: func.func @shift
// SPMD-COUNT-3: linalg.fill
// SPMD: "coll.permute"({{.*}}) {devices = array<i64: 0, 1, 2>, operandSegmentSizes = array<i32: 3, 3, 0>, pairs = array<i64: 0, 1, 1, 2>}
// RANK-LABEL: func.func @shift(%arg0: memref<8xf32>, %arg1: memref<8xf32>)
// RANK: linalg.fill ins(%{{.*}} : f32) outs(%arg1 : memref<8xf32>)
// RANK: scf.index_switch
// RANK: case 0 {
// RANK-NOT: mpi.irecv
// RANK: mpi.isend(%{{.*}}, %c0_i32, %c1_i32
// RANK: case 1 {
// RANK: mpi.irecv(%{{.*}}, %c0_i32, %c0_i32
// RANK: mpi.isend(%{{.*}}, %c0_i32, %c2_i32
// RANK: case 2 {
// RANK-NOT: mpi.isend
// RANK: mpi.irecv(%{{.*}}, %c0_i32, %c1_i32
// RANK-NOT: mpi.isend
// RANK: default
func.func @shift(%t: tensor<8xf32>) -> tensor<8xf32> attributes {coll.ranks = 3 : i64} {
  %tok, %r = "coll.permute"(%t) {devices = array<i64: 0, 1, 2>, pairs = array<i64: 0, 1, 1, 2>, operandSegmentSizes = array<i32: 1, 0, 0>}
      : (tensor<8xf32>) -> (!coll.token, tensor<8xf32>)
  return %r : tensor<8xf32>
}
