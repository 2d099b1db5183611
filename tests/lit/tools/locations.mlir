// Locations name the input file, as in mlir-opt: in --mlir-print-debuginfo
// output, in diagnostics, in every chunk; stdin is "<stdin>".
// RUN: mlir-opt %s --mlir-print-debuginfo --mlir-print-local-scope > %t.up
// RUN: coll-opt %s --mlir-print-debuginfo --mlir-print-local-scope > %t.co
// RUN: diff %t.up %t.co
// RUN: FileCheck %s --input-file=%t.co -DFILE=%s
// RUN: mlir-opt - --mlir-print-debuginfo --mlir-print-local-scope < %s > %t.up
// RUN: coll-opt - --mlir-print-debuginfo --mlir-print-local-scope < %s > %t.co
// RUN: diff %t.up %t.co
// RUN: FileCheck %s --input-file=%t.co -DFILE='<stdin>'
// RUN: not coll-opt < %S/Inputs/unparsable.mlir 2>&1 | FileCheck %s --check-prefix=STDIN
// A later chunk keeps the file's own line numbers:
// RUN: mlir-opt %s --split-input-file --mlir-print-debuginfo > %t.up
// RUN: coll-opt %s --split-input-file --mlir-print-debuginfo > %t.co
// RUN: diff %t.up %t.co
// RUN: coll-opt %s --split-input-file --mlir-print-debuginfo --mlir-print-local-scope | FileCheck %s --check-prefix=SPLIT -DFILE=%s

// STDIN: <stdin>:3:3: error: custom op 'coll.nonsense' is unknown

func.func @f(%a: i32) -> i32 {
  // CHECK: arith.addi %arg0, %arg0 : i32 loc("[[FILE]]":[[@LINE+1]]:8)
  %0 = arith.addi %a, %a : i32
  return %0 : i32
}

// -----
func.func @g(%a: i32) -> i32 {
  // SPLIT: arith.muli %arg0, %arg0 : i32 loc("[[FILE]]":[[@LINE+1]]:8)
  %0 = arith.muli %a, %a : i32
  return %0 : i32
}
