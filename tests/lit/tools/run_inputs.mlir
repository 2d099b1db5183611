// coll-run reads what coll-opt reads: bytecode, text with non-UTF-8
// comments, and stdin as '-' (located as <stdin>).
// RUN: coll-opt %s --emit-bytecode -o %t.mlirbc
// RUN: coll-run %t.mlirbc --backend=cpu --repeat 1 | FileCheck %s
// RUN: printf '// caf\351\n' > %t.latin1.mlir && cat %s >> %t.latin1.mlir
// RUN: coll-run %t.latin1.mlir --backend=cpu --repeat 1 | FileCheck %s
// RUN: coll-run - --backend=cpu --repeat 1 < %s | FileCheck %s --check-prefix=STDIN
// RUN: sed 's/i64: 0, 1>/i64: 0, 0>/' %s | not coll-run - --backend=cpu 2>&1 | FileCheck %s --check-prefix=STDERR

// (auto: the strategy the CPU profile's cost model picks)
// CHECK: {{naive|ring|all2all|rhd|tree|oneshot|twoshot}} {{.*}} ok
// STDIN: <stdin>: all_reduce sum of 2 x 8xf32
// STDIN: {{naive|ring|all2all|rhd|tree|oneshot|twoshot}} {{.*}} ok
// STDERR: <stdin>:[[# @LINE + 2]]:8: error: device 0 is repeated
func.func @all_reduce(%x0: memref<8xf32>, %x1: memref<8xf32>, %y0: memref<8xf32>, %y1: memref<8xf32>) attributes {llvm.emit_c_interface} {
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
