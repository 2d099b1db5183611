// coll-stablehlo-to-linalg: jaxlib's stablehlo-legalize-to-linalg in a
// child process; what it leaves, or fails on, is a located error here.
// REQUIRES: jaxlib
// RUN: coll-opt --allow-unregistered-dialect --split-input-file --verify-diagnostics --coll-stablehlo-to-linalg %s | FileCheck %s

// CHECK-LABEL: func.func @elementwise
// CHECK: linalg.generic
// CHECK: math.cos
// CHECK-NOT: stablehlo
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<8xf32>) -> tensor<8xf32>, sym_name = "elementwise"}> ({
  ^bb0(%arg0: tensor<8xf32>):
    %0 = "stablehlo.cosine"(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
    "func.return"(%0) : (tensor<8xf32>) -> ()
  }) : () -> ()
}) : () -> ()

// -----

"builtin.module"() ({
  "func.func"() <{function_type = (tensor<8xf32>) -> tensor<8xf32>, sym_name = "left"}> ({
  ^bb0(%arg0: tensor<8xf32>):
    // expected-error @below {{coll-stablehlo-to-linalg: 'stablehlo.custom_call' (from jnp.linalg.cholesky, qr, eigh, svd, solve) calling foo has no linalg form (jaxlib's stablehlo-legalize-to-linalg left it: a call into XLA's runtime (LAPACK on the CPU))}}
    %0 = "stablehlo.custom_call"(%arg0) <{call_target_name = "foo"}> : (tensor<8xf32>) -> tensor<8xf32>
    "func.return"(%0) : (tensor<8xf32>) -> ()
  }) : () -> ()
}) : () -> ()

// -----

"builtin.module"() ({
  "func.func"() <{function_type = (tensor<8xf32>) -> tensor<8xf32>, sym_name = "failed"}> ({
  ^bb0(%arg0: tensor<8xf32>):
    // expected-error @below {{jaxlib's stablehlo-legalize-to-linalg failed: FFT/IFFT/IRFFT take a complex tensor as input, but is given 'tensor<8xf32>'.}}
    %0 = "stablehlo.fft"(%arg0) <{fft_type = #stablehlo<fft_type FFT>, fft_length = array<i64: 8>}> : (tensor<8xf32>) -> tensor<8xf32>
    "func.return"(%0) : (tensor<8xf32>) -> ()
  }) : () -> ()
}) : () -> ()

// -----

// Its reduction region would be legalized too: the kinds are read first.
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<8xf32>) -> tensor<8xf32>, sym_name = "collective_first"}> ({
  ^bb0(%arg0: tensor<8xf32>):
    // expected-error @below {{'stablehlo.all_reduce' before coll-from-stablehlo: import the collectives first (stablehlo-legalize-to-linalg rewrites their reduction regions)}}
    %0 = "stablehlo.all_reduce"(%arg0) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%s) : (tensor<f32>) -> ()
    }) : (tensor<8xf32>) -> tensor<8xf32>
    "func.return"(%0) : (tensor<8xf32>) -> ()
  }) : () -> ()
}) : () -> ()
