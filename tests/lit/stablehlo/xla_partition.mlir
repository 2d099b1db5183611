// coll-xla-partition: a jit program with shardings (Inputs/mlp_jit.mlir:
// in_shardings P(), P(None, "x"), P("x", None) on 8 devices, a replicated
// result) partitioned by XLA's own partitioner (jaxlib, in a child
// process): one device's program, its local types, the psum XLA inserted
// over lists of partition ids, marked for coll-from-stablehlo, which
// imports it as one device's program (coll.ranks, coll.all_reduce).
// REQUIRES: jaxlib
// RUN: coll-opt --allow-unregistered-dialect --coll-xla-partition %S/Inputs/mlp_jit.mlir | FileCheck %s
// RUN: coll-opt --allow-unregistered-dialect --pass-pipeline='builtin.module(coll-xla-partition,coll-from-stablehlo)' %S/Inputs/mlp_jit.mlir | FileCheck %s --check-prefix=IMPORT
// RUN: coll-opt --allow-unregistered-dialect --pass-pipeline='builtin.module(coll-xla-partition,coll-from-stablehlo)' %S/Inputs/jit_constraints_2d.mlir | FileCheck %s --check-prefix=GRID
// RUN: coll-opt --allow-unregistered-dialect --pass-pipeline='builtin.module(coll-xla-partition,coll-from-stablehlo)' %S/Inputs/jit_one_device.mlir | FileCheck %s --check-prefix=ONE
// RUN: coll-opt --allow-unregistered-dialect --split-input-file --verify-diagnostics --coll-xla-partition %S/Inputs/xla_partition_errors.mlir

// CHECK: module @jit_mlp attributes {coll.xla_partitioned, {{.*}}mhlo.num_partitions = 8 : i32
// CHECK-NOT: sdy.mesh
// CHECK-LABEL: func.func @main(%arg0: tensor<8x16xf32> {mhlo.sharding = "{replicated}"}, %arg1: tensor<16x1xf32> {mhlo.sharding = "{devices=[1,8]<=[8]}"}, %arg2: tensor<1x16xf32> {mhlo.sharding = "{devices=[8,1]<=[8]}"}) -> tensor<8x16xf32>
// CHECK: %[[Y:.*]] = "stablehlo.dot"(%{{.*}}, %arg2) {{.*}} -> tensor<8x16xf32>
// CHECK: "stablehlo.all_reduce"(%[[Y]]) <{{{.*}}replica_groups = dense<{{\[\[}}0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>, use_global_device_ids}>
// CHECK-NOT: sdy.sharding

// Inputs/jit_constraints_2d.mlir: on a 2x4 mesh (dp, tp), x split over dp,
// two with_sharding_constraint (sdy.sharding_constraint: XLA's copies,
// dropped); XLA slices W1 by the rank (partition_id, then the rank) and
// gathers over dp, then over tp: groups of partition ids, in mesh order.
// GRID-LABEL: func.func @main(%arg0: tensor<4x16xf32> {bufferization.writable = false}, %arg1: tensor<16x32xf32> {bufferization.writable = false}, %arg2: tensor<32x16xf32> {bufferization.writable = false}) -> tensor<8x16xf32> attributes {coll.ranks = 8 : i64}
// GRID: mpi.comm_rank
// GRID: "stablehlo.dynamic_slice"(%arg1,
// GRID: "coll.all_gather"(%{{.*}}) {devices = array<i64: 0, 1>, gather_axis = 0 : i64, groups = array<i64: 0, 4, 1, 5, 2, 6, 3, 7>
// GRID: "coll.all_gather"(%{{.*}}) {devices = array<i64: 0, 1, 2, 3>, gather_axis = 1 : i64, groups = array<i64: 0, 1, 2, 3, 4, 5, 6, 7>
// GRID-NOT: mhlo.copy
// GRID-NOT: sdy.

// IMPORT-NOT: coll.xla_partitioned
// IMPORT-NOT: sdy.mesh
// IMPORT-LABEL: func.func @main(%arg0: tensor<8x16xf32> {bufferization.writable = false}, %arg1: tensor<16x1xf32> {bufferization.writable = false}, %arg2: tensor<1x16xf32> {bufferization.writable = false}) -> tensor<8x16xf32> attributes {coll.ranks = 8 : i64}
// IMPORT: "coll.all_reduce"(%{{.*}}) {devices = array<i64: 0, 1, 2, 3, 4, 5, 6, 7>, kind = "sum"
// IMPORT-NOT: stablehlo.all_reduce

// A mesh of one device: nothing to partition (XLA runs no partitioner),
// one rank's program as it was.
// ONE-LABEL: func.func @main(%arg0: tensor<4xf32> {bufferization.writable = false}) -> tensor<4xf32> attributes {coll.ranks = 1 : i64}
// ONE-NEXT: "stablehlo.add"(%arg0, %arg0)
