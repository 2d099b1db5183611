// A constant the shard_map body closes over (x.at[jnp.array([1, 3])], a
// jnp.array in the body): JAX hoists it out and passes it in, replicated;
// coll-from-stablehlo makes it the body's own constant again. A constant
// split over the mesh is refused.
// RUN: coll-opt --allow-unregistered-dialect --split-input-file --verify-diagnostics --coll-from-stablehlo %s | FileCheck %s

// CHECK-LABEL: func.func @main(%arg0: tensor<4xf32> {bufferization.writable = false}) -> tensor<4xf32>
// CHECK-NEXT: %[[C:.*]] = "stablehlo.constant"() <{value = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>}>
// CHECK-NEXT: %[[S:.*]] = "stablehlo.add"(%arg0, %[[C]])
// CHECK-NEXT: "coll.all_reduce"(%[[S]])
"builtin.module"() ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> : () -> ()
  "func.func"() <{function_type = (tensor<8xf32>) -> tensor<4xf32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<8xf32>):
    %0 = "stablehlo.constant"() <{value = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>}> : () -> tensor<4xf32>
    %1 = "sdy.manual_computation"(%0, %arg0) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{}]>, <@mesh, [{"x"}]>]>, manual_axes = #sdy<manual_axes{"x"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{}]>]>}> ({
    ^bb0(%c: tensor<4xf32>, %a: tensor<4xf32>):
      %2 = "stablehlo.add"(%a, %c) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %3 = "stablehlo.all_reduce"(%2) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids}> ({
      ^bb0(%x: tensor<f32>, %y: tensor<f32>):
        %s = "stablehlo.add"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%s) : (tensor<f32>) -> ()
      }) : (tensor<4xf32>) -> tensor<4xf32>
      "sdy.return"(%3) : (tensor<4xf32>) -> ()
    }) : (tensor<4xf32>, tensor<8xf32>) -> tensor<4xf32>
    "func.return"(%1) : (tensor<4xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

// -----

"builtin.module"() ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> : () -> ()
  "func.func"() <{function_type = (tensor<8xf32>) -> tensor<4xf32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<8xf32>):
    %0 = "stablehlo.constant"() <{value = dense<1.0> : tensor<8xf32>}> : () -> tensor<8xf32>
    // expected-error @below {{shard_map operand #0 is a constant split over the mesh; expected constants replicated (in_specs P())}}
    %1 = "sdy.manual_computation"(%0, %arg0) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>, <@mesh, [{"x"}]>]>, manual_axes = #sdy<manual_axes{"x"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{}]>]>}> ({
    ^bb0(%c: tensor<4xf32>, %a: tensor<4xf32>):
      %2 = "stablehlo.add"(%a, %c) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %3 = "stablehlo.all_reduce"(%2) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids}> ({
      ^bb0(%x: tensor<f32>, %y: tensor<f32>):
        %s = "stablehlo.add"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%s) : (tensor<f32>) -> ()
      }) : (tensor<4xf32>) -> tensor<4xf32>
      "sdy.return"(%3) : (tensor<4xf32>) -> ()
    }) : (tensor<8xf32>, tensor<8xf32>) -> tensor<4xf32>
    "func.return"(%1) : (tensor<4xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
