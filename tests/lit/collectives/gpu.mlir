// Every collective reaches the gpu dialect through coll-to-gpu: one
// gpu.memcpy per coll.copy, one gpu.launch_func per coll.combine (a copy of
// strided views, a block along an inner axis: one launch of a strided copy
// kernel), no coll op and no device placement left.
// RUN: coll-gen reduce-scatter --devices 3 --shape 2x6 --axis 1 --strategy ring | coll-opt --pass-pipeline='builtin.module(coll-lower-collectives,coll-to-gpu)' | FileCheck %s --check-prefix=RS
// RUN: coll-gen all-gather --devices 3 --shape 2x3 --axis 1 --strategy ring | coll-opt --pass-pipeline='builtin.module(coll-lower-collectives,coll-to-gpu)' | FileCheck %s --check-prefix=AG --implicit-check-not=gpu.memcpy
// RUN: coll-gen reduce --devices 3 --shape 8 --root 2 --kind max --dtype i32 --strategy tree | coll-opt --pass-pipeline='builtin.module(coll-lower-collectives,coll-to-gpu)' | FileCheck %s --check-prefix=RED
// RUN: coll-gen broadcast --devices 3 --shape 64 --root 0 --strategy ring | coll-opt --pass-pipeline='builtin.module(coll-lower-collectives,coll-to-gpu)' | FileCheck %s --check-prefix=BC
// RUN: coll-gen all-to-all --devices 3 --shape 6x3 --split-axis 0 --concat-axis 1 | coll-opt --pass-pipeline='builtin.module(coll-lower-collectives,coll-to-gpu)' | FileCheck %s --check-prefix=A2A --implicit-check-not=gpu.memcpy
// RUN: coll-gen all-reduce --devices 3 --shape 128 --strategy rhd | coll-opt --pass-pipeline='builtin.module(coll-lower-collectives,coll-to-gpu)' | FileCheck %s --check-prefix=RHD
// RUN: coll-gen all-reduce --devices 3 --shape 8 --strategy tree --in-place | coll-opt --pass-pipeline='builtin.module(coll-lower-collectives,coll-to-gpu)' | FileCheck %s --check-prefix=TREE

// Ring reduce-scatter along axis 1: 3 blocks x 2 hops, each block (2 rows)
// combined by one launch of the strided kernel.
// RS-NOT: #coll.device
// RS-NOT: "coll.
// RS-LABEL: func.func @reduce_scatter
// RS-COUNT-6: gpu.launch_func async [%{{.*}}] @coll_kernels::@strided_sum_f32_x2
// RS-NOT: @coll_kernels::@{{.*}}sum
// RS: gpu.module @coll_kernels

// Ring all-gather along axis 1: 9 copies of 2-row blocks, a launch each.
// AG-NOT: "coll.
// AG-COUNT-9: gpu.launch_func async [%{{.*}}] @coll_kernels::@strided_copy_i32_x1
// AG-NOT: gpu.launch_func

// RED-NOT: "coll.
// RED-COUNT-2: gpu.launch_func async [%{{.*}}] @coll_kernels::@combine_max_i32_x2
// RED: gpu.func @combine_max_i32_x2
// RED: arith.maxsi

// 64 floats in 3 chunks of 32, 32, 0: 2 chunks x 2 hops + the root's own copy.
// BC-NOT: "coll.
// BC-COUNT-5: gpu.memcpy async
// BC-NOT: gpu.memcpy async

// A2A-NOT: "coll.
// A2A-COUNT-9: gpu.launch_func async [%{{.*}}] @coll_kernels::@strided_copy_i32_x1
// A2A-NOT: gpu.launch_func

// Canonical rhd over 3: x0 is copied to d1 (no partial sum), then each of
// the 2 ranks combines its chunk's 3 contributions in device order.
// RHD-NOT: "coll.
// RHD-COUNT-2: gpu.launch_func{{.*}}combine_sum_f32_x3
// RHD-NOT: gpu.launch_func

// TREE-NOT: "coll.
// TREE-LABEL: func.func @all_reduce(%arg0: memref<8xf32>, %arg1: memref<8xf32>, %arg2: memref<8xf32>)
// Canonical tree: gathered on d0, one combine in device order, a binomial
// broadcast (order=any: the binomial reduce's 2 combines).
// TREE-COUNT-1: gpu.launch_func{{.*}}combine_sum_f32_x3
// TREE-NOT: gpu.launch_func
