// coll.all_gather: x_i lands in block i of every output. ring: a local copy
// into y_i, and hop by hop from x_i around the ring (the first hop reads x_i,
// each later one the block the hop before delivered); direct: x_i straight
// to every device.
// GEN: ring3 = coll-gen all-gather --devices 3 --shape 2 --axis 0 --strategy ring
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/all_gather.ring3.mlir | FileCheck %s --check-prefix=RING3
// GEN: ring2 = coll-gen all-gather --devices 2 --shape 2 --axis 0 --strategy ring
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/all_gather.ring2.mlir | FileCheck %s --check-prefix=RING2
// GEN: ring4 = coll-gen all-gather --devices 4 --shape 3 --axis 0 --strategy ring
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/all_gather.ring4.mlir | FileCheck %s --check-prefix=RING4
// GEN: direct3 = coll-gen all-gather --devices 3 --shape 2 --axis 0 --strategy direct
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/all_gather.direct3.mlir | FileCheck %s --check-prefix=DIRECT3
// GEN: direct2 = coll-gen all-gather --devices 2 --shape 3 --axis 0 --strategy direct
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/all_gather.direct2.mlir | FileCheck %s --check-prefix=DIRECT2
// GEN: axis1 = coll-gen all-gather --devices 4 --shape 2x3 --axis 1 --strategy direct
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/all_gather.axis1.mlir | FileCheck %s --check-prefix=AXIS1
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/all_gather.axis1.mlir | FileCheck %s --check-prefix=AXIS1N
// GEN: axis1ring = coll-gen all-gather --devices 3 --shape 4x2 --axis 1 --strategy ring
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/all_gather.axis1ring.mlir | FileCheck %s --check-prefix=AXIS1RING
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/all_gather.axis1ring.mlir | FileCheck %s --check-prefix=AXIS1RINGN
// GEN: empty = coll-gen all-gather --devices 3 --shape 0 --axis 0 --strategy ring
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/all_gather.empty.mlir | FileCheck %s --check-prefix=EMPTY

// RING3: %[[X0:.*]] = memref.memory_space_cast %arg0 : memref<2xf32> to memref<2xf32, #coll.device<0 : i64>>
// RING3: %[[Y0B0:.*]] = memref.subview %{{.*}}[0] [2] [1] : memref<6xf32, #coll.device<0 : i64>>
// RING3: "coll.copy"(%[[X0]], %[[Y0B0]])
// RING3: %[[Y1B0:.*]] = memref.subview %{{.*}}[0] [2] [1] : memref<6xf32, #coll.device<1 : i64>>
// RING3: %[[H1:.*]] = "coll.copy"(%[[X0]], %[[Y1B0]])
// RING3: %[[Y2B0:.*]] = memref.subview %{{.*}}[0] [2] [1] : memref<6xf32, #coll.device<2 : i64>>
// RING3: "coll.copy"(%[[Y1B0]], %[[Y2B0]], %[[H1]])
// Block 2 (from d2) goes d2 -> d0 -> d1: ring edges only.
// RING3: memref<2xf32, strided<[1], offset: 4>, #coll.device<0 : i64>>, memref<2xf32, strided<[1], offset: 4>, #coll.device<1 : i64>>, !coll.token)

// N local copies and N(N-1) hops.
// RING2-COUNT-4: "coll.copy"
// RING2-NOT: "coll.copy"
// RING4-COUNT-16: "coll.copy"
// RING4-NOT: "coll.copy"

// Direct copies wait for nothing (the collective has no deps).
// DIRECT3-COUNT-9: "coll.copy"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) :
// DIRECT3-NOT: "coll.copy"

// DIRECT2: "coll.copy"({{.*}}) : (memref<3xf32, #coll.device<0 : i64>>, memref<3xf32, strided<[1]>, #coll.device<0 : i64>>)
// DIRECT2: "coll.copy"({{.*}}) : (memref<3xf32, #coll.device<0 : i64>>, memref<3xf32, strided<[1]>, #coll.device<1 : i64>>)
// DIRECT2: "coll.copy"({{.*}}) : (memref<3xf32, #coll.device<1 : i64>>, memref<3xf32, strided<[1], offset: 3>, #coll.device<0 : i64>>)
// DIRECT2: "coll.copy"({{.*}}) : (memref<3xf32, #coll.device<1 : i64>>, memref<3xf32, strided<[1], offset: 3>, #coll.device<1 : i64>>)
// DIRECT2-NOT: "coll.copy"

// Along axis 1, block i of a 2x12 output is one run of 3 per row, 12
// apart: each input moves to each output in one copy, into a 2x3 strided
// view of the output (x_i itself viewed as 2x3), never one copy per row.
// AXIS1: %[[X0:.*]] = memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [2, 3], strides: [3, 1] : memref<6xf32, #coll.device<0 : i64>> to memref<2x3xf32, strided<[3, 1]>, #coll.device<0 : i64>>
// AXIS1: %[[B0:.*]] = memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [2, 3], strides: [12, 1] : memref<24xf32, #coll.device<0 : i64>> to memref<2x3xf32, strided<[12, 1]>, #coll.device<0 : i64>>
// AXIS1: "coll.copy"(%[[X0]], %[[B0]])
// AXIS1: memref.reinterpret_cast %{{.*}} to offset: [3], sizes: [2, 3], strides: [12, 1] : memref<24xf32, #coll.device<0 : i64>> to memref<2x3xf32, strided<[12, 1], offset: 3>, #coll.device<0 : i64>>
// AXIS1N-COUNT-16: "coll.copy"
// AXIS1N-NOT: "coll.copy"

// The ring forwards the strided block from output to output: 4x6 outputs,
// block i = 4 rows of 2, 6 apart; each hop one copy between two such views.
// AXIS1RING: "coll.copy"({{.*}}) : (memref<4x2xf32, strided<[6, 1], offset: 2>, #coll.device<2 : i64>>, memref<4x2xf32, strided<[6, 1], offset: 2>, #coll.device<0 : i64>>, !coll.token)
// AXIS1RINGN-COUNT-9: "coll.copy"
// AXIS1RINGN-NOT: "coll.copy"

// EMPTY-NOT: "coll.copy"
// EMPTY: "coll.join"() : () -> !coll.token
