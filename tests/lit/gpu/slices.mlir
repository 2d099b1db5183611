// Copies between slices: upstream's gpu.memcpy lowering uses the aligned
// pointer and ignores a slice's offset, so coll-to-gpu (by default) or
// coll-gpu-legalize-memcpy hands it identity-layout memrefs that start at
// the slice.
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-to-gpu{memcpy-views=false})' | FileCheck %s
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-to-gpu{memcpy-views=false},coll-gpu-legalize-memcpy)' | FileCheck %s --check-prefix=LEGAL
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-to-gpu)' | FileCheck %s --check-prefix=LEGAL
// RUN: %PYTHON -m coll.tools.coll_build %s --emit=llvmir | FileCheck %s --check-prefix=IR

func.func @slices(%a: memref<8xf32>, %b: memref<8xf32>) {
  %x = memref.memory_space_cast %a : memref<8xf32> to memref<8xf32, #coll.device<0 : i64>>
  %y = memref.memory_space_cast %b : memref<8xf32> to memref<8xf32, #coll.device<1 : i64>>
  %xs = memref.subview %x[4] [4] [1] : memref<8xf32, #coll.device<0 : i64>> to memref<4xf32, strided<[1], offset: 4>, #coll.device<0 : i64>>
  %ys = memref.subview %y[2] [4] [1] : memref<8xf32, #coll.device<1 : i64>> to memref<4xf32, strided<[1], offset: 2>, #coll.device<1 : i64>>
  %t = "coll.copy"(%xs, %ys) : (memref<4xf32, strided<[1], offset: 4>, #coll.device<0 : i64>>, memref<4xf32, strided<[1], offset: 2>, #coll.device<1 : i64>>) -> !coll.token
  %u = "coll.combine"(%ys, %ys, %ys, %t) {kind = "max", operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (memref<4xf32, strided<[1], offset: 2>, #coll.device<1 : i64>>, memref<4xf32, strided<[1], offset: 2>, #coll.device<1 : i64>>, memref<4xf32, strided<[1], offset: 2>, #coll.device<1 : i64>>, !coll.token) -> !coll.token
  "coll.wait"(%u) : (!coll.token) -> ()
  return
}

// No scratch, so no pool; the copy runs on its destination's chain (d1),
// and so does the combine that follows it: no join is needed.
// CHECK-LABEL: func.func @slices(%arg0: memref<8xf32>, %arg1: memref<8xf32>)
// CHECK-NOT: __coll_pools
// CHECK: %[[SP:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[S:.*]] = builtin.unrealized_conversion_cast %[[SP]] : !llvm.ptr to !gpu.async.token
// CHECK: %[[XS:.*]] = memref.subview %arg0[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
// CHECK: %[[YS:.*]] = memref.subview %arg1[2] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 2>>
// CHECK: gpu.memcpy async [%[[S]]] %[[YS]], %[[XS]] : memref<4xf32, strided<[1], offset: 2>>, memref<4xf32, strided<[1], offset: 4>>
// CHECK-NOT: mgpuEventRecord
// CHECK: gpu.launch_func async [%[[S]]] @coll_kernels::@combine_max_f32_x2 {{.*}} args({{.*}}, %c4 : index)
// CHECK-NEXT: llvm.call @mgpuStreamSynchronize(%[[SP]])
// CHECK-NOT: __coll_pools

// LEGAL: %[[D:.*]] = builtin.unrealized_conversion_cast %{{.*}} : memref<4xf32, strided<[1], offset: 2>> to !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// LEGAL: %[[P:.*]] = llvm.extractvalue %[[D]][1]
// LEGAL: %[[G:.*]] = llvm.getelementptr %[[P]][2] : (!llvm.ptr) -> !llvm.ptr, f32
// LEGAL: %[[A:.*]] = llvm.insertvalue %[[G]], %[[D]][1]
// LEGAL: %[[Z:.*]] = llvm.mlir.constant(0 : i64) : i64
// LEGAL: llvm.insertvalue %[[Z]], %[[A]][2]
// LEGAL: %[[DST:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<4xf32>
// LEGAL: %[[SRC:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<4xf32>
// LEGAL: gpu.memcpy async [%{{.*}}] %[[DST]], %[[SRC]] : memref<4xf32>, memref<4xf32>

// In the host LLVM IR the copy starts 4 floats into %a and lands 2 floats
// into %b (%1 and %6 are their aligned pointers): 16 bytes.
// IR-LABEL: define void @slices(
// IR-DAG: %[[SRCP:.*]] = getelementptr float, ptr %1, i{{32|64}} 4
// IR-DAG: %[[DSTP:.*]] = getelementptr float, ptr %6, i{{32|64}} 2
// IR: call void @mgpuMemcpy(ptr %[[DSTP]], ptr %[[SRCP]], i64 16, ptr %{{.*}})
// IR: call void @mgpuLaunchKernel(
