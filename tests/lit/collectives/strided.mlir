// Inputs and outputs may be contiguous subviews at an offset: placement
// keeps the layout, and every slice adds its start to the view's offset.
// RUN: coll-opt %s --coll-lower-collectives --coll-check-order | FileCheck %s

// CHECK-LABEL: func.func @offset_inputs
// CHECK: %[[X0:.*]] = memref.subview %arg0[128] [64] [1] : memref<256xf32> to memref<64xf32, strided<[1], offset: 128>>
// CHECK: %[[P0:.*]] = memref.memory_space_cast %[[X0]] : memref<64xf32, strided<[1], offset: 128>> to memref<64xf32, strided<[1], offset: 128>, #coll.device<0 : i64>>
// Block 1 of the reduce-scatter starts 32 elements into the view: offset 160.
// CHECK: memref.subview %[[P0]][32] [32] [1] : memref<64xf32, strided<[1], offset: 128>, #coll.device<0 : i64>> to memref<32xf32, strided<[1], offset: 160>, #coll.device<0 : i64>>
func.func @offset_inputs(%a0: memref<256xf32>, %a1: memref<256xf32>, %y0: memref<32xf32>, %y1: memref<32xf32>) {
  %x0 = memref.subview %a0[128] [64] [1] : memref<256xf32> to memref<64xf32, strided<[1], offset: 128>>
  %x1 = memref.subview %a1[128] [64] [1] : memref<256xf32> to memref<64xf32, strided<[1], offset: 128>>
  %t = "coll.reduce_scatter"(%x0, %x1, %y0, %y1) {kind = "sum", devices = array<i64: 0, 1>, scatter_axis = 0 : i64, strategy = "direct", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<64xf32, strided<[1], offset: 128>>, memref<64xf32, strided<[1], offset: 128>>, memref<32xf32>, memref<32xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}

// The first row block (offset 0, layout strided<[4, 1]>) collapses to
// strided<[1]>, not to the identity layout collapse_shape would refuse
// (an outside attack found every collective refused with invalid IR here).
// CHECK-LABEL: func.func @offset_0_2d
// CHECK: memref.collapse_shape {{.*}} : memref<2x4xf32, strided<[4, 1]>, #coll.device<0 : i64>> into memref<8xf32, strided<[1]>, #coll.device<0 : i64>>
func.func @offset_0_2d(%a: memref<4x4xf32>, %b: memref<4x4xf32>) {
  %x0 = memref.subview %a[0, 0] [2, 4] [1, 1] : memref<4x4xf32> to memref<2x4xf32, strided<[4, 1]>>
  %x1 = memref.subview %b[0, 0] [2, 4] [1, 1] : memref<4x4xf32> to memref<2x4xf32, strided<[4, 1]>>
  %t = "coll.all_reduce"(%x0, %x1, %x0, %x1) {kind = "sum", devices = array<i64: 0, 1>, strategy = "ring", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<2x4xf32, strided<[4, 1]>>, memref<2x4xf32, strided<[4, 1]>>, memref<2x4xf32, strided<[4, 1]>>, memref<2x4xf32, strided<[4, 1]>>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}

// A 2-D row block at an offset collapses to one run at that offset.
// CHECK-LABEL: func.func @offset_2d
// CHECK: memref.collapse_shape {{.*}} : memref<2x4xf32, strided<[4, 1], offset: 8>, #coll.device<1 : i64>> into memref<8xf32, strided<[1], offset: 8>, #coll.device<1 : i64>>
func.func @offset_2d(%a: memref<4x4xf32>, %b: memref<4x4xf32>, %y: memref<2x4xf32>) {
  %x0 = memref.subview %a[2, 0] [2, 4] [1, 1] : memref<4x4xf32> to memref<2x4xf32, strided<[4, 1], offset: 8>>
  %x1 = memref.subview %b[2, 0] [2, 4] [1, 1] : memref<4x4xf32> to memref<2x4xf32, strided<[4, 1], offset: 8>>
  %t = "coll.reduce"(%x0, %x1, %y) {kind = "max", devices = array<i64: 0, 1>, root = 0 : i64, strategy = "tree", operandSegmentSizes = array<i32: 2, 1, 0>} : (memref<2x4xf32, strided<[4, 1], offset: 8>>, memref<2x4xf32, strided<[4, 1], offset: 8>>, memref<2x4xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
