// A pipeline anchored on any(...) at the top level runs on the top-level
// op, as in mlir-opt; a func.func anchor runs on a top-level func
// (--no-implicit-module), and on a module it is the run-time error
// mlir-opt gives.
// RUN: coll-opt %s --pass-pipeline='any(cse)' | FileCheck %s
// RUN: mlir-opt %s --pass-pipeline='any(cse)' | FileCheck %s
// RUN: coll-opt %s --pass-pipeline='any(coll-check-order,cse)' | FileCheck %s
// RUN: not coll-opt %s --pass-pipeline='func.func(cse)' 2>&1 | FileCheck %s --check-prefix=ANCHOR
// RUN: not mlir-opt %s --pass-pipeline='func.func(cse)' 2>&1 | FileCheck %s --check-prefix=ANCHOR

// CHECK: func.func @f
// CHECK-COUNT-1: arith.addi
// CHECK-NOT: arith.addi
// ANCHOR: error: can't run 'func.func' pass manager on 'builtin.module' op

func.func @f(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  %1 = arith.addi %a, %a : i32
  return %1 : i32
}
