// coll-predict on coll.permute: the cost model simulates the lowered graph,
// one round of copies (steps 1); a local (s, s) copy is not a message, a
// device that receives nothing costs nothing.
// GEN: ring = coll-gen permute --devices 4 --shape 1024
// RUN: coll-opt --coll-predict -o /dev/null < %S/Inputs/gen/predict_permute.ring.mlir 2>&1 | FileCheck %s --check-prefix=RING
// GEN: partial = coll-gen permute --devices 4 --shape 1024 --pairs 0:3,3:1,2:2
// RUN: coll-opt --coll-predict=format=json -o /dev/null < %S/Inputs/gen/predict_permute.partial.mlir 2>&1 | FileCheck %s --check-prefix=PARTIAL
// GEN: cpu = coll-gen permute --devices 4 --shape 1024 --pairs 0:3
// RUN: coll-opt --coll-predict=profile=cpu -o /dev/null < %S/Inputs/gen/predict_permute.cpu.mlir 2>&1 | FileCheck %s --check-prefix=CPU

// RING: @permute permute #0: N=4 numel=1024 f32 (4096 B per device): pick direct (reference rule: direct)
// RING-NEXT: strategy copies kernels steps max_sent_B predicted_us
// RING-NEXT: direct 4 0 1 4096 {{[0-9.]+}}

// PARTIAL: "op": "permute",
// PARTIAL: "pick": "direct",
// PARTIAL: "copies": 2,
// PARTIAL-NEXT: "kernels": 0,
// PARTIAL-NEXT: "steps": 1,
// PARTIAL-NEXT: "max_sent": 4096,

// CPU: // coll-predict: profile cpu
// CPU: direct 1 0 1 4096 {{[0-9.]+}}
