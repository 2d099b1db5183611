// coll-widen-contractions: bf16/f16 contractions accumulate in f32 and
// round once (XLA's dot_general on the CPU); other reductions and f32
// contractions are left alone.
// RUN: coll-opt %s --split-input-file --coll-widen-contractions | FileCheck %s

// CHECK-LABEL: func.func @named
// CHECK: %[[I32:.*]] = linalg.generic {{.*}} ins(%[[INIT:.*]] : tensor<4x8xbf16>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: %[[W:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x16xbf16>, tensor<16x8xbf16>) outs(%[[I32]] : tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[W]] : tensor<4x8xf32>) outs(%{{.*}} : tensor<4x8xbf16>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: return %[[R]]
func.func @named(%a: tensor<4x16xbf16>, %b: tensor<16x8xbf16>, %c: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %r = linalg.matmul ins(%a, %b : tensor<4x16xbf16>, tensor<16x8xbf16>) outs(%c : tensor<4x8xbf16>) -> tensor<4x8xbf16>
  return %r : tensor<4x8xbf16>
}

// -----

// A dot_general as jaxlib legalizes it (a transposed operand): the body's
// products and sums in f32.
// CHECK-LABEL: func.func @generic_mac
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<16x4xf16>, tensor<16x8xf16>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: f16, %[[Y:.*]]: f16, %[[O:.*]]: f32):
// CHECK-NEXT: %[[X32:.*]] = arith.extf %[[X]] : f16 to f32
// CHECK-NEXT: %[[Y32:.*]] = arith.extf %[[Y]] : f16 to f32
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[X32]], %[[Y32]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[O]], %[[M]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @generic_mac(%a: tensor<16x4xf16>, %b: tensor<16x8xf16>, %c: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (k, i)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<16x4xf16>, tensor<16x8xf16>) outs(%c : tensor<4x8xf16>) {
  ^bb0(%x: f16, %y: f16, %o: f16):
    %m = arith.mulf %x, %y : f16
    %s = arith.addf %o, %m : f16
    linalg.yield %s : f16
  } -> tensor<4x8xf16>
  return %r : tensor<4x8xf16>
}

// -----

// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: arith.extf
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x16xf32>, tensor<16x8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : bf16
func.func @left_alone(%a: tensor<4x16xf32>, %b: tensor<16x8xf32>, %c: tensor<4x8xf32>, %d: tensor<4x16xbf16>, %e: tensor<4xbf16>) -> (tensor<4x8xf32>, tensor<4xbf16>) {
  %r = linalg.matmul ins(%a, %b : tensor<4x16xf32>, tensor<16x8xf32>) outs(%c : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%d : tensor<4x16xbf16>) outs(%e : tensor<4xbf16>) {
  ^bb0(%x: bf16, %o: bf16):
    %s = arith.maximumf %o, %x : bf16
    linalg.yield %s : bf16
  } -> tensor<4xbf16>
  return %r, %m : tensor<4x8xf32>, tensor<4xbf16>
}
