// coll-to-gpu options and element types.
// RUN: coll-gen all-reduce --devices 4 --shape 1000 | coll-opt --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=naive},coll-to-gpu)' | FileCheck %s --check-prefix=NAIVE
// RUN: coll-gen all-reduce --devices 2 --shape 2x5 --dtype i1 --kind xor | coll-opt --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=naive},coll-to-gpu{workspace=arg streams=single})' | FileCheck %s --check-prefix=ARG
// RUN: coll-gen all-reduce --devices 3 --shape 100 --dtype bf16 --kind max | coll-opt --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=all2all},coll-to-gpu{chip=sm_80})' | FileCheck %s --check-prefix=BF16

// naive on 4 devices: N(N-1) = 12 copies into scratch (a pool allocated by
// the constructor), then one 4-input kernel per device, and a single kernel
// definition.
// NAIVE-NOT: gpu.alloc
// NAIVE-COUNT-12: gpu.memcpy async
// NAIVE-NOT: gpu.memcpy
// NAIVE: llvm.func internal @__coll_init()
// NAIVE: llvm.call @mgpuMemAlloc(
// NAIVE: gpu.module @coll_kernels
// NAIVE-NEXT: gpu.func @combine_sum_f32_x4(
// NAIVE-NOT: gpu.func
// RUN: coll-gen all-reduce --devices 4 --shape 1000 | coll-opt --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=naive},coll-to-gpu)' | FileCheck %s --check-prefix=NAIVE-K
// NAIVE-K-COUNT-4: gpu.launch_func async [%{{[0-9]+}}] @coll_kernels::@combine_sum_f32_x4 blocks in (%c1, %c1, %c1) threads in (%c256, %c1, %c1)
// NAIVE-K-NOT: gpu.launch_func

// workspace=arg: scratch is a trailing byte buffer the caller passes (no
// pool). streams=single: one chain in program order, so one stream, no
// events. i1 is stored as i8.
// ARG-LABEL: func.func @all_reduce(%arg0: memref<2x5xi8>, %arg1: memref<2x5xi8>, %arg2: memref<2x5xi8>, %arg3: memref<2x5xi8>, %arg4: memref<512xi8>)
// ARG-SAME: coll.workspace_bytes = 512 : i64
// ARG-NOT: __coll_pools
// ARG: %[[SP:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
// ARG-NEXT: %[[S:.*]] = builtin.unrealized_conversion_cast %[[SP]] : !llvm.ptr to !gpu.async.token
// ARG: memref.view %arg4[%c0][] : memref<512xi8> to memref<10xi8>
// ARG: gpu.memcpy async [%[[S]]]
// ARG-NOT: mgpuStreamWaitEvent
// ARG: gpu.launch_func async [%[[S]]] @coll_kernels::@combine_xor_i8_x2
// ARG-NOT: mgpuStreamWaitEvent
// ARG: gpu.launch_func async [%[[S]]] @coll_kernels::@combine_xor_i8_x2
// ARG-NEXT: llvm.call @mgpuStreamSynchronize(%[[SP]])
// ARG-NEXT: return
// ARG-NOT: llvm.call @mgpuEventCreate
// ARG-NOT: llvm.call @mgpuMemAlloc
// ARG: gpu.func @combine_xor_i8_x2(
// ARG: vector.load {{.*}} vector<16xi8>
// ARG: arith.xori {{.*}} : vector<16xi8>

// bf16 is combined in f32 and rounded once; the target follows `chip`.
// BF16: gpu.module @coll_kernels [#nvvm.target<O = 3, chip = "sm_80", features = "+ptx80">]
// BF16: gpu.func @combine_max_bf16_x3(
// BF16: %[[V:.*]] = vector.load {{.*}} vector<8xbf16>
// BF16: arith.extf %[[V]] : vector<8xbf16> to vector<8xf32>
// BF16: arith.maximumf {{.*}} : vector<8xf32>
// BF16: arith.truncf {{.*}} : vector<8xf32> to vector<8xbf16>

// Errors are located diagnostics.
// RUN: not coll-opt %S/Inputs/two.mlir --pass-pipeline='builtin.module(coll-lower-all-reduce,coll-to-gpu{device-map=0,1})' 2>&1 | FileCheck %s --check-prefix=TWO-GPUS
// TWO-GPUS: two.mlir:{{[0-9]+}}:{{[0-9]+}}: error: coll-to-gpu: device-map places this program on GPUs [0, 1]; the upstream CUDA wrappers create one context
// RUN: not coll-opt %S/Inputs/two.mlir --pass-pipeline='builtin.module(coll-lower-all-reduce,coll-to-gpu{device-map=0})' 2>&1 | FileCheck %s --check-prefix=SHORT
// SHORT: error: coll-to-gpu: device-map has 1 entries but the program uses logical device 1
// RUN: not coll-opt %S/Inputs/two.mlir --pass-pipeline='builtin.module(coll-lower-all-reduce,coll-to-gpu{workspace=heap})' 2>&1 | FileCheck %s --check-prefix=WS
// WS: error: {{.*}}workspace must be 'alloc' or 'arg', got 'heap'
