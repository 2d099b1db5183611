// One dash or two, as LLVM's command line takes them: every spelling gives
// the same output as upstream mlir-opt given the same spelling.
// RUN: mlir-opt %s -split-input-file -cse -o %t.up
// RUN: coll-opt %s -split-input-file -cse -o %t.co
// RUN: diff %t.up %t.co
// RUN: FileCheck %s --input-file=%t.co
// RUN: mlir-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(cse))' -o %t.up
// RUN: coll-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(cse))' -o %t.co
// RUN: diff %t.up %t.co
// RUN: coll-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(cse))' --o=%t.co2
// RUN: diff %t.up %t.co2
// RUN: mlir-opt %s -split-input-file -verify-diagnostics -cse
// RUN: coll-opt %s -split-input-file -verify-diagnostics -cse
// Our passes too, single-dashed with options:
// RUN: coll-opt %s -split-input-file -coll-check-order -canonicalize=max-iterations=2 | FileCheck %s --check-prefix=OURS

// CHECK-LABEL: func.func @twice
// CHECK-NEXT: %[[S:.*]] = arith.addi %arg0, %arg0 : i32
// CHECK-NEXT: arith.muli %[[S]], %[[S]] : i32
// The marker is spelled as a regex: mlir-opt splits at it even mid-line.
// CHECK: {{^// -{5}$}}
// CHECK-LABEL: func.func @other
// OURS: func.func @twice
// OURS: {{^// -{5}$}}
// OURS: func.func @other

func.func @twice(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  %1 = arith.addi %a, %a : i32
  %2 = arith.muli %0, %1 : i32
  return %2 : i32
}

// -----
func.func @other() {
  return
}
