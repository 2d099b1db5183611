// coll-to-gpu's default: each call as one CUDA graph (lowering/gpu/streams.py,
// lowering/gpu/graph.c). The public function keeps its name and signature and
// only decides how the work runs: captured (first call with these buffers),
// replayed (one graph launch), or enqueued op by op; then one host sync. The
// work is in a private body, where every chain other than the first forks
// from the first stream (the capture's origin) and joins it at the end, and
// nothing syncs the host (a sync is not allowed inside a capture).
// (order=any: the ring of old, whose three chains end on three streams.)
// RUN: coll-gen all-reduce --devices 3 --shape 12 | coll-opt --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=ring order=any},coll-to-gpu)' > %t
// RUN: FileCheck %s < %t
// RUN: FileCheck %s --check-prefix=BODY < %t
// RUN: FileCheck %s --check-prefix=ONCE < %t
// RUN: %PYTHON %S/Inputs/body_end.py 3 < %t | FileCheck %s --check-prefix=END

// The key: each buffer's address and offset (new buffers, new capture).
// CHECK-LABEL: func.func @all_reduce(%arg0: memref<12xf32>
// CHECK-SAME: attributes {coll.gpu = 0 : i64, llvm.emit_c_interface}
// CHECK: %[[N:.*]] = llvm.mlir.constant(12 : i64) : i64
// CHECK: %[[KEY:.*]] = llvm.alloca %[[N]] x i64
// CHECK: memref.extract_aligned_pointer_as_index %arg0
// CHECK: memref.extract_strided_metadata %arg0
// CHECK: memref.extract_aligned_pointer_as_index %arg5
// CHECK: %[[SA:.*]] = llvm.mlir.addressof @__coll_streams
// CHECK: %[[S0:.*]] = llvm.load %[[SA]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[G:.*]] = llvm.mlir.addressof @__coll_graph_0
// CHECK: %[[MODE:.*]] = llvm.call @__coll_call_begin(%[[G]], %[[KEY]], %[[N]], %[[S0]])
// CHECK: cf.switch %[[MODE]] : i32, [
// CHECK-NEXT: default: ^[[DIRECT:bb[0-9]+]],
// CHECK-NEXT: 0: ^[[LAUNCH:bb[0-9]+]],
// CHECK-NEXT: 1: ^[[CAPTURE:bb[0-9]+]]
// CHECK: ^[[CAPTURE]]:
// CHECK-NEXT: call @__coll_body_all_reduce(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5)
// CHECK-NEXT: %[[OK:.*]] = llvm.call @__coll_capture_end(%[[G]], %[[S0]])
// CHECK: cf.cond_br %{{.*}}, ^[[LAUNCH]], ^[[DIRECT]]
// CHECK: ^[[LAUNCH]]:
// CHECK-NEXT: llvm.call @__coll_graph_launch(%[[G]], %[[S0]])
// CHECK: ^[[DIRECT]]:
// CHECK-NEXT: call @__coll_body_all_reduce(
// CHECK: llvm.call @__coll_call_end(%[[G]], %[[S0]])
// CHECK-NEXT: llvm.call @mgpuStreamSynchronize(%[[S0]])
// CHECK-NEXT: return

// The body: stream 0 (device 1's, the first used) is the origin. The fork
// event is recorded on it before any work; device 2's and device 0's streams
// wait on it before their first op; at the end the origin waits for the
// last op of every other chain. No host sync inside.
// BODY-LABEL: func.func private @__coll_body_all_reduce(
// BODY-SAME: llvm.linkage = #llvm.linkage<internal>
// BODY-NOT: gpu.memcpy
// BODY-NOT: gpu.launch_func
// BODY: %[[SA:.*]] = llvm.mlir.addressof @__coll_streams
// BODY-NEXT: %[[SP0:.*]] = llvm.getelementptr %[[SA]][0]
// BODY-NEXT: %[[S0:.*]] = llvm.load %[[SP0]]
// BODY: %[[SP1:.*]] = llvm.getelementptr %[[SA]][1]
// BODY-NEXT: %[[S1:.*]] = llvm.load %[[SP1]]
// BODY: %[[EA:.*]] = llvm.mlir.addressof @__coll_events
// BODY-NEXT: %[[EP0:.*]] = llvm.getelementptr %[[EA]][0]
// BODY-NEXT: %[[FORK:.*]] = llvm.load %[[EP0]]
// BODY-NEXT: llvm.call @mgpuEventRecord(%[[FORK]], %[[S0]])
// BODY: %[[SP2:.*]] = llvm.getelementptr %[[SA]][2]
// BODY-NEXT: %[[S2:.*]] = llvm.load %[[SP2]]
// BODY: llvm.call @mgpuStreamWaitEvent(%[[S1]], %[[FORK]])
// BODY: llvm.call @mgpuStreamWaitEvent(%[[S2]], %[[FORK]])
// BODY-NOT: mgpuStreamSynchronize
// BODY: return
// (Inputs/body_end.py: the body's last ops, stream 0 named S0.)
// END: llvm.call @mgpuStreamWaitEvent(S0, %{{[0-9]+}})
// END-NEXT: llvm.call @mgpuStreamWaitEvent(S0, %{{[0-9]+}})
// END-NEXT: return

// The graph state is destroyed first at unload (it refers to the streams and
// events), and the calls come from the shim.
// ONCE: llvm.func @__coll_call_begin(!llvm.ptr, !llvm.ptr, i64, !llvm.ptr) -> i32
// ONCE: llvm.mlir.global internal @__coll_graph_0() {addr_space = 0 : i32} : !llvm.array<4 x i64>
// ONCE-LABEL: llvm.func internal @__coll_fini()
// ONCE-NEXT: %[[G:.*]] = llvm.mlir.addressof @__coll_graph_0
// ONCE-NEXT: llvm.call @__coll_graph_destroy(%[[G]])

// coll-build --graph=false (coll-to-gpu{graph=false}): the entry enqueues
// its work itself, syncs once, and the library has no graph calls.
// RUN: coll-gen all-reduce --devices 2 --shape 8 | %PYTHON -m coll.tools.coll_build --emit=llvmir --format=isa --graph=false | FileCheck %s --check-prefix=OFF
// OFF-NOT: __coll_call_begin
// OFF-LABEL: define void @all_reduce(
// OFF: call void @mgpuMemcpy(
// OFF: call void @mgpuLaunchKernel(
// OFF: call void @mgpuStreamSynchronize(
// OFF-LABEL: define void @_mlir_ciface_all_reduce(
// OFF-NOT: __coll_graph
