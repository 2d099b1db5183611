// naive: every input is copied to every other device; each device reduces
// its own input (read in place) with the N-1 copies into its output, the
// operands in device order x0, x1, ... on every device (identical replicas).
// RUN: coll-opt %s --split-input-file --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=naive})' | FileCheck %s
// GEN: n3 = coll-gen all-reduce --devices 3 --shape 5
// RUN: coll-opt --coll-lower-all-reduce=strategy=naive < %S/Inputs/gen/naive.n3.mlir | FileCheck %s --check-prefix=N3
// GEN: n4 = coll-gen all-reduce --devices 4 --shape 4x100
// RUN: coll-opt --coll-lower-all-reduce=strategy=naive < %S/Inputs/gen/naive.n4.mlir | FileCheck %s --check-prefix=N4

// CHECK-LABEL: func.func @n2
// CHECK-DAG: %[[X0:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0, 1]] : memref<2x3xi32, #coll.device<0 : i64>> into memref<6xi32, #coll.device<0 : i64>>
// CHECK-DAG: %[[X1:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0, 1]] : memref<2x3xi32, #coll.device<1 : i64>> into memref<6xi32, #coll.device<1 : i64>>
// CHECK-DAG: %[[Y0:.*]] = memref.collapse_shape %{{.*}} into memref<6xi32, #coll.device<0 : i64>>
// CHECK-DAG: %[[Y1:.*]] = memref.collapse_shape %{{.*}} into memref<6xi32, #coll.device<1 : i64>>
// CHECK: %[[R0:.*]] = "coll.alloc"() : () -> memref<6xi32, #coll.device<0 : i64>>
// CHECK: %[[T0:.*]] = "coll.copy"(%[[X1]], %[[R0]])
// CHECK: %[[K0:.*]] = "coll.combine"(%[[X0]], %[[R0]], %[[Y0]], %[[T0]]) {kind = "max"
// CHECK: %[[R1:.*]] = "coll.alloc"() : () -> memref<6xi32, #coll.device<1 : i64>>
// CHECK: %[[T1:.*]] = "coll.copy"(%[[X0]], %[[R1]])
// CHECK: %[[K1:.*]] = "coll.combine"(%[[R1]], %[[X1]], %[[Y1]], %[[T1]]) {kind = "max"
// CHECK: %[[J:.*]] = "coll.join"(%[[K0]], %[[K1]])
// CHECK: "coll.wait"(%[[J]])
// CHECK-NOT: coll.all_reduce
func.func @n2(%x0: memref<2x3xi32>, %x1: memref<2x3xi32>, %y0: memref<2x3xi32>, %y1: memref<2x3xi32>) {
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {kind = "max", devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<2x3xi32>, memref<2x3xi32>, memref<2x3xi32>, memref<2x3xi32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}

// -----
// Devices need not be 0..N-1: placement follows the `devices` attribute.
// CHECK-LABEL: func.func @placed
// CHECK: "coll.copy"{{.*}} : (memref<4xf64, #coll.device<7 : i64>>, memref<4xf64, #coll.device<3 : i64>>)
// CHECK: "coll.combine"{{.*}}kind = "prod"
// CHECK: "coll.copy"{{.*}} : (memref<4xf64, #coll.device<3 : i64>>, memref<4xf64, #coll.device<7 : i64>>)
func.func @placed(%x0: memref<4xf64>, %x1: memref<4xf64>, %y0: memref<4xf64>, %y1: memref<4xf64>) {
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {kind = "prod", devices = array<i64: 3, 7>, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4xf64>, memref<4xf64>, memref<4xf64>, memref<4xf64>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}

// N3-COUNT-6: "coll.copy"
// N3-NOT: "coll.copy"
// N3: "coll.join"

// N4-COUNT-3: "coll.copy"{{.*}}, memref<400xf32, #coll.device<0 : i64>>) -> !coll.token
// N4: "coll.combine"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {kind = "sum", operandSegmentSizes = array<i32: 1, 3, 1, 3>}
// N4-COUNT-3: "coll.copy"{{.*}}#coll.device<1 : i64>>) -> !coll.token
// N4: "coll.combine"
