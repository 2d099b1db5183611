// coll-choose-strategy writes the strategy attribute; coll-lower-all-reduce
// only reads it. Without a profile: the reference rule (ring when N > 2 and
// numel > threshold, else naive); an explicit strategy on the op wins unless
// the pass forces one.
// RUN: coll-opt %s --split-input-file --pass-pipeline='builtin.module(coll-choose-strategy)' | FileCheck %s --check-prefix=REF
// RUN: coll-opt %s --split-input-file --pass-pipeline='builtin.module(coll-choose-strategy{threshold=10})' | FileCheck %s --check-prefix=LOW
// RUN: coll-opt %s --split-input-file --pass-pipeline='builtin.module(coll-choose-strategy{strategy=all2all})' | FileCheck %s --check-prefix=FORCE
// RUN: coll-opt %s --split-input-file --pass-pipeline='builtin.module(coll-choose-strategy,coll-lower-all-reduce)' | FileCheck %s --check-prefix=LOWERED

// 3 devices x 64 elements: under the default threshold (256000) -> naive; over 10 -> ring.
// REF-LABEL: func.func @small3
// REF: "coll.all_reduce"{{.*}}strategy = "naive"
// LOW-LABEL: func.func @small3
// LOW: "coll.all_reduce"{{.*}}strategy = "ring"
// FORCE-LABEL: func.func @small3
// FORCE: "coll.all_reduce"{{.*}}strategy = "all2all"
// LOWERED-LABEL: func.func @small3
// LOWERED-NOT: coll.all_reduce
// LOWERED-COUNT-6: "coll.copy"
// LOWERED-NOT: "coll.copy"
// LOWERED: return
func.func @small3(%x0: memref<64xf32>, %x1: memref<64xf32>, %x2: memref<64xf32>, %y0: memref<64xf32>, %y1: memref<64xf32>, %y2: memref<64xf32>) {
  %t = "coll.all_reduce"(%x0, %x1, %x2, %y0, %y1, %y2) {kind = "sum", devices = array<i64: 0, 1, 2>, operandSegmentSizes = array<i32: 3, 3, 0>} : (memref<64xf32>, memref<64xf32>, memref<64xf32>, memref<64xf32>, memref<64xf32>, memref<64xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}

// -----
// Two devices: naive whatever the size (ring needs N > 2).
// REF-LABEL: func.func @two
// REF: strategy = "naive"
// LOW-LABEL: func.func @two
// LOW: strategy = "naive"
func.func @two(%x0: memref<64xf32>, %x1: memref<64xf32>, %y0: memref<64xf32>, %y1: memref<64xf32>) {
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {kind = "sum", devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<64xf32>, memref<64xf32>, memref<64xf32>, memref<64xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}

// -----
// A strategy on the op wins over the rule; the op's own threshold over the pass's.
// REF-LABEL: func.func @own
// REF: strategy = "all2all"
// REF: strategy = "ring", threshold = 1 : i64
// FORCE-LABEL: func.func @own
// FORCE: strategy = "all2all"
// FORCE: strategy = "all2all"
func.func @own(%x0: memref<64xf32>, %x1: memref<64xf32>, %x2: memref<64xf32>, %y0: memref<64xf32>, %y1: memref<64xf32>, %y2: memref<64xf32>) {
  %t = "coll.all_reduce"(%x0, %x1, %x2, %y0, %y1, %y2) {kind = "sum", devices = array<i64: 0, 1, 2>, strategy = "all2all", operandSegmentSizes = array<i32: 3, 3, 0>} : (memref<64xf32>, memref<64xf32>, memref<64xf32>, memref<64xf32>, memref<64xf32>, memref<64xf32>) -> !coll.token
  %u = "coll.all_reduce"(%y0, %y1, %y2, %x0, %x1, %x2) {kind = "sum", devices = array<i64: 0, 1, 2>, threshold = 1 : i64, operandSegmentSizes = array<i32: 3, 3, 0>} : (memref<64xf32>, memref<64xf32>, memref<64xf32>, memref<64xf32>, memref<64xf32>, memref<64xf32>) -> !coll.token
  "coll.wait"(%t, %u) : (!coll.token, !coll.token) -> ()
  return
}
