// A global view's local work under coll-to-mpi (lowering/mpi/local_work.py):
// each op is cloned into the case of every rank that needs it, at its
// place in program order, after the requests before it. A buffer an
// explicit op works on is its device's; an input several devices' work
// reads is in every such rank's slots; work on no device runs on rank 0.
// RUN: coll-opt %s --split-input-file --pass-pipeline='builtin.module(coll-lower-collectives,coll-to-mpi)' | FileCheck %s
// What local work cannot be placed is refused, located: errors.mlir.

// %w is read by both devices' matmuls: slot 1 of rank 0 and of rank 1
// (global argument 2 twice); each rank fills and multiplies into its own
// output, then sends it, then takes the exp after its messages.
// CHECK-LABEL: func.func @mlp(%arg0: memref<2x4xf32>, %arg1: memref<4x3xf32>, %arg2: memref<2x3xf32>)
// CHECK-SAME: coll.global_args = array<i64: 0, 2, 3, 1, 2, 4>
// CHECK-SAME: coll.rank_inputs = 2 : i64, coll.ranks = 2 : i64
// CHECK: case 0 {
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg2 : memref<2x3xf32>)
// CHECK-NEXT: linalg.matmul ins(%arg0, %arg1 : memref<2x4xf32>, memref<4x3xf32>) outs(%arg2 : memref<2x3xf32>)
// CHECK: mpi.isend
// CHECK: mpi.wait
// CHECK: mpi.wait
// CHECK: "coll.combine"
// CHECK-NEXT: linalg.exp ins(%arg2 : memref<2x3xf32>) outs(%arg2 : memref<2x3xf32>)
// CHECK-NEXT: scf.yield
// CHECK: case 1 {
// CHECK: linalg.matmul ins(%arg0, %arg1 : memref<2x4xf32>, memref<4x3xf32>) outs(%arg2 : memref<2x3xf32>)
// CHECK: linalg.exp ins(%arg2 : memref<2x3xf32>) outs(%arg2 : memref<2x3xf32>)
// CHECK-NEXT: scf.yield
func.func @mlp(%x0: memref<2x4xf32>, %x1: memref<2x4xf32>, %w: memref<4x3xf32>, %y0: memref<2x3xf32>, %y1: memref<2x3xf32>) {
  %c0 = arith.constant 0.0 : f32
  linalg.fill ins(%c0 : f32) outs(%y0 : memref<2x3xf32>)
  linalg.matmul ins(%x0, %w : memref<2x4xf32>, memref<4x3xf32>) outs(%y0 : memref<2x3xf32>)
  linalg.fill ins(%c0 : f32) outs(%y1 : memref<2x3xf32>)
  linalg.matmul ins(%x1, %w : memref<2x4xf32>, memref<4x3xf32>) outs(%y1 : memref<2x3xf32>)
  %t = "coll.all_reduce"(%y0, %y1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<2x3xf32>, memref<2x3xf32>, memref<2x3xf32>, memref<2x3xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  linalg.exp ins(%y0 : memref<2x3xf32>) outs(%y0 : memref<2x3xf32>)
  linalg.exp ins(%y1 : memref<2x3xf32>) outs(%y1 : memref<2x3xf32>)
  return
}

// -----

// The root's work on its input before a broadcast, a scratch buffer that
// only the root allocates and frees, and a scalar read from an input that
// every device's work uses: the load runs on each rank that uses it.
// CHECK-LABEL: func.func @bcast
// CHECK-SAME: coll.global_args = array<i64: 0, -1, 2, 0, 1, 3, 0, -1, 4>
// CHECK: case 0 {
// CHECK-NOT: memref.alloc
// CHECK: mpi.irecv
// CHECK: %[[K0:.*]] = memref.load %arg0
// CHECK-NEXT: linalg.fill ins(%[[K0]] : f32) outs(%arg2 : memref<4xf32>)
// CHECK-NEXT: scf.yield
// CHECK: case 1 {
// CHECK-NEXT: %[[S:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: linalg.exp ins(%arg1 : memref<4xf32>) outs(%[[S]] : memref<4xf32>)
// CHECK: mpi.isend
// CHECK: memref.load %arg0
// CHECK: memref.dealloc %[[S]] : memref<4xf32>
// CHECK-NEXT: scf.yield
// CHECK: case 2 {
// CHECK-NOT: memref.alloc
// CHECK: mpi.irecv
// CHECK: memref.load %arg0
// CHECK-NOT: memref.dealloc
// CHECK: scf.yield
func.func @bcast(%k: memref<1xf32>, %x: memref<4xf32>, %y0: memref<4xf32>, %y1: memref<4xf32>, %y2: memref<4xf32>) {
  %i = arith.constant 0 : index
  %s = memref.alloc() : memref<4xf32>
  linalg.exp ins(%x : memref<4xf32>) outs(%s : memref<4xf32>)
  %t = "coll.broadcast"(%s, %y0, %y1, %y2) {devices = array<i64: 0, 1, 2>, root = 1 : i64, operandSegmentSizes = array<i32: 1, 3, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  %v = memref.load %k[%i] : memref<1xf32>
  linalg.fill ins(%v : f32) outs(%y0 : memref<4xf32>)
  linalg.fill ins(%v : f32) outs(%y1 : memref<4xf32>)
  linalg.fill ins(%v : f32) outs(%y2 : memref<4xf32>)
  memref.dealloc %s : memref<4xf32>
  return
}

// -----

// An output no device's buffer feeds: computed on rank 0.
// CHECK-LABEL: func.func @host
// CHECK-SAME: coll.global_args = array<i64: 0, 2, 3, 5, 1, -1, 4, -1>
// CHECK: case 0 {
// CHECK-NEXT: linalg.exp ins(%arg1 : memref<4xf32>) outs(%arg3 : memref<4xf32>)
// CHECK: case 1 {
// CHECK-NOT: linalg.exp
// CHECK: scf.yield
func.func @host(%x0: memref<4xf32>, %x1: memref<4xf32>, %v: memref<4xf32>, %y0: memref<4xf32>, %y1: memref<4xf32>, %z: memref<4xf32>) {
  linalg.exp ins(%v : memref<4xf32>) outs(%z : memref<4xf32>)
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}

// -----

// Slots are matched by type: device 1 holds no i32 output (the reduce's is
// device 0's), so it has a placeholder (-1) in that slot.
// CHECK-LABEL: func.func @mixed(%arg0: memref<8xf32>, %arg1: memref<4xi32>, %arg2: memref<4xi32>, %arg3: memref<8xf32>)
// CHECK-SAME: coll.global_args = array<i64: 0, 2, 4, 5, 1, 3, -1, 6>
func.func @mixed(%x0: memref<8xf32>, %x1: memref<8xf32>, %z0: memref<4xi32>, %z1: memref<4xi32>,
                 %w: memref<4xi32>, %y0: memref<8xf32>, %y1: memref<8xf32>) {
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum",
      operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  %u = "coll.reduce"(%z0, %z1, %w) {devices = array<i64: 0, 1>, kind = "sum", root = 0 : i64,
      operandSegmentSizes = array<i32: 2, 1, 0>} : (memref<4xi32>, memref<4xi32>, memref<4xi32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  "coll.wait"(%u) : (!coll.token) -> ()
  return
}

// -----

// A temporary both devices' work reads, computed from an input on each
// rank that needs it, and freed on each of them.
// CHECK-LABEL: func.func @shared_tmp
// CHECK: case 0 {
// CHECK-NEXT: %[[T:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: linalg.exp ins(%arg0 : memref<4xf32>) outs(%[[T]] : memref<4xf32>)
// CHECK-NEXT: linalg.add ins(%arg1, %[[T]] : memref<4xf32>, memref<4xf32>) outs(%arg1 : memref<4xf32>)
// CHECK: memref.dealloc %[[T]] : memref<4xf32>
// CHECK-NEXT: scf.yield
// CHECK: case 1 {
// CHECK-NEXT: %[[T:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: linalg.exp ins(%arg0 : memref<4xf32>) outs(%[[T]] : memref<4xf32>)
// CHECK: memref.dealloc %[[T]] : memref<4xf32>
// CHECK-NEXT: scf.yield
func.func @shared_tmp(%w: memref<4xf32>, %x0: memref<4xf32>, %x1: memref<4xf32>, %y0: memref<4xf32>, %y1: memref<4xf32>) {
  %tmp = memref.alloc() : memref<4xf32>
  linalg.exp ins(%w : memref<4xf32>) outs(%tmp : memref<4xf32>)
  linalg.add ins(%x0, %tmp : memref<4xf32>, memref<4xf32>) outs(%x0 : memref<4xf32>)
  linalg.add ins(%x1, %tmp : memref<4xf32>, memref<4xf32>) outs(%x1 : memref<4xf32>)
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  memref.dealloc %tmp : memref<4xf32>
  return
}

// -----

// A scalar loaded from an input and passed through arith, used by device
// 1's work only: the load runs on rank 1 (the arith op is cloned where it
// is used); the argument nothing uses is rank 0's. Rank 1 writes %x1, rank
// 0 only reads %x0: slots by type, placeholders (-1) where a rank has none.
// CHECK-LABEL: func.func @scalar
// CHECK-SAME: coll.global_args = array<i64: 1, 5, -1, 3, -1, -1, -1, 0, 2, 4>
// CHECK: case 0 {
// CHECK-NOT: memref.load
// CHECK: scf.yield
// CHECK: case 1 {
// CHECK: %[[V:.*]] = memref.load %arg2
// CHECK-NEXT: %[[W:.*]] = arith.addf %[[V]], %[[V]] : f32
// CHECK-NEXT: linalg.fill ins(%[[W]] : f32) outs(%arg3 : memref<4xf32>)
func.func @scalar(%k: memref<1xf32>, %x0: memref<4xf32>, %x1: memref<4xf32>, %y0: memref<4xf32>, %y1: memref<4xf32>, %unused: memref<2xf32>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %k[%c0] : memref<1xf32>
  %w = arith.addf %v, %v : f32
  linalg.fill ins(%w : f32) outs(%x1 : memref<4xf32>)
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
