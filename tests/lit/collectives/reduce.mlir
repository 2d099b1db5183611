// coll.reduce to `root` (in the group or not). direct: every other input is
// copied to the root, one combine in device order (the root's own input at
// its position); ring: chunk by chunk along the ring that ends at the root,
// pipelined (canonical: along d0 .. d(N-1), then a copy to the root); tree:
// binomial, rank q = devices[(root + q) mod N] (canonical: direct). The
// ring and tree checks below run under order=any; CANON the default.
// GEN: direct3 = coll-gen reduce --devices 3 --shape 4 --root 1 --strategy direct
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/reduce.direct3.mlir | FileCheck %s --check-prefix=DIRECT3
// GEN: outside2 = coll-gen reduce --devices 2 --shape 4 --root 2 --strategy direct
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/reduce.outside2.mlir | FileCheck %s --check-prefix=OUTSIDE2
// GEN: direct4 = coll-gen reduce --devices 4 --shape 4 --root 3 --strategy direct
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/reduce.direct4.mlir | FileCheck %s --check-prefix=DIRECT4
// GEN: ring2 = coll-gen reduce --devices 2 --shape 64 --root 0 --strategy ring
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/reduce.ring2.mlir | FileCheck %s --check-prefix=RING2
// GEN: ring3 = coll-gen reduce --devices 3 --shape 4 --root 1 --strategy ring
// RUN: coll-opt --coll-lower-collectives=order=any < %S/Inputs/gen/reduce.ring3.mlir | FileCheck %s --check-prefix=RING3
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/reduce.ring3.mlir | FileCheck %s --check-prefix=CANON-RING3
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/reduce.tree3.mlir | FileCheck %s --check-prefix=DIRECT3
// GEN: ring4 = coll-gen reduce --devices 4 --shape 64 --kind max --root 0 --strategy ring
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/reduce.ring4.mlir | FileCheck %s --check-prefix=RING4
// GEN: ringout = coll-gen reduce --devices 4 --shape 64 --root 4 --strategy ring
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/reduce.ringout.mlir | FileCheck %s --check-prefix=RINGOUT
// GEN: tree3 = coll-gen reduce --devices 3 --shape 4 --root 1 --strategy tree
// RUN: coll-opt --coll-lower-collectives=order=any < %S/Inputs/gen/reduce.tree3.mlir | FileCheck %s --check-prefix=TREE3
// GEN: tree4 = coll-gen reduce --devices 4 --shape 4 --root 0 --strategy tree
// RUN: coll-opt --coll-lower-collectives=order=any < %S/Inputs/gen/reduce.tree4.mlir | FileCheck %s --check-prefix=TREE4
// GEN: inplace = coll-gen reduce --devices 2 --shape 4 --root 1 --strategy tree --in-place
// RUN: coll-opt --coll-lower-collectives=order=any < %S/Inputs/gen/reduce.inplace.mlir | FileCheck %s --check-prefix=INPLACE

// DIRECT3: %[[X0:.*]] = memref.memory_space_cast %arg0 : memref<4xf32> to memref<4xf32, #coll.device<0 : i64>>
// DIRECT3: %[[X1:.*]] = memref.memory_space_cast %arg1 : memref<4xf32> to memref<4xf32, #coll.device<1 : i64>>
// DIRECT3: %[[X2:.*]] = memref.memory_space_cast %arg2
// DIRECT3: %[[Y:.*]] = memref.memory_space_cast %arg3 : memref<4xf32> to memref<4xf32, #coll.device<1 : i64>>
// DIRECT3: %[[A:.*]] = "coll.copy"(%[[X0]], %[[R0:.*]]) :
// DIRECT3: %[[B:.*]] = "coll.copy"(%[[X2]], %[[R2:.*]]) :
// DIRECT3: "coll.combine"(%[[R0]], %[[X1]], %[[R2]], %[[Y]], %[[A]], %[[B]]) {kind = "sum", operandSegmentSizes = array<i32: 1, 2, 1, 2>}

// DIRECT4-COUNT-3: "coll.copy"({{.*}}, memref<4xf32, #coll.device<3 : i64>>) -> !coll.token
// DIRECT4: "coll.combine"({{.*}}operandSegmentSizes = array<i32: 1, 3, 1, 3>}
// DIRECT4-NOT: "coll.copy"

// A root outside the group: both inputs copied to it.
// OUTSIDE2: "coll.alloc"() : () -> memref<4xf32, #coll.device<2 : i64>>
// OUTSIDE2-COUNT-2: "coll.copy"({{.*}}#coll.device<2 : i64>>) -> !coll.token
// OUTSIDE2: "coll.combine"({{.*}}operandSegmentSizes = array<i32: 1, 1, 1, 2>}

// Ring to root 1: d2 -> d0 -> d1, the last combine writes the output.
// RING3: %[[Y:.*]] = memref.memory_space_cast %arg3 : memref<4xf32> to memref<4xf32, #coll.device<1 : i64>>
// RING3: %[[T0:.*]] = "coll.copy"({{.*}}) : (memref<4xf32, #coll.device<2 : i64>>, memref<4xf32, #coll.device<0 : i64>>)
// RING3: %[[K0:.*]] = "coll.combine"(%[[P:.*]], %{{.*}}, %[[P]], %[[T0]])
// RING3: %[[T1:.*]] = "coll.copy"(%[[P]], %{{.*}}, %[[K0]]) : (memref<4xf32, #coll.device<0 : i64>>, memref<4xf32, #coll.device<1 : i64>>, !coll.token)
// RING3: "coll.combine"(%{{.*}}, %{{.*}}, %[[Y]], %[[T1]])
// RING3-NOT: "coll.copy"

// Canonical ring to root 1: d0 -> d1 -> d2 (device order), then d2 -> d1.
// CANON-RING3: %[[Y:.*]] = memref.memory_space_cast %arg3 : memref<4xf32> to memref<4xf32, #coll.device<1 : i64>>
// CANON-RING3: "coll.copy"({{.*}}) : (memref<4xf32, #coll.device<0 : i64>>, memref<4xf32, #coll.device<1 : i64>>)
// CANON-RING3: "coll.combine"
// CANON-RING3: "coll.copy"({{.*}}) : (memref<4xf32, #coll.device<1 : i64>>, memref<4xf32, #coll.device<2 : i64>>
// CANON-RING3: %[[K:.*]] = "coll.combine"
// CANON-RING3: "coll.copy"(%{{.*}}, %[[Y]], %[[K]]) : (memref<4xf32, #coll.device<2 : i64>>, memref<4xf32, #coll.device<1 : i64>>
// CANON-RING3-NOT: "coll.copy"

// Two chunks of 32, each one hop d1 -> d0 and a combine into the output.
// RING2: %[[Y:.*]] = memref.memory_space_cast %arg2 : memref<64xf32> to memref<64xf32, #coll.device<0 : i64>>
// RING2: %[[Y0:.*]] = memref.subview %[[Y]][0] [32] [1]
// RING2: "coll.copy"({{.*}}) : (memref<32xf32, strided<[1]>, #coll.device<1 : i64>>, memref<32xf32, #coll.device<0 : i64>>)
// RING2: "coll.combine"(%{{.*}}, %{{.*}}, %[[Y0]], %{{.*}})
// RING2: "coll.copy"({{.*}}) : (memref<32xf32, strided<[1], offset: 32>, #coll.device<1 : i64>>, memref<32xf32, #coll.device<0 : i64>>)
// RING2-NOT: "coll.copy"

// 64 elements in 4 chunks of 32, 32, 0, 0: two chunks, 3 hops each.
// RING4-COUNT-6: "coll.copy"({{.*}}memref<32xf32
// RING4-NOT: "coll.copy"
// RING4: "coll.join"
// Root outside: 3 hops then a copy to the root, per chunk.
// RINGOUT-COUNT-3: "coll.copy"
// RINGOUT: "coll.copy"({{.*}}#coll.device<3 : i64>>, memref<32xf32, strided<[1]>, #coll.device<4 : i64>>
// RINGOUT-COUNT-3: "coll.copy"
// RINGOUT: "coll.copy"({{.*}}#coll.device<3 : i64>>, memref<32xf32, strided<[1], offset: 32>, #coll.device<4 : i64>>
// RINGOUT-NOT: "coll.copy"

// Tree to root 1: round 1 d2 -> d1, round 2 d0 -> d1.
// TREE3: "coll.copy"({{.*}}) : (memref<4xf32, #coll.device<2 : i64>>, memref<4xf32, #coll.device<1 : i64>>)
// TREE3: "coll.copy"({{.*}}) : (memref<4xf32, #coll.device<0 : i64>>, memref<4xf32, #coll.device<1 : i64>>)
// TREE3-NOT: "coll.copy"
// Tree over 4: d1 -> d0 and d3 -> d2 in round 1, then d2 -> d0; the last
// combine waits for d0's first one and the copy.
// TREE4: "coll.copy"({{.*}}) : (memref<4xf32, #coll.device<1 : i64>>, memref<4xf32, #coll.device<0 : i64>>)
// TREE4: %[[K0:.*]] = "coll.combine"
// TREE4: "coll.copy"({{.*}}) : (memref<4xf32, #coll.device<3 : i64>>, memref<4xf32, #coll.device<2 : i64>>)
// TREE4: %[[K2:.*]] = "coll.combine"
// TREE4: %[[C:.*]] = "coll.copy"({{.*}}, %[[K2]]) : (memref<4xf32, #coll.device<2 : i64>>, memref<4xf32, #coll.device<0 : i64>>, !coll.token)
// TREE4: "coll.combine"({{.*}}, %[[K0]], %[[C]])
// TREE4-NOT: "coll.copy"

// In place: the root's input is its output; the combine writes it.
// INPLACE: %[[X1:.*]] = memref.memory_space_cast %arg1 : memref<4xf32> to memref<4xf32, #coll.device<1 : i64>>
// INPLACE: "coll.combine"(%[[X1]], %{{.*}}, %[[X1]], %{{.*}})
