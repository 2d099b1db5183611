// coll.reduce_scatter: device c ends with block c of the reduction.
// ring: the partial of block c starts on c+1 and travels the ring to c, each
// hop a copy into scratch and a combine with the device's own block (in
// device order, the default: d0 -> .. -> d(N-1), then a copy to c); direct:
// every other device's block is copied to c, one combine in device order.
// GEN: ring2 = coll-gen reduce-scatter --devices 2 --shape 4x3 --axis 0 --strategy ring
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/reduce_scatter.ring2.mlir | FileCheck %s --check-prefix=RING2
// GEN: ring3 = coll-gen reduce-scatter --devices 3 --shape 6 --axis 0 --strategy ring
// RUN: coll-opt --coll-lower-collectives=order=any < %S/Inputs/gen/reduce_scatter.ring3.mlir | FileCheck %s --check-prefix=RING3
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/reduce_scatter.ring3.mlir | FileCheck %s --check-prefix=CANON3
// GEN: ring4 = coll-gen reduce-scatter --devices 4 --shape 8 --axis 0 --strategy ring
// RUN: coll-opt --coll-lower-collectives=order=any < %S/Inputs/gen/reduce_scatter.ring4.mlir | FileCheck %s --check-prefix=RING4
// GEN: direct3 = coll-gen reduce-scatter --devices 3 --shape 6 --axis 0 --strategy direct
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/reduce_scatter.direct3.mlir | FileCheck %s --check-prefix=DIRECT3
// GEN: direct4 = coll-gen reduce-scatter --devices 4 --shape 8 --kind max --axis 0 --strategy direct
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/reduce_scatter.direct4.mlir | FileCheck %s --check-prefix=DIRECT4
// GEN: axis1 = coll-gen reduce-scatter --devices 2 --shape 2x4 --axis 1 --strategy direct
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/reduce_scatter.axis1.mlir | FileCheck %s --check-prefix=AXIS1
// GEN: empty = coll-gen reduce-scatter --devices 3 --shape 0x6 --axis 0 --strategy ring
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/reduce_scatter.empty.mlir | FileCheck %s --check-prefix=EMPTY

// Block 0 (rows 0-1 of x1) goes d1 -> d0 and is combined straight into y0.
// RING2: %[[X0:.*]] = memref.collapse_shape {{.*}} into memref<12xf32, #coll.device<0 : i64>>
// RING2: %[[X1:.*]] = memref.collapse_shape {{.*}} into memref<12xf32, #coll.device<1 : i64>>
// RING2: %[[Y0:.*]] = memref.collapse_shape {{.*}} into memref<6xf32, #coll.device<0 : i64>>
// RING2: %[[S1:.*]] = memref.subview %[[X1]][0] [6] [1]
// RING2: %[[R:.*]] = "coll.alloc"() : () -> memref<6xf32, #coll.device<0 : i64>>
// RING2: %[[T:.*]] = "coll.copy"(%[[S1]], %[[R]])
// RING2: %[[S0:.*]] = memref.subview %[[X0]][0] [6] [1]
// RING2: "coll.combine"(%[[R]], %[[S0]], %[[Y0]], %[[T]]) {kind = "sum"
// RING2-COUNT-1: "coll.copy"
// RING2-NOT: "coll.copy"
// RING2: "coll.join"

// N(N-1) = 6 copies, each waiting for the combine before it after the first.
// RING3-COUNT-6: "coll.copy"
// RING3-NOT: "coll.copy"
// RING4-COUNT-12: "coll.copy"
// RING4-NOT: "coll.copy"
// In device order: N - 1 hops per block, then blocks 0 and 1 one copy more
// from d2 (block 2 ends on its own device).
// CANON3-COUNT-2: "coll.copy"
// CANON3: "coll.copy"({{.*}}) : (memref<2xf32, #coll.device<2 : i64>>, memref<2xf32, #coll.device<0 : i64>>
// CANON3-COUNT-5: "coll.copy"
// CANON3-NOT: "coll.copy"

// DIRECT3: %[[Y0:.*]] = memref.memory_space_cast %arg3 : memref<2xf32> to memref<2xf32, #coll.device<0 : i64>>
// DIRECT3: %[[A:.*]] = "coll.copy"({{.*}}) : (memref<2xf32, strided<[1]>, #coll.device<1 : i64>>, memref<2xf32, #coll.device<0 : i64>>)
// DIRECT3: %[[B:.*]] = "coll.copy"({{.*}}) : (memref<2xf32, strided<[1]>, #coll.device<2 : i64>>, memref<2xf32, #coll.device<0 : i64>>)
// DIRECT3: "coll.combine"(%{{.*}}, %{{.*}}, %{{.*}}, %[[Y0]], %[[A]], %[[B]]) {kind = "sum", operandSegmentSizes = array<i32: 1, 2, 1, 2>}
// DIRECT3-COUNT-4: "coll.copy"
// DIRECT3-NOT: "coll.copy"
// DIRECT4-COUNT-3: "coll.copy"
// DIRECT4: "coll.combine"{{.*}}kind = "max", operandSegmentSizes = array<i32: 1, 3, 1, 3>

// Along axis 1 a block (2 rows of 2, 4 apart) is one strided view: one
// copy into a 2x2 scratch and one combine (in device order: x_0's block
// first, on device 1 the received one) into y_c, viewed 2x2 as well, per
// device; never one op per row.
// AXIS1: %[[Y0:.*]] = memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [2, 2], strides: [2, 1] : memref<4xf32, #coll.device<0 : i64>> to memref<2x2xf32, strided<[2, 1]>, #coll.device<0 : i64>>
// AXIS1: %[[B0:.*]] = memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [2, 2], strides: [4, 1] : memref<8xf32, #coll.device<0 : i64>> to memref<2x2xf32, strided<[4, 1]>, #coll.device<0 : i64>>
// AXIS1: %[[R:.*]] = "coll.alloc"() : () -> memref<2x2xf32, #coll.device<0 : i64>>
// AXIS1: %[[B1:.*]] = memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [2, 2], strides: [4, 1] : memref<8xf32, #coll.device<1 : i64>> to memref<2x2xf32, strided<[4, 1]>, #coll.device<1 : i64>>
// AXIS1: %[[T:.*]] = "coll.copy"(%[[B1]], %[[R]])
// AXIS1: "coll.combine"(%[[B0]], %[[R]], %[[Y0]], %[[T]]) {kind = "sum"
// AXIS1: %[[R1:.*]] = "coll.alloc"() : () -> memref<2x2xf32, #coll.device<1 : i64>>
// AXIS1: %[[T1:.*]] = "coll.copy"(%{{.*}}, %[[R1]])
// AXIS1: "coll.combine"(%[[R1]], %{{.*}}, %{{.*}}, %[[T1]]) {kind = "sum"
// AXIS1-NOT: "coll.copy"
// AXIS1-NOT: "coll.combine"

// No element, no work: the token is an empty join.
// EMPTY-NOT: "coll.copy"
// EMPTY-NOT: "coll.combine"
// EMPTY: "coll.join"() : () -> !coll.token
