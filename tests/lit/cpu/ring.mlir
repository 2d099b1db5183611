// coll-to-cpu on ring, 3 devices, 14 elements (chunks [0,4) [4,8) [8,14):
// whole 16-byte vectors, the edge chunk with the 2 left over):
// placement is stripped, scratch (scratch=heap) becomes an aligned memref.alloc freed after
// its last use, copies become memref.copy, combines become loops, tokens
// vanish. Each chunk's ops run back to back (one tile holds the chunk).
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=ring},coll-to-cpu{kernels=inline scratch=heap})' | FileCheck %s
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=ring},coll-to-cpu)' | not grep -e 'coll\.' -e memory_space_cast
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=ring},coll-to-cpu{tile=0 kernels=inline scratch=heap})' | FileCheck %s --check-prefix=UNTILED

// CHECK-LABEL: func.func @all_reduce(%arg0: memref<14xf32>, %arg1: memref<14xf32>, %arg2: memref<14xf32>, %arg3: memref<14xf32>, %arg4: memref<14xf32>, %arg5: memref<14xf32>) attributes {llvm.emit_c_interface}
// Chunk 0 starts on d0, is combined on d1, then on d2 into y2's slice.
// CHECK-DAG: %[[X0C0:.*]] = memref.subview %arg0[0] [4] [1] : memref<14xf32> to memref<4xf32, strided<[1]>>
// CHECK-DAG: %[[X1C0:.*]] = memref.subview %arg1[0] [4] [1]
// CHECK-DAG: %[[X2C0:.*]] = memref.subview %arg2[0] [4] [1]
// CHECK-DAG: %[[Y0C0:.*]] = memref.subview %arg3[0] [4] [1]
// CHECK-DAG: %[[Y1C0:.*]] = memref.subview %arg4[0] [4] [1]
// CHECK-DAG: %[[Y2C0:.*]] = memref.subview %arg5[0] [4] [1]
// CHECK: %[[R1:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK: %[[R2:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK: memref.copy %[[X0C0]], %[[R1]] : memref<4xf32, strided<[1]>> to memref<4xf32>
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT: %[[A:.*]] = memref.load %[[R1]][%[[I]]] : memref<4xf32>
// CHECK-NEXT: %[[B:.*]] = memref.load %[[X1C0]][%[[I]]]
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT: memref.store %[[S]], %[[R1]][%[[I]]] : memref<4xf32>
// CHECK: memref.copy %[[R1]], %[[R2]]
// CHECK: scf.for
// CHECK: memref.load %[[R2]]
// CHECK: memref.load %[[X2C0]]
// CHECK: memref.store %{{.*}}, %[[Y2C0]]
// Allgather: y2 -> y0 -> y1.
// CHECK: memref.copy %[[Y2C0]], %[[Y0C0]]
// CHECK: memref.copy %[[Y0C0]], %[[Y1C0]]
// CHECK: memref.dealloc %[[R1]]
// CHECK: memref.dealloc %[[R2]]
// Chunks 1 and 2 follow.
// CHECK: memref.subview %arg1[4] [4] [1] : memref<14xf32> to memref<4xf32, strided<[1], offset: 4>>
// CHECK: memref.subview %arg2[8] [6] [1] : memref<14xf32> to memref<6xf32, strided<[1], offset: 8>>
// CHECK: return

// Without tiling: one op after the other, every scratch freed at the end.
// UNTILED-LABEL: func.func @all_reduce
// UNTILED: %[[R1:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// UNTILED-NEXT: memref.copy %{{.*}}, %[[R1]]
// UNTILED: scf.for
// UNTILED: %[[R2:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// UNTILED-NEXT: memref.copy %[[R1]], %[[R2]]
// UNTILED-COUNT-6: memref.dealloc
// UNTILED-NEXT: return

module {
  func.func @all_reduce(%x0: memref<14xf32>, %x1: memref<14xf32>, %x2: memref<14xf32>,
                        %y0: memref<14xf32>, %y1: memref<14xf32>, %y2: memref<14xf32>)
      attributes {llvm.emit_c_interface} {
    %t = "coll.all_reduce"(%x0, %x1, %x2, %y0, %y1, %y2)
        {devices = array<i64: 0, 1, 2>, kind = "sum", operandSegmentSizes = array<i32: 3, 3, 0>}
        : (memref<14xf32>, memref<14xf32>, memref<14xf32>, memref<14xf32>, memref<14xf32>, memref<14xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    return
  }
}
