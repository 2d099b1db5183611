// coll-mpi-overlap: the epilogue after an SPMD function's all_reduce
// (residual add + RMSNorm, bench/epilogue.py's program at 2 ranks, rows of
// 4096 f32) moves into each rank's case and runs in tiles of 16 rows (four
// buffers by rows in 2 MiB), each tile after the last op that touches its
// rows: the rank's own chunk (finished by the combine) once its allgather
// messages are posted, the received chunk after its wait. Nothing is left
// after the switch.
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-spmd-to-mpi{strategy=ring},coll-to-mpi,coll-mpi-overlap)' | FileCheck %s
// With the pass off (coll-run --epilogues=off): the epilogue stays after the switch.
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-spmd-to-mpi{strategy=ring},coll-to-mpi)' | FileCheck %s --check-prefix=OFF

// CHECK-LABEL: func.func @step(
// CHECK: %[[Y:.*]] = memref.alloc() : memref<128x4096xf32>
// The row sums' buffer and the constants move above the switch.
// CHECK: memref.alloc() : memref<128xf32>
// CHECK: scf.index_switch
// CHECK: case 0 {
// CHECK: mpi.irecv
// CHECK: mpi.isend
// CHECK: mpi.wait
// CHECK: "coll.combine"
// CHECK: mpi.irecv
// CHECK: mpi.isend
// Rank 0's own chunk (rows 64..128), before any wait of the allgather.
// CHECK-NOT: mpi.wait
// CHECK: %[[C64:.*]] = arith.constant 64 : index
// CHECK: %[[C128:.*]] = arith.constant 128 : index
// CHECK: %[[C16:.*]] = arith.constant 16 : index
// CHECK: scf.for %[[I:.*]] = %[[C64]] to %[[C128]] step %[[C16]] {
// CHECK: memref.subview %[[Y]][%[[I]], 0] [16, 4096] [1, 1] : memref<128x4096xf32> to memref<16x4096xf32, strided<[4096, 1], offset: ?>>
// CHECK: linalg.generic
// CHECK: linalg.fill
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK: mpi.wait
// CHECK-NEXT: mpi.wait
// The chunk received from rank 1 (rows 0..64), once it has arrived; the
// send of the own chunk is still out.
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: linalg.generic
// CHECK: mpi.wait
// CHECK-NEXT: scf.yield
// CHECK: case 1 {
// CHECK: scf.for
// CHECK: mpi.wait
// CHECK: scf.for
// The default case (a rank outside 0..1) runs it whole, as before.
// CHECK: default {
// CHECK: linalg.generic
// CHECK: linalg.fill
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK-NOT: linalg.{{generic|fill}}
// CHECK: memref.dealloc %{{.*}} : memref<128xf32>
// CHECK-NEXT: memref.dealloc %[[Y]]
// CHECK-NEXT: return

// OFF: scf.index_switch
// OFF-NOT: linalg.
// OFF: default {
// OFF-NEXT: }
// OFF-NEXT: linalg.generic
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
module attributes {coll.peer_access} {
func.func @step(%x: memref<128x4096xf32>, %r: memref<128x4096xf32>, %g: memref<4096xf32>, %z: memref<128x4096xf32>, %out: memref<128x4096xf32>) attributes {coll.ranks = 2 : i64} {
  %y = memref.alloc() : memref<128x4096xf32>
  %t = "coll.all_reduce"(%x, %y) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<128x4096xf32>, memref<128x4096xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%y, %r : memref<128x4096xf32>, memref<128x4096xf32>) outs(%z : memref<128x4096xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  %ss = memref.alloc() : memref<128xf32>
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%ss : memref<128xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%z : memref<128x4096xf32>) outs(%ss : memref<128xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  }
  %hinv = arith.constant 0.000244140625 : f32
  %eps = arith.constant 1.0e-6 : f32
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]} outs(%ss : memref<128xf32>) {
  ^bb0(%s: f32):
    %m = arith.mulf %s, %hinv : f32
    %e = arith.addf %m, %eps : f32
    %q = math.rsqrt %e : f32
    linalg.yield %q : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%z, %ss, %g : memref<128x4096xf32>, memref<128xf32>, memref<4096xf32>) outs(%out : memref<128x4096xf32>) {
  ^bb0(%a: f32, %q: f32, %w: f32, %o: f32):
    %n = arith.mulf %a, %q : f32
    %v = arith.mulf %n, %w : f32
    linalg.yield %v : f32
  }
  memref.dealloc %ss : memref<128xf32>
  memref.dealloc %y : memref<128x4096xf32>
  return
}
}

