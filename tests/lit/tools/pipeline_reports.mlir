// --dump-pass-pipeline and --mlir-pass-statistics print what mlir-opt
// prints (stderr), our passes in the same places.
// RUN: mlir-opt %s --pass-pipeline='builtin.module(func.func(cse,canonicalize),cse)' --dump-pass-pipeline -o /dev/null 2> %t.up
// RUN: coll-opt %s --pass-pipeline='builtin.module(func.func(cse,canonicalize),cse)' --dump-pass-pipeline -o /dev/null 2> %t.co
// RUN: diff %t.up %t.co
// RUN: FileCheck %s --input-file=%t.co --check-prefix=DUMP
// RUN: coll-opt %s -coll-check-order -cse --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=OURS
// RUN: mlir-opt %s -cse --mlir-pass-statistics -o /dev/null 2> %t.up
// RUN: coll-opt %s -cse --mlir-pass-statistics -o /dev/null 2> %t.co
// RUN: diff %t.up %t.co
// RUN: FileCheck %s --input-file=%t.co --check-prefix=STATS
// RUN: mlir-opt %s -cse --mlir-pass-statistics --mlir-pass-statistics-display=list -o /dev/null 2> %t.up
// RUN: coll-opt %s -cse --mlir-pass-statistics --mlir-pass-statistics-display=list -o /dev/null 2> %t.co
// RUN: diff %t.up %t.co

// DUMP: Pass Manager with 2 passes:
// DUMP-NEXT: builtin.module(
// DUMP-NEXT:   func.func(
// DUMP-NEXT:     cse,
// DUMP-NEXT:     canonicalize{{{.*}}}
// DUMP-NEXT:   ),
// DUMP-NEXT:   cse
// DUMP-NEXT: )
// OURS: Pass Manager with 2 passes:
// OURS-NEXT: builtin.module(
// OURS-NEXT:   coll-check-order,
// OURS-NEXT:   cse
// OURS-NEXT: )
// STATS: ... Pass statistics report ...
// STATS: CSE
// STATS-NEXT: (S) 2 num-cse'd - Number of operations CSE'd

func.func @f(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  %1 = arith.addi %a, %a : i32
  %2 = arith.muli %0, %1 : i32
  return %2 : i32
}
