// all2all: chunk c is reduced on device c from every other device's slice,
// then copied from c into the slice of every other device's result.
// GEN: input = coll-gen all-reduce --devices 3 --shape 1000 --dtype f16
// RUN: coll-opt --coll-lower-all-reduce=strategy=all2all < %S/Inputs/gen/all2all.input.mlir | FileCheck %s
// GEN: n4 = coll-gen all-reduce --devices 4 --shape 4x100 --kind xor --dtype i64
// RUN: coll-opt --coll-lower-all-reduce=strategy=all2all < %S/Inputs/gen/all2all.n4.mlir | FileCheck %s --check-prefix=N4
// RUN: coll-opt --coll-lower-all-reduce=strategy=all2all < %S/Inputs/gen/all2all.n4.mlir | FileCheck %s --check-prefix=N4K
// GEN: n2 = coll-gen all-reduce --devices 2 --shape 10
// RUN: coll-opt --coll-lower-all-reduce=strategy=all2all < %S/Inputs/gen/all2all.n2.mlir | FileCheck %s --check-prefix=N2

// numel 1000 on 3 devices: f = 8, chunks 336, 336, 328.
// CHECK-DAG: %[[X0:.*]] = memref.memory_space_cast %arg0 {{.*}}#coll.device<0 : i64>>
// CHECK-DAG: %[[X1:.*]] = memref.memory_space_cast %arg1 {{.*}}#coll.device<1 : i64>>
// CHECK-DAG: %[[Y0:.*]] = memref.memory_space_cast %arg3 {{.*}}#coll.device<0 : i64>>
// CHECK-DAG: %[[Y1:.*]] = memref.memory_space_cast %arg4 {{.*}}#coll.device<1 : i64>>
// Device order: the owner's own slice is read in place at its position.
// CHECK: %[[X0C0:.*]] = memref.subview %[[X0]][0] [336] [1]
// CHECK: %[[R1:.*]] = "coll.alloc"() : () -> memref<336xf16, #coll.device<0 : i64>>
// CHECK: %[[S1:.*]] = memref.subview %[[X1]][0] [336] [1]
// CHECK: %[[T1:.*]] = "coll.copy"(%[[S1]], %[[R1]])
// CHECK: %[[R2:.*]] = "coll.alloc"() : () -> memref<336xf16, #coll.device<0 : i64>>
// CHECK: %[[T2:.*]] = "coll.copy"(%{{.*}}, %[[R2]])
// CHECK: %[[Y0C0:.*]] = memref.subview %[[Y0]][0] [336] [1]
// CHECK: %[[K0:.*]] = "coll.combine"(%[[X0C0]], %[[R1]], %[[R2]], %[[Y0C0]], %[[T1]], %[[T2]]) {kind = "sum", operandSegmentSizes = array<i32: 1, 2, 1, 2>}
// CHECK: %[[Y1C0:.*]] = memref.subview %[[Y1]][0] [336] [1]
// CHECK: "coll.copy"(%[[Y0C0]], %[[Y1C0]], %[[K0]])
// CHECK: "coll.copy"(%[[Y0C0]], %{{.*}}, %[[K0]])
// CHECK: memref.subview %[[X0]][336] [336] [1]
// CHECK: "coll.combine"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {kind = "sum"
// CHECK: "coll.alloc"() : () -> memref<328xf16, #coll.device<2 : i64>>
// CHECK: memref.subview %[[X0]][672] [328] [1]
// CHECK: "coll.join"

// N4-COUNT-24: "coll.copy"
// N4-NOT: "coll.copy"
// N4K-COUNT-4: "coll.combine"{{.*}}kind = "xor", operandSegmentSizes = array<i32: 1, 3, 1, 3>
// N4K-NOT: "coll.combine"

// numel 10 on 2 devices: 10 floats are no whole number of 16-byte vectors,
// so f = 4 (one vector), chunks 4 and 4 + the 2 left over: both start on a
// 16-byte boundary.
// N2: memref.subview %{{.*}}[0] [4] [1]
// N2: memref.subview %{{.*}}[4] [6] [1]
