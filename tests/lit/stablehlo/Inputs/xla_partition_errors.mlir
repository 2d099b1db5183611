// What coll-xla-partition refuses, located (tests/lit/stablehlo/xla_partition.mlir).

// A mesh whose positions are not in device order: partition p is not rank p.
"builtin.module"() <{sym_name = "jit_f"}> ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2], device_ids=[1, 0]>, sym_name = "mesh"}> : () -> ()
  // expected-error @below {{XLA's partitioner gives partition 0 the block [[2, 4]] of argument #0 but its sharding gives rank 0 [[0, 2]]}}
  "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}], function_type = (tensor<4xf32>) -> tensor<4xf32>, res_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}], sym_name = "main"}> ({
  ^bb0(%arg0: tensor<4xf32>):
    %0 = "stablehlo.add"(%arg0, %arg0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "func.return"(%0) : (tensor<4xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

// -----

// A result without a sharding: XLA chooses one (here split), the layouts
// say replicated.
"builtin.module"() <{sym_name = "jit_f"}> ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> : () -> ()
  // expected-error @below {{XLA's partitioner gives partition 0 the block [[0, 2]] of result #0 but its sharding gives rank 0 [[0, 4]]; expected a sharding on every argument and result}}
  "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}], function_type = (tensor<4xf32>) -> tensor<4xf32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<4xf32>):
    %0 = "stablehlo.add"(%arg0, %arg0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "func.return"(%0) : (tensor<4xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

// -----

// What XLA itself refuses: said at the first StableHLO op.
"builtin.module"() <{sym_name = "jit_f"}> ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> : () -> ()
  "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}], function_type = (tensor<4xf32>) -> tensor<4xf32>, res_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}], sym_name = "main"}> ({
  ^bb0(%arg0: tensor<4xf32>):
    // expected-error @below {{XLA's partitioner failed: NOT_FOUND: No registered implementation for untyped custom call to no_such_target}}
    %0 = "stablehlo.custom_call"(%arg0) <{call_target_name = "no_such_target"}> : (tensor<4xf32>) -> tensor<4xf32>
    "func.return"(%0) : (tensor<4xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
