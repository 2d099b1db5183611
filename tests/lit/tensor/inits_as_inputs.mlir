// coll-inits-as-inputs (frontends/fusion.py): an all-parallel linalg.generic
// on tensors whose body reads its init reads it as an input instead (same
// indexing map), so that upstream's linalg-fuse-elementwise-ops, which
// miscompiles such a producer fused into a reduction (LLVM 22.1.8), fuses
// it right. JAX makes one of every dot_general with batch dimensions only.
// Ops with reductions, and ops that never read their inits, are left alone.
// RUN: coll-opt %s --split-input-file --coll-inits-as-inputs | FileCheck %s

// CHECK-LABEL: func.func @batch_only_product
// CHECK: %[[Z:.*]] = linalg.fill
// CHECK: linalg.generic {indexing_maps = [#map, #map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1, %[[Z]] : tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>) outs(%[[Z]] : tensor<4x2xf32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[OLD:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[OLD]], %[[P]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @batch_only_product(%a: tensor<4x2xf32>, %b: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x2xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<4x2xf32>, tensor<4x2xf32>) outs(%z : tensor<4x2xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}

// -----
// CHECK-LABEL: func.func @reduction_and_unread_init
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<4x2xf32>) outs(%{{.*}} : tensor<4xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4x2xf32>) outs(%{{.*}} : tensor<4x2xf32>)
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @reduction_and_unread_init(%a: tensor<4x2xf32>, %acc: tensor<4xf32>) -> (tensor<4xf32>, tensor<4x2xf32>) {
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<4x2xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%x: f32, %out: f32):
    %t = arith.addf %out, %x : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %e = tensor.empty() : tensor<4x2xf32>
  %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x2xf32>) outs(%e : tensor<4x2xf32>) {
  ^bb0(%x: f32, %out: f32):
    %t = arith.negf %x : f32
    linalg.yield %t : f32
  } -> tensor<4x2xf32>
  return %s, %n : tensor<4xf32>, tensor<4x2xf32>
}
