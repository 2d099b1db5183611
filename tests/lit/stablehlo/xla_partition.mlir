// coll-xla-partition: a jit program with shardings (Inputs/mlp_jit.mlir:
// in_shardings P(), P(None, "x"), P("x", None) on 8 devices, a replicated
// result) partitioned by XLA's own partitioner (jaxlib, in a child
// process): one device's program, its local types, the psum XLA inserted
// over the mesh XLA's converter writes, marked for coll-from-stablehlo,
// which imports it as one device's program (coll.ranks, coll.all_reduce).
// REQUIRES: jaxlib
// RUN: coll-opt --allow-unregistered-dialect --coll-xla-partition %S/Inputs/mlp_jit.mlir | FileCheck %s
// RUN: coll-opt --allow-unregistered-dialect --pass-pipeline='builtin.module(coll-xla-partition,coll-from-stablehlo)' %S/Inputs/mlp_jit.mlir | FileCheck %s --check-prefix=IMPORT
// RUN: coll-opt --allow-unregistered-dialect --split-input-file --verify-diagnostics --coll-xla-partition %S/Inputs/xla_partition_errors.mlir

// CHECK: module @jit_mlp attributes {coll.xla_partitioned, {{.*}}mhlo.num_partitions = 8 : i32
// CHECK: "sdy.mesh"() <{mesh = #sdy.mesh<["axis_0"=1, "axis_1"=8]>
// CHECK-LABEL: func.func @main(%arg0: tensor<8x16xf32> {mhlo.sharding = "{replicated}"}, %arg1: tensor<16x1xf32> {mhlo.sharding = "{devices=[1,8]<=[8]}"}, %arg2: tensor<1x16xf32> {mhlo.sharding = "{devices=[8,1]<=[8]}"}) -> tensor<8x16xf32>
// CHECK: %[[Y:.*]] = "stablehlo.dot"(%{{.*}}, %arg2) {{.*}} -> tensor<8x16xf32>
// CHECK: "stablehlo.all_reduce"(%[[Y]]) <{{{.*}}replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @mesh, axes = [#stablehlo.axis_ref<name = "axis_1">]>, use_global_device_ids}>
// CHECK-NOT: sdy.sharding

// IMPORT-NOT: coll.xla_partitioned
// IMPORT-NOT: sdy.mesh
// IMPORT-LABEL: func.func @main(%arg0: tensor<8x16xf32> {bufferization.writable = false}, %arg1: tensor<16x1xf32> {bufferization.writable = false}, %arg2: tensor<1x16xf32> {bufferization.writable = false}) -> tensor<8x16xf32> attributes {coll.ranks = 8 : i64}
// IMPORT: "coll.all_reduce"(%{{.*}}) {devices = array<i64: 0, 1, 2, 3, 4, 5, 6, 7>, kind = "sum"
// IMPORT-NOT: stablehlo.all_reduce
