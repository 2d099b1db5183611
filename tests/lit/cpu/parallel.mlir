// coll-parallel-devices: a run of the devices' local work (ops marked
// coll.device) between two ops of anything else moves, device by device
// and in order, into functions of their own (noinline), each called in an
// async.execute at the run's last op (views stay before it), awaited before
// the block goes on: with `threads` groups of devices, each group but the
// last in an execute, the last on the caller's thread. A run whose devices share memory one of them writes,
// that calls a function other than the BLAS library, or that touches fewer
// than min-bytes stays.
// RUN: coll-opt %s --split-input-file --pass-pipeline='builtin.module(coll-parallel-devices{min-bytes=0 threads=2})' | FileCheck %s
// One thread: nothing to run at once.
// RUN: coll-opt %s --split-input-file --pass-pipeline='builtin.module(coll-parallel-devices{min-bytes=0 threads=1})' | FileCheck %s --check-prefix=SMALL
// The default min-bytes (8 MiB): these small runs stay.
// RUN: coll-opt %s --split-input-file --coll-parallel-devices | FileCheck %s --check-prefix=SMALL
// The route: upstream's async lowering, the async runtime's calls.
// RUN: coll-opt %s --split-input-file --pass-pipeline='builtin.module(coll-parallel-devices{min-bytes=0 threads=2},async-to-async-runtime,async-runtime-ref-counting,async-runtime-ref-counting-opt,convert-async-to-llvm)' | FileCheck %s --check-prefix=ASYNC
// Bad option:
// RUN: not coll-opt %s --split-input-file --pass-pipeline='builtin.module(coll-parallel-devices{min-bytes=-1})' 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: coll-parallel-devices: min-bytes must be a number of bytes, got -1
// RUN: not coll-opt %s --split-input-file --pass-pipeline='builtin.module(coll-parallel-devices{threads=-1})' 2>&1 | FileCheck %s --check-prefix=BADT
// BADT: error: coll-parallel-devices: threads must be 0 (this machine's cores) or a number of threads, got -1

#id = affine_map<(i) -> (i)>
// CHECK-LABEL: func.func @two_runs
// CHECK: %[[V0:.*]] = memref.subview %arg2[0] [8] [1]
// CHECK: %[[V1:.*]] = memref.subview %arg3[0] [8] [1]
// Two threads: device 0 in an execute, device 1 on this thread, then the wait.
// CHECK: %[[T0:.*]] = async.execute {
// CHECK-NEXT: func.call @two_runs_device0_0(%arg0, %arg2, %arg4) {coll.device = 0 : i64}
// CHECK-NEXT: async.yield
// CHECK: call @two_runs_device1_0(%arg1, %arg3, %arg5) {coll.device = 1 : i64}
// CHECK-NEXT: async.await %[[T0]]
// The call ends the run; the next one is executed on its own.
// CHECK-NEXT: call @coll_combine_sum_f32_x2
// CHECK: async.execute {
// CHECK-NEXT: func.call @two_runs_device0_1(%[[V0]], %{{.*}})
// CHECK: call @two_runs_device1_1(%[[V1]], %{{.*}})
// CHECK-NEXT: async.await
// CHECK: return
// CHECK: func.func private @two_runs_device0_0(%[[X:.*]]: memref<16xf32>, %[[Y:.*]]: memref<16xf32>, %[[Z:.*]]: memref<16xf32>) attributes {passthrough = ["noinline"]}
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[X]] : memref<16xf32>) outs(%[[Y]] : memref<16xf32>) attrs = {coll.device = 0 : i64}
// CHECK: memref.copy %[[Y]], %[[Z]] {coll.device = 0 : i64}
// CHECK-NEXT: return
// CHECK: func.func private @two_runs_device1_0
// CHECK: func.func private @two_runs_device0_1
// CHECK: func.func private @two_runs_device1_1
// SMALL-NOT: async.execute
// ASYNC-LABEL: func.func @two_runs
// ASYNC: call @mlirAsyncRuntimeExecute
// ASYNC: call @mlirAsyncRuntimeAwaitToken
func.func private @coll_combine_sum_f32_x2(memref<16xf32>, memref<16xf32>, memref<16xf32>)
func.func @two_runs(%x0: memref<16xf32>, %x1: memref<16xf32>, %y0: memref<16xf32>, %y1: memref<16xf32>,
                    %z0: memref<16xf32>, %z1: memref<16xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x0 : memref<16xf32>) outs(%y0 : memref<16xf32>) attrs = {coll.device = 0 : i64} {
  ^bb0(%a: f32, %o: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  %v0 = memref.subview %y0[0] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1]>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x1 : memref<16xf32>) outs(%y1 : memref<16xf32>) attrs = {coll.device = 1 : i64} {
  ^bb0(%a: f32, %o: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  %v1 = memref.subview %y1[0] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1]>>
  memref.copy %y0, %z0 {coll.device = 0 : i64} : memref<16xf32> to memref<16xf32>
  memref.copy %y1, %z1 {coll.device = 1 : i64} : memref<16xf32> to memref<16xf32>
  call @coll_combine_sum_f32_x2(%z0, %z1, %y0) : (memref<16xf32>, memref<16xf32>, memref<16xf32>) -> ()
  %w0 = memref.subview %z0[0] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1]>>
  %w1 = memref.subview %z1[0] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1]>>
  memref.copy %v0, %w0 {coll.device = 0 : i64} : memref<8xf32, strided<[1]>> to memref<8xf32, strided<[1]>>
  memref.copy %v1, %w1 {coll.device = 1 : i64} : memref<8xf32, strided<[1]>> to memref<8xf32, strided<[1]>>
  return
}

// -----
// Device 1 reads what device 0 writes (the first half of %y): they stay in
// order. Disjoint halves of one buffer run in parallel.
// CHECK-LABEL: func.func @shared
// CHECK-NOT: async.execute
// CHECK: memref.copy %arg0, %{{.*}} {coll.device = 0 : i64}
// CHECK: memref.copy %{{.*}}, %arg1 {coll.device = 1 : i64}
// CHECK: call @barrier
// CHECK: async.execute
// CHECK: call @shared_device1_0
// CHECK: return
func.func @shared(%x: memref<8xf32>, %z: memref<8xf32>, %y: memref<16xf32>) {
  %lo = memref.subview %y[0] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1]>>
  %hi = memref.subview %y[8] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1], offset: 8>>
  %lo2 = memref.subview %y[4] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1], offset: 4>>
  memref.copy %x, %lo {coll.device = 0 : i64} : memref<8xf32> to memref<8xf32, strided<[1]>>
  memref.copy %lo2, %z {coll.device = 1 : i64} : memref<8xf32, strided<[1], offset: 4>> to memref<8xf32>
  func.call @barrier() : () -> ()
  memref.copy %x, %lo {coll.device = 0 : i64} : memref<8xf32> to memref<8xf32, strided<[1]>>
  memref.copy %x, %hi {coll.device = 1 : i64} : memref<8xf32> to memref<8xf32, strided<[1], offset: 8>>
  return
}
func.func private @barrier()

// -----
// A call of another function (what it touches is not followed) and a load
// (a value computed from memory) stay where they are.
// CHECK-LABEL: func.func @unknown
// CHECK-NOT: async.execute
// CHECK: return
func.func private @touch(memref<16xf32>)
func.func @unknown(%x0: memref<16xf32>, %x1: memref<16xf32>, %y0: memref<16xf32>, %y1: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  func.call @touch(%x0) {coll.device = 0 : i64} : (memref<16xf32>) -> ()
  func.call @touch(%x1) {coll.device = 1 : i64} : (memref<16xf32>) -> ()
  memref.copy %x0, %y0 {coll.device = 0 : i64} : memref<16xf32> to memref<16xf32>
  %v = memref.load %y0[%c0] {coll.device = 0 : i64} : memref<16xf32>
  memref.copy %x1, %y1 {coll.device = 1 : i64} : memref<16xf32> to memref<16xf32>
  return
}

// -----
// A BLAS call's pointers count as their whole buffers: two devices' gemms
// on their own buffers run in parallel; on one shared output, in order.
// CHECK-LABEL: func.func @gemms
// CHECK: async.execute
// CHECK: call @gemms_device1_0
// CHECK-LABEL: func.func private @gemms_device0_0
// CHECK: call @scipy_cblas_sgemm({{.*}}) {coll.device = 0 : i64}
// CHECK-LABEL: func.func private @gemms_device1_0
// CHECK: call @scipy_cblas_sgemm({{.*}}) {coll.device = 1 : i64}
// CHECK-LABEL: func.func @gemms_one_output
// CHECK-NOT: async.execute
// CHECK: return
func.func private @scipy_cblas_sgemm(i32, i32, i32, i32, i32, i32, f32, !llvm.ptr, i32, !llvm.ptr, i32, f32, !llvm.ptr, i32)
func.func @gemms(%a0: memref<4x4xf32>, %a1: memref<4x4xf32>, %c0: memref<4x4xf32>, %c1: memref<4x4xf32>) {
  %i = arith.constant 4 : i32
  %f = arith.constant 1.0 : f32
  %pa0 = memref.extract_aligned_pointer_as_index %a0 : memref<4x4xf32> -> index
  %qa0 = arith.index_cast %pa0 : index to i64
  %ra0 = llvm.inttoptr %qa0 : i64 to !llvm.ptr
  %pc0 = memref.extract_aligned_pointer_as_index %c0 : memref<4x4xf32> -> index
  %qc0 = arith.index_cast %pc0 : index to i64
  %rc0 = llvm.inttoptr %qc0 : i64 to !llvm.ptr
  func.call @scipy_cblas_sgemm(%i, %i, %i, %i, %i, %i, %f, %ra0, %i, %ra0, %i, %f, %rc0, %i) {coll.device = 0 : i64} : (i32, i32, i32, i32, i32, i32, f32, !llvm.ptr, i32, !llvm.ptr, i32, f32, !llvm.ptr, i32) -> ()
  %pa1 = memref.extract_aligned_pointer_as_index %a1 : memref<4x4xf32> -> index
  %qa1 = arith.index_cast %pa1 : index to i64
  %ra1 = llvm.inttoptr %qa1 : i64 to !llvm.ptr
  %pc1 = memref.extract_aligned_pointer_as_index %c1 : memref<4x4xf32> -> index
  %qc1 = arith.index_cast %pc1 : index to i64
  %rc1 = llvm.inttoptr %qc1 : i64 to !llvm.ptr
  func.call @scipy_cblas_sgemm(%i, %i, %i, %i, %i, %i, %f, %ra1, %i, %ra1, %i, %f, %rc1, %i) {coll.device = 1 : i64} : (i32, i32, i32, i32, i32, i32, f32, !llvm.ptr, i32, !llvm.ptr, i32, f32, !llvm.ptr, i32) -> ()
  return
}
func.func @gemms_one_output(%a0: memref<4x4xf32>, %a1: memref<4x4xf32>, %c0: memref<4x4xf32>) {
  %i = arith.constant 4 : i32
  %f = arith.constant 1.0 : f32
  %pa0 = memref.extract_aligned_pointer_as_index %a0 : memref<4x4xf32> -> index
  %qa0 = arith.index_cast %pa0 : index to i64
  %ra0 = llvm.inttoptr %qa0 : i64 to !llvm.ptr
  %pc0 = memref.extract_aligned_pointer_as_index %c0 : memref<4x4xf32> -> index
  %qc0 = arith.index_cast %pc0 : index to i64
  %rc0 = llvm.inttoptr %qc0 : i64 to !llvm.ptr
  func.call @scipy_cblas_sgemm(%i, %i, %i, %i, %i, %i, %f, %ra0, %i, %ra0, %i, %f, %rc0, %i) {coll.device = 0 : i64} : (i32, i32, i32, i32, i32, i32, f32, !llvm.ptr, i32, !llvm.ptr, i32, f32, !llvm.ptr, i32) -> ()
  %pa1 = memref.extract_aligned_pointer_as_index %a1 : memref<4x4xf32> -> index
  %qa1 = arith.index_cast %pa1 : index to i64
  %ra1 = llvm.inttoptr %qa1 : i64 to !llvm.ptr
  func.call @scipy_cblas_sgemm(%i, %i, %i, %i, %i, %i, %f, %ra1, %i, %ra1, %i, %f, %rc0, %i) {coll.device = 1 : i64} : (i32, i32, i32, i32, i32, i32, f32, !llvm.ptr, i32, !llvm.ptr, i32, f32, !llvm.ptr, i32) -> ()
  return
}

// -----
// What a linalg body loads counts (an outside attack: device 1's body read
// device 0's %y0 while device 0 wrote it, wrong in 50 of 50 calls).
#id = affine_map<(i) -> (i)>
// CHECK-LABEL: func.func @body_load
// CHECK-NOT: async.execute
// CHECK: return
func.func @body_load(%x0: memref<16xf32>, %y0: memref<16xf32>, %y1: memref<16xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x0 : memref<16xf32>) outs(%y0 : memref<16xf32>) attrs = {coll.device = 0 : i64} {
  ^bb0(%a: f32, %o: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]} outs(%y1 : memref<16xf32>) attrs = {coll.device = 1 : i64} {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %v = memref.load %y0[%i] : memref<16xf32>
    linalg.yield %v : f32
  }
  return
}

// -----
// Only a declaration of the library's name is the library (a function of
// that name with a body may touch anything), and only an offset made of no
// other pointer moves a buffer's pointer (c1 + (c0 - c1) is c0).
// CHECK-LABEL: func.func @fake_library
// CHECK-NOT: async.execute
// CHECK-LABEL: func.func @pointer_arithmetic
// CHECK-NOT: async.execute
// CHECK: return
memref.global "private" @shared : memref<4xf32> = dense<0.0>
func.func private @scipy_cblas_mine(%p: !llvm.ptr) {
  %g = memref.get_global @shared : memref<4xf32>
  %c0 = arith.constant 0 : index
  %f = arith.constant 1.0 : f32
  memref.store %f, %g[%c0] : memref<4xf32>
  return
}
func.func @fake_library(%a0: memref<4xf32>, %a1: memref<4xf32>) {
  %p0 = memref.extract_aligned_pointer_as_index %a0 : memref<4xf32> -> index
  %q0 = arith.index_cast %p0 : index to i64
  %r0 = llvm.inttoptr %q0 : i64 to !llvm.ptr
  func.call @scipy_cblas_mine(%r0) {coll.device = 0 : i64} : (!llvm.ptr) -> ()
  %p1 = memref.extract_aligned_pointer_as_index %a1 : memref<4xf32> -> index
  %q1 = arith.index_cast %p1 : index to i64
  %r1 = llvm.inttoptr %q1 : i64 to !llvm.ptr
  func.call @scipy_cblas_mine(%r1) {coll.device = 1 : i64} : (!llvm.ptr) -> ()
  return
}
func.func private @scipy_cblas_sgemm(i32, i32, i32, i32, i32, i32, f32, !llvm.ptr, i32, !llvm.ptr, i32, f32, !llvm.ptr, i32)
func.func @pointer_arithmetic(%a: memref<4x4xf32>, %c0: memref<4x4xf32>, %c1: memref<4x4xf32>) {
  %i = arith.constant 4 : i32
  %f = arith.constant 1.0 : f32
  %pa = memref.extract_aligned_pointer_as_index %a : memref<4x4xf32> -> index
  %qa = arith.index_cast %pa : index to i64
  %ra = llvm.inttoptr %qa : i64 to !llvm.ptr
  %p0 = memref.extract_aligned_pointer_as_index %c0 : memref<4x4xf32> -> index
  %p1 = memref.extract_aligned_pointer_as_index %c1 : memref<4x4xf32> -> index
  %d = arith.subi %p0, %p1 : index
  %s = arith.addi %p1, %d : index
  %qs = arith.index_cast %s : index to i64
  %rs = llvm.inttoptr %qs : i64 to !llvm.ptr
  func.call @scipy_cblas_sgemm(%i, %i, %i, %i, %i, %i, %f, %ra, %i, %ra, %i, %f, %rs, %i) {coll.device = 0 : i64} : (i32, i32, i32, i32, i32, i32, f32, !llvm.ptr, i32, !llvm.ptr, i32, f32, !llvm.ptr, i32) -> ()
  memref.copy %c0, %c1 {coll.device = 1 : i64} : memref<4x4xf32> to memref<4x4xf32>
  return
}

