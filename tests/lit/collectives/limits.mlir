// A lowering that would emit millions of ops is refused with a located
// error instead of exhausting memory (N^2 blocks of one piece per row:
// the estimate counts the pieces of the real decomposition, collectives/spec.py).
// GEN: input = coll-gen all-gather --devices 64 --shape 4096x2 --axis 1
// RUN: not coll-opt --coll-lower-collectives < %S/Inputs/gen/limits.input.mlir 2>&1 | FileCheck %s
// CHECK: <stdin>:3:10: error: coll-lower-collectives: lowering this coll.all_gather (64 devices, 4096 pieces per block) would emit about 67109124 ops, above the limit of 2000000; use fewer devices or a leading axis

// Found by an outside attack: all_to_all with split_axis 0 and concat_axis 1
// is one piece per row of the target (the estimate read the source's leading
// axis: never refused; 90 s and 1.4 GB at 600 KB per device). Refused by the
// lowering and by the cost model's choice, which lowered candidates to cost them.
// GEN: a2a = coll-gen all-to-all --devices 2 --shape 300000x2 --dtype i8 --split-axis 0 --concat-axis 1
// RUN: not coll-opt --coll-lower-collectives < %S/Inputs/gen/limits.a2a.mlir 2>&1 | FileCheck %s --check-prefix=A2A
// RUN: not coll-opt --pass-pipeline='builtin.module(coll-choose-strategy{profile=cpu},coll-lower-collectives)' < %S/Inputs/gen/limits.a2a.mlir 2>&1 | FileCheck %s --check-prefix=A2A-MODEL
// A2A: <stdin>:3:10: error: coll-lower-collectives: lowering this coll.all_to_all (2 devices, 150000 pieces per block) would emit about 2400012 ops, above the limit of 2000000; use fewer devices or a leading axis
// A2A-MODEL: <stdin>:3:10: error: coll-choose-strategy: lowering this coll.all_to_all (2 devices, 150000 pieces per block) would emit about 2400012 ops
// A2A-MODEL-NOT: Failure while executing
// The same block split along the leading axis of both is one piece: lowered.
// GEN: a2a0 = coll-gen all-to-all --devices 2 --shape 300000x2 --dtype i8 --split-axis 0 --concat-axis 0
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/limits.a2a0.mlir | FileCheck %s --check-prefix=ONE
// ONE-COUNT-4: "coll.copy"
// ONE-NOT: "coll.copy"
