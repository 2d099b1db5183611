// Host LLVM IR, per call vs once: for each strategy at N = 4 and 8 (1000
// floats per device), the entry function enqueues one mgpuMemcpy per
// coll.copy and one mgpuLaunchKernel per coll.combine, creates no stream or
// event, records each event once (one per cross-stream dependency) and
// syncs the host once; the constructor __coll_init creates the streams (one
// per device) and the events, once per program.

// ring, N = 4: 24 coll.copy, 12 coll.combine.
// RUN: coll-gen all-reduce --devices 4 --shape 1000 | %PYTHON -m coll.tools.coll_build --emit=llvmir --strategy=ring --format=isa > %t.ring4.ll
// RUN: filecheck %s --check-prefix=RING4-COPY < %t.ring4.ll
// RUN: filecheck %s --check-prefix=RING4-LAUNCH < %t.ring4.ll
// RUN: filecheck %s --check-prefix=RING4-CALL < %t.ring4.ll
// RUN: filecheck %s --check-prefix=RING4-INIT < %t.ring4.ll
// RING4-COPY-LABEL: define void @all_reduce(
// RING4-COPY-COUNT-24: call void @mgpuMemcpy(
// RING4-COPY-NOT: call void @mgpuMemcpy(
// RING4-COPY-LABEL: define void @_mlir_ciface_all_reduce(
// RING4-LAUNCH-LABEL: define void @all_reduce(
// RING4-LAUNCH-COUNT-12: call void @mgpuLaunchKernel(
// RING4-LAUNCH-NOT: call void @mgpuLaunchKernel(
// RING4-LAUNCH-LABEL: define void @_mlir_ciface_all_reduce(
// RING4-CALL-LABEL: define void @all_reduce(
// RING4-CALL-NOT: @mgpuStreamCreate(
// RING4-CALL-NOT: @mgpuEventCreate(
// RING4-CALL-NOT: @mgpuMemAlloc(
// RING4-CALL-NOT: @mgpuStreamDestroy(
// RING4-CALL-COUNT-20: call void @mgpuEventRecord(
// RING4-CALL-NOT: @mgpuEventRecord(
// RING4-CALL-NOT: @mgpuStreamCreate(
// RING4-CALL-NOT: @mgpuEventCreate(
// RING4-CALL: call void @mgpuStreamSynchronize(
// RING4-CALL-NOT: @mgpuStreamSynchronize(
// RING4-CALL-LABEL: define void @_mlir_ciface_all_reduce(
// RING4-INIT-LABEL: define internal void @__coll_init()
// RING4-INIT-COUNT-4: call ptr @mgpuStreamCreate()
// RING4-INIT-NOT: @mgpuStreamCreate(
// RING4-INIT-COUNT-20: call ptr @mgpuEventCreate()
// RING4-INIT-NOT: @mgpuEventCreate(
// RING4-INIT: call ptr @mgpuMemAlloc(
// RING4-INIT-LABEL: define internal void @__coll_fini()
// ring, N = 8: 112 coll.copy, 56 coll.combine.
// RUN: coll-gen all-reduce --devices 8 --shape 1000 | %PYTHON -m coll.tools.coll_build --emit=llvmir --strategy=ring --format=isa > %t.ring8.ll
// RUN: filecheck %s --check-prefix=RING8-COPY < %t.ring8.ll
// RUN: filecheck %s --check-prefix=RING8-LAUNCH < %t.ring8.ll
// RUN: filecheck %s --check-prefix=RING8-CALL < %t.ring8.ll
// RUN: filecheck %s --check-prefix=RING8-INIT < %t.ring8.ll
// RING8-COPY-LABEL: define void @all_reduce(
// RING8-COPY-COUNT-112: call void @mgpuMemcpy(
// RING8-COPY-NOT: call void @mgpuMemcpy(
// RING8-COPY-LABEL: define void @_mlir_ciface_all_reduce(
// RING8-LAUNCH-LABEL: define void @all_reduce(
// RING8-LAUNCH-COUNT-56: call void @mgpuLaunchKernel(
// RING8-LAUNCH-NOT: call void @mgpuLaunchKernel(
// RING8-LAUNCH-LABEL: define void @_mlir_ciface_all_reduce(
// RING8-CALL-LABEL: define void @all_reduce(
// RING8-CALL-NOT: @mgpuStreamCreate(
// RING8-CALL-NOT: @mgpuEventCreate(
// RING8-CALL-NOT: @mgpuMemAlloc(
// RING8-CALL-NOT: @mgpuStreamDestroy(
// RING8-CALL-COUNT-104: call void @mgpuEventRecord(
// RING8-CALL-NOT: @mgpuEventRecord(
// RING8-CALL-NOT: @mgpuStreamCreate(
// RING8-CALL-NOT: @mgpuEventCreate(
// RING8-CALL: call void @mgpuStreamSynchronize(
// RING8-CALL-NOT: @mgpuStreamSynchronize(
// RING8-CALL-LABEL: define void @_mlir_ciface_all_reduce(
// RING8-INIT-LABEL: define internal void @__coll_init()
// RING8-INIT-COUNT-8: call ptr @mgpuStreamCreate()
// RING8-INIT-NOT: @mgpuStreamCreate(
// RING8-INIT-COUNT-104: call ptr @mgpuEventCreate()
// RING8-INIT-NOT: @mgpuEventCreate(
// RING8-INIT: call ptr @mgpuMemAlloc(
// RING8-INIT-LABEL: define internal void @__coll_fini()
// all2all, N = 4: 24 coll.copy, 4 coll.combine.
// RUN: coll-gen all-reduce --devices 4 --shape 1000 | %PYTHON -m coll.tools.coll_build --emit=llvmir --strategy=all2all --format=isa > %t.all2all4.ll
// RUN: filecheck %s --check-prefix=ALL2ALL4-COPY < %t.all2all4.ll
// RUN: filecheck %s --check-prefix=ALL2ALL4-LAUNCH < %t.all2all4.ll
// RUN: filecheck %s --check-prefix=ALL2ALL4-CALL < %t.all2all4.ll
// RUN: filecheck %s --check-prefix=ALL2ALL4-INIT < %t.all2all4.ll
// ALL2ALL4-COPY-LABEL: define void @all_reduce(
// ALL2ALL4-COPY-COUNT-24: call void @mgpuMemcpy(
// ALL2ALL4-COPY-NOT: call void @mgpuMemcpy(
// ALL2ALL4-COPY-LABEL: define void @_mlir_ciface_all_reduce(
// ALL2ALL4-LAUNCH-LABEL: define void @all_reduce(
// ALL2ALL4-LAUNCH-COUNT-4: call void @mgpuLaunchKernel(
// ALL2ALL4-LAUNCH-NOT: call void @mgpuLaunchKernel(
// ALL2ALL4-LAUNCH-LABEL: define void @_mlir_ciface_all_reduce(
// ALL2ALL4-CALL-LABEL: define void @all_reduce(
// ALL2ALL4-CALL-NOT: @mgpuStreamCreate(
// ALL2ALL4-CALL-NOT: @mgpuEventCreate(
// ALL2ALL4-CALL-NOT: @mgpuMemAlloc(
// ALL2ALL4-CALL-NOT: @mgpuStreamDestroy(
// ALL2ALL4-CALL-COUNT-6: call void @mgpuEventRecord(
// ALL2ALL4-CALL-NOT: @mgpuEventRecord(
// ALL2ALL4-CALL-NOT: @mgpuStreamCreate(
// ALL2ALL4-CALL-NOT: @mgpuEventCreate(
// ALL2ALL4-CALL: call void @mgpuStreamSynchronize(
// ALL2ALL4-CALL-NOT: @mgpuStreamSynchronize(
// ALL2ALL4-CALL-LABEL: define void @_mlir_ciface_all_reduce(
// ALL2ALL4-INIT-LABEL: define internal void @__coll_init()
// ALL2ALL4-INIT-COUNT-4: call ptr @mgpuStreamCreate()
// ALL2ALL4-INIT-NOT: @mgpuStreamCreate(
// ALL2ALL4-INIT-COUNT-6: call ptr @mgpuEventCreate()
// ALL2ALL4-INIT-NOT: @mgpuEventCreate(
// ALL2ALL4-INIT: call ptr @mgpuMemAlloc(
// ALL2ALL4-INIT-LABEL: define internal void @__coll_fini()
// all2all, N = 8: 112 coll.copy, 8 coll.combine.
// RUN: coll-gen all-reduce --devices 8 --shape 1000 | %PYTHON -m coll.tools.coll_build --emit=llvmir --strategy=all2all --format=isa > %t.all2all8.ll
// RUN: filecheck %s --check-prefix=ALL2ALL8-COPY < %t.all2all8.ll
// RUN: filecheck %s --check-prefix=ALL2ALL8-LAUNCH < %t.all2all8.ll
// RUN: filecheck %s --check-prefix=ALL2ALL8-CALL < %t.all2all8.ll
// RUN: filecheck %s --check-prefix=ALL2ALL8-INIT < %t.all2all8.ll
// ALL2ALL8-COPY-LABEL: define void @all_reduce(
// ALL2ALL8-COPY-COUNT-112: call void @mgpuMemcpy(
// ALL2ALL8-COPY-NOT: call void @mgpuMemcpy(
// ALL2ALL8-COPY-LABEL: define void @_mlir_ciface_all_reduce(
// ALL2ALL8-LAUNCH-LABEL: define void @all_reduce(
// ALL2ALL8-LAUNCH-COUNT-8: call void @mgpuLaunchKernel(
// ALL2ALL8-LAUNCH-NOT: call void @mgpuLaunchKernel(
// ALL2ALL8-LAUNCH-LABEL: define void @_mlir_ciface_all_reduce(
// ALL2ALL8-CALL-LABEL: define void @all_reduce(
// ALL2ALL8-CALL-NOT: @mgpuStreamCreate(
// ALL2ALL8-CALL-NOT: @mgpuEventCreate(
// ALL2ALL8-CALL-NOT: @mgpuMemAlloc(
// ALL2ALL8-CALL-NOT: @mgpuStreamDestroy(
// ALL2ALL8-CALL-COUNT-14: call void @mgpuEventRecord(
// ALL2ALL8-CALL-NOT: @mgpuEventRecord(
// ALL2ALL8-CALL-NOT: @mgpuStreamCreate(
// ALL2ALL8-CALL-NOT: @mgpuEventCreate(
// ALL2ALL8-CALL: call void @mgpuStreamSynchronize(
// ALL2ALL8-CALL-NOT: @mgpuStreamSynchronize(
// ALL2ALL8-CALL-LABEL: define void @_mlir_ciface_all_reduce(
// ALL2ALL8-INIT-LABEL: define internal void @__coll_init()
// ALL2ALL8-INIT-COUNT-8: call ptr @mgpuStreamCreate()
// ALL2ALL8-INIT-NOT: @mgpuStreamCreate(
// ALL2ALL8-INIT-COUNT-14: call ptr @mgpuEventCreate()
// ALL2ALL8-INIT-NOT: @mgpuEventCreate(
// ALL2ALL8-INIT: call ptr @mgpuMemAlloc(
// ALL2ALL8-INIT-LABEL: define internal void @__coll_fini()
