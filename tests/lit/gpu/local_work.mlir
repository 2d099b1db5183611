// Local work on the GPU route: the linalg ops around a collective become
// kernels of full blocks (256 threads; each op's iteration space collapsed
// to one dimension, tiled by 256, tiles on blocks, elements on threads),
// launched on a stream of their own that the constructor makes, each
// waited for where it stands; the program builds to a library.
// RUN: %PYTHON -m coll.tools.coll_build %root/examples/tensor_mlp.mlir --emit=gpu | FileCheck %s
// RUN: %PYTHON -m coll.tools.coll_build %root/examples/tensor_mlp.mlir --emit=llvmir | FileCheck %s --check-prefix=HOST
// RUN: %PYTHON -m coll.tools.coll_build %root/examples/tensor_mlp.mlir --emit=so -o %t.so
// RUN: %PYTHON -m coll.tools.coll_build %s --emit=gpu | FileCheck %s --check-prefix=BIG

// tensor_mlp: fill and matmul per device, the allreduce (naive, in place),
// exp per device; 2x3 results: one block of 256 threads (6 of them busy).
// Each kernel is named after its module (coll-gpu-kernel-names), and each
// device's combine and exp are one kernel (coll-gpu-fuse-epilogues), after
// the copies' wait.
// CHECK-LABEL: func.func @mlp(
// CHECK-COUNT-4: gpu.launch_func async [%[[L:[0-9]+]]] @[[K:mlp_kernel(_[0-9]+)?]]::@[[K]] blocks in (%c1{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) threads in (%c256{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}})
// CHECK-NOT: @coll_kernels::@combine
// CHECK: llvm.call @mgpuStreamSynchronize(
// CHECK-COUNT-2: gpu.launch_func async [%[[L]]] @[[E:mlp_kernel_[0-9]+]]::@[[E]] blocks in (%c1{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) threads in (%c256
// CHECK-NOT: gpu.launch_func
// CHECK-NOT: gpu.launch_func {{.*}}threads in (%c1{{(_[0-9]+)?}},

// The host code: 6 local launches per call, no stream made per call (the
// constructor makes the 2 devices' and the local one).
// HOST-LABEL: define void @mlp(
// HOST-NOT: call ptr @mgpuStreamCreate
// HOST-COUNT-6: call void @mgpuLaunchKernel(
// HOST-NOT: call ptr @mgpuStreamCreate
// HOST-NOT: call void @mgpuLaunchKernel(
// HOST-LABEL: define internal void @__coll_init()
// HOST-COUNT-3: call ptr @mgpuStreamCreate()
// HOST-NOT: call ptr @mgpuStreamCreate()

// Larger and higher-rank local work: 1000x300 (300000 elements: 1172
// blocks) and a 1-D op of 5000 (20 blocks), all of 256 threads.
// BIG-LABEL: func.func @big(
// BIG: gpu.launch_func async {{.*}} blocks in (%c1172, %c1{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) threads in (%c256{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}})
// BIG: gpu.launch_func async {{.*}} blocks in (%c20, %c1{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) threads in (%c256{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}})
// BIG: @coll_kernels::@combine_sum_f32_x2
func.func @big(%x0: memref<1000x300xf32>, %x1: memref<1000x300xf32>, %v: memref<5000xf32>,
               %y0: memref<1000x300xf32>, %y1: memref<1000x300xf32>) {
  linalg.exp ins(%x0 : memref<1000x300xf32>) outs(%x0 : memref<1000x300xf32>)
  linalg.exp ins(%v : memref<5000xf32>) outs(%v : memref<5000xf32>)
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum", strategy = "naive",
      operandSegmentSizes = array<i32: 2, 2, 0>}
      : (memref<1000x300xf32>, memref<1000x300xf32>, memref<1000x300xf32>, memref<1000x300xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
