"builtin.module"() <{sym_name = "jit_while_psum"}> ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=8]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 8 : i64}]}} : () -> ()
  "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}], function_type = (tensor<64xf32>) -> tensor<64xf32>, res_attrs = [{jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<64xf32>):
    %0 = "sdy.manual_computation"(%arg0) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>, manual_axes = #sdy<manual_axes{"x"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>}> ({
    ^bb0(%arg1: tensor<8xf32>):
      %1 = "stablehlo.while"(%arg1) ({
      ^bb0(%arg5: tensor<8xf32>):
        %8 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
        %9 = "stablehlo.reduce"(%arg5, %8) <{dimensions = array<i64: 0>}> ({
        ^bb0(%arg8: tensor<f32>, %arg9: tensor<f32>):
          %14 = "stablehlo.maximum"(%arg8, %arg9) : (tensor<f32>, tensor<f32>) -> tensor<f32>
          "stablehlo.return"(%14) : (tensor<f32>) -> ()
        }) : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
        %10 = "stablehlo.all_reduce"(%9) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>, use_global_device_ids}> ({
        ^bb0(%arg6: tensor<f32>, %arg7: tensor<f32>):
          %13 = "stablehlo.maximum"(%arg6, %arg7) : (tensor<f32>, tensor<f32>) -> tensor<f32>
          "stablehlo.return"(%13) : (tensor<f32>) -> ()
        }) : (tensor<f32>) -> tensor<f32>
        %11 = "stablehlo.constant"() <{value = dense<1.000000e+03> : tensor<f32>}> : () -> tensor<f32>
        %12 = "stablehlo.compare"(%10, %11) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
        "stablehlo.return"(%12) : (tensor<i1>) -> ()
      }, {
      ^bb0(%arg2: tensor<8xf32>):
        %2 = "stablehlo.all_reduce"(%arg2) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>, use_global_device_ids}> ({
        ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
          %7 = "stablehlo.add"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
          "stablehlo.return"(%7) : (tensor<f32>) -> ()
        }) : (tensor<8xf32>) -> tensor<8xf32>
        %3 = "stablehlo.add"(%arg2, %2) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
        %4 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
        %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8xf32>
        %6 = "stablehlo.add"(%3, %5) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
        "stablehlo.return"(%6) : (tensor<8xf32>) -> ()
      }) : (tensor<8xf32>) -> tensor<8xf32>
      "sdy.return"(%1) : (tensor<8xf32>) -> ()
    }) : (tensor<64xf32>) -> tensor<64xf32>
    "func.return"(%0) : (tensor<64xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
