// coll-to-gpu on a ring over 3 devices: one gpu.memcpy per coll.copy, one
// gpu.launch_func per coll.combine, each on its device's stream (made once,
// by the library's constructor); cross-stream dependencies are an event
// record after the producer and a stream wait; one host sync at the end.
// RUN: coll-gen all-reduce --devices 3 --shape 7 | coll-opt --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=ring},coll-to-gpu)' > %t
// RUN: FileCheck %s < %t
// RUN: FileCheck %s --check-prefix=COPIES < %t
// RUN: FileCheck %s --check-prefix=KERNELS < %t
// RUN: FileCheck %s --check-prefix=STREAMS < %t
// RUN: FileCheck %s --check-prefix=INIT < %t

// Placement is gone from every type; the GPU is recorded on the function.
// CHECK-NOT: #coll.device
// CHECK-LABEL: func.func @all_reduce(%arg0: memref<7xf32>
// CHECK-SAME: attributes {coll.gpu = 0 : i64, llvm.emit_c_interface}
// The scratch pool (3 + 3 + 2 + 2 + 2 + 2 floats, 256-byte aligned slots)
// was allocated at load; the call reads its pointer from a global.
// CHECK: %[[PA:.*]] = llvm.mlir.addressof @__coll_pools : !llvm.ptr
// CHECK-NEXT: llvm.getelementptr %[[PA]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[POOL:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<1536xi8>
// Device 1's stream (the first used) is handle 0, passed to the gpu ops as
// their one async dependency.
// CHECK: %[[SA:.*]] = llvm.mlir.addressof @__coll_streams : !llvm.ptr
// CHECK-NEXT: %[[SP0:.*]] = llvm.getelementptr %[[SA]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %[[S0:.*]] = llvm.load %[[SP0]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[T0:.*]] = builtin.unrealized_conversion_cast %[[S0]] : !llvm.ptr to !gpu.async.token
// CHECK: %[[SP1:.*]] = llvm.getelementptr %[[SA]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %[[S1:.*]] = llvm.load %[[SP1]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[T1:.*]] = builtin.unrealized_conversion_cast %[[S1]] : !llvm.ptr to !gpu.async.token
// CHECK: %[[EA:.*]] = llvm.mlir.addressof @__coll_events : !llvm.ptr
// CHECK-NEXT: %[[EP0:.*]] = llvm.getelementptr %[[EA]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %[[E0:.*]] = llvm.load %[[EP0]] : !llvm.ptr -> !llvm.ptr
// Chunk 0: x0[0:3] -> scratch on d1 (a slice copied as is), combined on d1.
// CHECK: %[[X0C0:.*]] = memref.subview %arg0[0] [3] [1] : memref<7xf32> to memref<3xf32, strided<[1]>>
// CHECK: %[[R1:.*]] = memref.view %[[POOL]][%c0][] : memref<1536xi8> to memref<3xf32>
// CHECK: gpu.memcpy async [%[[T0]]] %[[R1]], %[[X0C0]] : memref<3xf32>, memref<3xf32, strided<[1]>>
// CHECK: gpu.launch_func async [%[[T0]]] @coll_kernels::@combine_sum_f32_x2 blocks in (%c1, %c1, %c1) threads in (%c256, %c1, %c1) args(%{{.*}} : memref<?xf32, strided<[1], offset: ?>>, %{{.*}} : memref<?xf32, strided<[1], offset: ?>>, %{{.*}} : memref<?xf32, strided<[1], offset: ?>>, %c3 : index)
// Device 2's copy needs d1's combine: an event recorded right after it,
// waited for by d2's stream.
// CHECK-NEXT: llvm.call @mgpuEventRecord(%[[E0]], %[[S0]]) : (!llvm.ptr, !llvm.ptr) -> ()
// CHECK: llvm.call @mgpuStreamWaitEvent(%[[S1]], %[[E0]]) : (!llvm.ptr, !llvm.ptr) -> ()
// CHECK-NEXT: gpu.memcpy async [%[[T1]]]
// CHECK: gpu.launch_func async [%[[T1]]] @coll_kernels::@combine_sum_f32_x2
// The end: one host sync, on the stream that already waits for the others.
// CHECK: llvm.call @mgpuStreamSynchronize(
// CHECK-NEXT: return
// No coll op survives; the kernel exists once, for sm_90.
// CHECK-NOT: coll.
// CHECK: gpu.module @coll_kernels [#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">]
// CHECK: gpu.func @combine_sum_f32_x2(%arg0: memref<?xf32, strided<[1], offset: ?>>, %arg1: memref<?xf32, strided<[1], offset: ?>>, %arg2: memref<?xf32, strided<[1], offset: ?>>, %arg3: index) kernel
// CHECK: vector.load {{.*}} {alignment = 16 : i64} : memref<?xf32, strided<[1], offset: ?>>, vector<4xf32>
// CHECK-NOT: gpu.func

// ring on 3 devices: 2N(N-1) = 12 copies, N(N-1) = 6 combines.
// COPIES-COUNT-12: gpu.memcpy async
// COPIES-NOT: gpu.memcpy
// KERNELS-COUNT-6: gpu.launch_func async
// KERNELS-NOT: gpu.launch_func

// The call creates no stream or event, has no gpu.wait (upstream would make
// a stream of each), records each event once and syncs the host once.
// STREAMS-LABEL: func.func @all_reduce(
// STREAMS-NOT: gpu.wait
// STREAMS-NOT: mgpuStreamCreate
// STREAMS-NOT: mgpuEventCreate
// STREAMS-COUNT-9: llvm.call @mgpuEventRecord(
// STREAMS-NOT: mgpuEventRecord
// STREAMS-NOT: mgpuStreamCreate
// STREAMS-NOT: mgpuEventCreate
// STREAMS-NOT: gpu.wait
// STREAMS-NOT: mgpuMemAlloc
// STREAMS: llvm.call @mgpuStreamSynchronize(
// STREAMS-NOT: mgpuStreamSynchronize
// STREAMS: return

// The constructor makes 3 streams, 9 events and the 1536-byte pool; the
// destructor frees and destroys them.
// INIT-LABEL: llvm.func internal @__coll_init()
// INIT-COUNT-3: llvm.call @mgpuStreamCreate()
// INIT-NOT: mgpuStreamCreate
// INIT-COUNT-9: llvm.call @mgpuEventCreate()
// INIT-NOT: mgpuEventCreate
// INIT: %[[N:.*]] = llvm.mlir.constant(1536 : i64)
// INIT: llvm.call @mgpuMemAlloc(%[[N]],
// INIT-LABEL: llvm.func internal @__coll_fini()
// INIT: llvm.call @mgpuMemFree(
// INIT-COUNT-3: llvm.call @mgpuStreamDestroy(
// INIT-COUNT-9: llvm.call @mgpuEventDestroy(
// INIT: llvm.mlir.global_ctors ctors = [@__coll_init], priorities = [124 : i32]
// INIT: llvm.mlir.global_dtors dtors = [@__coll_fini], priorities = [124 : i32]
