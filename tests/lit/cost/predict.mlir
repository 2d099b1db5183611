// coll-predict prints, for every all_reduce, the cost model's prediction of
// each strategy and the pick; coll-lower-all-reduce{profile=...} follows it.
// GEN: small = coll-gen all-reduce --devices 4 --shape 1024
// RUN: coll-opt --coll-predict -o /dev/null < %S/Inputs/gen/predict.small.mlir 2>&1 | FileCheck %s --check-prefix=SMALL
// GEN: large = coll-gen all-reduce --devices 8 --shape 16777216
// RUN: coll-opt --coll-predict=profile=nvlink-h200 -o /dev/null < %S/Inputs/gen/predict.large.mlir 2>&1 | FileCheck %s --check-prefix=LARGE
// RUN: coll-opt --coll-lower-all-reduce=profile=nvlink-h200 --coll-stats -o /dev/null < %S/Inputs/gen/predict.large.mlir 2>&1 | FileCheck %s --check-prefix=MODEL
// RUN: coll-opt --coll-lower-all-reduce --coll-stats -o /dev/null < %S/Inputs/gen/predict.large.mlir 2>&1 | FileCheck %s --check-prefix=REF
// GEN: json = coll-gen all-reduce --devices 2 --shape 1024
// RUN: coll-opt --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=ring},coll-predict{format=json})' -o /dev/null < %S/Inputs/gen/predict.json.mlir 2>&1 | FileCheck %s --check-prefix=JSON
// GEN: bad = coll-gen all-reduce --devices 2
// RUN: not coll-opt --coll-predict=profile=nope -o /dev/null < %S/Inputs/gen/predict.bad.mlir 2>&1 | FileCheck %s --check-prefix=BAD

// 4 KB on 4 GPUs: latency-bound, one step of copies wins.
// SMALL: // coll-predict: profile nvlink-h200
// SMALL-NEXT: @all_reduce all_reduce #0: N=4 numel=1024 f32 (4096 B per device): pick naive (reference rule: naive)
// SMALL-NEXT: strategy copies kernels steps max_sent_B predicted_us
// SMALL-NEXT: naive 12 4 2 12288 {{[0-9.]+}}
// In device order (the default) every chunk of the ring runs d0 -> .. -> d3,
// so d3 sends every chunk once in the allgather and d1, d2 twice (8192 B).
// SMALL-NEXT: ring 24 12 9 8192 {{[0-9.]+}}
// SMALL-NEXT: all2all 24 4 3 6144 {{[0-9.]+}}

// 64 MB on 8 GPUs: bandwidth-bound, the reference rule says ring, the
// model (3 steps instead of 21 at the same bytes per port) all2all.
// LARGE: N=8 numel=16777216 f32 (67108864 B per device): pick all2all (reference rule: ring)
// LARGE: naive 56 8 2 469762048
// LARGE: ring 112 56 21 134217728
// LARGE: all2all 112 8 3 117440512

// MODEL: "copies": 112,
// MODEL-NEXT: "critical_path": 3,
// MODEL-NEXT: "kernels": 8,
// REF: "copies": 112,
// REF-NEXT: "critical_path": 21,
// REF-NEXT: "kernels": 56,

// An explicit function gets one prediction.
// JSON: "profile": "nvlink-h200",
// JSON: "function": "all_reduce",
// JSON-NEXT: "explicit": {
// JSON-NEXT: "copies": 4,
// JSON-NEXT: "kernels": 2,
// JSON-NEXT: "steps": 3,

// BAD: error: coll-predict: unknown profile 'nope'; expected a path to a .json file or one of: {{.*}}nvlink-h200
