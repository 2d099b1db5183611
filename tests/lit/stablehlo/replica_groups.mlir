// Replica groups in both of StableHLO's forms, and the ids they hold.
// JAX 0.12 under Shardy prints #stablehlo.replica_group_mesh_axes (the
// groups: ranks that share the other mesh coordinates, in the order of the
// listed axes); JAX 0.10.2 dense lists of partition ids (Inputs/gen.py).
// These modules are written by hand in the form JAX 0.12 prints.
// RUN: coll-opt --allow-unregistered-dialect --split-input-file --coll-from-stablehlo %s | FileCheck %s

// CHECK-LABEL: func.func @mesh_axes_1d
// CHECK: "coll.all_reduce"(%arg0) {devices = array<i64: 0, 1, 2, 3, 4, 5, 6, 7>, kind = "sum"
"builtin.module"() ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=8]>, sym_name = "mesh"}> : () -> ()
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=8]>, sym_name = "mesh_0"}> : () -> ()
  "func.func"() <{function_type = (tensor<64xf32>) -> tensor<8xf32>, sym_name = "mesh_axes_1d"}> ({
  ^bb0(%arg0: tensor<64xf32>):
    %0 = "sdy.manual_computation"(%arg0) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>, manual_axes = #sdy<manual_axes{"x"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{}]>]>}> ({
    ^bb0(%arg1: tensor<8xf32>):
      %1 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @mesh_0, axes = [#stablehlo.axis_ref<name = "x">]>, use_global_device_ids}> ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%s) : (tensor<f32>) -> ()
      }) : (tensor<8xf32>) -> tensor<8xf32>
      "sdy.return"(%1) : (tensor<8xf32>) -> ()
    }) : (tensor<64xf32>) -> tensor<8xf32>
    %2 = "sdy.sharding_constraint"(%0) <{sharding = #sdy.sharding<@mesh, [{}]>}> : (tensor<8xf32>) -> tensor<8xf32>
    "func.return"(%2) : (tensor<8xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

// -----

// Over "tp" of a 2x4 mesh: ranks that share "dp", 4 groups of... 2 groups of 4.
// CHECK-LABEL: func.func @mesh_axes_tp
// CHECK: "coll.all_gather"(%arg0) {devices = array<i64: 0, 1, 2, 3>, gather_axis = 0 : i64, groups = array<i64: 0, 1, 2, 3, 4, 5, 6, 7>
"builtin.module"() ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["dp"=2, "tp"=4]>, sym_name = "mesh"}> : () -> ()
  "func.func"() <{function_type = (tensor<64xf32>) -> tensor<64xf32>, sym_name = "mesh_axes_tp"}> ({
  ^bb0(%arg0: tensor<64xf32>):
    %0 = "sdy.manual_computation"(%arg0) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"dp", "tp"}]>]>, manual_axes = #sdy<manual_axes{"dp", "tp"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"dp"}]>]>}> ({
    ^bb0(%arg1: tensor<8xf32>):
      %1 = "stablehlo.all_gather"(%arg1) <{all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @mesh, axes = [#stablehlo.axis_ref<name = "tp">]>, use_global_device_ids}> : (tensor<8xf32>) -> tensor<32xf32>
      "sdy.return"(%1) : (tensor<32xf32>) -> ()
    }) : (tensor<64xf32>) -> tensor<64xf32>
    "func.return"(%0) : (tensor<64xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

// -----

// Over "dp" of the same mesh: ranks that share "tp", 4 groups of 2 (r, r + 4).
// CHECK-LABEL: func.func @mesh_axes_dp
// CHECK: "coll.reduce_scatter"(%arg0) {devices = array<i64: 0, 1>, groups = array<i64: 0, 4, 1, 5, 2, 6, 3, 7>, kind = "max", {{.*}}scatter_axis = 0 : i64}
"builtin.module"() ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["dp"=2, "tp"=4]>, sym_name = "mesh"}> : () -> ()
  "func.func"() <{function_type = (tensor<64xf32>) -> tensor<32xf32>, sym_name = "mesh_axes_dp"}> ({
  ^bb0(%arg0: tensor<64xf32>):
    %0 = "sdy.manual_computation"(%arg0) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"dp", "tp"}]>]>, manual_axes = #sdy<manual_axes{"dp", "tp"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"tp"}]>]>}> ({
    ^bb0(%arg1: tensor<8xf32>):
      %1 = "stablehlo.reduce_scatter"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @mesh, axes = [#stablehlo.axis_ref<name = "dp">]>, scatter_dimension = 0 : i64, use_global_device_ids}> ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%s) : (tensor<f32>) -> ()
      }) : (tensor<8xf32>) -> tensor<4xf32>
      "sdy.return"(%1) : (tensor<4xf32>) -> ()
    }) : (tensor<64xf32>) -> tensor<32xf32>
    "func.return"(%0) : (tensor<32xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

// -----

// Over ("tp", "dp"): one group, in the order of the linear index over tp
// then dp (rank r = dp * 4 + tp sits at position tp * 2 + dp).
// CHECK-LABEL: func.func @mesh_axes_reversed
// CHECK: "coll.all_to_all"(%arg0) {concat_axis = 0 : i64, devices = array<i64: 0, 1, 2, 3, 4, 5, 6, 7>, groups = array<i64: 0, 4, 1, 5, 2, 6, 3, 7>, {{.*}}split_axis = 0 : i64}
"builtin.module"() ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["dp"=2, "tp"=4]>, sym_name = "mesh"}> : () -> ()
  "func.func"() <{function_type = (tensor<64xf32>) -> tensor<64xf32>, sym_name = "mesh_axes_reversed"}> ({
  ^bb0(%arg0: tensor<64xf32>):
    %0 = "sdy.manual_computation"(%arg0) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"dp", "tp"}]>]>, manual_axes = #sdy<manual_axes{"dp", "tp"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"dp", "tp"}]>]>}> ({
    ^bb0(%arg1: tensor<8xf32>):
      %1 = "stablehlo.all_to_all"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, concat_dimension = 0 : i64, replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @mesh, axes = [#stablehlo.axis_ref<name = "tp">, #stablehlo.axis_ref<name = "dp">]>, split_count = 8 : i64, split_dimension = 0 : i64}> : (tensor<8xf32>) -> tensor<8xf32>
      "sdy.return"(%1) : (tensor<8xf32>) -> ()
    }) : (tensor<64xf32>) -> tensor<64xf32>
    "func.return"(%0) : (tensor<64xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

// -----

// Dense groups name partition ids: with device_ids, mesh position r holds
// device_ids[r], so the group [0, 1] of devices is ranks [3, 2].
// CHECK-LABEL: func.func @dense_device_ids
// CHECK: "coll.all_reduce"(%arg0) {devices = array<i64: 0, 1>, groups = array<i64: 3, 2, 1, 0>, kind = "prod"
"builtin.module"() ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=4], device_ids=[3, 2, 1, 0]>, sym_name = "mesh"}> : () -> ()
  "func.func"() <{function_type = (tensor<32xf32>) -> tensor<32xf32>, sym_name = "dense_device_ids"}> ({
  ^bb0(%arg0: tensor<32xf32>):
    %0 = "sdy.manual_computation"(%arg0) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>, manual_axes = #sdy<manual_axes{"x"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>}> ({
    ^bb0(%arg1: tensor<8xf32>):
      %1 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>, use_global_device_ids}> ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = "stablehlo.multiply"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%s) : (tensor<f32>) -> ()
      }) : (tensor<8xf32>) -> tensor<8xf32>
      "sdy.return"(%1) : (tensor<8xf32>) -> ()
    }) : (tensor<32xf32>) -> tensor<32xf32>
    "func.return"(%0) : (tensor<32xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

// -----

// Empty replica groups with a channel: every partition, one group. A
// channel without use_global_device_ids groups replicas, and [[0]] (the
// one replica) spans every partition too. Without a channel each replica
// group is within one partition: every rank alone, nothing moves.
// CHECK-LABEL: func.func @modes
// CHECK: %[[A:.*]]:2 = "coll.all_reduce"(%arg0) {devices = array<i64: 0, 1, 2, 3>, kind = "and"
// CHECK: %[[B:.*]]:2 = "coll.all_reduce"(%[[A]]#1) {devices = array<i64: 0, 1, 2, 3>, kind = "or"
// CHECK-NOT: coll.all_reduce
// CHECK: return %[[B]]#1
"builtin.module"() ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=4]>, sym_name = "mesh"}> : () -> ()
  "func.func"() <{function_type = (tensor<16xi32>) -> tensor<16xi32>, sym_name = "modes"}> ({
  ^bb0(%arg0: tensor<16xi32>):
    %0 = "sdy.manual_computation"(%arg0) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>, manual_axes = #sdy<manual_axes{"x"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>}> ({
    ^bb0(%arg1: tensor<4xi32>):
      %1 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<> : tensor<0x0xi64>, use_global_device_ids}> ({
      ^bb0(%a: tensor<i32>, %b: tensor<i32>):
        %s = "stablehlo.and"(%a, %b) : (tensor<i32>, tensor<i32>) -> tensor<i32>
        "stablehlo.return"(%s) : (tensor<i32>) -> ()
      }) : (tensor<4xi32>) -> tensor<4xi32>
      %2 = "stablehlo.all_reduce"(%1) <{channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>, replica_groups = dense<[[0]]> : tensor<1x1xi64>}> ({
      ^bb0(%a: tensor<i32>, %b: tensor<i32>):
        %s = "stablehlo.or"(%a, %b) : (tensor<i32>, tensor<i32>) -> tensor<i32>
        "stablehlo.return"(%s) : (tensor<i32>) -> ()
      }) : (tensor<4xi32>) -> tensor<4xi32>
      %3 = "stablehlo.all_reduce"(%2) <{replica_groups = dense<[[0]]> : tensor<1x1xi64>}> ({
      ^bb0(%a: tensor<i32>, %b: tensor<i32>):
        %s = "stablehlo.xor"(%a, %b) : (tensor<i32>, tensor<i32>) -> tensor<i32>
        "stablehlo.return"(%s) : (tensor<i32>) -> ()
      }) : (tensor<4xi32>) -> tensor<4xi32>
      "sdy.return"(%3) : (tensor<4xi32>) -> ()
    }) : (tensor<16xi32>) -> tensor<16xi32>
    "func.return"(%0) : (tensor<16xi32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

// -----

// collective_broadcast: the first process of each group is the root (a
// rank with one group, a position in a group with several).
// CHECK-LABEL: func.func @broadcast
// CHECK: "coll.broadcast"(%arg0) {devices = array<i64: 0, 1, 2, 3>, operandSegmentSizes = array<i32: 1, 0, 0>, root = 0 : i64}
// CHECK: "coll.broadcast"({{.*}}) {devices = array<i64: 0, 1>, groups = array<i64: 1, 0, 3, 2>, operandSegmentSizes = array<i32: 1, 0, 0>, root = 0 : i64}
"builtin.module"() ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=4]>, sym_name = "mesh"}> : () -> ()
  "func.func"() <{function_type = (tensor<16xf32>) -> tensor<16xf32>, sym_name = "broadcast"}> ({
  ^bb0(%arg0: tensor<16xf32>):
    %0 = "sdy.manual_computation"(%arg0) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>, manual_axes = #sdy<manual_axes{"x"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>}> ({
    ^bb0(%arg1: tensor<4xf32>):
      %1 = "stablehlo.collective_broadcast"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>}> : (tensor<4xf32>) -> tensor<4xf32>
      %2 = "stablehlo.collective_broadcast"(%1) <{channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>, replica_groups = dense<[[1, 0], [3, 2]]> : tensor<2x2xi64>}> : (tensor<4xf32>) -> tensor<4xf32>
      "sdy.return"(%2) : (tensor<4xf32>) -> ()
    }) : (tensor<16xf32>) -> tensor<16xf32>
    "func.return"(%0) : (tensor<16xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

// -----

// partition_id through device_ids (rank r holds device device_ids[r]): a
// table lookup; replica_id is 0 (one replica).
// CHECK-LABEL: func.func @ids
// CHECK: %[[RK:.*]] = mpi.comm_rank
// CHECK: %[[I:.*]] = arith.index_cast %[[RK]] : i32 to index
// CHECK: %[[TAB:.*]] = arith.constant dense<[2, 3, 0, 1]> : tensor<4xi32>
// CHECK: %[[ID:.*]] = tensor.extract %[[TAB]][%[[I]]] : tensor<4xi32>
// CHECK: %[[T:.*]] = tensor.from_elements %[[ID]] : tensor<i32>
// CHECK: "stablehlo.convert"(%[[T]]) : (tensor<i32>) -> tensor<ui32>
// CHECK: "stablehlo.constant"() {value = dense<0> : tensor<ui32>} : () -> tensor<ui32>
// CHECK-NOT: partition_id
// CHECK-NOT: replica_id
"builtin.module"() ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=4], device_ids=[2, 3, 0, 1]>, sym_name = "mesh"}> : () -> ()
  "func.func"() <{function_type = (tensor<4xf32>) -> (tensor<4xui32>, tensor<4xui32>, tensor<4xf32>), sym_name = "ids"}> ({
  ^bb0(%arg0: tensor<4xf32>):
    %0:3 = "sdy.manual_computation"(%arg0) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>, manual_axes = #sdy<manual_axes{"x"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>, <@mesh, [{"x"}]>, <@mesh, [{"x"}]>]>}> ({
    ^bb0(%arg1: tensor<1xf32>):
      %1 = "stablehlo.partition_id"() : () -> tensor<ui32>
      %2 = "stablehlo.replica_id"() : () -> tensor<ui32>
      %3 = "stablehlo.reshape"(%1) : (tensor<ui32>) -> tensor<1xui32>
      %4 = "stablehlo.reshape"(%2) : (tensor<ui32>) -> tensor<1xui32>
      %5 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%s) : (tensor<f32>) -> ()
      }) : (tensor<1xf32>) -> tensor<1xf32>
      "sdy.return"(%3, %4, %5) : (tensor<1xui32>, tensor<1xui32>, tensor<1xf32>) -> ()
    }) : (tensor<4xf32>) -> (tensor<4xui32>, tensor<4xui32>, tensor<4xf32>)
    "func.return"(%0#0, %0#1, %0#2) : (tensor<4xui32>, tensor<4xui32>, tensor<4xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
