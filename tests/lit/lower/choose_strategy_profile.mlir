// With a profile, coll-choose-strategy picks the strategy the cost model
// predicts fastest (coll-predict prints the same numbers): on the H200
// NVLink profile a 16-byte allreduce on 8 devices is latency-bound (naive:
// one step) and a 16 MiB one bandwidth-bound (all2all: 2(N-1)/N of the
// buffer per device, in two steps).
// GEN: tiny = coll-gen all-reduce --devices 8 --shape 4 --dtype f32
// RUN: coll-opt --pass-pipeline='builtin.module(coll-choose-strategy{profile=nvlink-h200})' < %S/Inputs/gen/choose_strategy_profile.tiny.mlir | FileCheck %s --check-prefix=TINY
// GEN: big = coll-gen all-reduce --devices 8 --shape 4194304 --dtype f32
// RUN: coll-opt --pass-pipeline='builtin.module(coll-choose-strategy{profile=nvlink-h200})' < %S/Inputs/gen/choose_strategy_profile.big.mlir | FileCheck %s --check-prefix=BIG
// RUN: coll-opt --pass-pipeline='builtin.module(coll-predict{profile=nvlink-h200})' -o /dev/null < %S/Inputs/gen/choose_strategy_profile.big.mlir 2>&1 | FileCheck %s --check-prefix=PREDICT
// RUN: not coll-opt %s --pass-pipeline='builtin.module(coll-choose-strategy{profile=no-such-profile})' 2>&1 | FileCheck %s --check-prefix=BAD

// TINY: "coll.all_reduce"{{.*}}strategy = "naive"
// BIG: "coll.all_reduce"{{.*}}strategy = "all2all"
// PREDICT: N=8 numel=4194304 f32 (16777216 B per device): pick all2all (reference rule: ring)
// BAD: error: coll-choose-strategy: {{.*}}no-such-profile

func.func @f(%x0: memref<4xf32>, %x1: memref<4xf32>, %y0: memref<4xf32>, %y1: memref<4xf32>) {
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {kind = "sum", devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
