// A lowering that would emit millions of ops is refused with a located
// error instead of exhausting memory. Every block is one strided view
// (collectives/emit.py), so the estimate, 4 N^2 ops plus the buffers', does
// not grow with the shape: only the number of devices is refused.
// GEN: input = coll-gen all-gather --devices 720 --shape 2x2 --axis 1
// RUN: not coll-opt --coll-lower-collectives < %S/Inputs/gen/limits.input.mlir 2>&1 | FileCheck %s
// CHECK: <stdin>:3:10: error: coll-lower-collectives: lowering this coll.all_gather (720 devices) would emit about 2076484 ops, above the limit of 2000000; use fewer devices

// Along axis 1 on 64 devices, 4096 rows per block: one copy per block.
// GEN: rows = coll-gen all-gather --devices 64 --shape 4096x2 --axis 1
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/limits.rows.mlir | FileCheck %s --check-prefix=ROWS
// ROWS-COUNT-4096: "coll.copy"({{.*}}) : (memref<4096x2xf32, strided<[2, 1]>
// ROWS-NOT: "coll.copy"

// Found by an outside attack: all_to_all with split_axis 0 and concat_axis 1
// was one piece per row of the target (90 s and 1.4 GB at 600 KB per
// device, then refused by the op limit): now one copy per pair of devices,
// by the lowering and by the cost model's choice, which lowers candidates
// to cost them.
// GEN: a2a = coll-gen all-to-all --devices 2 --shape 300000x2 --dtype i8 --split-axis 0 --concat-axis 1
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/limits.a2a.mlir | FileCheck %s --check-prefix=A2A
// RUN: coll-opt --pass-pipeline='builtin.module(coll-choose-strategy{profile=cpu},coll-lower-collectives)' < %S/Inputs/gen/limits.a2a.mlir | FileCheck %s --check-prefix=A2A
// A2A-COUNT-4: "coll.copy"({{.*}}) : (memref<150000x2xi8, strided<[2, 1]{{.*}}>, memref<150000x2xi8, strided<[4, 1]{{.*}}>)
// A2A-NOT: "coll.copy"
// The same block split along the leading axis of both is one contiguous piece.
// GEN: a2a0 = coll-gen all-to-all --devices 2 --shape 300000x2 --dtype i8 --split-axis 0 --concat-axis 0
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/limits.a2a0.mlir | FileCheck %s --check-prefix=ONE
// ONE-COUNT-4: "coll.copy"({{.*}}) : (memref<300000xi8
// ONE-NOT: "coll.copy"
