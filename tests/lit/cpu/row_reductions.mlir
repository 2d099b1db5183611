// coll-outline-row-reductions: a reduction over rows of at least 64
// elements (its last loop) becomes loops over the rows calling one noinline
// function per kind of row, so LLVM adds each row in one order wherever the
// row comes from (a tile of an epilogue or the whole buffer); two ops with
// the same body and row type share it; short rows, a reduction over a
// leading loop, a row read across, a body that reads the loop indices
// (linalg.index: one loop is left in the function) or a value from outside
// that is not a constant (a constant is cloned into the function) stay as
// they are.
// RUN: coll-opt %s --coll-outline-row-reductions | FileCheck %s

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
#tr = affine_map<(i, j) -> (j, i)>

// CHECK-LABEL: func.func @sums
// CHECK: scf.for %[[I:.*]] = %c0 to %c4 step %c1
// CHECK:   %[[ROW:.*]] = memref.subview %arg0[%[[I]], 0] [1, 64] [1, 1] : memref<4x64xf32> to memref<64xf32, strided<[1], offset: ?>>
// CHECK:   %[[OUT:.*]] = memref.subview %arg1[%[[I]]] [1] [1] : memref<4xf32> to memref<f32, strided<[], offset: ?>>
// CHECK:   func.call @coll_row_reduction_0(%[[ROW]], %[[OUT]])
// A tile of rows (strided, offset unknown): the same function.
// CHECK: scf.for
// CHECK:   memref.subview %arg2[%{{.*}}, 0] [1, 64] [1, 1] : memref<2x64xf32, strided<[64, 1], offset: ?>> to memref<64xf32, strided<[1], offset: ?>>
// CHECK:   func.call @coll_row_reduction_0(
func.func @sums(%a: memref<4x64xf32>, %s: memref<4xf32>, %t: memref<2x64xf32, strided<[64, 1], offset: ?>>, %u: memref<2xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<4x64xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %q = arith.mulf %x, %x : f32
    %r = arith.addf %q, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%t : memref<2x64xf32, strided<[64, 1], offset: ?>>) outs(%u : memref<2xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %q = arith.mulf %x, %x : f32
    %r = arith.addf %q, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// CHECK-LABEL: func.func @scaled
// CHECK: call @coll_row_reduction_1(
func.func @scaled(%a: memref<4x64xf32>, %s: memref<4xf32>) {
  %h = arith.constant 0.5 : f32
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<4x64xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.mulf %acc, %h : f32
    %r = arith.addf %m, %x : f32
    linalg.yield %r : f32
  }
  return
}

// A matvec's vector is the same row at every call (its offsets all
// static): a subview of its static layout, cast to the row type (an outside
// attack's matvec on i32/f16, which emitted an invalid subview).
// CHECK-LABEL: func.func @matvec
// CHECK: scf.for %[[I:.*]] = %c0 to %c4 step %c1
// CHECK:   memref.subview %arg0[%[[I]], 0] [1, 64] [1, 1] : memref<4x64xf32> to memref<64xf32, strided<[1], offset: ?>>
// CHECK:   %[[V:.*]] = memref.subview %arg1[0] [64] [1] : memref<64xf32> to memref<64xf32, strided<[1]>>
// CHECK:   memref.cast %[[V]] : memref<64xf32, strided<[1]>> to memref<64xf32, strided<[1], offset: ?>>
// CHECK:   call @coll_row_reduction_
func.func @matvec(%a: memref<4x64xf32>, %v: memref<64xf32>, %s: memref<4xf32>) {
  linalg.generic {indexing_maps = [#id, #col, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a, %v : memref<4x64xf32>, memref<64xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}

// CHECK-LABEL: func.func @stay
// CHECK-NOT: call
// CHECK-COUNT-5: linalg.generic
// CHECK-NOT: call
// CHECK: return
func.func @stay(%a: memref<4x32xf32>, %s: memref<4xf32>, %b: memref<64x64xf32>, %c: memref<64xf32>, %w: f32) {
  // Reads its row index.
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%b : memref<64x64xf32>) outs(%c : memref<64xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    %m = arith.mulf %x, %f : f32
    %r = arith.addf %m, %acc : f32
    linalg.yield %r : f32
  }
  // Uses an argument of the function.
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%b : memref<64x64xf32>) outs(%c : memref<64xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.mulf %x, %w : f32
    %r = arith.addf %m, %acc : f32
    linalg.yield %r : f32
  }
  // Rows of 32: shorter than ROW_MIN.
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<4x32xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  // Columns: the reduced loop is not the rows' last dimension.
  linalg.generic {indexing_maps = [#tr, #row], iterator_types = ["parallel", "reduction"]}
      ins(%b : memref<64x64xf32>) outs(%c : memref<64xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  // A reduction over the leading loop.
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%b : memref<64x64xf32>) outs(%c : memref<64xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// CHECK-LABEL: func.func @coll_row_reduction_0(%arg0: memref<64xf32, strided<[1], offset: ?>>, %arg1: memref<f32, strided<[], offset: ?>>) attributes {passthrough = ["noinline"]}
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["reduction"]}
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-LABEL: func.func @coll_row_reduction_1(
// CHECK: %[[H:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: linalg.generic
// CHECK: arith.mulf %{{.*}}, %[[H]]
// CHECK-LABEL: func.func @coll_row_reduction_2(%arg0: memref<64xf32, strided<[1], offset: ?>>, %arg1: memref<64xf32, strided<[1], offset: ?>>, %arg2: memref<f32, strided<[], offset: ?>>)
// CHECK-NOT: func.func @coll_row_reduction_3
