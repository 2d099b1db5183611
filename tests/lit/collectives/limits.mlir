// A lowering that would emit millions of ops is refused with a located
// error instead of exhausting memory (N^2 blocks of one piece per row:
// the estimate counts the pieces of the real decomposition, collectives/spec.py).
// GEN: input = coll-gen all-gather --devices 64 --shape 4096x2 --axis 1
// RUN: not coll-opt --coll-lower-collectives < %S/Inputs/gen/limits.input.mlir 2>&1 | FileCheck %s
// CHECK: <stdin>:3:10: error: coll-lower-collectives: lowering this coll.all_gather (64 devices, 4096 pieces per block) would emit about 67109124 ops, above the limit of 2000000; use fewer devices or a leading axis
