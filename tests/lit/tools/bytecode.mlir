// --emit-bytecode writes MLIR bytecode, and bytecode input is recognised by
// its magic number (file or stdin), as in mlir-opt; the two tools read each
// other's bytecode.
// RUN: mlir-opt %s --emit-bytecode -o %t.up.bc
// RUN: coll-opt %s --emit-bytecode -o %t.co.bc
// Not byte-identical (ours also registers coll), but the same IR, locations too:
// RUN: mlir-opt %t.up.bc --mlir-print-debuginfo > %t.up
// RUN: mlir-opt %t.co.bc --mlir-print-debuginfo > %t.co
// RUN: diff %t.up %t.co
// RUN: coll-opt %t.up.bc --mlir-print-debuginfo > %t.co
// RUN: diff %t.up %t.co
// RUN: coll-opt %t.up.bc > %t.co
// RUN: FileCheck %s --input-file=%t.co
// RUN: coll-opt - < %t.up.bc | FileCheck %s
// RUN: coll-opt %t.co.bc --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC -DFILE=%s
// coll ops survive the round trip too (IRDL ops in bytecode):
// RUN: coll-opt %S/Inputs/race.mlir --emit-bytecode -o %t.coll.bc
// RUN: coll-opt %t.coll.bc -coll-lower-collectives | FileCheck %s --check-prefix=COLL

// CHECK: func.func @f(%arg0: i32) -> i32
// CHECK-NEXT: arith.addi %arg0, %arg0 : i32
// The locations inside are the original file's.
// LOC: loc("[[FILE]]":[[@LINE+5]]:8)
// COLL: func.func @race
// COLL-COUNT-2: "coll.copy"

func.func @f(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  return %0 : i32
}
