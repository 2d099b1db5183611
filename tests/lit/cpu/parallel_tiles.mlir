// A large group's tiles shared among threads (coll-to-cpu's workers,
// lowering/cpu/fuse.py _tile_loop): all2all on 2 devices, 2097272 f32
// (8 MiB) each: chunk 0 = [0, 1048640) = 8 tiles of 131072 elements + 64.
// Two workers take 4 consecutive tiles each, each with its own scratch
// tile (a memref.view at its offset of one allocation); the rest runs
// after them, in worker 0's tile.
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=all2all},coll-to-cpu{tile=131072 kernels=inline scratch=heap split=0 workers=2})' | FileCheck %s
// Upstream's async-parallel-for runs the workers on the async runtime
// (the cpu route: lowering/cpu/route.py).
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=all2all},coll-to-cpu{tile=131072 kernels=inline scratch=heap split=0 workers=2},async-parallel-for{async-dispatch=true num-workers=2 min-task-size=1})' | FileCheck %s --check-prefix=ASYNC
// On one worker (the default), an scf.for over the tiles as before.
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=all2all},coll-to-cpu{tile=131072 kernels=inline scratch=heap split=0})' | FileCheck %s --check-prefix=ONE
// A group below 8 MiB of buffers stays on one thread (a hand-off costs
// tens of microseconds).
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=all2all},coll-to-cpu{tile=131072 kernels=inline scratch=heap split=0 workers=2})' | FileCheck %s --check-prefix=SMALL
// A segment's groups each below 8 MiB but of 8 MiB or more in all (all2all's
// four chunks on 4 devices of 1 MiB) are shared whole: an scf.parallel
// whose body switches on the worker, each case running its groups.
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=all2all},coll-to-cpu{tile=131072 kernels=inline scratch=heap split=0 workers=2})' | FileCheck %s --check-prefix=GROUPS
// RUN: not coll-opt %s --pass-pipeline='builtin.module(coll-to-cpu{workers=0})' 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK-LABEL: func.func @all_reduce(
// CHECK: %[[X1C0:.*]] = memref.subview %arg1[0] [1048640] [1]
// CHECK: %[[SCRATCH:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1048576xi8>
// CHECK: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK: %[[TWO:.*]] = arith.constant 2 : index
// CHECK: scf.parallel (%[[W:.*]]) = (%[[ZERO]]) to (%[[TWO]])
// CHECK: %[[AT:.*]] = arith.muli %[[W]], %{{.*}} : index
// CHECK: %[[TILE:.*]] = memref.view %[[SCRATCH]][%[[AT]]][] : memref<1048576xi8> to memref<131072xf32>
// CHECK: %[[FIRST:.*]] = arith.muli %[[W]], %[[PER:.*]] : index
// CHECK: %[[LAST:.*]] = arith.addi %[[FIRST]], %{{.*}} : index
// CHECK: %[[END:.*]] = arith.minsi %[[LAST]], %{{.*}} : index
// CHECK: scf.for %[[T:.*]] = %[[FIRST]] to %[[END]] step
// CHECK: %[[SRC:.*]] = memref.subview %[[X1C0]][%[[T]]] [131072] [1]
// CHECK-NEXT: memref.copy %[[SRC]], %[[TILE]]
// CHECK: scf.reduce
// The rest: 64 elements in worker 0's tile, after every worker is done.
// CHECK: %[[TILE0:.*]] = memref.view %[[SCRATCH]][%{{.*}}][] : memref<1048576xi8> to memref<131072xf32>
// CHECK: memref.subview %[[X1C0]][1048576] [64] [1]
// CHECK: memref.subview %[[TILE0]][0] [64] [1]
// CHECK: memref.dealloc %[[SCRATCH]]

// ASYNC-LABEL: func.func @all_reduce(
// ASYNC-NOT: scf.parallel
// ASYNC: async.create_group
// ASYNC: call @async_dispatch_fn
// ASYNC: async.await_all
// ASYNC: func.func private @parallel_compute_fn
// ASYNC: func.func private @async_dispatch_fn
// ASYNC: async.execute

// ONE-LABEL: func.func @all_reduce(
// ONE-NOT: scf.parallel
// ONE: memref.alloc() {alignment = 64 : i64} : memref<131072xf32>
// ONE: scf.for

// SMALL-LABEL: func.func @small(
// SMALL-NOT: scf.parallel
// SMALL: scf.for
// SMALL-NOT: scf.parallel
// SMALL: return

// GROUPS-LABEL: func.func @chunks(
// GROUPS: scf.parallel (%[[W:.*]]) = (%{{.*}}) to (%[[TWO:.*]]) step
// GROUPS-NEXT: scf.index_switch %[[W]]
// GROUPS-NEXT: case 1 {
// GROUPS: memref.alloc() {alignment = 64 : i64} : memref<65536xf32>
// GROUPS: scf.yield
// GROUPS: default {
// GROUPS: memref.alloc() {alignment = 64 : i64} : memref<65536xf32>
// GROUPS: scf.reduce
// GROUPS-NOT: memref.copy
// GROUPS: return

// BAD: workers must be a number of threads (1: one), got 0

func.func @all_reduce(%x0: memref<2097272xf32>, %x1: memref<2097272xf32>, %y0: memref<2097272xf32>, %y1: memref<2097272xf32>) {
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<2097272xf32>, memref<2097272xf32>, memref<2097272xf32>, memref<2097272xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}

// 4 x 1 MiB: two tiles of 131072 per chunk, on one thread.
func.func @small(%x0: memref<262144xf32>, %x1: memref<262144xf32>, %y0: memref<262144xf32>, %y1: memref<262144xf32>) {
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<262144xf32>, memref<262144xf32>, memref<262144xf32>, memref<262144xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}

// 4 x 1 MiB on 4 devices: four chunk groups of about 2 MiB each.
func.func @chunks(%x0: memref<262144xf32>, %x1: memref<262144xf32>, %x2: memref<262144xf32>, %x3: memref<262144xf32>, %y0: memref<262144xf32>, %y1: memref<262144xf32>, %y2: memref<262144xf32>, %y3: memref<262144xf32>) {
  %t = "coll.all_reduce"(%x0, %x1, %x2, %x3, %y0, %y1, %y2, %y3) {devices = array<i64: 0, 1, 2, 3>, kind = "sum", operandSegmentSizes = array<i32: 4, 4, 0>} : (memref<262144xf32>, memref<262144xf32>, memref<262144xf32>, memref<262144xf32>, memref<262144xf32>, memref<262144xf32>, memref<262144xf32>, memref<262144xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
