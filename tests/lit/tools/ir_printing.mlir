// IR printing for named passes, as mlir-opt prints it (same headers, same
// dumps on stderr), for upstream passes, nested ones and ours. A nested
// pass prints its functions in the order its threads reach them: those
// runs disable threading (the dumps came out in either order, 2026-12-07).
// RUN: mlir-opt %s -cse -canonicalize --mlir-print-ir-after=cse -o /dev/null 2> %t.up
// RUN: coll-opt %s -cse -canonicalize --mlir-print-ir-after=cse -o /dev/null 2> %t.co
// RUN: diff %t.up %t.co
// RUN: FileCheck %s --input-file=%t.co --check-prefix=AFTER
// RUN: mlir-opt %s -cse -canonicalize --mlir-print-ir-before=canonicalize -o /dev/null 2> %t.up
// RUN: coll-opt %s -cse -canonicalize --mlir-print-ir-before=canonicalize -o /dev/null 2> %t.co
// RUN: diff %t.up %t.co
// RUN: FileCheck %s --input-file=%t.co --check-prefix=BEFORE
// RUN: mlir-opt %s --pass-pipeline='builtin.module(func.func(cse),canonicalize)' --mlir-print-ir-before=cse --mlir-disable-threading -o /dev/null 2> %t.up
// RUN: coll-opt %s --pass-pipeline='builtin.module(func.func(cse),canonicalize)' --mlir-print-ir-before=cse --mlir-disable-threading -o /dev/null 2> %t.co
// RUN: diff %t.up %t.co
// RUN: FileCheck %s --input-file=%t.co --check-prefix=NESTED
// RUN: mlir-opt %s -cse -canonicalize --mlir-print-ir-after-all --mlir-print-ir-after-change -o /dev/null 2> %t.up
// RUN: coll-opt %s -cse -canonicalize --mlir-print-ir-after-all --mlir-print-ir-after-change -o /dev/null 2> %t.co
// RUN: diff %t.up %t.co
// RUN: FileCheck %s --input-file=%t.co --check-prefix=CHANGE
// RUN: mlir-opt %s --pass-pipeline='builtin.module(func.func(cse))' --mlir-print-ir-after-all --mlir-print-ir-module-scope --mlir-disable-threading -o /dev/null 2> %t.up
// RUN: coll-opt %s --pass-pipeline='builtin.module(func.func(cse))' --mlir-print-ir-after-all --mlir-print-ir-module-scope --mlir-disable-threading -o /dev/null 2> %t.co
// RUN: diff %t.up %t.co
// RUN: FileCheck %s --input-file=%t.co --check-prefix=SCOPE
// RUN: not coll-opt %s -cse --mlir-print-ir-after-all --mlir-print-ir-module-scope 2>&1 | FileCheck %s --check-prefix=THREADS
// RUN: coll-opt %s -coll-check-order -cse --mlir-print-ir-after=coll-check-order -o /dev/null 2>&1 | FileCheck %s --check-prefix=OURS
// RUN: not coll-opt %S/Inputs/race.mlir -cse -coll-check-order -canonicalize --mlir-print-ir-after-failure -o /dev/null 2>&1 | FileCheck %s --check-prefix=FAILURE

// AFTER: // -----// IR Dump After CSE (cse) //----- //
// AFTER-NEXT: module {
// AFTER-NOT: IR Dump

// BEFORE: // -----// IR Dump Before Canonicalizer (canonicalize) //----- //
// BEFORE-NOT: IR Dump

// NESTED: // -----// IR Dump Before CSE (cse) //----- //
// NESTED-NEXT: func.func @twice
// NESTED: // -----// IR Dump Before CSE (cse) //----- //
// NESTED-NEXT: func.func @once
// NESTED-NOT: IR Dump

// cse changes @twice, canonicalize changes nothing after it.
// CHANGE: // -----// IR Dump After CSE (cse) //----- //
// CHANGE-NOT: IR Dump

// SCOPE: // -----// IR Dump After CSE (cse) ('func.func' operation: @twice) //----- //
// SCOPE-NEXT: module {

// THREADS: coll-opt: error: IR print for module scope can't be setup on a pass-manager without disabling multi-threading first (add --mlir-disable-threading)

// OURS: // -----// IR Dump After coll-check-order (coll-check-order) //----- //
// OURS-NOT: IR Dump

// FAILURE-NOT: IR Dump After CSE
// FAILURE: // -----// IR Dump After coll-check-order Failed (coll-check-order) //----- //
// FAILURE: race.mlir:3:9: error: coll-check-order: coll.copy writes %arg2[0, 8) on device 1, racing with another write
// FAILURE-NOT: IR Dump

func.func @twice(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  %1 = arith.addi %a, %a : i32
  %2 = arith.muli %0, %1 : i32
  return %2 : i32
}

func.func @once(%a: i32) -> i32 {
  return %a : i32
}
