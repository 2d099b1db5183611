"builtin.module"() <{sym_name = "jit_mlp_local"}> ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=8]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 8 : i64}]}} : () -> ()
  "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}], function_type = (tensor<8x16xf32>, tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>, res_attrs = [{jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg1: tensor<8x16xf32>, %arg2: tensor<16x8xf32>, %arg3: tensor<8x16xf32>):
    %3 = "sdy.manual_computation"(%arg1, %arg2, %arg3) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{}, {}]>, <@mesh, [{}, {"x"}]>, <@mesh, [{"x"}, {}]>]>, manual_axes = #sdy<manual_axes{"x"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>}> ({
    ^bb0(%arg4: tensor<8x16xf32>, %arg5: tensor<16x1xf32>, %arg6: tensor<1x16xf32>):
      %4 = "stablehlo.dot_general"(%arg4, %arg5) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x16xf32>, tensor<16x1xf32>) -> tensor<8x1xf32>
      %5 = "func.call"(%4) <{callee = @relu}> : (tensor<8x1xf32>) -> tensor<8x1xf32>
      %6 = "stablehlo.dot_general"(%5, %arg6) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x1xf32>, tensor<1x16xf32>) -> tensor<8x16xf32>
      %7 = "stablehlo.all_reduce"(%6) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>, use_global_device_ids}> ({
      ^bb0(%arg7: tensor<f32>, %arg8: tensor<f32>):
        %8 = "stablehlo.add"(%arg7, %arg8) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%8) : (tensor<f32>) -> ()
      }) : (tensor<8x16xf32>) -> tensor<8x16xf32>
      "sdy.return"(%7) : (tensor<8x16xf32>) -> ()
    }) : (tensor<8x16xf32>, tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    "func.return"(%3) : (tensor<8x16xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<8x1xf32>) -> tensor<8x1xf32>, res_attrs = [{}], sym_name = "relu", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<8x1xf32>):
    %0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8x1xf32>
    %2 = "stablehlo.maximum"(%arg0, %1) : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
    "func.return"(%2) : (tensor<8x1xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
