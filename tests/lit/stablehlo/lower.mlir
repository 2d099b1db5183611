// The StableHLO ops jaxlib 0.10.2's stablehlo-legalize-to-linalg leaves,
// lowered by coll-stablehlo-to-linalg before it runs
// (frontends/stablehlo_lower.py), on modules written as JAX 0.10.2 prints
// them; and the ones refused, each at its op with the JAX calls named.
// REQUIRES: jaxlib
// RUN: coll-opt --allow-unregistered-dialect --split-input-file --verify-diagnostics --coll-stablehlo-to-linalg %s | FileCheck %s

// lax.fori_loop(0, 4, ...): a counter from 0, below 4, by one -> scf.for
// with constant bounds (what coll-spmd-to-mpi keeps and coll-spmd-to-global
// unrolls); the collective in the body stays there.
// CHECK-LABEL: func.func @fori
// CHECK: scf.for %{{.*}} = %c0 to %c4 step %c1 iter_args(
// CHECK: "coll.permute"
// CHECK: scf.yield
// CHECK-NOT: stablehlo
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<4xf32>) -> tensor<4xf32>, sym_name = "fori"}> ({
  ^bb0(%arg0: tensor<4xf32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1:2 = "stablehlo.while"(%0, %arg0) ({
    ^bb0(%i: tensor<i32>, %x: tensor<4xf32>):
      %c = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
      %lt = "stablehlo.compare"(%i, %c) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%lt) : (tensor<i1>) -> ()
    }, {
    ^bb0(%i: tensor<i32>, %x: tensor<4xf32>):
      %t = "stablehlo.tanh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
      %p:2 = "coll.permute"(%t) {devices = array<i64: 0, 1, 2, 3>, operandSegmentSizes = array<i32: 1, 0, 0>, pairs = array<i64: 0, 1, 1, 2, 2, 3, 3, 0>} : (tensor<4xf32>) -> (!coll.token, tensor<4xf32>)
      %one = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %n = "stablehlo.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%n, %p#1) : (tensor<i32>, tensor<4xf32>) -> ()
    }) : (tensor<i32>, tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>)
    "func.return"(%1#1) : (tensor<4xf32>) -> ()
  }) {coll.ranks = 4 : i64} : () -> ()
}) : () -> ()

// -----

// lax.while_loop on data: scf.while, the condition read from its tensor<i1>.
// CHECK-LABEL: func.func @while
// CHECK: scf.while (%{{.*}} = %arg0) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[C:.*]] = tensor.extract %{{.*}}[] : tensor<i1>
// CHECK: scf.condition(%[[C]])
// CHECK: } do {
// CHECK: scf.yield
// CHECK-NOT: stablehlo
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<4xf32>) -> tensor<4xf32>, sym_name = "while"}> ({
  ^bb0(%arg0: tensor<4xf32>):
    %1 = "stablehlo.while"(%arg0) ({
    ^bb0(%x: tensor<4xf32>):
      %z = "stablehlo.constant"() <{value = dense<1.000000e+02> : tensor<f32>}> : () -> tensor<f32>
      %init = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
      %m = "stablehlo.reduce"(%x, %init) <{dimensions = array<i64: 0>}> ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %mx = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%mx) : (tensor<f32>) -> ()
      }) : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
      %lt = "stablehlo.compare"(%m, %z) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "stablehlo.return"(%lt) : (tensor<i1>) -> ()
    }, {
    ^bb0(%x: tensor<4xf32>):
      %y = "stablehlo.add"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      "stablehlo.return"(%y) : (tensor<4xf32>) -> ()
    }) : (tensor<4xf32>) -> tensor<4xf32>
    "func.return"(%1) : (tensor<4xf32>) -> ()
  }) : () -> ()
}) : () -> ()

// -----

// lax.cond / lax.switch: case -> scf.index_switch, the last branch the default.
// CHECK-LABEL: func.func @case
// CHECK: %[[I:.*]] = arith.index_cast
// CHECK: scf.index_switch %[[I]] -> tensor<4xf32>
// CHECK: case 0 {
// CHECK: arith.mulf
// CHECK: default {
// CHECK: arith.addf
// CHECK-NOT: stablehlo
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<i32>, tensor<4xf32>) -> tensor<4xf32>, sym_name = "case"}> ({
  ^bb0(%arg0: tensor<i32>, %arg1: tensor<4xf32>):
    %0 = "stablehlo.case"(%arg0) ({
      %m = "stablehlo.multiply"(%arg1, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      "stablehlo.return"(%m) : (tensor<4xf32>) -> ()
    }, {
      %a = "stablehlo.add"(%arg1, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      "stablehlo.return"(%a) : (tensor<4xf32>) -> ()
    }) : (tensor<i32>) -> tensor<4xf32>
    "func.return"(%0) : (tensor<4xf32>) -> ()
  }) : () -> ()
}) : () -> ()

// -----

// jax.checkpoint: optimization_barrier is its operands.
// CHECK-LABEL: func.func @barrier
// CHECK: math.cos
// CHECK-NOT: stablehlo
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<4xf32>) -> tensor<4xf32>, sym_name = "barrier"}> ({
  ^bb0(%arg0: tensor<4xf32>):
    %0 = "stablehlo.optimization_barrier"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = "stablehlo.cosine"(%0) : (tensor<4xf32>) -> tensor<4xf32>
    "func.return"(%1) : (tensor<4xf32>) -> ()
  }) : () -> ()
}) : () -> ()

// -----

// x.at[i].set(u): one loop over the updates, each inserted where its index
// says when its window fits (XLA drops the others: an insert out of bounds
// would write past the buffer).
// CHECK-LABEL: func.func @at_set
// CHECK: scf.for %[[U:.*]] = %c0 to %c2 step %c1 iter_args(%[[ACC:.*]] = %arg0) -> (tensor<8xf32>)
// CHECK: %[[I:.*]] = tensor.extract %arg1[%[[U]], %c0] : tensor<2x1xi32>
// CHECK: %[[J:.*]] = arith.index_cast %[[I]]
// CHECK: arith.cmpi sge, %[[J]], %c0
// CHECK: arith.cmpi sle, %[[J]], %c7
// CHECK: scf.if %{{.*}} -> (tensor<8xf32>) {
// CHECK: %[[V:.*]] = tensor.extract %arg2[%[[U]]]
// CHECK: %[[NEW:.*]] = tensor.insert %[[V]] into %[[ACC]][%[[J]]]
// CHECK: scf.yield %[[NEW]]
// CHECK: } else {
// CHECK: scf.yield %[[ACC]]
// CHECK-NOT: stablehlo
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<8xf32>, tensor<2x1xi32>, tensor<2xf32>) -> tensor<8xf32>, sym_name = "at_set"}> ({
  ^bb0(%arg0: tensor<8xf32>, %arg1: tensor<2x1xi32>, %arg2: tensor<2xf32>):
    %0 = "stablehlo.scatter"(%arg0, %arg1, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      "stablehlo.return"(%b) : (tensor<f32>) -> ()
    }) : (tensor<8xf32>, tensor<2x1xi32>, tensor<2xf32>) -> tensor<8xf32>
    "func.return"(%0) : (tensor<8xf32>) -> ()
  }) : () -> ()
}) : () -> ()

// -----

// The gradient of take_along_axis(a, idx, axis=1): a scatter-add whose
// rows are batch dimensions (input_batching_dims); the row is the batch
// position, the column the index.
// CHECK-LABEL: func.func @take_along_grad
// CHECK: scf.for %[[R:.*]] = %c0 to %c2 step %c1 iter_args(%[[A0:.*]] = %arg0)
// CHECK: scf.for %[[C:.*]] = %c0 to %c3 step %c1 iter_args(%[[A1:.*]] = %[[A0]])
// CHECK: %[[I:.*]] = tensor.extract %arg1[%[[R]], %[[C]], %c0] : tensor<2x3x1xi32>
// CHECK: %[[J:.*]] = arith.index_cast %[[I]]
// CHECK: %[[OLD:.*]] = tensor.extract %[[A1]][%[[R]], %[[J]]]
// CHECK: %[[SUM:.*]] = arith.addf %[[OLD]]
// CHECK: tensor.insert %[[SUM]] into %[[A1]][%[[R]], %[[J]]]
// CHECK-NOT: stablehlo
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<2x4xf32>, tensor<2x3x1xi32>, tensor<2x3xf32>) -> tensor<2x4xf32>, sym_name = "take_along_grad"}> ({
  ^bb0(%arg0: tensor<2x4xf32>, %arg1: tensor<2x3x1xi32>, %arg2: tensor<2x3xf32>):
    %0 = "stablehlo.scatter"(%arg0, %arg1, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = [0], scatter_dims_to_operand_dims = [1], index_vector_dim = 2>, unique_indices = false}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%s) : (tensor<f32>) -> ()
    }) : (tensor<2x4xf32>, tensor<2x3x1xi32>, tensor<2x3xf32>) -> tensor<2x4xf32>
    "func.return"(%0) : (tensor<2x4xf32>) -> ()
  }) : () -> ()
}) : () -> ()

// -----

"builtin.module"() ({
  "func.func"() <{function_type = (tensor<8xf32>, tensor<2x1xi32>, tensor<2xf32>) -> tensor<8xf32>, sym_name = "scatter_sub"}> ({
  ^bb0(%arg0: tensor<8xf32>, %arg1: tensor<2x1xi32>, %arg2: tensor<2xf32>):
    // expected-error @below {{'stablehlo.scatter' (from x.at[i].set/add/mul/min/max, gradients of indexing and jnp.take_along_axis) updates with ['stablehlo.subtract']; expected a region that returns the update or applies one of add, multiply, maximum, minimum, and, or, xor}}
    %0 = "stablehlo.scatter"(%arg0, %arg1, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = "stablehlo.subtract"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%s) : (tensor<f32>) -> ()
    }) : (tensor<8xf32>, tensor<2x1xi32>, tensor<2xf32>) -> tensor<8xf32>
    "func.return"(%0) : (tensor<8xf32>) -> ()
  }) : () -> ()
}) : () -> ()

// -----

// jnp.argsort's sort of two operands (keys, iota): a bubble sort of the
// line, its comparator cloned on 0-d tensors of the right and left
// elements; a swap exchanges both operands' elements.
// CHECK-LABEL: func.func @argsort
// CHECK: scf.for %[[I:.*]] = %c0 to %c7 step %c1 iter_args(%[[K0:.*]] = %arg0, %[[V0:.*]] = %arg1)
// CHECK: %[[END:.*]] = arith.subi %c7, %[[I]]
// CHECK: scf.for %[[J:.*]] = %c0 to %[[END]] step %c1 iter_args(%[[K:.*]] = %[[K0]], %[[V:.*]] = %[[V0]])
// CHECK: %[[R:.*]] = arith.addi %[[J]], %c1
// CHECK: tensor.extract %[[K]][%[[R]]]
// CHECK: tensor.extract %[[K]][%[[J]]]
// CHECK: arith.cmpf olt
// CHECK: scf.if %{{.*}} -> (tensor<8xf32>, tensor<8xi32>)
// CHECK-COUNT-2: tensor.insert
// CHECK: } else {
// CHECK: scf.yield %[[K]], %[[V]]
// CHECK-NOT: stablehlo
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<8xf32>, tensor<8xi32>) -> tensor<8xi32>, sym_name = "argsort"}> ({
  ^bb0(%arg0: tensor<8xf32>, %arg1: tensor<8xi32>):
    %0:2 = "stablehlo.sort"(%arg0, %arg1) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
      %lt = "stablehlo.compare"(%a, %b) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "stablehlo.return"(%lt) : (tensor<i1>) -> ()
    }) : (tensor<8xf32>, tensor<8xi32>) -> (tensor<8xf32>, tensor<8xi32>)
    "func.return"(%0#1) : (tensor<8xi32>) -> ()
  }) : () -> ()
}) : () -> ()

// -----

// jnp.linalg.cholesky on the CPU: a LAPACK call.
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<4x4xf32>) -> tensor<4x4xf32>, sym_name = "cholesky"}> ({
  ^bb0(%arg0: tensor<4x4xf32>):
    // expected-error @below {{'stablehlo.custom_call' (from jnp.linalg.cholesky, qr, eigh, svd, solve) calling lapack_spotrf_ffi has no linalg form}}
    %0:2 = "stablehlo.custom_call"(%arg0) <{api_version = 4 : i32, call_target_name = "lapack_spotrf_ffi", operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]}> {mhlo.backend_config = {uplo = 76 : ui8}} : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<i32>)
    "func.return"(%0#0) : (tensor<4x4xf32>) -> ()
  }) : () -> ()
}) : () -> ()

// -----

// jnp.fft: jaxlib leaves it.
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f32>>, sym_name = "fft"}> ({
  ^bb0(%arg0: tensor<8xcomplex<f32>>):
    // expected-error @below {{'stablehlo.fft' (from jnp.fft) has no linalg form (jaxlib's stablehlo-legalize-to-linalg left it: jaxlib leaves it)}}
    %0 = "stablehlo.fft"(%arg0) <{fft_type = #stablehlo<fft_type FFT>, fft_length = array<i64: 8>}> : (tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f32>>
    "func.return"(%0) : (tensor<8xcomplex<f32>>) -> ()
  }) : () -> ()
}) : () -> ()
