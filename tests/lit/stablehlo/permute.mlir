// ppermute: collective_permute's (source, target) pairs of partition ids
// are coll.permute's pairs of ranks, over every rank (a rank no pair
// targets gets zeros in coll's tensor form, as in StableHLO).
// RUN: coll-opt --allow-unregistered-dialect --coll-from-stablehlo %S/Inputs/ppermute_ring.mlir | FileCheck %s --check-prefix=RING
// RUN: coll-opt --allow-unregistered-dialect --split-input-file --verify-diagnostics --coll-from-stablehlo %s | FileCheck %s

// RING: "coll.permute"(%arg0) {devices = array<i64: 0, 1, 2, 3, 4, 5, 6, 7>, operandSegmentSizes = array<i32: 1, 0, 0>, pairs = array<i64: 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 0>} : (tensor<8xf32>) -> (!coll.token, tensor<8xf32>)
// RING-NOT: collective_permute

// Pairs name devices: with device_ids, device d is the rank at its position.
// CHECK-LABEL: func.func @device_ids
// CHECK: "coll.permute"(%arg0) {devices = array<i64: 0, 1, 2, 3>, operandSegmentSizes = array<i32: 1, 0, 0>, pairs = array<i64: 3, 2, 1, 0>}
"builtin.module"() ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=4], device_ids=[3, 2, 1, 0]>, sym_name = "mesh"}> : () -> ()
  "func.func"() <{function_type = (tensor<8xf32>) -> tensor<8xf32>, sym_name = "device_ids"}> ({
  ^bb0(%arg0: tensor<8xf32>):
    %0 = "sdy.manual_computation"(%arg0) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>, manual_axes = #sdy<manual_axes{"x"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>}> ({
    ^bb0(%arg1: tensor<2xf32>):
      %1 = "stablehlo.collective_permute"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>}> : (tensor<2xf32>) -> tensor<2xf32>
      "sdy.return"(%1) : (tensor<2xf32>) -> ()
    }) : (tensor<8xf32>) -> tensor<8xf32>
    "func.return"(%0) : (tensor<8xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

// -----

"builtin.module"() ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=4]>, sym_name = "mesh"}> : () -> ()
  "func.func"() <{function_type = (tensor<8xf32>) -> tensor<8xf32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<8xf32>):
    %0 = "sdy.manual_computation"(%arg0) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>, manual_axes = #sdy<manual_axes{"x"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>}> ({
    ^bb0(%arg1: tensor<2xf32>):
      // expected-error @below {{'stablehlo.collective_permute' without a channel permutes replicas within each partition, and the program has one replica; expected a channel_handle (pairs of partition ids, as JAX's ppermute exports)}}
      %1 = "stablehlo.collective_permute"(%arg1) <{source_target_pairs = dense<[[0, 0]]> : tensor<1x2xi64>}> : (tensor<2xf32>) -> tensor<2xf32>
      "sdy.return"(%1) : (tensor<2xf32>) -> ()
    }) : (tensor<8xf32>) -> tensor<8xf32>
    "func.return"(%0) : (tensor<8xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
