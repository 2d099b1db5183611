"builtin.module"() <{sym_name = "jit_at_set"}> ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=8]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 8 : i64}]}} : () -> ()
  "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}], function_type = (tensor<64xf32>, tensor<32xi32>) -> tensor<8xf32>, res_attrs = [{jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{}]>}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg5: tensor<64xf32>, %arg6: tensor<32xi32>):
    %22 = "stablehlo.constant"() <{value = dense<[0, 2]> : tensor<2xi32>}> : () -> tensor<2xi32>
    %23 = "sdy.manual_computation"(%22, %arg5, %arg6) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{}]>, <@mesh, [{"x"}]>, <@mesh, [{"x"}]>]>, manual_axes = #sdy<manual_axes{"x"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{}]>]>}> ({
    ^bb0(%arg7: tensor<2xi32>, %arg8: tensor<8xf32>, %arg9: tensor<4xi32>):
      %24 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %25 = "stablehlo.broadcast_in_dim"(%24) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<4xi32>
      %26 = "stablehlo.compare"(%arg9, %25) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
      %27 = "stablehlo.constant"() <{value = dense<8> : tensor<i32>}> : () -> tensor<i32>
      %28 = "stablehlo.broadcast_in_dim"(%27) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<4xi32>
      %29 = "stablehlo.add"(%arg9, %28) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
      %30 = "stablehlo.select"(%26, %29, %arg9) : (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
      %31 = "stablehlo.broadcast_in_dim"(%30) <{broadcast_dimensions = array<i64: 0>}> : (tensor<4xi32>) -> tensor<4x1xi32>
      %32 = "stablehlo.constant"() <{value = dense<7.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %33 = "stablehlo.broadcast_in_dim"(%32) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4xf32>
      %34 = "stablehlo.scatter"(%arg8, %31, %33) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
      ^bb0(%arg16: tensor<f32>, %arg17: tensor<f32>):
        "stablehlo.return"(%arg17) : (tensor<f32>) -> ()
      }) : (tensor<8xf32>, tensor<4x1xi32>, tensor<4xf32>) -> tensor<8xf32>
      %35 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %36 = "stablehlo.broadcast_in_dim"(%35) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<4xi32>
      %37 = "stablehlo.add"(%arg9, %36) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
      %38 = "stablehlo.constant"() <{value = dense<8> : tensor<i32>}> : () -> tensor<i32>
      %39 = "func.call"(%37, %38) <{callee = @remainder}> : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
      %40 = "stablehlo.slice"(%arg8) <{limit_indices = array<i64: 4>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<8xf32>) -> tensor<4xf32>
      %41 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %42 = "stablehlo.broadcast_in_dim"(%41) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<4xi32>
      %43 = "stablehlo.compare"(%39, %42) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
      %44 = "stablehlo.constant"() <{value = dense<8> : tensor<i32>}> : () -> tensor<i32>
      %45 = "stablehlo.broadcast_in_dim"(%44) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<4xi32>
      %46 = "stablehlo.add"(%39, %45) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
      %47 = "stablehlo.select"(%43, %46, %39) : (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
      %48 = "stablehlo.broadcast_in_dim"(%47) <{broadcast_dimensions = array<i64: 0>}> : (tensor<4xi32>) -> tensor<4x1xi32>
      %49 = "stablehlo.scatter"(%34, %48, %40) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
      ^bb0(%arg14: tensor<f32>, %arg15: tensor<f32>):
        %64 = "stablehlo.add"(%arg14, %arg15) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%64) : (tensor<f32>) -> ()
      }) : (tensor<8xf32>, tensor<4x1xi32>, tensor<4xf32>) -> tensor<8xf32>
      %50 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %51 = "stablehlo.broadcast_in_dim"(%50) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<2xi32>
      %52 = "stablehlo.compare"(%arg7, %51) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
      %53 = "stablehlo.constant"() <{value = dense<8> : tensor<i32>}> : () -> tensor<i32>
      %54 = "stablehlo.broadcast_in_dim"(%53) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<2xi32>
      %55 = "stablehlo.add"(%arg7, %54) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
      %56 = "stablehlo.select"(%52, %55, %arg7) : (tensor<2xi1>, tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
      %57 = "stablehlo.broadcast_in_dim"(%56) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2xi32>) -> tensor<2x1xi32>
      %58 = "stablehlo.constant"() <{value = dense<3.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %59 = "stablehlo.broadcast_in_dim"(%58) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2xf32>
      %60 = "stablehlo.scatter"(%49, %57, %59) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
      ^bb0(%arg12: tensor<f32>, %arg13: tensor<f32>):
        %63 = "stablehlo.multiply"(%arg12, %arg13) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%63) : (tensor<f32>) -> ()
      }) : (tensor<8xf32>, tensor<2x1xi32>, tensor<2xf32>) -> tensor<8xf32>
      %61 = "stablehlo.all_reduce"(%60) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>, use_global_device_ids}> ({
      ^bb0(%arg10: tensor<f32>, %arg11: tensor<f32>):
        %62 = "stablehlo.add"(%arg10, %arg11) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%62) : (tensor<f32>) -> ()
      }) : (tensor<8xf32>) -> tensor<8xf32>
      "sdy.return"(%61) : (tensor<8xf32>) -> ()
    }) : (tensor<2xi32>, tensor<64xf32>, tensor<32xi32>) -> tensor<8xf32>
    "func.return"(%23) : (tensor<8xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>, res_attrs = [{}], sym_name = "remainder", sym_visibility = "private"}> ({
  ^bb0(%arg3: tensor<4xi32>, %arg4: tensor<i32>):
    %1 = "stablehlo.convert"(%arg4) : (tensor<i32>) -> tensor<i32>
    %2 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %3 = "stablehlo.compare"(%1, %2) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %4 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %5 = "func.call"(%3, %4, %1) <{callee = @_where}> : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %6 = "stablehlo.broadcast_in_dim"(%5) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<4xi32>
    %7 = "stablehlo.remainder"(%arg3, %6) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %8 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %9 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<4xi32>
    %10 = "stablehlo.compare"(%7, %9) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
    %11 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %12 = "stablehlo.broadcast_in_dim"(%11) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<4xi32>
    %13 = "stablehlo.compare"(%7, %12) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
    %14 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %15 = "stablehlo.compare"(%5, %14) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %16 = "stablehlo.broadcast_in_dim"(%15) <{broadcast_dimensions = array<i64>}> : (tensor<i1>) -> tensor<4xi1>
    %17 = "stablehlo.compare"(%13, %16) <{compare_type = #stablehlo<comparison_type UNSIGNED>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
    %18 = "stablehlo.and"(%17, %10) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
    %19 = "stablehlo.broadcast_in_dim"(%5) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<4xi32>
    %20 = "stablehlo.add"(%7, %19) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %21 = "stablehlo.select"(%18, %20, %7) : (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    "func.return"(%21) : (tensor<4xi32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>, res_attrs = [{}], sym_name = "_where", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<i1>, %arg1: tensor<i32>, %arg2: tensor<i32>):
    %0 = "stablehlo.select"(%arg0, %arg1, %arg2) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    "func.return"(%0) : (tensor<i32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
