// coll-predict covers every collective, not only all_reduce: one table per
// op with each of its strategies, the pick and the reference rule. The
// counts are the schedules' own (N = 4, 1024 elements per input).
// GEN: rs = coll-gen reduce-scatter --devices 4 --shape 1024 --axis 0
// RUN: coll-opt --coll-predict -o /dev/null < %S/Inputs/gen/predict_collectives.rs.mlir 2>&1 | FileCheck %s --check-prefix=RS
// GEN: ag = coll-gen all-gather --devices 4 --shape 1024 --axis 0
// RUN: coll-opt --coll-predict -o /dev/null < %S/Inputs/gen/predict_collectives.ag.mlir 2>&1 | FileCheck %s --check-prefix=AG
// GEN: red = coll-gen reduce --devices 4 --shape 1024 --kind max --root 2
// RUN: coll-opt --coll-predict -o /dev/null < %S/Inputs/gen/predict_collectives.red.mlir 2>&1 | FileCheck %s --check-prefix=RED
// GEN: bc = coll-gen broadcast --devices 4 --shape 1024 --root 0
// RUN: coll-opt --coll-predict -o /dev/null < %S/Inputs/gen/predict_collectives.bc.mlir 2>&1 | FileCheck %s --check-prefix=BC
// GEN: a2a = coll-gen all-to-all --devices 4 --shape 1024 --split-axis 0 --concat-axis 0
// RUN: coll-opt --coll-predict=format=json -o /dev/null < %S/Inputs/gen/predict_collectives.a2a.mlir 2>&1 | FileCheck %s --check-prefix=A2A

// RS: @reduce_scatter reduce_scatter #0: N=4 numel=1024 f32 (4096 B per device): pick {{ring|direct}} (reference rule: direct)
// RS-NEXT: strategy copies kernels steps max_sent_B predicted_us
// ring in device order: every block runs d0 -> .. -> d3, then blocks 0-2
// one copy more from d3.
// RS-NEXT: ring 15 12 7 4096 {{[0-9.]+}}
// RS-NEXT: direct 12 4 2 3072 {{[0-9.]+}}

// AG: @all_gather all_gather #0: N=4 numel=1024 f32 (4096 B per device): pick {{ring|direct}} (reference rule: direct)
// AG: ring 12 0 3 12288
// AG-NEXT: direct 12 0 1 12288

// RED: @reduce reduce #0: N=4 numel=1024 f32 (4096 B per device): pick {{direct|ring|tree}} (reference rule: tree)
// RED: direct 3 1 2 4096
// RED-NEXT: ring 12 12 6 4096
// RED-NEXT: tree 3 3 4 4096

// BC: @broadcast broadcast #0: N=4 numel=1024 f32 (4096 B per device): pick {{direct|ring|tree}} (reference rule: tree)
// BC: direct 3 0 1 12288
// BC-NEXT: ring 12 0 3 4096
// BC-NEXT: tree 3 0 2 8192

// A2A: "op": "all_to_all",
// A2A: "reference": "direct",
// A2A-NEXT: "pick": "direct",
// A2A-NEXT: "candidates": [
// A2A-NEXT: {
// A2A-NEXT: "strategy": "direct",
// A2A-NEXT: "predicted_s": {{[0-9.e-]+}},
// A2A-NEXT: "copies": 12,
