// coll-parallel-devices in the parts of a split function (coll-to-cpu{split}):
// a part loads its buffers from a table of pointers, one slot per buffer
// (coll.slot on the rebuilt memref, lowering/cpu/split.py), which the
// analysis takes as distinct roots, as distinct arguments: the two
// devices' exp (part 0) and tanh (part 2) run at once there too.
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-spmd-to-global,coll-lower-collectives,coll-static-local-buffers,coll-to-cpu{split=6 tile=0 epilogues=off},coll-parallel-devices{min-bytes=0 threads=2})' | FileCheck %s
// CHECK-LABEL: func.func private @step_part0(
// CHECK: %[[A:.*]] = builtin.unrealized_conversion_cast {{.*}} to memref<64xf32> {coll.slot = 0 : i64}
// CHECK: async.execute {
// CHECK-NEXT: func.call @step_part0_device0_0(%[[A]], %{{.*}}) {coll.device = 0 : i64}
// CHECK: call @step_part0_device1_0(
// CHECK-NEXT: async.await
// CHECK: func.func private @step_part0_device0_0({{.*}}) attributes {passthrough = ["noinline"]}
// CHECK-NEXT: linalg.generic
// CHECK: math.exp
// CHECK-LABEL: func.func private @step_part1(
// CHECK-NOT: async.execute
// CHECK-LABEL: func.func private @step_part2(
// CHECK: async.execute
// CHECK: func.func private @step_part2_device0_0(
// CHECK: math.tanh
#id = affine_map<(i) -> (i)>
func.func @step(%x: memref<64xf32>, %y: memref<64xf32>, %z: memref<64xf32>) attributes {coll.ranks = 2 : i64} {
  %a = memref.alloc() : memref<64xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : memref<64xf32>) outs(%a : memref<64xf32>) {
  ^bb0(%v: f32, %o: f32):
    %e = math.exp %v : f32
    linalg.yield %e : f32
  }
  %t = "coll.all_reduce"(%a, %y) {devices = array<i64: 0, 1>, kind = "sum", strategy = "ring", operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<64xf32>, memref<64xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%y : memref<64xf32>) outs(%z : memref<64xf32>) {
  ^bb0(%v: f32, %o: f32):
    %e = math.tanh %v : f32
    linalg.yield %e : f32
  }
  memref.dealloc %a : memref<64xf32>
  return
}
