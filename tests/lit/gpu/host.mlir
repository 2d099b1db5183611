// The host LLVM IR (ring, 4 devices, 1000 floats): one mgpuMemcpy per coll.copy, one mgpuLaunchKernel per
// coll.combine, one pool allocation (at load), every stream created once (at
// load) and destroyed once (at unload), the C interface, and the kernels
// loaded by a global constructor.
// RUN: coll-gen all-reduce --devices 4 --shape 1000 | %PYTHON -m coll.tools.coll_build --emit=llvmir --strategy=ring --format=isa > %t.ll
// RUN: FileCheck %s --check-prefix=COPIES < %t.ll
// RUN: FileCheck %s --check-prefix=KERNELS < %t.ll
// RUN: FileCheck %s --check-prefix=CREATE < %t.ll
// RUN: FileCheck %s --check-prefix=DESTROY < %t.ll
// RUN: FileCheck %s < %t.ll
// RUN: FileCheck %s --check-prefix=LOOKUP < %t.ll

// ring on 4 devices: 2N(N-1) = 24 copies, N(N-1) = 12 kernels, each given
// 4 parameters (3 addresses and the element count).
// COPIES-LABEL: define void @all_reduce(
// COPIES-COUNT-24: call void @mgpuMemcpy(
// COPIES-NOT: call void @mgpuMemcpy(
// KERNELS-LABEL: define void @all_reduce(
// KERNELS-COUNT-12: call void @mgpuLaunchKernel(ptr %{{[0-9]+}}, i64 1, i64 1, i64 1, i64 256, i64 1, i64 1, i32 0, ptr %{{[0-9]+}}, ptr %{{[0-9]+}}, ptr null, i64 4)
// KERNELS-NOT: call void @mgpuLaunchKernel(
// 4 streams, one per device, made by the constructor (upstream's gpu.wait
// lowering made 22 per call: one per chain start and per cross-device join).
// CREATE-LABEL: define internal void @__coll_init()
// CREATE-COUNT-4: call ptr @mgpuStreamCreate()
// CREATE-NOT: call ptr @mgpuStreamCreate()
// DESTROY-LABEL: define internal void @__coll_fini()
// DESTROY-COUNT-4: call void @mgpuStreamDestroy(
// DESTROY-NOT: call void @mgpuStreamDestroy(

// Kernel functions are looked up once, at load (lowering/gpu/launch.py), not
// per launch (upstream's translation calls mgpuModuleGetFunction before
// every mgpuLaunchKernel): one distinct kernel, one lookup.
// LOOKUP-LABEL: define void @all_reduce(
// LOOKUP-NOT: @mgpuModuleGetFunction(
// LOOKUP-LABEL: define void @_mlir_ciface_all_reduce(
// LOOKUP-LABEL: define internal void @__coll_kernels_load()
// LOOKUP: call ptr @mgpuModuleGetFunction(
// LOOKUP-NOT: call ptr @mgpuModuleGetFunction(
// LOOKUP-LABEL: define internal void @__coll_kernels_unload()

// CHECK: @llvm.global_ctors = {{.*}} @__coll_init{{.*}} @__coll_kernels_load
// CHECK: define void @all_reduce(
// CHECK-NOT: @mgpuMemAlloc
// CHECK-NOT: @mgpuMemFree
// CHECK: define void @_mlir_ciface_all_reduce(ptr %0, ptr %1, ptr %2, ptr %3, ptr %4, ptr %5, ptr %6, ptr %7)
// Scratch: 4 chunks x 3 buffers of at most 1 KiB, in one pool.
// CHECK: define internal void @__coll_init()
// CHECK: call ptr @mgpuMemAlloc(i64 12288,
// CHECK-NOT: call ptr @mgpuMemAlloc
// CHECK: define internal void @__coll_fini()
// CHECK: call void @mgpuMemFree(
// CHECK: define internal void @__coll_kernels_load()
// CHECK: call ptr @mgpuModuleLoadJIT(ptr @__coll_binary_coll_kernels, i32 3)

// The same route inside coll-opt: coll-to-gpu, then upstream's pipeline.
// RUN: coll-gen all-reduce --devices 2 --shape 10 | coll-opt --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=ring},coll-to-gpu,gpu-lower-to-nvvm-pipeline{cubin-chip=sm_90 cubin-features=+ptx80 cubin-format=isa opt-level=3})' | FileCheck %s --check-prefix=PIPE
// PIPE: llvm.func @all_reduce(
// PIPE-NOT: gpu.memcpy
// PIPE-NOT: unrealized_conversion_cast
// PIPE-NOT: gpu.wait
// PIPE: llvm.call @mgpuMemcpy(
// PIPE: gpu.launch_func <%{{.*}} : !llvm.ptr> @coll_kernels::@combine_sum_f32_x2
// PIPE: gpu.binary @coll_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, {{.*}}assembly = "
