// coll-opt behaves like mlir-opt: stdin, -o, IR printing, timing,
// --split-input-file, passes as flags.
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=naive},canonicalize,cse)' -o %t.mlir
// RUN: FileCheck %s --check-prefix=OUT --input-file=%t.mlir
// RUN: cat %s | coll-opt - --coll-lower-all-reduce=strategy=naive --cse | FileCheck %s --check-prefix=OUT
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce,cse)' --mlir-print-ir-after-all -o /dev/null 2>&1 | FileCheck %s --check-prefix=PRINT
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce,cse)' --mlir-timing -o /dev/null 2>&1 | FileCheck %s --check-prefix=TIME
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=ring},coll-stats)' -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS
// RUN: coll-opt --list-passes | FileCheck %s --check-prefix=LIST

// OUT-LABEL: func.func @f
// OUT: "coll.copy"
// OUT-NOT: coll.all_reduce

// PRINT: // -----// IR Dump After coll-lower-all-reduce
// PRINT: "coll.combine"
// PRINT: // -----// IR Dump After CSE

// TIME: Execution time report
// TIME: coll-lower-all-reduce
// TIME: CSE

// Ring at N = 2 on 64 elements: chunks of 32; each device receives one
// chunk in the reduce-scatter and one in the allgather (2 x 128 bytes).
// STATS: "f": {
// STATS: "bytes_received": {
// STATS-NEXT: "0": 256,
// STATS-NEXT: "1": 256
// STATS: "copies": 4,
// STATS: "critical_path": 3,
// STATS: "kernels": 2,
// STATS: "pairs": 2

// Upstream's list, with ours merged in by name, options and defaults below.
// LIST: Passes:
// LIST: {{^}}  --canonicalize{{ +}}-   Canonicalize operations
// LIST: {{^}}  --coll-lower-all-reduce{{ +}}-   Lower coll.all_reduce
// LIST-NEXT: {{^}}    --strategy=<value>{{ +}}- default: auto
// LIST-NEXT: {{^}}    =auto{{ +}}-   auto
// LIST-NEXT: {{^}}    =naive
// LIST-NEXT: {{^}}    =ring
// LIST-NEXT: {{^}}    =all2all
// LIST: {{^}}    --threshold=<int>{{ +}}- default: 256000
// LIST-NEXT: {{^}}    --profile=<string>{{ +}}- string
// LIST: {{^}}  --coll-stats{{ +}}-   Print per-function schedule statistics
// LIST: {{^}}  --cse{{ +}}-   Eliminate common sub-expressions

func.func @f(%x0: memref<64xf32>, %x1: memref<64xf32>, %y0: memref<64xf32>, %y1: memref<64xf32>) {
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {kind = "sum", devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<64xf32>, memref<64xf32>, memref<64xf32>, memref<64xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
