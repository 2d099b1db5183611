// Epilogues (lowering/cpu/epilogue.py): the row-parallel local work right
// after a collective runs inside its tiled loop, on the rows of each tile
// after the tile's last copy or combine; the collective's own buffer (%y,
// used by nothing else) shrinks to one tile of rows. Here twoshot on 2
// devices, 10 rows of 8, tiles of 32 elements (4 rows): 2 whole tiles in
// the loop, then the last 2 rows, each of a static size.
// RUN: coll-opt %s --split-input-file --pass-pipeline='builtin.module(coll-spmd-to-global,coll-lower-collectives{strategy=twoshot},coll-to-cpu{tile=32 scratch=heap})' | FileCheck %s
// Off: the epilogue runs after the collective, on the whole buffer.
// RUN: coll-opt %s --split-input-file --pass-pipeline='builtin.module(coll-spmd-to-global,coll-lower-collectives{strategy=twoshot},coll-to-cpu{tile=32 scratch=heap epilogues=off})' | FileCheck %s --check-prefix=OFF

#id = affine_map<(i, j) -> (i, j)>
module attributes {coll.peer_access} {
// CHECK-LABEL: func.func @step
// CHECK-NOT: memref<10x8xf32> = memref.alloc
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %c64{{.*}} step %c32
// CHECK:   call @coll_combine_sum_f32_x2
// CHECK:   call @coll_copy
// CHECK:   %[[ROW:.*]] = arith.divui %[[I]], %c8
// CHECK:   %[[R0:.*]] = memref.subview %arg2[%[[ROW]], 0] [4, 8] [1, 1]
// CHECK:   %[[Z0:.*]] = memref.subview %arg4[%[[ROW]], 0] [4, 8] [1, 1]
// CHECK:   linalg.generic {{.*}} ins(%alloc{{.*}}, %[[R0]] : memref<4x8xf32>, {{.*}}) outs(%[[Z0]] : {{.*}}) attrs = {coll.device = 0 : i64}
// CHECK:   linalg.generic {{.*}} attrs = {coll.device = 1 : i64}
// CHECK: }
// The last two rows: the tile's first two rows.
// CHECK: memref.subview %alloc{{.*}}[0, 0] [2, 8] [1, 1]
// CHECK: memref.subview %arg2[8, 0] [2, 8] [1, 1]
// CHECK: linalg.generic {{.*}} attrs = {coll.device = 0 : i64}
// CHECK: linalg.generic {{.*}} attrs = {coll.device = 1 : i64}
// CHECK-NOT: linalg.generic
// CHECK: return
// OFF-LABEL: func.func @step
// OFF: memref.alloc() {coll.device = 0 : i64} : memref<10x8xf32>
// OFF: call @coll_combine_sum_f32_x2
// OFF: memref.copy
// OFF: linalg.generic {{.*}} ins(%{{.*}}, %arg2 : memref<10x8xf32>, memref<10x8xf32>) outs(%arg4 : memref<10x8xf32>)
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

// -----
// Not an epilogue: a transpose reads other rows than the tile's.
#id = affine_map<(i, j) -> (i, j)>
#tr = affine_map<(i, j) -> (j, i)>
module attributes {coll.peer_access} {
// CHECK-LABEL: func.func @transposed
// CHECK-NOT: linalg.generic
// CHECK: call @coll_combine_sum_f32_x2
// CHECK-NOT: linalg.generic
// CHECK: call @coll_combine_sum_f32_x2
// CHECK: {{^    }}linalg.generic {{.*}} attrs = {coll.device = 0 : i64}
// CHECK: {{^    }}linalg.generic {{.*}} attrs = {coll.device = 1 : i64}
func.func @transposed(%x: memref<8x8xf32>, %y: memref<8x8xf32>, %z: memref<8x8xf32>) attributes {coll.ranks = 2 : i64} {
  %t = "coll.all_reduce"(%x, %y) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<8x8xf32>, memref<8x8xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]} ins(%y : memref<8x8xf32>) outs(%z : memref<8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}
}

// -----
// Not an epilogue: a bias the collective itself writes (an all_reduce of
// the bias) is read whole by every row.
#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
module attributes {coll.peer_access} {
// CHECK-LABEL: func.func @bias_written
// CHECK-NOT: linalg.generic
// CHECK: call @coll_combine_sum_f32_x2
// CHECK-NOT: linalg.generic
// CHECK: memref.copy %arg0, %arg1
// CHECK: {{^    }}linalg.generic {{.*}} attrs = {coll.device = 0 : i64}
// CHECK: {{^    }}linalg.generic {{.*}} attrs = {coll.device = 1 : i64}
func.func @bias_written(%b: memref<8xf32>, %x: memref<8x8xf32>, %z: memref<8x8xf32>) attributes {coll.ranks = 2 : i64} {
  %t = "coll.all_reduce"(%b, %b) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<8xf32>, memref<8xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %b : memref<8x8xf32>, memref<8xf32>) outs(%z : memref<8x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  }
  return
}
}
