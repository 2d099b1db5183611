// A block along a non-leading axis is one coll.copy or coll.combine of
// strided views (collectives/emit.py); coll-to-gpu lowers each to ONE launch
// of a strided kernel (lowering/gpu/kernels.py): its operands' addresses,
// their strides (s0, s1), then the sizes (d0, d1, width). The GPU program
// does not grow with the rows, and no block is a gpu.memcpy.
// RUN: coll-gen all-to-all --devices 2 --shape 4x2 --split-axis 0 --concat-axis 1 | coll-opt --pass-pipeline='builtin.module(coll-lower-collectives,coll-to-gpu{graph=false})' | FileCheck %s --implicit-check-not=gpu.memcpy
// RUN: coll-gen all-to-all --devices 2 --shape 64x2 --split-axis 0 --concat-axis 1 | coll-opt --pass-pipeline='builtin.module(coll-lower-collectives,coll-to-gpu{graph=false})' | FileCheck %s --check-prefix=ROWS --implicit-check-not=gpu.memcpy
// RUN: coll-gen reduce-scatter --devices 2 --shape 3x4 --axis 1 --strategy direct | coll-opt --pass-pipeline='builtin.module(coll-lower-collectives,coll-to-gpu{graph=false})' | FileCheck %s --check-prefix=LAUNCH --implicit-check-not=gpu.memcpy
// RUN: coll-gen reduce-scatter --devices 2 --shape 3x4 --axis 1 --strategy direct | %PYTHON -m coll.tools.coll_build --emit=ptx | FileCheck %s --check-prefix=PTX

// 4 blocks (y_j's block i is 2 columns of a 2x4, x_i's block j 2 rows of a
// 4x2): one launch each, x_i's block walked row-major (strides 4, 2), y_j's
// rows 4 apart (0, 4), over 1 x 2 x 2 elements.
// CHECK-COUNT-4: gpu.launch_func async [%{{.*}}] @coll_kernels::@strided_copy_i32_x1 blocks in (%c1, %c1, %c1) threads in (%c256, %c1, %c1) args(%{{.*}} : index, %{{.*}} : index, %c4 : index, %c2 : index, %c0 : index, %c4 : index, %c1 : index, %c2 : index, %c2 : index)
// CHECK-NOT: gpu.launch_func
// CHECK-NOT: coll.copy
// CHECK: gpu.func @strided_copy_i32_x1(

// 32 rows per block: still one launch per block.
// ROWS-COUNT-4: gpu.launch_func async {{.*}} @coll_kernels::@strided_copy_i32_x1 {{.*}}%c1 : index, %c32 : index, %c2 : index){{$}}
// ROWS-NOT: gpu.launch_func

// reduce_scatter along axis 1, per device: one strided copy of the other's
// 3x2 block into scratch, one strided combine of the two blocks.
// LAUNCH: gpu.launch_func async {{.*}} @coll_kernels::@strided_copy_i32_x1 {{.*}}%c1 : index, %c3 : index, %c2 : index){{$}}
// LAUNCH-NOT: gpu.launch_func
// LAUNCH: gpu.launch_func async {{.*}} @coll_kernels::@strided_sum_f32_x2 {{.*}}%c1 : index, %c3 : index, %c2 : index){{$}}
// LAUNCH-NOT: gpu.launch_func
// LAUNCH: gpu.launch_func async {{.*}} @coll_kernels::@strided_copy_i32_x1 {{.*}}%c1 : index, %c3 : index, %c2 : index){{$}}
// LAUNCH-NOT: gpu.launch_func
// LAUNCH: gpu.launch_func async {{.*}} @coll_kernels::@strided_sum_f32_x2 {{.*}}%c1 : index, %c3 : index, %c2 : index){{$}}
// LAUNCH-NOT: gpu.launch_func
// LAUNCH: return

// PTX: .target sm_90
// PTX-DAG: .visible .entry strided_copy_i32_x1(
// PTX-DAG: .visible .entry strided_sum_f32_x2(
// PTX-NOT: .entry
