// --split-input-file prints what mlir-opt prints, byte for byte: each chunk
// that succeeded followed by a blank line, joined by the marker; a failing
// chunk prints nothing (its separator stays), and the exit code is 1.
// RUN: not mlir-opt %s --split-input-file 2>%t.up.err >%t.up
// RUN: not coll-opt %s --split-input-file 2>%t.co.err >%t.co
// RUN: diff %t.up %t.co
// RUN: FileCheck %s --input-file=%t.co --match-full-lines --strict-whitespace
// RUN: FileCheck %s --input-file=%t.co.err --check-prefix=ERR
// The marker in CHECK lines is a regex: mlir-opt splits at it even mid-line.

// CHECK:module {
// CHECK-NEXT:  func.func @first() {
// CHECK-NEXT:    return
// CHECK-NEXT:  }
// CHECK-NEXT:}
// CHECK-EMPTY:
// CHECK-NEXT:{{// [-][-][-][-][-]}}
// CHECK-NEXT:{{// [-][-][-][-][-]}}
// CHECK-NEXT:module {
// CHECK-NEXT:  func.func @third() {
// CHECK-NEXT:    return
// CHECK-NEXT:  }
// CHECK-NEXT:}
// CHECK-EMPTY:
// CHECK-NOT:{{.}}
func.func @first() {
  return
}

// -----
func.func @second() {
  // ERR: split_output.mlir:[[@LINE+1]]:8: error: operation being parsed with an unregistered dialect
  "x.y"() : () -> ()
  return
}

// -----
func.func @third() {
  return
}
