// N = 1 is the identity: one same-device copy, no kernel, whatever the strategy.
// GEN: one = coll-gen all-reduce --devices 1 --shape 4x4
// RUN: coll-opt --coll-lower-all-reduce=strategy=ring < %S/Inputs/gen/identity_and_empty.one.mlir | FileCheck %s --check-prefix=ONE
// Empty chunks: numel 3 on 4 devices gives chunks 3, 0, 0, 0 (3 floats are
// less than one 16-byte vector); forced strategies emit no work for the
// empty chunks: one chunk's N-1 hops (or sends) in and N-1 out.
// GEN: ring = coll-gen all-reduce --devices 4 --shape 3
// RUN: coll-opt --coll-lower-all-reduce=strategy=ring < %S/Inputs/gen/identity_and_empty.ring.mlir | FileCheck %s --check-prefix=RING
// RUN: coll-opt --coll-lower-all-reduce=strategy=all2all < %S/Inputs/gen/identity_and_empty.ring.mlir | FileCheck %s --check-prefix=A2A
// numel 64 on 6 devices: chunks 32, 32, 0, 0, 0, 0.
// GEN: six = coll-gen all-reduce --devices 6 --shape 64
// RUN: coll-opt --coll-lower-all-reduce=strategy=ring < %S/Inputs/gen/identity_and_empty.six.mlir | FileCheck %s --check-prefix=SIX
// Rank 0 is flattened with expand_shape.
// GEN: rank0 = coll-gen all-reduce --devices 2 --shape scalar
// RUN: coll-opt --coll-lower-all-reduce=strategy=naive < %S/Inputs/gen/identity_and_empty.rank0.mlir | FileCheck %s --check-prefix=RANK0
// auto: naive at and below the threshold, ring above it (N > 2).
// GEN: auto = coll-gen all-reduce --devices 3 --shape 300 --threshold 299
// RUN: coll-opt --coll-lower-all-reduce < %S/Inputs/gen/identity_and_empty.auto.mlir | FileCheck %s --check-prefix=AUTO-RING
// GEN: auto2 = coll-gen all-reduce --devices 3 --shape 300
// RUN: coll-opt --coll-lower-all-reduce=threshold=300 < %S/Inputs/gen/identity_and_empty.auto2.mlir | FileCheck %s --check-prefix=AUTO-NAIVE
// GEN: auto3 = coll-gen all-reduce --devices 2 --shape 300 --threshold 0
// RUN: coll-opt --coll-lower-all-reduce < %S/Inputs/gen/identity_and_empty.auto3.mlir | FileCheck %s --check-prefix=AUTO-NAIVE

// ONE: %[[X:.*]] = memref.collapse_shape {{.*}} into memref<16xf32, #coll.device<0 : i64>>
// ONE: %[[Y:.*]] = memref.collapse_shape {{.*}} into memref<16xf32, #coll.device<0 : i64>>
// ONE: %[[T:.*]] = "coll.copy"(%[[X]], %[[Y]])
// ONE-NOT: "coll.combine"
// ONE: "coll.join"(%[[T]])

// RING-COUNT-6: "coll.copy"{{.*}}memref<3xf32
// RING-NOT: "coll.copy"
// A2A-COUNT-6: "coll.copy"{{.*}}memref<3xf32
// A2A-NOT: "coll.copy"

// SIX-NOT: [64] [0]
// SIX-COUNT-20: "coll.copy"{{.*}}memref<32xf32
// SIX-NOT: "coll.copy"

// RANK0: memref.expand_shape %{{.*}} [] output_shape [1] : memref<f32, #coll.device<0 : i64>> into memref<1xf32, #coll.device<0 : i64>>
// RANK0: "coll.combine"

// AUTO-RING: memref.subview
// AUTO-RING-COUNT-12: "coll.copy"
// AUTO-NAIVE-NOT: memref.subview
// AUTO-NAIVE: "coll.combine"
