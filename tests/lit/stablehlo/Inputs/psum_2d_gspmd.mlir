"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{mhlo.sharding = "{devices=[8]<=[8]}"}], function_type = (tensor<64xf32>) -> tensor<16xf32>, res_attrs = [{jax.result_info = "result", mhlo.sharding = "{devices=[2,4]<=[8] last_tile_dim_replicate}"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg3: tensor<64xf32>):
    %2 = "stablehlo.custom_call"(%arg3) <{api_version = 1 : i32, backend_config = "", call_target_name = "Sharding", called_computations = [], has_side_effect = false}> {mhlo.sharding = "{devices=[8]<=[8]}"} : (tensor<64xf32>) -> tensor<64xf32>
    %3 = "stablehlo.custom_call"(%2) <{api_version = 1 : i32, backend_config = "", call_target_name = "SPMDFullToShardShape", called_computations = [], has_side_effect = false}> {mhlo.sharding = "{manual}"} : (tensor<64xf32>) -> tensor<8xf32>
    %4 = "func.call"(%3) <{callee = @shmap_body}> : (tensor<8xf32>) -> tensor<8xf32>
    %5 = "stablehlo.custom_call"(%4) <{api_version = 1 : i32, backend_config = "", call_target_name = "Sharding", called_computations = [], has_side_effect = false}> {mhlo.sharding = "{manual}"} : (tensor<8xf32>) -> tensor<8xf32>
    %6 = "stablehlo.custom_call"(%5) <{api_version = 1 : i32, backend_config = "", call_target_name = "SPMDShardToFullShape", called_computations = [], has_side_effect = false}> {mhlo.sharding = "{devices=[2,4]<=[8] last_tile_dim_replicate}"} : (tensor<8xf32>) -> tensor<16xf32>
    "func.return"(%6) : (tensor<16xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<8xf32>) -> tensor<8xf32>, res_attrs = [{jax.result_info = "[('dp',)]"}], sym_name = "shmap_body", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<8xf32>):
    %0 = "stablehlo.all_reduce"(%arg0) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3], [4, 5, 6, 7]]> : tensor<2x4xi64>, use_global_device_ids}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %1 = "stablehlo.add"(%arg1, %arg2) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%1) : (tensor<f32>) -> ()
    }) : (tensor<8xf32>) -> tensor<8xf32>
    "func.return"(%0) : (tensor<8xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
