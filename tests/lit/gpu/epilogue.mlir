// The elementwise work right after a collective's last combine joins the
// combine (coll-gpu-fuse-epilogues, lowering/gpu/epilogue.py): oneshot's
// combine on each device and the residual add after it become one
// linalg.generic that folds the inputs in device order and adds the
// residual; the combine and its kernel go, and %y, which only the epilogue
// read, is no longer written. On the GPU route: one local kernel per device.
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-spmd-to-global,coll-lower-collectives{strategy=oneshot},coll-gpu-fuse-epilogues)' | FileCheck %s
// RUN: %PYTHON -m coll.tools.coll_build %s --emit=gpu --strategy=oneshot | FileCheck %s --check-prefix=GPU
// RUN: %PYTHON -m coll.tools.coll_build %s --emit=gpu --strategy=oneshot --epilogues=off | FileCheck %s --check-prefix=OFF
// Twoshot's results arrive by copies: nothing to fuse.
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-spmd-to-global,coll-lower-collectives{strategy=twoshot},coll-gpu-fuse-epilogues)' | FileCheck %s --check-prefix=TWOSHOT

#id = affine_map<(i, j) -> (i, j)>
module attributes {coll.peer_access} {
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[X0:[a-z0-9]+]]: memref<10x8xf32>, %[[X1:[a-z0-9]+]]: memref<10x8xf32>, %[[R0:[a-z0-9]+]]: memref<10x8xf32>, %[[R1:[a-z0-9]+]]: memref<10x8xf32>, %[[Z0:[a-z0-9]+]]: memref<10x8xf32>, %[[Z1:[a-z0-9]+]]: memref<10x8xf32>)
// CHECK-NOT: coll.combine
// CHECK: "coll.join"() : () -> !coll.token
// CHECK: "coll.wait"
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %[[R0]] : memref<10x8xf32>, memref<10x8xf32>, memref<10x8xf32>) outs(%[[Z0]] : memref<10x8xf32>) attrs = {coll.device = 0 : i64}
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[C:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:   %[[S:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT:   %[[T:.*]] = arith.addf %[[S]], %[[C]] : f32
// CHECK-NEXT:   linalg.yield %[[T]] : f32
// CHECK: linalg.generic {{.*}} outs(%[[Z1]] : memref<10x8xf32>) attrs = {coll.device = 1 : i64}
// CHECK-NOT: linalg.generic
// CHECK: return
// GPU-LABEL: func.func @step(
// GPU-NOT: @coll_kernels::@combine
// GPU-COUNT-2: gpu.launch_func async {{.*}} @step_kernel{{(_[0-9]+)?}}::@step_kernel
// GPU-NOT: gpu.launch_func
// OFF-LABEL: func.func @step(
// OFF-COUNT-2: @coll_kernels::@combine_sum_f32_x2
// OFF-COUNT-2: gpu.launch_func async {{.*}} @step_kernel{{(_[0-9]+)?}}::@step_kernel
// TWOSHOT-COUNT-2: "coll.combine"
// TWOSHOT-COUNT-2: linalg.generic
func.func @step(%x: memref<10x8xf32>, %r: memref<10x8xf32>, %z: memref<10x8xf32>) attributes {coll.ranks = 2 : i64} {
  %y = memref.alloc() : memref<10x8xf32>
  %t = "coll.all_reduce"(%x, %y) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<10x8xf32>, memref<10x8xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%y, %r : memref<10x8xf32>, memref<10x8xf32>) outs(%z : memref<10x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  memref.dealloc %y : memref<10x8xf32>
  return
}
}
