"builtin.module"() <{sym_name = "jit_pipeline"}> ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=8]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 8 : i64}]}} : () -> ()
  "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}], function_type = (tensor<32x8xf32>, tensor<64x8xf32>) -> tensor<32x8xf32>, res_attrs = [{jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg2: tensor<32x8xf32>, %arg3: tensor<64x8xf32>):
    %3 = "sdy.manual_computation"(%arg2, %arg3) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>, <@mesh, [{"x"}, {}]>]>, manual_axes = #sdy<manual_axes{"x"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}> ({
    ^bb0(%arg4: tensor<4x8xf32>, %arg5: tensor<8x8xf32>):
      %4 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %5:3 = "stablehlo.while"(%arg5, %4, %arg4) ({
      ^bb0(%arg9: tensor<8x8xf32>, %arg10: tensor<i32>, %arg11: tensor<4x8xf32>):
        %9 = "stablehlo.constant"() <{value = dense<8> : tensor<i32>}> : () -> tensor<i32>
        %10 = "stablehlo.compare"(%arg10, %9) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
        "stablehlo.return"(%10) : (tensor<i1>) -> ()
      }, {
      ^bb0(%arg6: tensor<8x8xf32>, %arg7: tensor<i32>, %arg8: tensor<4x8xf32>):
        %6 = "func.call"(%arg6, %arg8) <{callee = @closed_call}> : (tensor<8x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
        %7 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
        %8 = "stablehlo.add"(%arg7, %7) : (tensor<i32>, tensor<i32>) -> tensor<i32>
        "stablehlo.return"(%arg6, %8, %6) : (tensor<8x8xf32>, tensor<i32>, tensor<4x8xf32>) -> ()
      }) : (tensor<8x8xf32>, tensor<i32>, tensor<4x8xf32>) -> (tensor<8x8xf32>, tensor<i32>, tensor<4x8xf32>)
      "sdy.return"(%5#2) : (tensor<4x8xf32>) -> ()
    }) : (tensor<32x8xf32>, tensor<64x8xf32>) -> tensor<32x8xf32>
    "func.return"(%3) : (tensor<32x8xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<8x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>, res_attrs = [{}], sym_name = "closed_call", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<8x8xf32>, %arg1: tensor<4x8xf32>):
    %0 = "stablehlo.dot_general"(%arg1, %arg0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %1 = "stablehlo.tanh"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %2 = "stablehlo.collective_permute"(%1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 4], [4, 5], [5, 6], [6, 7], [7, 0]]> : tensor<8x2xi64>}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
    "func.return"(%2) : (tensor<4x8xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
