// coll.all_to_all (direct): block j of x_i along split_axis goes straight
// into block i of y_j along concat_axis, piece by piece where a block is
// not one contiguous run in both; i = j is a local copy.
// GEN: n2 = coll-gen all-to-all --devices 2 --shape 4x2 --split-axis 0 --concat-axis 1
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/all_to_all.n2.mlir | FileCheck %s --check-prefix=N2
// GEN: n3 = coll-gen all-to-all --devices 3 --shape 6 --split-axis 0 --concat-axis 0
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/all_to_all.n3.mlir | FileCheck %s --check-prefix=N3
// GEN: n4 = coll-gen all-to-all --devices 4 --shape 2x8 --split-axis 1 --concat-axis 0
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/all_to_all.n4.mlir | FileCheck %s --check-prefix=N4
// GEN: empty = coll-gen all-to-all --devices 3 --shape 0x3 --split-axis 1 --concat-axis 0
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/all_to_all.empty.mlir | FileCheck %s --check-prefix=EMPTY

// x0 = 4x2, block 1 = rows 2-3 = elements [4, 8); y1 = 2x4, block 0 =
// columns 0-1 = elements [0, 2) and [4, 6).
// N2: %[[X0:.*]] = memref.collapse_shape {{.*}} into memref<8xf32, #coll.device<0 : i64>>
// N2: memref.memory_space_cast %arg3
// N2-NEXT: %[[Y1:.*]] = memref.collapse_shape {{.*}} into memref<8xf32, #coll.device<1 : i64>>
// N2: %[[A:.*]] = memref.subview %[[X0]][4] [2] [1]
// N2: %[[B:.*]] = memref.subview %[[X0]][6] [2] [1]
// N2: %[[C:.*]] = memref.subview %[[Y1]][0] [2] [1]
// N2: %[[D:.*]] = memref.subview %[[Y1]][4] [2] [1]
// N2: "coll.copy"(%[[A]], %[[C]])
// N2: "coll.copy"(%[[B]], %[[D]])
// N2-COUNT-4: "coll.copy"
// N2-NOT: "coll.copy"

// 1-D: block j of x_i (2 elements) into slice [2i, 2i+2) of y_j: 9 copies.
// N3: "coll.copy"({{.*}}) : (memref<2xf32, strided<[1], offset: 2>, #coll.device<0 : i64>>, memref<2xf32, strided<[1]>, #coll.device<1 : i64>>)
// N3-COUNT-7: "coll.copy"
// N3-NOT: "coll.copy"

// Split along columns of 2x8 (runs of 2 per row), concatenated along rows
// of 8x2 (one run of 4): two pieces per pair.
// N4-COUNT-32: "coll.copy"({{.*}}memref<2xf32
// N4-NOT: "coll.copy"

// EMPTY-NOT: "coll.copy"
// EMPTY: "coll.join"() : () -> !coll.token
