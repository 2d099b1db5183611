// coll.all_to_all (direct): block j of x_i along split_axis goes straight
// into block i of y_j along concat_axis, one copy per block: where a block
// is several runs (rows), the copy is between strided views of its rows
// (memref.reinterpret_cast), never one copy per row; i = j is a local copy.
// GEN: n2 = coll-gen all-to-all --devices 2 --shape 4x2 --split-axis 0 --concat-axis 1
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/all_to_all.n2.mlir | FileCheck %s --check-prefix=N2
// GEN: n3 = coll-gen all-to-all --devices 3 --shape 6 --split-axis 0 --concat-axis 0
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/all_to_all.n3.mlir | FileCheck %s --check-prefix=N3
// GEN: n4 = coll-gen all-to-all --devices 4 --shape 2x8 --split-axis 1 --concat-axis 0
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/all_to_all.n4.mlir | FileCheck %s --check-prefix=N4
// GEN: empty = coll-gen all-to-all --devices 3 --shape 0x3 --split-axis 1 --concat-axis 0
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/all_to_all.empty.mlir | FileCheck %s --check-prefix=EMPTY
// GEN: huge = coll-gen all-to-all --devices 2 --shape 300000x2 --dtype i8 --split-axis 0 --concat-axis 1
// RUN: coll-opt --coll-lower-collectives --coll-check-order < %S/Inputs/gen/all_to_all.huge.mlir | FileCheck %s --check-prefix=HUGE

// x0 = 4x2, block 1 = rows 2-3 = elements [4, 8) (2 rows of 2, 2 apart);
// y1 = 2x4, block 0 = columns 0-1 = elements [0, 2) and [4, 6) (2 rows of
// 2, 4 apart): one copy between the two 2x2 views.
// N2: %[[X0:.*]] = memref.collapse_shape {{.*}} into memref<8xf32, #coll.device<0 : i64>>
// N2: memref.memory_space_cast %arg3
// N2-NEXT: %[[Y1:.*]] = memref.collapse_shape {{.*}} into memref<8xf32, #coll.device<1 : i64>>
// N2: %[[A:.*]] = memref.reinterpret_cast %[[X0]] to offset: [4], sizes: [2, 2], strides: [2, 1]
// N2-NEXT: %[[C:.*]] = memref.reinterpret_cast %[[Y1]] to offset: [0], sizes: [2, 2], strides: [4, 1]
// N2-NEXT: "coll.copy"(%[[A]], %[[C]]) : (memref<2x2xf32, strided<[2, 1], offset: 4>, #coll.device<0 : i64>>, memref<2x2xf32, strided<[4, 1]>, #coll.device<1 : i64>>)
// N2-COUNT-2: "coll.copy"
// N2-NOT: "coll.copy"

// 1-D: block j of x_i (2 elements) into slice [2i, 2i+2) of y_j: 9 copies.
// N3: "coll.copy"({{.*}}) : (memref<2xf32, strided<[1], offset: 2>, #coll.device<0 : i64>>, memref<2xf32, strided<[1]>, #coll.device<1 : i64>>)
// N3-COUNT-7: "coll.copy"
// N3-NOT: "coll.copy"

// Split along columns of 2x8 (runs of 2 per row, 8 apart), concatenated
// along rows of 8x2 (one run of 4): one copy per pair, 2x2 views.
// N4: "coll.copy"({{.*}}) : (memref<2x2xf32, strided<[8, 1]>, #coll.device<0 : i64>>, memref<2x2xf32, strided<[2, 1]>, #coll.device<0 : i64>>)
// N4-COUNT-15: "coll.copy"({{.*}}memref<2x2xf32
// N4-NOT: "coll.copy"

// 300000x2 i8 over 2 devices: 150000 rows per block, still one copy per
// pair of devices (the block of x_i is contiguous, that of y_j, 150000x4,
// two columns: rows of 2, 4 apart). coll-check-order tells the blocks of
// one output apart by their offsets alone (analysis/regions.py).
// HUGE: "coll.copy"({{.*}}) : (memref<150000x2xi8, strided<[2, 1]>, #coll.device<0 : i64>>, memref<150000x2xi8, strided<[4, 1]>, #coll.device<0 : i64>>)
// HUGE-COUNT-3: "coll.copy"
// HUGE-NOT: "coll.copy"

// EMPTY-NOT: "coll.copy"
// EMPTY: "coll.join"() : () -> !coll.token
