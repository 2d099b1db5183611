// oneshot and twoshot: combines read the other devices' buffers in place
// through peer views (memref.memory_space_cast from device i to the
// combining device), which needs the module attribute coll.peer_access.
// GEN: one = coll-gen all-reduce --devices 3 --shape 8 --peer-access
// RUN: coll-opt --coll-lower-all-reduce=strategy=oneshot < %S/Inputs/gen/peer.one.mlir | FileCheck %s --check-prefix=ONE
// GEN: two = coll-gen all-reduce --devices 3 --shape 1000 --peer-access
// RUN: coll-opt --coll-lower-all-reduce=strategy=twoshot < %S/Inputs/gen/peer.two.mlir | FileCheck %s --check-prefix=TWO
// GEN: two4 = coll-gen all-reduce --devices 4 --shape 4x100 --peer-access
// RUN: coll-opt --coll-lower-all-reduce=strategy=twoshot < %S/Inputs/gen/peer.two4.mlir | FileCheck %s --check-prefix=TWO4
// GEN: nopeer = coll-gen all-reduce --devices 3 --shape 8
// RUN: not coll-opt --coll-lower-all-reduce=strategy=oneshot < %S/Inputs/gen/peer.nopeer.mlir 2>&1 | FileCheck %s --check-prefix=NOPEER

// oneshot: no copy, no scratch; device 0 combines x0 (its own), x1 and x2
// (peer views) in device order into y0; so do devices 1 and 2.
// ONE-NOT: "coll.copy"
// ONE-NOT: "coll.alloc"
// ONE-DAG: %[[X0:.*]] = memref.memory_space_cast %arg0 : memref<8xf32> to memref<8xf32, #coll.device<0 : i64>>
// ONE-DAG: %[[X1:.*]] = memref.memory_space_cast %arg1 : memref<8xf32> to memref<8xf32, #coll.device<1 : i64>>
// ONE-DAG: %[[X2:.*]] = memref.memory_space_cast %arg2 : memref<8xf32> to memref<8xf32, #coll.device<2 : i64>>
// ONE-DAG: %[[Y0:.*]] = memref.memory_space_cast %arg3 : memref<8xf32> to memref<8xf32, #coll.device<0 : i64>>
// ONE: %[[P1:.*]] = memref.memory_space_cast %[[X1]] : memref<8xf32, #coll.device<1 : i64>> to memref<8xf32, #coll.device<0 : i64>>
// ONE: %[[P2:.*]] = memref.memory_space_cast %[[X2]] : memref<8xf32, #coll.device<2 : i64>> to memref<8xf32, #coll.device<0 : i64>>
// ONE: %[[K0:.*]] = "coll.combine"(%[[X0]], %[[P1]], %[[P2]], %[[Y0]]) {kind = "sum", operandSegmentSizes = array<i32: 1, 2, 1, 0>}
// ONE: %[[Q0:.*]] = memref.memory_space_cast %[[X0]] : memref<8xf32, #coll.device<0 : i64>> to memref<8xf32, #coll.device<1 : i64>>
// ONE: %[[Q2:.*]] = memref.memory_space_cast %[[X2]] : memref<8xf32, #coll.device<2 : i64>> to memref<8xf32, #coll.device<1 : i64>>
// ONE: %[[K1:.*]] = "coll.combine"(%[[Q0]], %[[X1]], %[[Q2]], %{{.*}}) {kind = "sum", operandSegmentSizes = array<i32: 1, 2, 1, 0>}
// ONE: %[[K2:.*]] = "coll.combine"
// ONE-NOT: "coll.combine"
// ONE: "coll.join"(%[[K0]], %[[K1]], %[[K2]])

// twoshot: chunk 0 (336 of 1000) is combined on device 0 from the three
// inputs' slices, read in place, straight into y0[0:336]; then device 0's
// result slice is copied into y1 and y2 (all-gather by peer writes), each
// after the combine.
// TWO-NOT: "coll.alloc"
// TWO: %[[S0:.*]] = memref.subview %{{.*}}[0] [336] [1] : memref<1000xf32, #coll.device<0 : i64>>
// TWO: %[[S1:.*]] = memref.subview %{{.*}}[0] [336] [1] : memref<1000xf32, #coll.device<1 : i64>>
// TWO-NEXT: %[[P1:.*]] = memref.memory_space_cast %[[S1]] : {{.*}}#coll.device<1 : i64>> to memref<336xf32, strided<[1]>, #coll.device<0 : i64>>
// TWO: %[[S2:.*]] = memref.subview %{{.*}}[0] [336] [1] : memref<1000xf32, #coll.device<2 : i64>>
// TWO-NEXT: %[[P2:.*]] = memref.memory_space_cast %[[S2]] : {{.*}}#coll.device<2 : i64>> to memref<336xf32, strided<[1]>, #coll.device<0 : i64>>
// TWO-NEXT: %[[Y0C0:.*]] = memref.subview
// TWO-NEXT: %[[K0:.*]] = "coll.combine"(%[[S0]], %[[P1]], %[[P2]], %[[Y0C0]]) {kind = "sum", operandSegmentSizes = array<i32: 1, 2, 1, 0>}
// TWO: "coll.copy"(%[[Y0C0]], %{{.*}}, %[[K0]])
// TWO: "coll.copy"(%[[Y0C0]], %{{.*}}, %[[K0]])
// TWO: memref.subview %{{.*}}[336] [336] [1]

// twoshot on 4 devices: N combines, N(N-1) copies.
// TWO4-COUNT-4: "coll.combine"
// TWO4-NOT: "coll.combine"
// RUN: coll-opt --coll-lower-all-reduce=strategy=twoshot < %S/Inputs/gen/peer.two4.mlir | FileCheck %s --check-prefix=TWO4C
// TWO4C-COUNT-12: "coll.copy"
// TWO4C-NOT: "coll.copy"

// NOPEER: <stdin>:3:{{[0-9]+}}: error: coll-lower-all-reduce: strategy 'oneshot' reads buffers of other devices in place; the module has no 'coll.peer_access'
