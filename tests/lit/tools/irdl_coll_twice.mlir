// coll is always loaded; naming its IRDL file again (as for upstream
// mlir-opt) must not register the dialect a second time.
// RUN: coll-opt %s --irdl-file=%S/../../../ir/coll.irdl.mlir | FileCheck %s
// RUN: mlir-opt %s --irdl-file=%S/../../../ir/coll.irdl.mlir | FileCheck %s

// CHECK: "coll.alloc"
func.func @f() {
  %0 = "coll.alloc"() : () -> memref<8xf32, #coll.device<1 : i64>>
  return
}

// A dialect named like an upstream one cannot be registered again.
// RUN: not coll-opt %s --irdl-file=%S/Inputs/arith.irdl.mlir 2>&1 | FileCheck %s --check-prefix=CLASH
// CLASH: arith.irdl.mlir:1:1: error: dialect 'arith' is already registered; an IRDL file can only add new dialects
// CLASH-NOT: LLVM ERROR
