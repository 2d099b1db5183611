// An empty pipeline element is a typo, refused as in mlir-opt.
// RUN: not coll-opt %s --pass-pipeline='builtin.module(cse,,cse)' 2>&1 | FileCheck %s
// RUN: not coll-opt %s --pass-pipeline='builtin.module(cse,)' 2>&1 | FileCheck %s
// RUN: not mlir-opt %s --pass-pipeline='builtin.module(cse,,cse)' 2>&1 | FileCheck %s --check-prefix=UPSTREAM
// RUN: coll-opt %s --pass-pipeline='builtin.module()' | FileCheck %s --check-prefix=EMPTY

// CHECK: coll-opt: error: invalid pass pipeline: empty pipeline element in 'cse,
// UPSTREAM: '' does not refer to a registered pass or pass pipeline
// EMPTY: func.func @f
func.func @f() {
  return
}
