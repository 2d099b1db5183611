// coll.permute on the GPU route: one gpu.memcpy per pair, each on its own
// stream (one round: the copies run concurrently), down to the host's
// mgpuMemcpy calls; the tensor form's zero fill of an output that receives
// nothing is local work, a kernel launched before the copies (PTX).
// RUN: coll-gen permute --devices 4 --shape 64 --dtype i64 | coll-opt --pass-pipeline='builtin.module(coll-lower-collectives,coll-to-gpu)' | FileCheck %s --check-prefix=RING
// RUN: coll-gen permute --devices 3 --shape 1000 --pairs 0:2,2:1 | %PYTHON -m coll.tools.coll_build --emit=llvm | FileCheck %s --check-prefix=HOST
// RUN: %PYTHON -m coll.tools.coll_build --emit=gpu %s | FileCheck %s --check-prefix=FILL
// RUN: %PYTHON -m coll.tools.coll_build --emit=ptx %s | FileCheck %s --check-prefix=PTX

// RING-NOT: "coll.
// RING-LABEL: func.func @permute
// RING: %[[S0:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.ptr to !gpu.async.token
// RING: %[[S1:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.ptr to !gpu.async.token
// RING: %[[S2:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.ptr to !gpu.async.token
// RING: %[[S3:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.ptr to !gpu.async.token
// RING: gpu.memcpy async [%[[S0]]] %arg5, %arg0 : memref<64xi64>, memref<64xi64>
// RING: gpu.memcpy async [%[[S1]]] %arg6, %arg1
// RING: gpu.memcpy async [%[[S2]]] %arg7, %arg2
// RING: gpu.memcpy async [%[[S3]]] %arg4, %arg3
// RING-NOT: gpu.memcpy
// RING-NOT: gpu.launch_func

// 0 -> 2 and 2 -> 1: y2 <- x0 (arguments 5 and 0), y1 <- x2 (4 and 2).
// HOST-LABEL: llvm.func @permute
// HOST: llvm.call @mgpuMemcpy(%arg26, %arg1,
// HOST: llvm.call @mgpuMemcpy(%arg21, %arg11,
// HOST-NOT: llvm.call @mgpuMemcpy

// FILL-LABEL: func.func @partial
// FILL: gpu.launch_func{{ +}}@partial_kernel::@partial_kernel {{.*}} args({{.*}}, %arg3 : memref<256xf32>)
// FILL: gpu.memcpy async [%{{.*}}] %arg5, %arg0
// FILL: gpu.memcpy async [%{{.*}}] %arg4, %arg2
// FILL: gpu.module @partial_kernel
// PTX: .visible .entry partial_kernel(
// PTX: st.global.b32
func.func @partial(%t0: tensor<256xf32>, %t1: tensor<256xf32>, %t2: tensor<256xf32>) -> (tensor<256xf32>, tensor<256xf32>, tensor<256xf32>) {
  %tok, %r0, %r1, %r2 = "coll.permute"(%t0, %t1, %t2) {devices = array<i64: 0, 1, 2>, pairs = array<i64: 0, 2, 2, 1>, operandSegmentSizes = array<i32: 3, 0, 0>}
      : (tensor<256xf32>, tensor<256xf32>, tensor<256xf32>) -> (!coll.token, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>)
  return %r0, %r1, %r2 : tensor<256xf32>, tensor<256xf32>, tensor<256xf32>
}
