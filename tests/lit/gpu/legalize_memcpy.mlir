// coll-gpu-legalize-memcpy on each layout it rewrites: a static offset (a
// constant gep), a dynamic one (read from the descriptor), and a contiguous
// slice whose strides are not the identity's (rewritten); identity operands
// stay as they are.
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-gpu-legalize-memcpy)' | FileCheck %s

// CHECK-LABEL: func.func @static_offset
// CHECK: %[[D:.*]] = builtin.unrealized_conversion_cast %arg0 : memref<4xf32, strided<[1], offset: 6>> to !llvm.struct
// CHECK: %[[P:.*]] = llvm.extractvalue %[[D]][1]
// CHECK: llvm.getelementptr %[[P]][6] : (!llvm.ptr) -> !llvm.ptr, f32
// CHECK-NOT: llvm.extractvalue %[[D]][2]
// CHECK: gpu.memcpy %arg1, %{{.*}} : memref<4xf32>, memref<4xf32>
func.func @static_offset(%a: memref<4xf32, strided<[1], offset: 6>>, %b: memref<4xf32>) {
  gpu.memcpy %b, %a : memref<4xf32>, memref<4xf32, strided<[1], offset: 6>>
  return
}

// CHECK-LABEL: func.func @dynamic_offset
// CHECK: %[[D:.*]] = builtin.unrealized_conversion_cast %arg0 : memref<4xf32, strided<[1], offset: ?>> to !llvm.struct
// CHECK: %[[P:.*]] = llvm.extractvalue %[[D]][1]
// CHECK: %[[O:.*]] = llvm.extractvalue %[[D]][2]
// CHECK: llvm.getelementptr %[[P]][%[[O]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
func.func @dynamic_offset(%a: memref<4xf32, strided<[1], offset: ?>>, %b: memref<4xf32>) {
  gpu.memcpy %b, %a : memref<4xf32>, memref<4xf32, strided<[1], offset: ?>>
  return
}

// A 1x4 row of an 8-wide matrix is contiguous, with strides [8, 1]: the
// view gets the identity's [4, 1] (the sizes stay).
// CHECK-LABEL: func.func @row
// CHECK: llvm.getelementptr %{{.*}}[8] : (!llvm.ptr) -> !llvm.ptr, f64
// CHECK: %[[S:.*]] = llvm.mlir.constant(4 : i64) : i64
// CHECK: llvm.insertvalue %[[S]], %{{.*}}[4, 0]
// CHECK-NOT: [4, 1]
// CHECK: gpu.memcpy %{{.*}}, %arg1 : memref<1x4xf64>, memref<1x4xf64>
func.func @row(%a: memref<1x4xf64, strided<[8, 1], offset: 8>>, %b: memref<1x4xf64>) {
  gpu.memcpy %a, %b : memref<1x4xf64, strided<[8, 1], offset: 8>>, memref<1x4xf64>
  return
}
