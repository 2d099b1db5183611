// --verify-diagnostics reports every note nobody expected, as mlir-opt does,
// also in a file that has no expected-note line at all.
// RUN: not coll-opt %s --verify-diagnostics 2>&1 | FileCheck %s
// RUN: not mlir-opt %s --verify-diagnostics 2>&1 | FileCheck %s

// CHECK: unexpected_notes.mlir:7:1: error: unexpected note: see existing symbol definition here
func.func @f() {
  return
}
// expected-error@+1 {{redefinition of symbol named 'f'}}
func.func @f() {
  return
}
