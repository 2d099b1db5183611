// Size limits give a clear located error, quickly, instead of exhausting
// memory; nothing is written to -o.
// RUN: rm -f %t.out
// RUN: %PYTHON %S/Inputs/many_devices.py 1025 > %t.many.mlir
// RUN: not coll-opt %t.many.mlir --coll-lower-all-reduce -o %t.out 2>&1 | FileCheck %s --check-prefix=MANY
// RUN: not coll-gen all-reduce --devices 1025 2>&1 | FileCheck %s --check-prefix=GEN
// RUN: coll-gen all-reduce --devices 1024 --shape 1048576 --strategy ring > %t.ring.mlir
// RUN: not coll-opt %t.ring.mlir --coll-lower-all-reduce -o %t.out 2>&1 | FileCheck %s --check-prefix=RING
// RUN: coll-gen all-reduce --devices 1000 --shape 4 > %t.naive.mlir
// RUN: not coll-opt %t.naive.mlir --coll-lower-all-reduce=strategy=naive -o %t.out 2>&1 | FileCheck %s --check-prefix=NAIVE
// RUN: not test -e %t.out

// MANY: many.mlir:2:8: error: 1025 devices exceed the supported maximum of 1024
// GEN: coll-gen: error: --devices must be in 1..1024, got 1025
// RING: ring.mlir:3:10: error: coll-lower-all-reduce: lowering this coll.all_reduce (1024 devices, strategy ring) would emit about 6295556 ops, above the limit of 2000000; use fewer devices or another strategy
// NAIVE: naive.mlir:3:10: error: coll-lower-all-reduce: lowering this coll.all_reduce (1000 devices, strategy naive) would emit about 2007004 ops, above the limit of 2000000
// CHECK-NOT: Traceback
