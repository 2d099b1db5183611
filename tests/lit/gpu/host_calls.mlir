// Host LLVM IR, per call vs once: for each strategy at N = 4 and 8 (1000
// floats per device; the peer strategies on logical devices of one GPU,
// which coll-build marks coll.peer_access).
// - per call (@all_reduce): no runtime call but one mgpuStreamSynchronize;
//   the work is a CUDA graph (lowering/gpu/graph.c): __coll_call_begin,
//   then either the capture (the body, __coll_capture_end) and the launch,
//   or the launch alone (a warm call: one graph launch and one sync), or
//   the body run directly (graphs off); no kernel lookup, no creation;
// - the body (@__coll_body_all_reduce, run once per capture): one mgpuMemcpy
//   per coll.copy and one mgpuLaunchKernel per coll.combine, each event
//   recorded once (one per cross-stream dependency, plus the fork of the
//   capture), no host sync, no lookup, no creation;
// - at load: __coll_init creates the streams (one per device), the events and
//   the scratch pool (oneshot and twoshot need none); __coll_kernels_load
//   looks up each distinct kernel once.
// (Generated, then checked against coll.copy and coll.combine counts of the
// explicit level: Inputs/host_calls_gen.py.)

// ring, N = 4: 24 coll.copy, 12 coll.combine.
// RUN: coll-gen all-reduce --devices 4 --shape 1000 | %PYTHON -m coll.tools.coll_build --emit=llvmir --strategy=ring --format=isa > %t.ring4.ll
// RUN: FileCheck %s --check-prefix=RING4-CALL < %t.ring4.ll
// RUN: FileCheck %s --check-prefix=RING4-SYNC < %t.ring4.ll
// RUN: FileCheck %s --check-prefix=RING4-COPY < %t.ring4.ll
// RUN: FileCheck %s --check-prefix=RING4-LAUNCH < %t.ring4.ll
// RUN: FileCheck %s --check-prefix=RING4-BODY < %t.ring4.ll
// RUN: FileCheck %s --check-prefix=RING4-INIT < %t.ring4.ll
// RING4-CALL-LABEL: define void @all_reduce(
// RING4-CALL: call i32 @__coll_call_begin(ptr @__coll_graph_0,
// RING4-CALL: call void @__coll_body_all_reduce(
// RING4-CALL: call i32 @__coll_capture_end(ptr @__coll_graph_0,
// RING4-CALL: call void @__coll_graph_launch(ptr @__coll_graph_0,
// RING4-CALL: call void @__coll_body_all_reduce(
// RING4-CALL: call void @__coll_call_end(ptr @__coll_graph_0,
// RING4-CALL-LABEL: define void @_mlir_ciface_all_reduce(
// RING4-SYNC-LABEL: define void @all_reduce(
// RING4-SYNC-NOT: @mgpu
// RING4-SYNC: call void @__coll_call_end(
// RING4-SYNC-NEXT: call void @mgpuStreamSynchronize(
// RING4-SYNC-NOT: @mgpu
// RING4-SYNC-LABEL: define void @_mlir_ciface_all_reduce(
// RING4-COPY-LABEL: define internal void @__coll_body_all_reduce(
// RING4-COPY-COUNT-24: call void @mgpuMemcpy(
// RING4-COPY-NOT: call void @mgpuMemcpy(
// RING4-COPY-LABEL: define internal void @__coll_init()
// RING4-LAUNCH-LABEL: define internal void @__coll_body_all_reduce(
// RING4-LAUNCH-COUNT-12: call void @mgpuLaunchKernel(
// RING4-LAUNCH-NOT: call void @mgpuLaunchKernel(
// RING4-LAUNCH-LABEL: define internal void @__coll_init()
// RING4-BODY-LABEL: define internal void @__coll_body_all_reduce(
// RING4-BODY-NOT: call {.*}@mgpuModuleGetFunction(
// RING4-BODY-NOT: call {.*}@mgpuStreamSynchronize(
// RING4-BODY-NOT: call {.*}@mgpuStreamCreate(
// RING4-BODY-NOT: call {.*}@mgpuEventCreate(
// RING4-BODY-NOT: call {.*}@mgpuMemAlloc(
// RING4-BODY-LABEL: define internal void @__coll_init()
// RING4-INIT-LABEL: define internal void @__coll_body_all_reduce(
// RING4-INIT-COUNT-22: call void @mgpuEventRecord(
// RING4-INIT-NOT: call void @mgpuEventRecord(
// RING4-INIT-LABEL: define internal void @__coll_init()
// RING4-INIT-COUNT-4: call ptr @mgpuStreamCreate()
// RING4-INIT-NOT: @mgpuStreamCreate(
// RING4-INIT-COUNT-22: call ptr @mgpuEventCreate()
// RING4-INIT-NOT: @mgpuEventCreate(

// RING4-INIT: call ptr @mgpuMemAlloc(
// RING4-INIT-LABEL: define internal void @__coll_fini()
// RING4-INIT: call void @__coll_graph_destroy(ptr @__coll_graph_0)
// RING4-INIT-LABEL: define internal void @__coll_kernels_load()
// RING4-INIT-COUNT-1: call ptr @mgpuModuleGetFunction(
// RING4-INIT-NOT: call ptr @mgpuModuleGetFunction(
// RING4-INIT-LABEL: define internal void @__coll_kernels_unload()
// ring, N = 8: 112 coll.copy, 56 coll.combine.
// RUN: coll-gen all-reduce --devices 8 --shape 1000 | %PYTHON -m coll.tools.coll_build --emit=llvmir --strategy=ring --format=isa > %t.ring8.ll
// RUN: FileCheck %s --check-prefix=RING8-CALL < %t.ring8.ll
// RUN: FileCheck %s --check-prefix=RING8-SYNC < %t.ring8.ll
// RUN: FileCheck %s --check-prefix=RING8-COPY < %t.ring8.ll
// RUN: FileCheck %s --check-prefix=RING8-LAUNCH < %t.ring8.ll
// RUN: FileCheck %s --check-prefix=RING8-BODY < %t.ring8.ll
// RUN: FileCheck %s --check-prefix=RING8-INIT < %t.ring8.ll
// RING8-CALL-LABEL: define void @all_reduce(
// RING8-CALL: call i32 @__coll_call_begin(ptr @__coll_graph_0,
// RING8-CALL: call void @__coll_body_all_reduce(
// RING8-CALL: call i32 @__coll_capture_end(ptr @__coll_graph_0,
// RING8-CALL: call void @__coll_graph_launch(ptr @__coll_graph_0,
// RING8-CALL: call void @__coll_body_all_reduce(
// RING8-CALL: call void @__coll_call_end(ptr @__coll_graph_0,
// RING8-CALL-LABEL: define void @_mlir_ciface_all_reduce(
// RING8-SYNC-LABEL: define void @all_reduce(
// RING8-SYNC-NOT: @mgpu
// RING8-SYNC: call void @__coll_call_end(
// RING8-SYNC-NEXT: call void @mgpuStreamSynchronize(
// RING8-SYNC-NOT: @mgpu
// RING8-SYNC-LABEL: define void @_mlir_ciface_all_reduce(
// RING8-COPY-LABEL: define internal void @__coll_body_all_reduce(
// RING8-COPY-COUNT-112: call void @mgpuMemcpy(
// RING8-COPY-NOT: call void @mgpuMemcpy(
// RING8-COPY-LABEL: define internal void @__coll_init()
// RING8-LAUNCH-LABEL: define internal void @__coll_body_all_reduce(
// RING8-LAUNCH-COUNT-56: call void @mgpuLaunchKernel(
// RING8-LAUNCH-NOT: call void @mgpuLaunchKernel(
// RING8-LAUNCH-LABEL: define internal void @__coll_init()
// RING8-BODY-LABEL: define internal void @__coll_body_all_reduce(
// RING8-BODY-NOT: call {.*}@mgpuModuleGetFunction(
// RING8-BODY-NOT: call {.*}@mgpuStreamSynchronize(
// RING8-BODY-NOT: call {.*}@mgpuStreamCreate(
// RING8-BODY-NOT: call {.*}@mgpuEventCreate(
// RING8-BODY-NOT: call {.*}@mgpuMemAlloc(
// RING8-BODY-LABEL: define internal void @__coll_init()
// RING8-INIT-LABEL: define internal void @__coll_body_all_reduce(
// RING8-INIT-COUNT-106: call void @mgpuEventRecord(
// RING8-INIT-NOT: call void @mgpuEventRecord(
// RING8-INIT-LABEL: define internal void @__coll_init()
// RING8-INIT-COUNT-8: call ptr @mgpuStreamCreate()
// RING8-INIT-NOT: @mgpuStreamCreate(
// RING8-INIT-COUNT-106: call ptr @mgpuEventCreate()
// RING8-INIT-NOT: @mgpuEventCreate(

// RING8-INIT: call ptr @mgpuMemAlloc(
// RING8-INIT-LABEL: define internal void @__coll_fini()
// RING8-INIT: call void @__coll_graph_destroy(ptr @__coll_graph_0)
// RING8-INIT-LABEL: define internal void @__coll_kernels_load()
// RING8-INIT-COUNT-1: call ptr @mgpuModuleGetFunction(
// RING8-INIT-NOT: call ptr @mgpuModuleGetFunction(
// RING8-INIT-LABEL: define internal void @__coll_kernels_unload()
// all2all, N = 4: 24 coll.copy, 4 coll.combine.
// RUN: coll-gen all-reduce --devices 4 --shape 1000 | %PYTHON -m coll.tools.coll_build --emit=llvmir --strategy=all2all --format=isa > %t.all2all4.ll
// RUN: FileCheck %s --check-prefix=ALL2ALL4-CALL < %t.all2all4.ll
// RUN: FileCheck %s --check-prefix=ALL2ALL4-SYNC < %t.all2all4.ll
// RUN: FileCheck %s --check-prefix=ALL2ALL4-COPY < %t.all2all4.ll
// RUN: FileCheck %s --check-prefix=ALL2ALL4-LAUNCH < %t.all2all4.ll
// RUN: FileCheck %s --check-prefix=ALL2ALL4-BODY < %t.all2all4.ll
// RUN: FileCheck %s --check-prefix=ALL2ALL4-INIT < %t.all2all4.ll
// ALL2ALL4-CALL-LABEL: define void @all_reduce(
// ALL2ALL4-CALL: call i32 @__coll_call_begin(ptr @__coll_graph_0,
// ALL2ALL4-CALL: call void @__coll_body_all_reduce(
// ALL2ALL4-CALL: call i32 @__coll_capture_end(ptr @__coll_graph_0,
// ALL2ALL4-CALL: call void @__coll_graph_launch(ptr @__coll_graph_0,
// ALL2ALL4-CALL: call void @__coll_body_all_reduce(
// ALL2ALL4-CALL: call void @__coll_call_end(ptr @__coll_graph_0,
// ALL2ALL4-CALL-LABEL: define void @_mlir_ciface_all_reduce(
// ALL2ALL4-SYNC-LABEL: define void @all_reduce(
// ALL2ALL4-SYNC-NOT: @mgpu
// ALL2ALL4-SYNC: call void @__coll_call_end(
// ALL2ALL4-SYNC-NEXT: call void @mgpuStreamSynchronize(
// ALL2ALL4-SYNC-NOT: @mgpu
// ALL2ALL4-SYNC-LABEL: define void @_mlir_ciface_all_reduce(
// ALL2ALL4-COPY-LABEL: define internal void @__coll_body_all_reduce(
// ALL2ALL4-COPY-COUNT-24: call void @mgpuMemcpy(
// ALL2ALL4-COPY-NOT: call void @mgpuMemcpy(
// ALL2ALL4-COPY-LABEL: define internal void @__coll_init()
// ALL2ALL4-LAUNCH-LABEL: define internal void @__coll_body_all_reduce(
// ALL2ALL4-LAUNCH-COUNT-4: call void @mgpuLaunchKernel(
// ALL2ALL4-LAUNCH-NOT: call void @mgpuLaunchKernel(
// ALL2ALL4-LAUNCH-LABEL: define internal void @__coll_init()
// ALL2ALL4-BODY-LABEL: define internal void @__coll_body_all_reduce(
// ALL2ALL4-BODY-NOT: call {.*}@mgpuModuleGetFunction(
// ALL2ALL4-BODY-NOT: call {.*}@mgpuStreamSynchronize(
// ALL2ALL4-BODY-NOT: call {.*}@mgpuStreamCreate(
// ALL2ALL4-BODY-NOT: call {.*}@mgpuEventCreate(
// ALL2ALL4-BODY-NOT: call {.*}@mgpuMemAlloc(
// ALL2ALL4-BODY-LABEL: define internal void @__coll_init()
// ALL2ALL4-INIT-LABEL: define internal void @__coll_body_all_reduce(
// ALL2ALL4-INIT-COUNT-7: call void @mgpuEventRecord(
// ALL2ALL4-INIT-NOT: call void @mgpuEventRecord(
// ALL2ALL4-INIT-LABEL: define internal void @__coll_init()
// ALL2ALL4-INIT-COUNT-4: call ptr @mgpuStreamCreate()
// ALL2ALL4-INIT-NOT: @mgpuStreamCreate(
// ALL2ALL4-INIT-COUNT-7: call ptr @mgpuEventCreate()
// ALL2ALL4-INIT-NOT: @mgpuEventCreate(

// ALL2ALL4-INIT: call ptr @mgpuMemAlloc(
// ALL2ALL4-INIT-LABEL: define internal void @__coll_fini()
// ALL2ALL4-INIT: call void @__coll_graph_destroy(ptr @__coll_graph_0)
// ALL2ALL4-INIT-LABEL: define internal void @__coll_kernels_load()
// ALL2ALL4-INIT-COUNT-1: call ptr @mgpuModuleGetFunction(
// ALL2ALL4-INIT-NOT: call ptr @mgpuModuleGetFunction(
// ALL2ALL4-INIT-LABEL: define internal void @__coll_kernels_unload()
// all2all, N = 8: 112 coll.copy, 8 coll.combine.
// RUN: coll-gen all-reduce --devices 8 --shape 1000 | %PYTHON -m coll.tools.coll_build --emit=llvmir --strategy=all2all --format=isa > %t.all2all8.ll
// RUN: FileCheck %s --check-prefix=ALL2ALL8-CALL < %t.all2all8.ll
// RUN: FileCheck %s --check-prefix=ALL2ALL8-SYNC < %t.all2all8.ll
// RUN: FileCheck %s --check-prefix=ALL2ALL8-COPY < %t.all2all8.ll
// RUN: FileCheck %s --check-prefix=ALL2ALL8-LAUNCH < %t.all2all8.ll
// RUN: FileCheck %s --check-prefix=ALL2ALL8-BODY < %t.all2all8.ll
// RUN: FileCheck %s --check-prefix=ALL2ALL8-INIT < %t.all2all8.ll
// ALL2ALL8-CALL-LABEL: define void @all_reduce(
// ALL2ALL8-CALL: call i32 @__coll_call_begin(ptr @__coll_graph_0,
// ALL2ALL8-CALL: call void @__coll_body_all_reduce(
// ALL2ALL8-CALL: call i32 @__coll_capture_end(ptr @__coll_graph_0,
// ALL2ALL8-CALL: call void @__coll_graph_launch(ptr @__coll_graph_0,
// ALL2ALL8-CALL: call void @__coll_body_all_reduce(
// ALL2ALL8-CALL: call void @__coll_call_end(ptr @__coll_graph_0,
// ALL2ALL8-CALL-LABEL: define void @_mlir_ciface_all_reduce(
// ALL2ALL8-SYNC-LABEL: define void @all_reduce(
// ALL2ALL8-SYNC-NOT: @mgpu
// ALL2ALL8-SYNC: call void @__coll_call_end(
// ALL2ALL8-SYNC-NEXT: call void @mgpuStreamSynchronize(
// ALL2ALL8-SYNC-NOT: @mgpu
// ALL2ALL8-SYNC-LABEL: define void @_mlir_ciface_all_reduce(
// ALL2ALL8-COPY-LABEL: define internal void @__coll_body_all_reduce(
// ALL2ALL8-COPY-COUNT-112: call void @mgpuMemcpy(
// ALL2ALL8-COPY-NOT: call void @mgpuMemcpy(
// ALL2ALL8-COPY-LABEL: define internal void @__coll_init()
// ALL2ALL8-LAUNCH-LABEL: define internal void @__coll_body_all_reduce(
// ALL2ALL8-LAUNCH-COUNT-8: call void @mgpuLaunchKernel(
// ALL2ALL8-LAUNCH-NOT: call void @mgpuLaunchKernel(
// ALL2ALL8-LAUNCH-LABEL: define internal void @__coll_init()
// ALL2ALL8-BODY-LABEL: define internal void @__coll_body_all_reduce(
// ALL2ALL8-BODY-NOT: call {.*}@mgpuModuleGetFunction(
// ALL2ALL8-BODY-NOT: call {.*}@mgpuStreamSynchronize(
// ALL2ALL8-BODY-NOT: call {.*}@mgpuStreamCreate(
// ALL2ALL8-BODY-NOT: call {.*}@mgpuEventCreate(
// ALL2ALL8-BODY-NOT: call {.*}@mgpuMemAlloc(
// ALL2ALL8-BODY-LABEL: define internal void @__coll_init()
// ALL2ALL8-INIT-LABEL: define internal void @__coll_body_all_reduce(
// ALL2ALL8-INIT-COUNT-15: call void @mgpuEventRecord(
// ALL2ALL8-INIT-NOT: call void @mgpuEventRecord(
// ALL2ALL8-INIT-LABEL: define internal void @__coll_init()
// ALL2ALL8-INIT-COUNT-8: call ptr @mgpuStreamCreate()
// ALL2ALL8-INIT-NOT: @mgpuStreamCreate(
// ALL2ALL8-INIT-COUNT-15: call ptr @mgpuEventCreate()
// ALL2ALL8-INIT-NOT: @mgpuEventCreate(

// ALL2ALL8-INIT: call ptr @mgpuMemAlloc(
// ALL2ALL8-INIT-LABEL: define internal void @__coll_fini()
// ALL2ALL8-INIT: call void @__coll_graph_destroy(ptr @__coll_graph_0)
// ALL2ALL8-INIT-LABEL: define internal void @__coll_kernels_load()
// ALL2ALL8-INIT-COUNT-1: call ptr @mgpuModuleGetFunction(
// ALL2ALL8-INIT-NOT: call ptr @mgpuModuleGetFunction(
// ALL2ALL8-INIT-LABEL: define internal void @__coll_kernels_unload()
// oneshot, N = 4: 0 coll.copy, 4 coll.combine.
// RUN: coll-gen all-reduce --devices 4 --shape 1000 | %PYTHON -m coll.tools.coll_build --emit=llvmir --strategy=oneshot --format=isa > %t.oneshot4.ll
// RUN: FileCheck %s --check-prefix=ONESHOT4-CALL < %t.oneshot4.ll
// RUN: FileCheck %s --check-prefix=ONESHOT4-SYNC < %t.oneshot4.ll
// RUN: FileCheck %s --check-prefix=ONESHOT4-COPY < %t.oneshot4.ll
// RUN: FileCheck %s --check-prefix=ONESHOT4-LAUNCH < %t.oneshot4.ll
// RUN: FileCheck %s --check-prefix=ONESHOT4-BODY < %t.oneshot4.ll
// RUN: FileCheck %s --check-prefix=ONESHOT4-INIT < %t.oneshot4.ll
// ONESHOT4-CALL-LABEL: define void @all_reduce(
// ONESHOT4-CALL: call i32 @__coll_call_begin(ptr @__coll_graph_0,
// ONESHOT4-CALL: call void @__coll_body_all_reduce(
// ONESHOT4-CALL: call i32 @__coll_capture_end(ptr @__coll_graph_0,
// ONESHOT4-CALL: call void @__coll_graph_launch(ptr @__coll_graph_0,
// ONESHOT4-CALL: call void @__coll_body_all_reduce(
// ONESHOT4-CALL: call void @__coll_call_end(ptr @__coll_graph_0,
// ONESHOT4-CALL-LABEL: define void @_mlir_ciface_all_reduce(
// ONESHOT4-SYNC-LABEL: define void @all_reduce(
// ONESHOT4-SYNC-NOT: @mgpu
// ONESHOT4-SYNC: call void @__coll_call_end(
// ONESHOT4-SYNC-NEXT: call void @mgpuStreamSynchronize(
// ONESHOT4-SYNC-NOT: @mgpu
// ONESHOT4-SYNC-LABEL: define void @_mlir_ciface_all_reduce(
// ONESHOT4-COPY-LABEL: define internal void @__coll_body_all_reduce(
// ONESHOT4-COPY-NOT: call void @mgpuMemcpy(
// ONESHOT4-COPY-LABEL: define internal void @__coll_init()
// ONESHOT4-LAUNCH-LABEL: define internal void @__coll_body_all_reduce(
// ONESHOT4-LAUNCH-COUNT-4: call void @mgpuLaunchKernel(
// ONESHOT4-LAUNCH-NOT: call void @mgpuLaunchKernel(
// ONESHOT4-LAUNCH-LABEL: define internal void @__coll_init()
// ONESHOT4-BODY-LABEL: define internal void @__coll_body_all_reduce(
// ONESHOT4-BODY-NOT: call {.*}@mgpuModuleGetFunction(
// ONESHOT4-BODY-NOT: call {.*}@mgpuStreamSynchronize(
// ONESHOT4-BODY-NOT: call {.*}@mgpuStreamCreate(
// ONESHOT4-BODY-NOT: call {.*}@mgpuEventCreate(
// ONESHOT4-BODY-NOT: call {.*}@mgpuMemAlloc(
// ONESHOT4-BODY-LABEL: define internal void @__coll_init()
// ONESHOT4-INIT-LABEL: define internal void @__coll_body_all_reduce(
// ONESHOT4-INIT-COUNT-4: call void @mgpuEventRecord(
// ONESHOT4-INIT-NOT: call void @mgpuEventRecord(
// ONESHOT4-INIT-LABEL: define internal void @__coll_init()
// ONESHOT4-INIT-COUNT-4: call ptr @mgpuStreamCreate()
// ONESHOT4-INIT-NOT: @mgpuStreamCreate(
// ONESHOT4-INIT-COUNT-4: call ptr @mgpuEventCreate()
// ONESHOT4-INIT-NOT: @mgpuEventCreate(

// ONESHOT4-INIT-NOT: @mgpuMemAlloc(
// ONESHOT4-INIT-LABEL: define internal void @__coll_fini()
// ONESHOT4-INIT: call void @__coll_graph_destroy(ptr @__coll_graph_0)
// ONESHOT4-INIT-LABEL: define internal void @__coll_kernels_load()
// ONESHOT4-INIT-COUNT-1: call ptr @mgpuModuleGetFunction(
// ONESHOT4-INIT-NOT: call ptr @mgpuModuleGetFunction(
// ONESHOT4-INIT-LABEL: define internal void @__coll_kernels_unload()
// oneshot, N = 8: 0 coll.copy, 8 coll.combine.
// RUN: coll-gen all-reduce --devices 8 --shape 1000 | %PYTHON -m coll.tools.coll_build --emit=llvmir --strategy=oneshot --format=isa > %t.oneshot8.ll
// RUN: FileCheck %s --check-prefix=ONESHOT8-CALL < %t.oneshot8.ll
// RUN: FileCheck %s --check-prefix=ONESHOT8-SYNC < %t.oneshot8.ll
// RUN: FileCheck %s --check-prefix=ONESHOT8-COPY < %t.oneshot8.ll
// RUN: FileCheck %s --check-prefix=ONESHOT8-LAUNCH < %t.oneshot8.ll
// RUN: FileCheck %s --check-prefix=ONESHOT8-BODY < %t.oneshot8.ll
// RUN: FileCheck %s --check-prefix=ONESHOT8-INIT < %t.oneshot8.ll
// ONESHOT8-CALL-LABEL: define void @all_reduce(
// ONESHOT8-CALL: call i32 @__coll_call_begin(ptr @__coll_graph_0,
// ONESHOT8-CALL: call void @__coll_body_all_reduce(
// ONESHOT8-CALL: call i32 @__coll_capture_end(ptr @__coll_graph_0,
// ONESHOT8-CALL: call void @__coll_graph_launch(ptr @__coll_graph_0,
// ONESHOT8-CALL: call void @__coll_body_all_reduce(
// ONESHOT8-CALL: call void @__coll_call_end(ptr @__coll_graph_0,
// ONESHOT8-CALL-LABEL: define void @_mlir_ciface_all_reduce(
// ONESHOT8-SYNC-LABEL: define void @all_reduce(
// ONESHOT8-SYNC-NOT: @mgpu
// ONESHOT8-SYNC: call void @__coll_call_end(
// ONESHOT8-SYNC-NEXT: call void @mgpuStreamSynchronize(
// ONESHOT8-SYNC-NOT: @mgpu
// ONESHOT8-SYNC-LABEL: define void @_mlir_ciface_all_reduce(
// ONESHOT8-COPY-LABEL: define internal void @__coll_body_all_reduce(
// ONESHOT8-COPY-NOT: call void @mgpuMemcpy(
// ONESHOT8-COPY-LABEL: define internal void @__coll_init()
// ONESHOT8-LAUNCH-LABEL: define internal void @__coll_body_all_reduce(
// ONESHOT8-LAUNCH-COUNT-8: call void @mgpuLaunchKernel(
// ONESHOT8-LAUNCH-NOT: call void @mgpuLaunchKernel(
// ONESHOT8-LAUNCH-LABEL: define internal void @__coll_init()
// ONESHOT8-BODY-LABEL: define internal void @__coll_body_all_reduce(
// ONESHOT8-BODY-NOT: call {.*}@mgpuModuleGetFunction(
// ONESHOT8-BODY-NOT: call {.*}@mgpuStreamSynchronize(
// ONESHOT8-BODY-NOT: call {.*}@mgpuStreamCreate(
// ONESHOT8-BODY-NOT: call {.*}@mgpuEventCreate(
// ONESHOT8-BODY-NOT: call {.*}@mgpuMemAlloc(
// ONESHOT8-BODY-LABEL: define internal void @__coll_init()
// ONESHOT8-INIT-LABEL: define internal void @__coll_body_all_reduce(
// ONESHOT8-INIT-COUNT-8: call void @mgpuEventRecord(
// ONESHOT8-INIT-NOT: call void @mgpuEventRecord(
// ONESHOT8-INIT-LABEL: define internal void @__coll_init()
// ONESHOT8-INIT-COUNT-8: call ptr @mgpuStreamCreate()
// ONESHOT8-INIT-NOT: @mgpuStreamCreate(
// ONESHOT8-INIT-COUNT-8: call ptr @mgpuEventCreate()
// ONESHOT8-INIT-NOT: @mgpuEventCreate(

// ONESHOT8-INIT-NOT: @mgpuMemAlloc(
// ONESHOT8-INIT-LABEL: define internal void @__coll_fini()
// ONESHOT8-INIT: call void @__coll_graph_destroy(ptr @__coll_graph_0)
// ONESHOT8-INIT-LABEL: define internal void @__coll_kernels_load()
// ONESHOT8-INIT-COUNT-1: call ptr @mgpuModuleGetFunction(
// ONESHOT8-INIT-NOT: call ptr @mgpuModuleGetFunction(
// ONESHOT8-INIT-LABEL: define internal void @__coll_kernels_unload()
// twoshot, N = 4: 12 coll.copy, 4 coll.combine.
// RUN: coll-gen all-reduce --devices 4 --shape 1000 | %PYTHON -m coll.tools.coll_build --emit=llvmir --strategy=twoshot --format=isa > %t.twoshot4.ll
// RUN: FileCheck %s --check-prefix=TWOSHOT4-CALL < %t.twoshot4.ll
// RUN: FileCheck %s --check-prefix=TWOSHOT4-SYNC < %t.twoshot4.ll
// RUN: FileCheck %s --check-prefix=TWOSHOT4-COPY < %t.twoshot4.ll
// RUN: FileCheck %s --check-prefix=TWOSHOT4-LAUNCH < %t.twoshot4.ll
// RUN: FileCheck %s --check-prefix=TWOSHOT4-BODY < %t.twoshot4.ll
// RUN: FileCheck %s --check-prefix=TWOSHOT4-INIT < %t.twoshot4.ll
// TWOSHOT4-CALL-LABEL: define void @all_reduce(
// TWOSHOT4-CALL: call i32 @__coll_call_begin(ptr @__coll_graph_0,
// TWOSHOT4-CALL: call void @__coll_body_all_reduce(
// TWOSHOT4-CALL: call i32 @__coll_capture_end(ptr @__coll_graph_0,
// TWOSHOT4-CALL: call void @__coll_graph_launch(ptr @__coll_graph_0,
// TWOSHOT4-CALL: call void @__coll_body_all_reduce(
// TWOSHOT4-CALL: call void @__coll_call_end(ptr @__coll_graph_0,
// TWOSHOT4-CALL-LABEL: define void @_mlir_ciface_all_reduce(
// TWOSHOT4-SYNC-LABEL: define void @all_reduce(
// TWOSHOT4-SYNC-NOT: @mgpu
// TWOSHOT4-SYNC: call void @__coll_call_end(
// TWOSHOT4-SYNC-NEXT: call void @mgpuStreamSynchronize(
// TWOSHOT4-SYNC-NOT: @mgpu
// TWOSHOT4-SYNC-LABEL: define void @_mlir_ciface_all_reduce(
// TWOSHOT4-COPY-LABEL: define internal void @__coll_body_all_reduce(
// TWOSHOT4-COPY-COUNT-12: call void @mgpuMemcpy(
// TWOSHOT4-COPY-NOT: call void @mgpuMemcpy(
// TWOSHOT4-COPY-LABEL: define internal void @__coll_init()
// TWOSHOT4-LAUNCH-LABEL: define internal void @__coll_body_all_reduce(
// TWOSHOT4-LAUNCH-COUNT-4: call void @mgpuLaunchKernel(
// TWOSHOT4-LAUNCH-NOT: call void @mgpuLaunchKernel(
// TWOSHOT4-LAUNCH-LABEL: define internal void @__coll_init()
// TWOSHOT4-BODY-LABEL: define internal void @__coll_body_all_reduce(
// TWOSHOT4-BODY-NOT: call {.*}@mgpuModuleGetFunction(
// TWOSHOT4-BODY-NOT: call {.*}@mgpuStreamSynchronize(
// TWOSHOT4-BODY-NOT: call {.*}@mgpuStreamCreate(
// TWOSHOT4-BODY-NOT: call {.*}@mgpuEventCreate(
// TWOSHOT4-BODY-NOT: call {.*}@mgpuMemAlloc(
// TWOSHOT4-BODY-LABEL: define internal void @__coll_init()
// TWOSHOT4-INIT-LABEL: define internal void @__coll_body_all_reduce(
// TWOSHOT4-INIT-COUNT-7: call void @mgpuEventRecord(
// TWOSHOT4-INIT-NOT: call void @mgpuEventRecord(
// TWOSHOT4-INIT-LABEL: define internal void @__coll_init()
// TWOSHOT4-INIT-COUNT-4: call ptr @mgpuStreamCreate()
// TWOSHOT4-INIT-NOT: @mgpuStreamCreate(
// TWOSHOT4-INIT-COUNT-7: call ptr @mgpuEventCreate()
// TWOSHOT4-INIT-NOT: @mgpuEventCreate(

// TWOSHOT4-INIT-NOT: @mgpuMemAlloc(
// TWOSHOT4-INIT-LABEL: define internal void @__coll_fini()
// TWOSHOT4-INIT: call void @__coll_graph_destroy(ptr @__coll_graph_0)
// TWOSHOT4-INIT-LABEL: define internal void @__coll_kernels_load()
// TWOSHOT4-INIT-COUNT-1: call ptr @mgpuModuleGetFunction(
// TWOSHOT4-INIT-NOT: call ptr @mgpuModuleGetFunction(
// TWOSHOT4-INIT-LABEL: define internal void @__coll_kernels_unload()
// twoshot, N = 8: 56 coll.copy, 8 coll.combine.
// RUN: coll-gen all-reduce --devices 8 --shape 1000 | %PYTHON -m coll.tools.coll_build --emit=llvmir --strategy=twoshot --format=isa > %t.twoshot8.ll
// RUN: FileCheck %s --check-prefix=TWOSHOT8-CALL < %t.twoshot8.ll
// RUN: FileCheck %s --check-prefix=TWOSHOT8-SYNC < %t.twoshot8.ll
// RUN: FileCheck %s --check-prefix=TWOSHOT8-COPY < %t.twoshot8.ll
// RUN: FileCheck %s --check-prefix=TWOSHOT8-LAUNCH < %t.twoshot8.ll
// RUN: FileCheck %s --check-prefix=TWOSHOT8-BODY < %t.twoshot8.ll
// RUN: FileCheck %s --check-prefix=TWOSHOT8-INIT < %t.twoshot8.ll
// TWOSHOT8-CALL-LABEL: define void @all_reduce(
// TWOSHOT8-CALL: call i32 @__coll_call_begin(ptr @__coll_graph_0,
// TWOSHOT8-CALL: call void @__coll_body_all_reduce(
// TWOSHOT8-CALL: call i32 @__coll_capture_end(ptr @__coll_graph_0,
// TWOSHOT8-CALL: call void @__coll_graph_launch(ptr @__coll_graph_0,
// TWOSHOT8-CALL: call void @__coll_body_all_reduce(
// TWOSHOT8-CALL: call void @__coll_call_end(ptr @__coll_graph_0,
// TWOSHOT8-CALL-LABEL: define void @_mlir_ciface_all_reduce(
// TWOSHOT8-SYNC-LABEL: define void @all_reduce(
// TWOSHOT8-SYNC-NOT: @mgpu
// TWOSHOT8-SYNC: call void @__coll_call_end(
// TWOSHOT8-SYNC-NEXT: call void @mgpuStreamSynchronize(
// TWOSHOT8-SYNC-NOT: @mgpu
// TWOSHOT8-SYNC-LABEL: define void @_mlir_ciface_all_reduce(
// TWOSHOT8-COPY-LABEL: define internal void @__coll_body_all_reduce(
// TWOSHOT8-COPY-COUNT-56: call void @mgpuMemcpy(
// TWOSHOT8-COPY-NOT: call void @mgpuMemcpy(
// TWOSHOT8-COPY-LABEL: define internal void @__coll_init()
// TWOSHOT8-LAUNCH-LABEL: define internal void @__coll_body_all_reduce(
// TWOSHOT8-LAUNCH-COUNT-8: call void @mgpuLaunchKernel(
// TWOSHOT8-LAUNCH-NOT: call void @mgpuLaunchKernel(
// TWOSHOT8-LAUNCH-LABEL: define internal void @__coll_init()
// TWOSHOT8-BODY-LABEL: define internal void @__coll_body_all_reduce(
// TWOSHOT8-BODY-NOT: call {.*}@mgpuModuleGetFunction(
// TWOSHOT8-BODY-NOT: call {.*}@mgpuStreamSynchronize(
// TWOSHOT8-BODY-NOT: call {.*}@mgpuStreamCreate(
// TWOSHOT8-BODY-NOT: call {.*}@mgpuEventCreate(
// TWOSHOT8-BODY-NOT: call {.*}@mgpuMemAlloc(
// TWOSHOT8-BODY-LABEL: define internal void @__coll_init()
// TWOSHOT8-INIT-LABEL: define internal void @__coll_body_all_reduce(
// TWOSHOT8-INIT-COUNT-15: call void @mgpuEventRecord(
// TWOSHOT8-INIT-NOT: call void @mgpuEventRecord(
// TWOSHOT8-INIT-LABEL: define internal void @__coll_init()
// TWOSHOT8-INIT-COUNT-8: call ptr @mgpuStreamCreate()
// TWOSHOT8-INIT-NOT: @mgpuStreamCreate(
// TWOSHOT8-INIT-COUNT-15: call ptr @mgpuEventCreate()
// TWOSHOT8-INIT-NOT: @mgpuEventCreate(

// TWOSHOT8-INIT-NOT: @mgpuMemAlloc(
// TWOSHOT8-INIT-LABEL: define internal void @__coll_fini()
// TWOSHOT8-INIT: call void @__coll_graph_destroy(ptr @__coll_graph_0)
// TWOSHOT8-INIT-LABEL: define internal void @__coll_kernels_load()
// TWOSHOT8-INIT-COUNT-1: call ptr @mgpuModuleGetFunction(
// TWOSHOT8-INIT-NOT: call ptr @mgpuModuleGetFunction(
// TWOSHOT8-INIT-LABEL: define internal void @__coll_kernels_unload()
