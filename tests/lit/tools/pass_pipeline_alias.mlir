// -p is mlir-opt's alias of --pass-pipeline.
// RUN: coll-opt %s -p 'builtin.module(cse)' | FileCheck %s
// RUN: mlir-opt %s -p 'builtin.module(cse)' | FileCheck %s
// RUN: coll-opt %s -p='builtin.module(cse)' | FileCheck %s

// CHECK-COUNT-1: arith.addi
// CHECK-NOT: arith.addi
func.func @f(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  %1 = arith.addi %a, %a : i32
  return %1 : i32
}
