// coll.broadcast from `root`. direct: one copy from the root to every
// output; ring: chunk by chunk, hop by hop from the root around the ring
// (each hop reads what the hop before delivered); tree: binomial, in round d
// ranks q < d send to q + d. The root's own output gets a local copy (none
// in place).
// GEN: direct4 = coll-gen broadcast --devices 4 --shape 64 --root 1 --strategy direct
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/broadcast.direct4.mlir | FileCheck %s --check-prefix=DIRECT4
// GEN: inplace2 = coll-gen broadcast --devices 2 --shape 8 --root 0 --strategy direct --in-place
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/broadcast.inplace2.mlir | FileCheck %s --check-prefix=INPLACE2
// GEN: direct3 = coll-gen broadcast --devices 3 --shape 8 --root 2 --strategy direct
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/broadcast.direct3.mlir | FileCheck %s --check-prefix=DIRECT3
// GEN: ring2 = coll-gen broadcast --devices 2 --shape 64 --root 1 --strategy ring
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/broadcast.ring2.mlir | FileCheck %s --check-prefix=RING2
// GEN: tree2 = coll-gen broadcast --devices 2 --shape 64 --root 1 --strategy tree
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/broadcast.tree2.mlir | FileCheck %s --check-prefix=TREE2
// GEN: ring4 = coll-gen broadcast --devices 4 --shape 64 --root 1 --strategy ring
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/broadcast.ring4.mlir | FileCheck %s --check-prefix=RING4
// GEN: ringout3 = coll-gen broadcast --devices 3 --shape 12 --root 3 --strategy ring
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/broadcast.ringout3.mlir | FileCheck %s --check-prefix=RINGOUT3
// GEN: tree4 = coll-gen broadcast --devices 4 --shape 64 --root 1 --strategy tree
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/broadcast.tree4.mlir | FileCheck %s --check-prefix=TREE4
// GEN: tree3 = coll-gen broadcast --devices 3 --shape 8 --root 2 --strategy tree --in-place
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/broadcast.tree3.mlir | FileCheck %s --check-prefix=TREE3

// DIRECT4: %[[X:.*]] = memref.memory_space_cast %arg0 : memref<64xf32> to memref<64xf32, #coll.device<1 : i64>>
// DIRECT4-COUNT-4: "coll.copy"(%[[X]], %{{.*}}) :
// DIRECT4-NOT: "coll.copy"

// INPLACE2-COUNT-1: "coll.copy"({{.*}}) : (memref<8xf32, #coll.device<0 : i64>>, memref<8xf32, #coll.device<1 : i64>>)
// INPLACE2-NOT: "coll.copy"

// DIRECT3-COUNT-3: "coll.copy"({{.*}}) : (memref<8xf32, #coll.device<2 : i64>>
// DIRECT3-NOT: "coll.copy"

// RING2: "coll.copy"({{.*}}) : (memref<64xf32, #coll.device<1 : i64>>, memref<64xf32, #coll.device<1 : i64>>)
// RING2: "coll.copy"({{.*}}) : (memref<32xf32, strided<[1]>, #coll.device<1 : i64>>, memref<32xf32, strided<[1]>, #coll.device<0 : i64>>)
// RING2: "coll.copy"({{.*}}) : (memref<32xf32, strided<[1], offset: 32>, #coll.device<1 : i64>>, memref<32xf32, strided<[1], offset: 32>, #coll.device<0 : i64>>)
// RING2-NOT: "coll.copy"

// TREE2: "coll.copy"({{.*}}) : (memref<64xf32, #coll.device<1 : i64>>, memref<64xf32, #coll.device<1 : i64>>)
// TREE2: "coll.copy"({{.*}}) : (memref<64xf32, #coll.device<1 : i64>>, memref<64xf32, #coll.device<0 : i64>>)
// TREE2-NOT: "coll.copy"

// 64 elements: chunks of 32, 32, 0, 0; each goes d1 -> d2 -> d3 -> d0.
// RING4: "coll.copy"({{.*}}) : (memref<64xf32, #coll.device<1 : i64>>, memref<64xf32, #coll.device<1 : i64>>)
// RING4: %[[H1:.*]] = "coll.copy"(%[[A:.*]], %[[B:.*]]) : (memref<32xf32, strided<[1]>, #coll.device<1 : i64>>, memref<32xf32, strided<[1]>, #coll.device<2 : i64>>)
// RING4: %[[H2:.*]] = "coll.copy"(%[[B]], %[[C:.*]], %[[H1]]) : ({{.*}}#coll.device<2 : i64>>, {{.*}}#coll.device<3 : i64>>, !coll.token)
// RING4: "coll.copy"(%[[C]], %{{.*}}, %[[H2]]) : ({{.*}}#coll.device<3 : i64>>, {{.*}}#coll.device<0 : i64>>, !coll.token)
// RING4-COUNT-3: "coll.copy"({{.*}}offset: 32
// RING4-NOT: "coll.copy"

// A root outside the group (device 3) starts the chain at device 0; 12
// elements on 3 devices: chunks 4, 4, 4 (one 16-byte vector each).
// RINGOUT3-COUNT-9: "coll.copy"
// RINGOUT3-NOT: "coll.copy"

// TREE4: "coll.copy"({{.*}}) : (memref<64xf32, #coll.device<1 : i64>>, memref<64xf32, #coll.device<1 : i64>>)
// TREE4: %[[R1:.*]] = "coll.copy"({{.*}}) : (memref<64xf32, #coll.device<1 : i64>>, memref<64xf32, #coll.device<2 : i64>>)
// TREE4: "coll.copy"({{.*}}) : (memref<64xf32, #coll.device<1 : i64>>, memref<64xf32, #coll.device<3 : i64>>)
// TREE4: "coll.copy"({{.*}}, %[[R1]]) : (memref<64xf32, #coll.device<2 : i64>>, memref<64xf32, #coll.device<0 : i64>>, !coll.token)
// TREE4-NOT: "coll.copy"

// In place, root 2 of 3: d2 -> d0, then d2 -> d1 (ranks 2, 0, 1).
// TREE3: "coll.copy"({{.*}}) : (memref<8xf32, #coll.device<2 : i64>>, memref<8xf32, #coll.device<0 : i64>>)
// TREE3: "coll.copy"({{.*}}) : (memref<8xf32, #coll.device<2 : i64>>, memref<8xf32, #coll.device<1 : i64>>)
// TREE3-NOT: "coll.copy"
