// Bools and nested calls as JAX exports them. On i1, StableHLO's maximum and
// add are logical or, minimum logical and (JAX's pmax/pmin of bools): the
// imported all_reduce kinds are or/and, which coll defines on i1. An op
// inlined from a private function (a nested jit: its ops carry only a name)
// is located at the call, as upstream's inliner does, so a refusal there
// names the Python line.
// RUN: not coll-opt --allow-unregistered-dialect --split-input-file --mlir-print-debuginfo --coll-from-stablehlo %s 2>/dev/null | FileCheck %s
// RUN: not coll-opt --allow-unregistered-dialect --split-input-file --coll-from-stablehlo %s 2>&1 >/dev/null | FileCheck %s --check-prefix=ERR

// CHECK-LABEL: func.func @main(%arg0: tensor<2xi1>
// CHECK: "coll.all_reduce"(%arg0) {{.*}}kind = "or"{{.*}} : (tensor<2xi1>) -> (!coll.token, tensor<2xi1>)
// CHECK: "coll.all_reduce"(%arg0) {{.*}}kind = "and"
// CHECK: "coll.all_reduce"(%arg0) {{.*}}kind = "or"{{.*}} loc(#[[CALLED:loc[0-9]+]])
// CHECK-DAG: #[[PSUM:loc[0-9]+]] = loc("psum")
// CHECK-DAG: #[[LINE:loc[0-9]+]] = loc("model.py":12:4)
// CHECK-DAG: #[[CALL:loc[0-9]+]] = loc("any"(#[[LINE]]))
// CHECK-DAG: #[[CALLED]] = loc(callsite(#[[PSUM]] at #[[CALL]]))
"builtin.module"() ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=4]>, sym_name = "mesh"}> : () -> ()
  "func.func"() <{function_type = (tensor<8xi1>) -> (tensor<8xi1>, tensor<8xi1>, tensor<8xi1>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<8xi1>):
    %0:3 = "sdy.manual_computation"(%arg0) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>, manual_axes = #sdy<manual_axes{"x"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>, <@mesh, [{"x"}]>, <@mesh, [{"x"}]>]>}> ({
    ^bb0(%arg1: tensor<2xi1>):
      %1 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> ({
      ^bb0(%a: tensor<i1>, %b: tensor<i1>):
        %r = "stablehlo.maximum"(%a, %b) : (tensor<i1>, tensor<i1>) -> tensor<i1>
        "stablehlo.return"(%r) : (tensor<i1>) -> ()
      }) : (tensor<2xi1>) -> tensor<2xi1>
      %2 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> ({
      ^bb0(%a: tensor<i1>, %b: tensor<i1>):
        %r = "stablehlo.minimum"(%a, %b) : (tensor<i1>, tensor<i1>) -> tensor<i1>
        "stablehlo.return"(%r) : (tensor<i1>) -> ()
      }) : (tensor<2xi1>) -> tensor<2xi1>
      %3 = "func.call"(%arg1) <{callee = @any}> : (tensor<2xi1>) -> tensor<2xi1> loc("any"("model.py":12:4))
      "sdy.return"(%1, %2, %3) : (tensor<2xi1>, tensor<2xi1>, tensor<2xi1>) -> ()
    }) : (tensor<8xi1>) -> (tensor<8xi1>, tensor<8xi1>, tensor<8xi1>)
    "func.return"(%0#0, %0#1, %0#2) : (tensor<8xi1>, tensor<8xi1>, tensor<8xi1>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<2xi1>) -> tensor<2xi1>, sym_name = "any", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<2xi1>):
    %0 = "stablehlo.all_reduce"(%arg0) <{channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> ({
    ^bb0(%a: tensor<i1>, %b: tensor<i1>):
      %r = "stablehlo.add"(%a, %b) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      "stablehlo.return"(%r) : (tensor<i1>) -> ()
    }) : (tensor<2xi1>) -> tensor<2xi1> loc("psum")
    "func.return"(%0) : (tensor<2xi1>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

// -----
// ERR: model.py:12:4: error: coll-from-stablehlo: 'stablehlo.collective_permute' without a channel

"builtin.module"() ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=4]>, sym_name = "mesh"}> : () -> ()
  "func.func"() <{function_type = (tensor<8xi1>) -> (tensor<8xi1>, tensor<8xi1>, tensor<8xi1>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<8xi1>):
    %0:3 = "sdy.manual_computation"(%arg0) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>, manual_axes = #sdy<manual_axes{"x"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>, <@mesh, [{"x"}]>, <@mesh, [{"x"}]>]>}> ({
    ^bb0(%arg1: tensor<2xi1>):
      %1 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> ({
      ^bb0(%a: tensor<i1>, %b: tensor<i1>):
        %r = "stablehlo.maximum"(%a, %b) : (tensor<i1>, tensor<i1>) -> tensor<i1>
        "stablehlo.return"(%r) : (tensor<i1>) -> ()
      }) : (tensor<2xi1>) -> tensor<2xi1>
      %2 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> ({
      ^bb0(%a: tensor<i1>, %b: tensor<i1>):
        %r = "stablehlo.minimum"(%a, %b) : (tensor<i1>, tensor<i1>) -> tensor<i1>
        "stablehlo.return"(%r) : (tensor<i1>) -> ()
      }) : (tensor<2xi1>) -> tensor<2xi1>
      %3 = "func.call"(%arg1) <{callee = @any}> : (tensor<2xi1>) -> tensor<2xi1> loc("any"("model.py":12:4))
      "sdy.return"(%1, %2, %3) : (tensor<2xi1>, tensor<2xi1>, tensor<2xi1>) -> ()
    }) : (tensor<8xi1>) -> (tensor<8xi1>, tensor<8xi1>, tensor<8xi1>)
    "func.return"(%0#0, %0#1, %0#2) : (tensor<8xi1>, tensor<8xi1>, tensor<8xi1>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<2xi1>) -> tensor<2xi1>, sym_name = "any", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<2xi1>):
    %0 = "stablehlo.all_reduce"(%arg0) <{channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> ({
    ^bb0(%a: tensor<i1>, %b: tensor<i1>):
      %r = "stablehlo.add"(%a, %b) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      "stablehlo.return"(%r) : (tensor<i1>) -> ()
    }) : (tensor<2xi1>) -> tensor<2xi1> loc("psum")
    %9 = "stablehlo.collective_permute"(%arg0) <{source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>}> : (tensor<2xi1>) -> tensor<2xi1> loc("ppermute")
    "func.return"(%0) : (tensor<2xi1>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
