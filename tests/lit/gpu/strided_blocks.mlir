// A block along a non-leading axis is one coll.copy or coll.combine of
// strided views (collectives/emit.py); gpu.memcpy and the combine kernels
// take contiguous buffers, so coll-to-gpu first splits such an op into one
// per row, joined (lowering/gpu/rows.py): the GPU program grows with the
// rows (no strided copy kernel yet), the explicit level does not.
// RUN: coll-gen all-to-all --devices 2 --shape 4x2 --split-axis 0 --concat-axis 1 | coll-opt --pass-pipeline='builtin.module(coll-lower-collectives,coll-to-gpu{graph=false})' | FileCheck %s
// RUN: coll-gen reduce-scatter --devices 2 --shape 3x4 --axis 1 --strategy direct | coll-opt --pass-pipeline='builtin.module(coll-lower-collectives,coll-to-gpu{graph=false})' | FileCheck %s --check-prefix=LAUNCH
// RUN: coll-gen reduce-scatter --devices 2 --shape 3x4 --axis 1 --strategy direct | %PYTHON -m coll.tools.coll_build --emit=ptx | FileCheck %s --check-prefix=PTX

// 4 blocks of 2 rows of 2 (y_j's block is 2 columns of a 2x4): 8 row copies.
// CHECK-COUNT-8: gpu.memcpy
// CHECK-NOT: gpu.memcpy
// CHECK-NOT: coll.copy

// reduce_scatter along axis 1: each device's combine becomes one launch per
// row (3) of the same kernel, which still compiles to PTX.
// LAUNCH-COUNT-6: gpu.launch_func
// LAUNCH-NOT: gpu.launch_func
// PTX: .target sm_90
// PTX: .visible .entry combine_sum_f32_x2(
// PTX-NOT: .entry
