// Host LLVM IR, per call vs once: for each strategy at N = 4 and 8 (1000
// floats per device; the peer strategies on logical devices of one GPU,
// which coll-build marks coll.peer_access), the entry function enqueues one mgpuMemcpy per
// coll.copy and one mgpuLaunchKernel per coll.combine, creates no stream or
// event, records each event once (one per cross-stream dependency) and
// syncs the host once; the constructor __coll_init creates the streams (one
// per device), the events and the scratch pool (oneshot and twoshot need
// none), once per program. (Generated, then checked against coll.copy and
// coll.combine counts of the explicit level: Inputs/host_calls_gen.py.)

// ring, N = 4: 24 coll.copy, 12 coll.combine.
// RUN: coll-gen all-reduce --devices 4 --shape 1000 | %PYTHON -m coll.tools.coll_build --emit=llvmir --strategy=ring --format=isa > %t.ring4.ll
// RUN: FileCheck %s --check-prefix=RING4-COPY < %t.ring4.ll
// RUN: FileCheck %s --check-prefix=RING4-LAUNCH < %t.ring4.ll
// RUN: FileCheck %s --check-prefix=RING4-CALL < %t.ring4.ll
// RUN: FileCheck %s --check-prefix=RING4-INIT < %t.ring4.ll
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
// RUN: FileCheck %s --check-prefix=RING8-COPY < %t.ring8.ll
// RUN: FileCheck %s --check-prefix=RING8-LAUNCH < %t.ring8.ll
// RUN: FileCheck %s --check-prefix=RING8-CALL < %t.ring8.ll
// RUN: FileCheck %s --check-prefix=RING8-INIT < %t.ring8.ll
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
// RUN: FileCheck %s --check-prefix=ALL2ALL4-COPY < %t.all2all4.ll
// RUN: FileCheck %s --check-prefix=ALL2ALL4-LAUNCH < %t.all2all4.ll
// RUN: FileCheck %s --check-prefix=ALL2ALL4-CALL < %t.all2all4.ll
// RUN: FileCheck %s --check-prefix=ALL2ALL4-INIT < %t.all2all4.ll
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
// RUN: FileCheck %s --check-prefix=ALL2ALL8-COPY < %t.all2all8.ll
// RUN: FileCheck %s --check-prefix=ALL2ALL8-LAUNCH < %t.all2all8.ll
// RUN: FileCheck %s --check-prefix=ALL2ALL8-CALL < %t.all2all8.ll
// RUN: FileCheck %s --check-prefix=ALL2ALL8-INIT < %t.all2all8.ll
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
// oneshot, N = 4: 0 coll.copy, 4 coll.combine.
// RUN: coll-gen all-reduce --devices 4 --shape 1000 | %PYTHON -m coll.tools.coll_build --emit=llvmir --strategy=oneshot --format=isa > %t.oneshot4.ll
// RUN: FileCheck %s --check-prefix=ONESHOT4-COPY < %t.oneshot4.ll
// RUN: FileCheck %s --check-prefix=ONESHOT4-LAUNCH < %t.oneshot4.ll
// RUN: FileCheck %s --check-prefix=ONESHOT4-CALL < %t.oneshot4.ll
// RUN: FileCheck %s --check-prefix=ONESHOT4-INIT < %t.oneshot4.ll
// ONESHOT4-COPY-LABEL: define void @all_reduce(
// ONESHOT4-COPY-NOT: call void @mgpuMemcpy(
// ONESHOT4-COPY-LABEL: define void @_mlir_ciface_all_reduce(
// ONESHOT4-LAUNCH-LABEL: define void @all_reduce(
// ONESHOT4-LAUNCH-COUNT-4: call void @mgpuLaunchKernel(
// ONESHOT4-LAUNCH-NOT: call void @mgpuLaunchKernel(
// ONESHOT4-LAUNCH-LABEL: define void @_mlir_ciface_all_reduce(
// ONESHOT4-CALL-LABEL: define void @all_reduce(
// ONESHOT4-CALL-NOT: @mgpuStreamCreate(
// ONESHOT4-CALL-NOT: @mgpuEventCreate(
// ONESHOT4-CALL-NOT: @mgpuMemAlloc(
// ONESHOT4-CALL-NOT: @mgpuStreamDestroy(
// ONESHOT4-CALL-COUNT-3: call void @mgpuEventRecord(
// ONESHOT4-CALL-NOT: @mgpuEventRecord(
// ONESHOT4-CALL-NOT: @mgpuStreamCreate(
// ONESHOT4-CALL-NOT: @mgpuEventCreate(
// ONESHOT4-CALL: call void @mgpuStreamSynchronize(
// ONESHOT4-CALL-NOT: @mgpuStreamSynchronize(
// ONESHOT4-CALL-LABEL: define void @_mlir_ciface_all_reduce(
// ONESHOT4-INIT-LABEL: define internal void @__coll_init()
// ONESHOT4-INIT-COUNT-4: call ptr @mgpuStreamCreate()
// ONESHOT4-INIT-NOT: @mgpuStreamCreate(
// ONESHOT4-INIT-COUNT-3: call ptr @mgpuEventCreate()
// ONESHOT4-INIT-NOT: @mgpuEventCreate(

// ONESHOT4-INIT-NOT: @mgpuMemAlloc(
// ONESHOT4-INIT-LABEL: define internal void @__coll_fini()
// oneshot, N = 8: 0 coll.copy, 8 coll.combine.
// RUN: coll-gen all-reduce --devices 8 --shape 1000 | %PYTHON -m coll.tools.coll_build --emit=llvmir --strategy=oneshot --format=isa > %t.oneshot8.ll
// RUN: FileCheck %s --check-prefix=ONESHOT8-COPY < %t.oneshot8.ll
// RUN: FileCheck %s --check-prefix=ONESHOT8-LAUNCH < %t.oneshot8.ll
// RUN: FileCheck %s --check-prefix=ONESHOT8-CALL < %t.oneshot8.ll
// RUN: FileCheck %s --check-prefix=ONESHOT8-INIT < %t.oneshot8.ll
// ONESHOT8-COPY-LABEL: define void @all_reduce(
// ONESHOT8-COPY-NOT: call void @mgpuMemcpy(
// ONESHOT8-COPY-LABEL: define void @_mlir_ciface_all_reduce(
// ONESHOT8-LAUNCH-LABEL: define void @all_reduce(
// ONESHOT8-LAUNCH-COUNT-8: call void @mgpuLaunchKernel(
// ONESHOT8-LAUNCH-NOT: call void @mgpuLaunchKernel(
// ONESHOT8-LAUNCH-LABEL: define void @_mlir_ciface_all_reduce(
// ONESHOT8-CALL-LABEL: define void @all_reduce(
// ONESHOT8-CALL-NOT: @mgpuStreamCreate(
// ONESHOT8-CALL-NOT: @mgpuEventCreate(
// ONESHOT8-CALL-NOT: @mgpuMemAlloc(
// ONESHOT8-CALL-NOT: @mgpuStreamDestroy(
// ONESHOT8-CALL-COUNT-7: call void @mgpuEventRecord(
// ONESHOT8-CALL-NOT: @mgpuEventRecord(
// ONESHOT8-CALL-NOT: @mgpuStreamCreate(
// ONESHOT8-CALL-NOT: @mgpuEventCreate(
// ONESHOT8-CALL: call void @mgpuStreamSynchronize(
// ONESHOT8-CALL-NOT: @mgpuStreamSynchronize(
// ONESHOT8-CALL-LABEL: define void @_mlir_ciface_all_reduce(
// ONESHOT8-INIT-LABEL: define internal void @__coll_init()
// ONESHOT8-INIT-COUNT-8: call ptr @mgpuStreamCreate()
// ONESHOT8-INIT-NOT: @mgpuStreamCreate(
// ONESHOT8-INIT-COUNT-7: call ptr @mgpuEventCreate()
// ONESHOT8-INIT-NOT: @mgpuEventCreate(

// ONESHOT8-INIT-NOT: @mgpuMemAlloc(
// ONESHOT8-INIT-LABEL: define internal void @__coll_fini()
// twoshot, N = 4: 12 coll.copy, 4 coll.combine.
// RUN: coll-gen all-reduce --devices 4 --shape 1000 | %PYTHON -m coll.tools.coll_build --emit=llvmir --strategy=twoshot --format=isa > %t.twoshot4.ll
// RUN: FileCheck %s --check-prefix=TWOSHOT4-COPY < %t.twoshot4.ll
// RUN: FileCheck %s --check-prefix=TWOSHOT4-LAUNCH < %t.twoshot4.ll
// RUN: FileCheck %s --check-prefix=TWOSHOT4-CALL < %t.twoshot4.ll
// RUN: FileCheck %s --check-prefix=TWOSHOT4-INIT < %t.twoshot4.ll
// TWOSHOT4-COPY-LABEL: define void @all_reduce(
// TWOSHOT4-COPY-COUNT-12: call void @mgpuMemcpy(
// TWOSHOT4-COPY-NOT: call void @mgpuMemcpy(
// TWOSHOT4-COPY-LABEL: define void @_mlir_ciface_all_reduce(
// TWOSHOT4-LAUNCH-LABEL: define void @all_reduce(
// TWOSHOT4-LAUNCH-COUNT-4: call void @mgpuLaunchKernel(
// TWOSHOT4-LAUNCH-NOT: call void @mgpuLaunchKernel(
// TWOSHOT4-LAUNCH-LABEL: define void @_mlir_ciface_all_reduce(
// TWOSHOT4-CALL-LABEL: define void @all_reduce(
// TWOSHOT4-CALL-NOT: @mgpuStreamCreate(
// TWOSHOT4-CALL-NOT: @mgpuEventCreate(
// TWOSHOT4-CALL-NOT: @mgpuMemAlloc(
// TWOSHOT4-CALL-NOT: @mgpuStreamDestroy(
// TWOSHOT4-CALL-COUNT-6: call void @mgpuEventRecord(
// TWOSHOT4-CALL-NOT: @mgpuEventRecord(
// TWOSHOT4-CALL-NOT: @mgpuStreamCreate(
// TWOSHOT4-CALL-NOT: @mgpuEventCreate(
// TWOSHOT4-CALL: call void @mgpuStreamSynchronize(
// TWOSHOT4-CALL-NOT: @mgpuStreamSynchronize(
// TWOSHOT4-CALL-LABEL: define void @_mlir_ciface_all_reduce(
// TWOSHOT4-INIT-LABEL: define internal void @__coll_init()
// TWOSHOT4-INIT-COUNT-4: call ptr @mgpuStreamCreate()
// TWOSHOT4-INIT-NOT: @mgpuStreamCreate(
// TWOSHOT4-INIT-COUNT-6: call ptr @mgpuEventCreate()
// TWOSHOT4-INIT-NOT: @mgpuEventCreate(

// TWOSHOT4-INIT-NOT: @mgpuMemAlloc(
// TWOSHOT4-INIT-LABEL: define internal void @__coll_fini()
// twoshot, N = 8: 56 coll.copy, 8 coll.combine.
// RUN: coll-gen all-reduce --devices 8 --shape 1000 | %PYTHON -m coll.tools.coll_build --emit=llvmir --strategy=twoshot --format=isa > %t.twoshot8.ll
// RUN: FileCheck %s --check-prefix=TWOSHOT8-COPY < %t.twoshot8.ll
// RUN: FileCheck %s --check-prefix=TWOSHOT8-LAUNCH < %t.twoshot8.ll
// RUN: FileCheck %s --check-prefix=TWOSHOT8-CALL < %t.twoshot8.ll
// RUN: FileCheck %s --check-prefix=TWOSHOT8-INIT < %t.twoshot8.ll
// TWOSHOT8-COPY-LABEL: define void @all_reduce(
// TWOSHOT8-COPY-COUNT-56: call void @mgpuMemcpy(
// TWOSHOT8-COPY-NOT: call void @mgpuMemcpy(
// TWOSHOT8-COPY-LABEL: define void @_mlir_ciface_all_reduce(
// TWOSHOT8-LAUNCH-LABEL: define void @all_reduce(
// TWOSHOT8-LAUNCH-COUNT-8: call void @mgpuLaunchKernel(
// TWOSHOT8-LAUNCH-NOT: call void @mgpuLaunchKernel(
// TWOSHOT8-LAUNCH-LABEL: define void @_mlir_ciface_all_reduce(
// TWOSHOT8-CALL-LABEL: define void @all_reduce(
// TWOSHOT8-CALL-NOT: @mgpuStreamCreate(
// TWOSHOT8-CALL-NOT: @mgpuEventCreate(
// TWOSHOT8-CALL-NOT: @mgpuMemAlloc(
// TWOSHOT8-CALL-NOT: @mgpuStreamDestroy(
// TWOSHOT8-CALL-COUNT-14: call void @mgpuEventRecord(
// TWOSHOT8-CALL-NOT: @mgpuEventRecord(
// TWOSHOT8-CALL-NOT: @mgpuStreamCreate(
// TWOSHOT8-CALL-NOT: @mgpuEventCreate(
// TWOSHOT8-CALL: call void @mgpuStreamSynchronize(
// TWOSHOT8-CALL-NOT: @mgpuStreamSynchronize(
// TWOSHOT8-CALL-LABEL: define void @_mlir_ciface_all_reduce(
// TWOSHOT8-INIT-LABEL: define internal void @__coll_init()
// TWOSHOT8-INIT-COUNT-8: call ptr @mgpuStreamCreate()
// TWOSHOT8-INIT-NOT: @mgpuStreamCreate(
// TWOSHOT8-INIT-COUNT-14: call ptr @mgpuEventCreate()
// TWOSHOT8-INIT-NOT: @mgpuEventCreate(

// TWOSHOT8-INIT-NOT: @mgpuMemAlloc(
// TWOSHOT8-INIT-LABEL: define internal void @__coll_fini()
