// The user-written 2x2-grid allreduce in examples/ is proved (order and
// semantics), keeps its claim through the checks, runs on the CPU and
// matches numpy; the same program with one all-gather copy reading the
// device's input instead of its reduced half is rejected before it runs.
// RUN: coll-opt %root/examples/allreduce_2x2_grid.mlir --coll-check-order --coll-check-semantics | FileCheck %s
// RUN: coll-run %root/examples/allreduce_2x2_grid.mlir --backend=cpu --repeat=1 | FileCheck %s --check-prefix=TABLE
// RUN: sed 's/%%g01 = "coll.copy"(%%y0_h0,/%%g01 = "coll.copy"(%%x0_h0,/' %root/examples/allreduce_2x2_grid.mlir > %t.mlir
// RUN: not coll-run %t.mlir --backend=cpu 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK: "coll.implements"(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6, %arg7, %{{.*}}) {devices = array<i64: 0, 1, 2, 3>, kind = "sum", op = "all_reduce"
// TABLE: all_reduce sum of 4 x 8xf32 -> 4 output(s), backend cpu
// TABLE: {{^}}-{{ +}}4{{ +}}32 B{{.*}}ok
// BAD: .mlir:{{[0-9]+}}:{{[0-9]+}}: error: coll-check-semantics: output #1 (%arg5 on device 1) [0, 4) holds x0[0:4] but should hold sum(x0[0:4], x1[0:4], x2[0:4], x3[0:4]): x1 is missing; x2 is missing; x3 is missing
// BAD-NEXT: note: last written by this coll.copy
