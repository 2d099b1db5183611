// coll-transposes-into-producers (frontends/fusion.py): a linalg.generic
// whose result's one use reads it through a permutation writes it in that
// order itself (its output map composed with the permutation, its init a
// fill or an empty tensor of the permuted shape), and the use reads it in
// order: JAX's weight-gradient contraction then its transpose become one
// contraction with a transposed output, which coll-blas-contractions calls
// OpenBLAS for, and the transpose a copy that canonicalize folds away.
// RUN: coll-opt %s --split-input-file --coll-transposes-into-producers --canonicalize | FileCheck %s

// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[T:.*]] = affine_map<(d0, d1, d2) -> (d1, d0)>
// CHECK-LABEL: func.func @weight_grad
// CHECK: %[[E:.*]] = tensor.empty() : tensor<8x16xf32>
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<8x16xf32>)
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[T]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : tensor<64x16xf32>, tensor<64x8xf32>) outs(%[[Z]] : tensor<8x16xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]] : tensor<8x16xf32>
#a = affine_map<(d0, d1, d2) -> (d2, d0)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#o = affine_map<(d0, d1, d2) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @weight_grad(%x: tensor<64x16xf32>, %g: tensor<64x8xf32>) -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x8xf32>) -> tensor<16x8xf32>
  %c = linalg.generic {indexing_maps = [#a, #b, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %g : tensor<64x16xf32>, tensor<64x8xf32>) outs(%z : tensor<16x8xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %out, %m : f32
    linalg.yield %s : f32
  } -> tensor<16x8xf32>
  %e2 = tensor.empty() : tensor<8x16xf32>
  %r = linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<16x8xf32>) outs(%e2 : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----
// A bf16 gradient: the contraction's init is a generic yielding a constant
// (jaxlib's broadcast), the use rounds as it transposes and stays, in order.
// A 3-D permutation that is not its own inverse: the use reads (d1, d2, d0),
// the producer writes (d2, d0, d1).
// CHECK-DAG: #[[P:.*]] = affine_map<(d0, d1, d2) -> (d2, d0, d1)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @rounded_3d
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x2x3xf32>)
// CHECK: %[[S:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[P]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0 : tensor<2x3x4xf32>) outs(%[[Z]] : tensor<4x2x3xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ID]]], {{.*}} ins(%[[S]] : tensor<4x2x3xf32>) outs(%{{.*}} : tensor<4x2x3xbf16>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.truncf
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#p3 = affine_map<(d0, d1, d2) -> (d1, d2, d0)>
func.func @rounded_3d(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xbf16> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<2x3x4xf32>
  %z = linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]} outs(%e : tensor<2x3x4xf32>) {
  ^bb0(%out: f32):
    linalg.yield %one : f32
  } -> tensor<2x3x4xf32>
  %s = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x3x4xf32>) outs(%z : tensor<2x3x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    linalg.yield %a : f32
  } -> tensor<2x3x4xf32>
  %e2 = tensor.empty() : tensor<4x2x3xbf16>
  %r = linalg.generic {indexing_maps = [#p3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x3x4xf32>) outs(%e2 : tensor<4x2x3xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x2x3xbf16>
  return %r : tensor<4x2x3xbf16>
}

// -----
// Left alone: a result with two uses, and an init that is
// neither a fill nor unread (a function argument the body accumulates into).
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-2: indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}]
// CHECK-COUNT-2: indexing_maps = [#{{.*}}, #{{.*}}]
#a2 = affine_map<(d0, d1, d2) -> (d2, d0)>
#b2 = affine_map<(d0, d1, d2) -> (d2, d1)>
#o2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#t2 = affine_map<(d0, d1) -> (d1, d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @left_alone(%x: tensor<64x16xf32>, %g: tensor<64x16xf32>, %acc: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) {
  %c = linalg.generic {indexing_maps = [#a2, #b2, #o2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %g : tensor<64x16xf32>, tensor<64x16xf32>) outs(%acc : tensor<16x16xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %out, %m : f32
    linalg.yield %s : f32
  } -> tensor<16x16xf32>
  %d = linalg.generic {indexing_maps = [#a2, #b2, #o2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%g, %x : tensor<64x16xf32>, tensor<64x16xf32>) outs(%acc : tensor<16x16xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %out, %m : f32
    linalg.yield %s : f32
  } -> tensor<16x16xf32>
  %e = tensor.empty() : tensor<16x16xf32>
  %r = linalg.generic {indexing_maps = [#t2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<16x16xf32>) outs(%e : tensor<16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<16x16xf32>
  %u = linalg.generic {indexing_maps = [#t2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%d : tensor<16x16xf32>) outs(%e : tensor<16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<16x16xf32>
  return %r, %u, %d : tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>
}
