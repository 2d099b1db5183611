// Tiling: a chunk's copies and combines run tile by tile (here 128 elements),
// and the scratch only that chunk uses shrinks to one tile. all2all on 2
// devices, 1000 elements: chunk 0 = [0, 504) = 3 full tiles + 120.
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=all2all},coll-to-cpu{tile=128 kernels=inline scratch=heap})' | FileCheck %s

// CHECK-LABEL: func.func @all_reduce
// CHECK-DAG: %[[X1C0:.*]] = memref.subview %arg1[0] [504] [1]
// CHECK-DAG: %[[X0C0:.*]] = memref.subview %arg0[0] [504] [1]
// CHECK-DAG: %[[Y0C0:.*]] = memref.subview %arg2[0] [504] [1]
// CHECK-DAG: %[[Y1C0:.*]] = memref.subview %arg3[0] [504] [1]
// CHECK: %[[TILE:.*]] = memref.alloc() {alignment = 64 : i64} : memref<128xf32>
// CHECK: %[[END:.*]] = arith.constant 384 : index
// CHECK: %[[STEP:.*]] = arith.constant 128 : index
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %[[END]] step %[[STEP]] {
// Copy x1's tile to d0 (into the one-tile scratch), ...
// CHECK: %[[SRC:.*]] = memref.subview %[[X1C0]][%[[T]]] [128] [1] : memref<504xf32, strided<[1]>> to memref<128xf32, strided<[1], offset: ?>>
// CHECK-NEXT: memref.copy %[[SRC]], %[[TILE]]
// ... reduce it with x0's tile into y0's, ...
// CHECK: scf.for %[[K:.*]] =
// CHECK-NEXT: %[[IDX:.*]] = arith.addi %[[T]], %[[K]] : index
// CHECK-NEXT: vector.load %[[X0C0]][%[[IDX]]]
// CHECK-NEXT: vector.load %[[TILE]][%[[K]]]
// CHECK-NEXT: arith.addf
// CHECK-NEXT: vector.store %{{.*}}, %[[Y0C0]][%[[IDX]]]
// ... and send y0's tile to y1, all before the next tile.
// CHECK: %[[A:.*]] = memref.subview %[[Y0C0]][%[[T]]] [128] [1]
// CHECK-NEXT: %[[B:.*]] = memref.subview %[[Y1C0]][%[[T]]] [128] [1]
// CHECK-NEXT: memref.copy %[[A]], %[[B]]
// CHECK-NEXT: }
// The last 120 elements, in the first 120 of the tile.
// CHECK: %[[REST:.*]] = memref.subview %[[X1C0]][384] [120] [1]
// CHECK-NEXT: %[[PART:.*]] = memref.subview %[[TILE]][0] [120] [1]
// CHECK-NEXT: memref.copy %[[REST]], %[[PART]]
// CHECK: memref.dealloc %[[TILE]]
// Chunk 1 = [504, 1000) on d1.
// CHECK: memref.subview %arg0[504] [496] [1]
// CHECK: return

module {
  func.func @all_reduce(%x0: memref<1000xf32>, %x1: memref<1000xf32>,
                        %y0: memref<1000xf32>, %y1: memref<1000xf32>)
      attributes {llvm.emit_c_interface} {
    %t = "coll.all_reduce"(%x0, %x1, %y0, %y1)
        {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>}
        : (memref<1000xf32>, memref<1000xf32>, memref<1000xf32>, memref<1000xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    return
  }
}
