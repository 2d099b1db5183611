// Bad input to the tools: a located diagnostic (or a tool-level one), exit
// code 1, no Python traceback and no output file.
// RUN: rm -f %t.out
// RUN: not coll-opt %S/Inputs/unparsable.mlir -o %t.out 2>&1 | FileCheck %s --check-prefix=PARSE
// RUN: not test -e %t.out
// RUN: not coll-opt %S/Inputs/does-not-exist.mlir -o %t.out 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce' -o %t.out 2>&1 | FileCheck %s --check-prefix=MALFORMED
// RUN: not coll-opt %s --pass-pipeline='func.func(cse)' 2>&1 | FileCheck %s --check-prefix=ANCHOR
// RUN: not coll-opt %s --pass-pipeline='builtin.module(coll-lower-everything)' -o %t.out 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=bogus})' 2>&1 | FileCheck %s --check-prefix=STRATEGY
// RUN: not coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{chunks=3})' 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{threshold=many})' 2>&1 | FileCheck %s --check-prefix=VALUE
// RUN: not coll-opt %s --bogus-flag 2>&1 | FileCheck %s --check-prefix=FLAG
// RUN: not coll-opt %S/Inputs/bad_kind.mlir -o %t.out 2>&1 | FileCheck %s --check-prefix=KIND
// RUN: not coll-opt %S/Inputs/zero_devices.mlir --coll-lower-all-reduce -o %t.out 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not coll-opt %S/Inputs/wrong_expectation.mlir --verify-diagnostics 2>&1 | FileCheck %s --check-prefix=VERIFY
// RUN: not test -e %t.out
// RUN: not coll-gen all-reduce --devices 0 2>&1 | FileCheck %s --check-prefix=GEN0
// RUN: not coll-gen all-reduce --devices 2 --dtype f32 --kind and 2>&1 | FileCheck %s --check-prefix=GENKIND

// PARSE: unparsable.mlir:3:3: error: custom op 'coll.nonsense' is unknown
// PARSE-NOT: Traceback
// MISSING: coll-opt: error: could not open input file '{{.*}}does-not-exist.mlir': No such file or directory
// MALFORMED: coll-opt: error: invalid pass pipeline: {{.*}}expected 'builtin.module(...)'
// ANCHOR: error: can't run 'func.func' pass manager on 'builtin.module' op
// UNKNOWN: coll-opt: error: invalid pass pipeline: invalid pipeline element 'coll-lower-everything': 'coll-lower-everything' does not refer to a registered pass or pass pipeline
// STRATEGY: invalid value 'bogus' for option 'strategy' of pass 'coll-lower-all-reduce'; expected one of: auto, naive, ring, all2all
// OPTION: unknown option 'chunks' for pass 'coll-lower-all-reduce'; expected one of: order, profile, strategy, threshold
// VALUE: invalid value 'many' for option 'threshold' of pass 'coll-lower-all-reduce'; expected an integer (int64)
// FLAG: coll-opt: Unknown command line argument '--bogus-flag'.  Try: 'coll-opt --help'
// KIND: bad_kind.mlir:2:8: error: '"mean"' does not satisfy the constraint
// ZERO: zero_devices.mlir:2:8: error: expected at least one input buffer (zero devices)
// VERIFY-DAG: wrong_expectation.mlir:3:{{[0-9]+}}: error: expected error "this message is never produced" was not produced
// VERIFY-DAG: wrong_expectation.mlir:4:8: error: unexpected error: device 1 is repeated
// GEN0: coll-gen: error: --devices must be in 1..1024, got 0
// GENKIND: coll-gen: error: bitwise reduction kind 'and' needs an integer or i1 element type, got f32
// CHECK-NOT: Traceback

func.func @f(%x0: memref<8xf32>, %y0: memref<8xf32>) {
  %t = "coll.all_reduce"(%x0, %y0) {kind = "sum", devices = array<i64: 0>, operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<8xf32>, memref<8xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
