// With --no-implicit-module a lone top-level func.func is the op passes run
// on: pass flags anchor on it and so does a func.func(...) pipeline, as in
// mlir-opt.
// RUN: coll-opt %s --no-implicit-module --cse | FileCheck %s
// RUN: mlir-opt %s --no-implicit-module --cse | FileCheck %s
// RUN: coll-opt %s --no-implicit-module --pass-pipeline='func.func(cse)' | FileCheck %s
// RUN: mlir-opt %s --no-implicit-module --pass-pipeline='func.func(cse)' | FileCheck %s

// CHECK-NOT: module
// CHECK: func.func @f
// CHECK-COUNT-1: arith.addi
// CHECK-NOT: arith.addi
func.func @f(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  %1 = arith.addi %a, %a : i32
  return %1 : i32
}
