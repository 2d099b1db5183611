// N = 1 is the identity: one same-device copy, no kernel, whatever the strategy.
// RUN: coll-gen all-reduce --devices 1 --shape 4x4 | coll-opt --coll-lower-all-reduce=strategy=ring | FileCheck %s --check-prefix=ONE
// Empty chunks: numel 3 on 4 devices gives chunks 1, 1, 1, 0; forced
// strategies emit no work for the empty chunk.
// RUN: coll-gen all-reduce --devices 4 --shape 3 | coll-opt --coll-lower-all-reduce=strategy=ring | FileCheck %s --check-prefix=RING
// RUN: coll-gen all-reduce --devices 4 --shape 3 | coll-opt --coll-lower-all-reduce=strategy=all2all | FileCheck %s --check-prefix=A2A
// numel 64 on 6 devices: chunks 32, 32, 0, 0, 0, 0.
// RUN: coll-gen all-reduce --devices 6 --shape 64 | coll-opt --coll-lower-all-reduce=strategy=ring | FileCheck %s --check-prefix=SIX
// Rank 0 is flattened with expand_shape.
// RUN: coll-gen all-reduce --devices 2 --shape scalar | coll-opt --coll-lower-all-reduce=strategy=naive | FileCheck %s --check-prefix=RANK0
// auto: naive at and below the threshold, ring above it (N > 2).
// RUN: coll-gen all-reduce --devices 3 --shape 300 --threshold 299 | coll-opt --coll-lower-all-reduce | FileCheck %s --check-prefix=AUTO-RING
// RUN: coll-gen all-reduce --devices 3 --shape 300 | coll-opt --coll-lower-all-reduce=threshold=300 | FileCheck %s --check-prefix=AUTO-NAIVE
// RUN: coll-gen all-reduce --devices 2 --shape 300 --threshold 0 | coll-opt --coll-lower-all-reduce | FileCheck %s --check-prefix=AUTO-NAIVE

// ONE: %[[X:.*]] = memref.collapse_shape {{.*}} into memref<16xf32, #coll.device<0 : i64>>
// ONE: %[[Y:.*]] = memref.collapse_shape {{.*}} into memref<16xf32, #coll.device<0 : i64>>
// ONE: %[[T:.*]] = "coll.copy"(%[[X]], %[[Y]])
// ONE-NOT: "coll.combine"
// ONE: "coll.join"(%[[T]])

// RING-COUNT-18: "coll.copy"{{.*}}memref<1xf32
// RING-NOT: "coll.copy"
// A2A-COUNT-18: "coll.copy"{{.*}}memref<1xf32
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
