// A shard_map whose devices never communicate is an SPMD function all the
// same: each rank runs the body on its block (coll-run runs it on cpu and
// mpi, checked against XLA: tests/unit/test_stablehlo_jax.py no_collective).
// RUN: coll-opt --allow-unregistered-dialect --coll-from-stablehlo %s | FileCheck %s
// CHECK-LABEL: func.func @main(%arg0: tensor<2xf32>{{.*}}) -> tensor<2xf32> attributes {coll.ranks = 4 : i64}
// CHECK-NOT: coll.all_reduce
// CHECK: return %arg0
"builtin.module"() ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=4]>, sym_name = "mesh"}> : () -> ()
  "func.func"() <{function_type = (tensor<8xf32>) -> tensor<8xf32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<8xf32>):
    %0 = "sdy.manual_computation"(%arg0) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>, manual_axes = #sdy<manual_axes{"x"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>}> ({
    ^bb0(%arg1: tensor<2xf32>):
      %1 = "stablehlo.partition_id"() : () -> tensor<ui32>
      "sdy.return"(%arg1) : (tensor<2xf32>) -> ()
    }) : (tensor<8xf32>) -> tensor<8xf32>
    "func.return"(%0) : (tensor<8xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

