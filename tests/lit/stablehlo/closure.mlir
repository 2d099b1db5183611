// A numpy array the shard_map closes over: JAX computes it outside the body
// (the constant, a broadcast of it) and passes it in as a replicated
// operand. coll-from-stablehlo clones that constant work into the body; the
// function's arguments are the program's inputs only. A closed-over value
// that enters split is refused, at its op.
// RUN: coll-opt --allow-unregistered-dialect --split-input-file --verify-diagnostics --coll-from-stablehlo %s | FileCheck %s

// CHECK-LABEL: func.func @main(%arg0: tensor<2xf32> {bufferization.writable = false}) -> tensor<2xf32> attributes {coll.ranks = 4 : i64}
// CHECK-NEXT: %[[C:.*]] = "stablehlo.constant"() <{value = dense<[1.000000e+00, 0.000000e+00]> : tensor<2xf32>}>
// CHECK-NEXT: %[[B:.*]] = "stablehlo.broadcast_in_dim"(%[[C]])
// CHECK-NEXT: %[[M:.*]] = "stablehlo.multiply"(%arg0, %[[B]])
// CHECK-NEXT: %[[R:.*]]:2 = "coll.all_reduce"(%[[M]])
// CHECK-NEXT: return %[[R]]#1
"builtin.module"() ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=4]>, sym_name = "mesh"}> : () -> ()
  "func.func"() <{function_type = (tensor<8xf32>) -> tensor<2xf32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<8xf32>):
    %c = "stablehlo.constant"() <{value = dense<[1.0, 0.0]> : tensor<2xf32>}> : () -> tensor<2xf32>
    %b = "stablehlo.broadcast_in_dim"(%c) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2xf32>) -> tensor<2xf32>
    %0 = "sdy.manual_computation"(%b, %arg0) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{}]>, <@mesh, [{"x"}]>]>, manual_axes = #sdy<manual_axes{"x"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{}]>]>}> ({
    ^bb0(%mask: tensor<2xf32>, %x: tensor<2xf32>):
      %m = "stablehlo.multiply"(%x, %mask) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      %s = "stablehlo.all_reduce"(%m) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> ({
      ^bb0(%p: tensor<f32>, %q: tensor<f32>):
        %r = "stablehlo.add"(%p, %q) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%r) : (tensor<f32>) -> ()
      }) : (tensor<2xf32>) -> tensor<2xf32>
      "sdy.return"(%s) : (tensor<2xf32>) -> ()
    }) : (tensor<2xf32>, tensor<8xf32>) -> tensor<2xf32>
    "func.return"(%0) : (tensor<2xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

// -----

"builtin.module"() ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=4]>, sym_name = "mesh"}> : () -> ()
  "func.func"() <{function_type = (tensor<8xf32>) -> tensor<2xf32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<8xf32>):
    // expected-error @below {{a constant the shard_map closes over enters split (tensor<8xf32> as tensor<2xf32>); expected it replicated}}
    %c = "stablehlo.constant"() <{value = dense<1.0> : tensor<8xf32>}> : () -> tensor<8xf32>
    %0 = "sdy.manual_computation"(%c, %arg0) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>, <@mesh, [{"x"}]>]>, manual_axes = #sdy<manual_axes{"x"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{}]>]>}> ({
    ^bb0(%mask: tensor<2xf32>, %x: tensor<2xf32>):
      %m = "stablehlo.multiply"(%x, %mask) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      %s = "stablehlo.all_reduce"(%m) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> ({
      ^bb0(%p: tensor<f32>, %q: tensor<f32>):
        %r = "stablehlo.add"(%p, %q) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%r) : (tensor<f32>) -> ()
      }) : (tensor<2xf32>) -> tensor<2xf32>
      "sdy.return"(%s) : (tensor<2xf32>) -> ()
    }) : (tensor<8xf32>, tensor<8xf32>) -> tensor<2xf32>
    "func.return"(%0) : (tensor<2xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
