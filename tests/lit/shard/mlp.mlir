// The examples' MLP through the shard route: upstream partitioning, then
// coll collectives, then bufferization (the all_reduce into a buffer of
// its own: its input's buffer is the tensor.empty's that relu writes after
// it; the all_gather straight into the out-param), then the mpi route to the LLVM
// dialect: the same pipeline text coll-run and frontends/run/shard.py use.
// RUN: coll-opt %S/../../../examples/mlp_shard_4.mlir --pass-pipeline='builtin.module(coll-shard-partition,coll-from-shard)' | FileCheck %s --check-prefix=COLL
// RUN: coll-opt %S/../../../examples/mlp_shard_2x2.mlir --pass-pipeline='builtin.module(coll-shard-partition,coll-from-shard)' | FileCheck %s --check-prefix=GRID
// RUN: coll-opt %S/../../../examples/mlp_shard_4.mlir --pass-pipeline='builtin.module(coll-shard-partition,coll-from-shard,canonicalize,cse,coll-bufferize,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map allow-return-allocs-from-loops},coll-check-results,coll-distinct-results,buffer-results-to-out-params{hoist-static-allocs modify-public-functions},coll-free-local-buffers,canonicalize,cse)' | FileCheck %s --check-prefix=SPMD
// RUN: coll-opt %S/../../../examples/mlp_shard_4.mlir --pass-pipeline='builtin.module(coll-shard-partition,coll-from-shard,canonicalize,cse,coll-bufferize,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map allow-return-allocs-from-loops},coll-check-results,coll-distinct-results,buffer-results-to-out-params{hoist-static-allocs modify-public-functions},coll-free-local-buffers,canonicalize,cse,coll-spmd-to-mpi,coll-to-mpi,coll-to-cpu{tile=0},coll-mpi-requests,canonicalize,cse,convert-linalg-to-loops,arith-expand{include-bf16=true},convert-vector-to-scf,lower-affine,convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-math-to-libm,convert-to-llvm,reconcile-unrealized-casts,coll-mpi-abi)' | FileCheck %s --check-prefix=LLVM

// COLL-LABEL: func.func @mlp(%arg0: tensor<8x4xf32> {bufferization.writable = false}, %arg1: tensor<4x32xf32> {bufferization.writable = false}, %arg2: tensor<32x4xf32> {bufferization.writable = false}) -> tensor<8x16xf32> attributes {coll.ranks = 4 : i64}
// COLL: linalg.matmul
// COLL: "coll.all_reduce"({{.*}}) {devices = array<i64: 0, 1, 2, 3>, kind = "sum", operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<8x32xf32>) -> (!coll.token, tensor<8x32xf32>)
// COLL: linalg.matmul
// COLL: "coll.all_gather"({{.*}}) {devices = array<i64: 0, 1, 2, 3>, gather_axis = 1 : i64, operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<8x4xf32>) -> (!coll.token, tensor<8x16xf32>)
// COLL-NOT: shard.

// The partial sums of the 2x2 grid's layer 1 meet within each column.
// GRID-LABEL: func.func @mlp(%arg0: tensor<4x8xf32> {{.*}}, %arg1: tensor<8x32xf32> {{.*}}, %arg2: tensor<32x8xf32> {{.*}}) -> tensor<4x8xf32> attributes {coll.ranks = 4 : i64}
// GRID: "coll.all_reduce"({{.*}}) {devices = array<i64: 0, 1>, groups = array<i64: 0, 2, 1, 3>, kind = "sum"
// GRID-NOT: coll.all_gather
// GRID-NOT: shard.

// SPMD-LABEL: func.func @mlp(%arg0: memref<8x4xf32>, %arg1: memref<4x32xf32>, %arg2: memref<32x4xf32>, %arg3: memref<8x16xf32>) attributes {coll.ranks = 4 : i64}
// SPMD: linalg.matmul ins(%arg0, %arg1 : memref<8x4xf32>, memref<4x32xf32>) outs(%[[H:.*]] : memref<8x32xf32>)
// SPMD: %[[R:.*]] = memref.alloc() : memref<8x32xf32>
// SPMD: "coll.all_reduce"(%[[H]], %[[R]])
// SPMD: "coll.all_gather"(%{{.*}}, %arg3)
// SPMD-NOT: memref.copy

// LLVM: module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI">}
// LLVM: llvm.func @mlp(
// LLVM-SAME: coll.global_args = array<i64: 0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15>, coll.rank_inputs = 3 : i64, coll.ranks = 4 : i64
// LLVM: llvm.call @MPI_Comm_rank
// LLVM: llvm.call @coll_mpi_isend
// LLVM: llvm.call @coll_mpi_irecv
// LLVM: llvm.func @coll_mpi_init
// LLVM-NOT: coll.all_
// LLVM-NOT: shard.
