// ring: reduce-scatter then allgather around d0 -> d1 -> ... -> d0, only on
// the N ring edges, each combine writing straight into its final slice.
// GEN: input = coll-gen all-reduce --devices 3 --shape 100 --dtype i8 --kind min
// RUN: coll-opt --coll-lower-all-reduce=strategy=ring < %S/Inputs/gen/ring.input.mlir | FileCheck %s
// GEN: n2 = coll-gen all-reduce --devices 2 --shape 8
// RUN: coll-opt --coll-lower-all-reduce=strategy=ring < %S/Inputs/gen/ring.n2.mlir | FileCheck %s --check-prefix=N2
// GEN: n4 = coll-gen all-reduce --devices 4 --shape 4x100
// RUN: coll-opt --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=ring},canonicalize,cse)' < %S/Inputs/gen/ring.n4.mlir | FileCheck %s --check-prefix=N4

// 100 i8 in chunks of whole 16-byte vectors (docs/algorithm.md): 32, 32
// and the edge chunk 32 + 4. Chunk 0 = [0, 32) starts on d0, is combined
// on d1, then on d2 into d2's result slice, and is forwarded d2 -> d0 -> d1.
// CHECK-DAG: %[[X0:.*]] = memref.memory_space_cast %arg0 : memref<100xi8> to memref<100xi8, #coll.device<0 : i64>>
// CHECK-DAG: %[[X1:.*]] = memref.memory_space_cast %arg1 : memref<100xi8> to memref<100xi8, #coll.device<1 : i64>>
// CHECK-DAG: %[[X2:.*]] = memref.memory_space_cast %arg2 : memref<100xi8> to memref<100xi8, #coll.device<2 : i64>>
// CHECK-DAG: %[[Y0:.*]] = memref.memory_space_cast %arg3 : memref<100xi8> to memref<100xi8, #coll.device<0 : i64>>
// CHECK-DAG: %[[Y1:.*]] = memref.memory_space_cast %arg4 : memref<100xi8> to memref<100xi8, #coll.device<1 : i64>>
// CHECK-DAG: %[[Y2:.*]] = memref.memory_space_cast %arg5 : memref<100xi8> to memref<100xi8, #coll.device<2 : i64>>
// CHECK: %[[X0C0:.*]] = memref.subview %[[X0]][0] [32] [1]
// CHECK: %[[R1:.*]] = "coll.alloc"() : () -> memref<32xi8, #coll.device<1 : i64>>
// CHECK: %[[T0:.*]] = "coll.copy"(%[[X0C0]], %[[R1]]) :
// CHECK: %[[X1C0:.*]] = memref.subview %[[X1]][0] [32] [1]
// CHECK: %[[K0:.*]] = "coll.combine"(%[[R1]], %[[X1C0]], %[[R1]], %[[T0]]) {kind = "min"
// CHECK: %[[Y2C0:.*]] = memref.subview %[[Y2]][0] [32] [1]
// CHECK: %[[R2:.*]] = "coll.alloc"() : () -> memref<32xi8, #coll.device<2 : i64>>
// CHECK: %[[T1:.*]] = "coll.copy"(%[[R1]], %[[R2]], %[[K0]])
// CHECK: %[[X2C0:.*]] = memref.subview %[[X2]][0] [32] [1]
// CHECK: %[[K1:.*]] = "coll.combine"(%[[R2]], %[[X2C0]], %[[Y2C0]], %[[T1]])
// CHECK: %[[Y0C0:.*]] = memref.subview %[[Y0]][0] [32] [1]
// CHECK: %[[G0:.*]] = "coll.copy"(%[[Y2C0]], %[[Y0C0]], %[[K1]])
// CHECK: %[[Y1C0:.*]] = memref.subview %[[Y1]][0] [32] [1]
// CHECK: %[[G1:.*]] = "coll.copy"(%[[Y0C0]], %[[Y1C0]], %[[G0]])
// Chunks 1 = [32, 64) and 2 = [64, 100) follow the same pattern.
// CHECK: memref.subview %[[X1]][32] [32] [1]
// CHECK: memref.subview %[[X2]][64] [36] [1]
// CHECK: %[[J:.*]] = "coll.join"(%[[G1]], %{{.*}}, %{{.*}}) :
// CHECK: "coll.wait"(%[[J]])

// numel 8 on 2 devices: f = 8, chunks 8, 0; the empty chunk emits nothing.
// N2: "coll.copy"{{.*}}#coll.device<0 : i64>>, memref<8xf32, #coll.device<1 : i64>>)
// N2: "coll.combine"
// N2: "coll.copy"{{.*}}#coll.device<1 : i64>>, memref<8xf32, #coll.device<0 : i64>>, !coll.token)
// N2-NOT: "coll.copy"

// 2N(N-1) = 24 copies, N(N-1) = 12 combines, all on ring edges.
// N4-COUNT-24: "coll.copy"{{.*}}(memref<{{[0-9]+}}xf32, {{.*}}#coll.device<{{[0-3]}} : i64>>, memref<{{.*}}) -> !coll.token
// N4-NOT: "coll.copy"
// N4-NOT: "coll.all_reduce"
