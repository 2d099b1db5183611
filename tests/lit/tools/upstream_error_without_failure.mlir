// An upstream pass may emit an error and still succeed (convert-func-to-llvm
// on a memory space it cannot map, 22.1.8). The bindings then abort the
// process; every tool must print the error instead and exit 1.
// RUN: not coll-opt %s --convert-func-to-llvm -o %t.out 2>&1 | FileCheck %s
// RUN: not test -e %t.out
// RUN: not coll-build %s --emit=llvm -o %t.ll 2>&1 | FileCheck %s --check-prefix=BUILD
// RUN: not test -e %t.ll
// RUN: mlir-opt %s --convert-func-to-llvm -o /dev/null 2>&1 | FileCheck %s --check-prefix=UPSTREAM
// RUN: not coll-opt %s --pass-pipeline='builtin.module(cse,convert-func-to-llvm)' --verify-diagnostics 2>&1 | FileCheck %s --check-prefix=VERIFY

// CHECK: error: conversion of memref memory space "foo" to integer address space failed. Consider adding memory space conversions.
// CHECK-NOT: Assertion
// BUILD: conversion of memref memory space "foo" to integer address space failed
// BUILD-NOT: Assertion
// UPSTREAM: error: conversion of memref memory space "foo" to integer address space failed.
// VERIFY: error: unexpected error: conversion of memref memory space "foo" to integer address space failed.

func.func @f(%a: memref<8xf32, "foo">) {
  return
}
