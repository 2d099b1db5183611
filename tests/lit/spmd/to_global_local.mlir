// coll-spmd-to-global on an SPMD function with local work around its
// collectives: argument i of rank r becomes argument i * N + r, every local
// op one clone per rank on that rank's buffers (coll.device = r, a nested
// body's captured values remapped), every collective one global-view
// collective per group, waits kept once; rank reads become constants.
// RUN: coll-opt %s --coll-spmd-to-global | FileCheck %s
// And on down the CPU route:
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-spmd-to-global,coll-lower-collectives,coll-to-cpu)' | FileCheck %s --check-prefix=CPU
// Not expanded, the explicit lowering refuses it:
// RUN: not coll-opt %s --coll-lower-collectives 2>&1 | FileCheck %s --check-prefix=UNEXPANDED
// UNEXPANDED: to_global_local.mlir:{{[0-9]+}}:8: error: coll-lower-collectives: 'coll.all_reduce' is in an SPMD function (coll.ranks = 2): expand it into its global view first (coll-spmd-to-global), or lower it per rank (coll-spmd-to-mpi)

// CHECK-LABEL: func.func @mlp(%arg0: memref<2x4xf32>, %arg1: memref<2x4xf32>, %arg2: memref<4x3xf32>, %arg3: memref<4x3xf32>, %arg4: memref<2x3xf32>, %arg5: memref<2x3xf32>) {
// CHECK: %[[C0:.*]] = arith.constant {coll.device = 0 : i64} 0.0
// CHECK: %[[C1:.*]] = arith.constant {coll.device = 1 : i64} 0.0
// CHECK: linalg.fill {coll.device = 0 : i64} ins(%[[C0]] : f32) outs(%arg4 : memref<2x3xf32>)
// CHECK: linalg.fill {coll.device = 1 : i64} ins(%[[C1]] : f32) outs(%arg5 : memref<2x3xf32>)
// CHECK: linalg.matmul {coll.device = 0 : i64} ins(%arg0, %arg2 : {{.*}}) outs(%arg4 : memref<2x3xf32>)
// CHECK: linalg.matmul {coll.device = 1 : i64} ins(%arg1, %arg3 : {{.*}}) outs(%arg5 : memref<2x3xf32>)
// CHECK: %[[T:.*]] = "coll.all_reduce"(%arg4, %arg5, %arg4, %arg5) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>}
// CHECK-NEXT: "coll.wait"(%[[T]])
// CHECK-NEXT: linalg.generic {{.*}} outs(%arg4 : memref<2x3xf32>) attrs = {coll.device = 0 : i64}
// CHECK: arith.maximumf %{{.*}}, %[[C0]] : f32
// CHECK: linalg.generic {{.*}} outs(%arg5 : memref<2x3xf32>) attrs = {coll.device = 1 : i64}
// CHECK: arith.maximumf %{{.*}}, %[[C1]] : f32
// CHECK-NOT: coll.ranks
// CPU-LABEL: func.func @mlp
// CPU: linalg.matmul
// CPU-NOT: coll.all_reduce
// CPU: linalg.generic
func.func @mlp(%x: memref<2x4xf32>, %w: memref<4x3xf32>, %y: memref<2x3xf32>) attributes {coll.ranks = 2 : i64} {
  %c0 = arith.constant 0.0 : f32
  linalg.fill ins(%c0 : f32) outs(%y : memref<2x3xf32>)
  linalg.matmul ins(%x, %w : memref<2x4xf32>, memref<4x3xf32>) outs(%y : memref<2x3xf32>)
  %t = "coll.all_reduce"(%y, %y) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 1, 1, 0>}
      : (memref<2x3xf32>, memref<2x3xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%y : memref<2x3xf32>) {
  ^bb0(%o: f32):
    %m = arith.maximumf %o, %c0 : f32
    linalg.yield %m : f32
  }
  return
}

// Groups (a collective over one axis of a 2x2 grid): one global-view
// collective per group, joined; the local work between them per rank;
// deps follow the global tokens.
// CHECK-LABEL: func.func @groups
// CHECK-SAME: (%arg0: memref<4xi32>, %arg1: memref<4xi32>, %arg2: memref<4xi32>, %arg3: memref<4xi32>, %arg4: memref<16xi32>, %arg5: memref<16xi32>, %arg6: memref<16xi32>, %arg7: memref<16xi32>)
// CHECK-COUNT-4: memref.copy %arg{{[0-3]}}, %alloc{{.*}} {coll.device = {{[0-3]}} : i64}
// CHECK: %[[A:.*]] = "coll.all_reduce"(%arg0, %arg2, %arg0, %arg2) {devices = array<i64: 0, 2>, kind = "sum"
// CHECK: %[[B:.*]] = "coll.all_reduce"(%arg1, %arg3, %arg1, %arg3) {devices = array<i64: 1, 3>, kind = "sum"
// CHECK: %[[J:.*]] = "coll.join"(%[[A]], %[[B]])
// CHECK: "coll.all_gather"(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6, %arg7, %[[J]]) {devices = array<i64: 0, 1, 2, 3>, gather_axis = 0 : i64
// CHECK: "coll.wait"
func.func @groups(%x: memref<4xi32>, %y: memref<16xi32>) attributes {coll.ranks = 4 : i64} {
  %s = memref.alloc() : memref<4xi32>
  memref.copy %x, %s : memref<4xi32> to memref<4xi32>
  memref.dealloc %s : memref<4xi32>
  %a = "coll.all_reduce"(%x, %x) {devices = array<i64: 0, 1>, groups = array<i64: 0, 2, 1, 3>, kind = "sum", operandSegmentSizes = array<i32: 1, 1, 0>}
      : (memref<4xi32>, memref<4xi32>) -> !coll.token
  %g = "coll.all_gather"(%x, %y, %a) {devices = array<i64: 0, 1, 2, 3>, gather_axis = 0 : i64, operandSegmentSizes = array<i32: 1, 1, 1>}
      : (memref<4xi32>, memref<16xi32>, !coll.token) -> !coll.token
  "coll.wait"(%g) : (!coll.token) -> ()
  return
}

// Reading the rank (what coll-from-shard emits for process indices): in
// rank r's clone, the constant r.
// CHECK-LABEL: func.func @rank
// CHECK-NOT: mpi.
// CHECK: %[[R0:.*]] = arith.constant 0 : i32
// CHECK: %[[R1:.*]] = arith.constant 1 : i32
// CHECK: arith.index_cast %[[R0]] {coll.device = 0 : i64}
// CHECK: arith.index_cast %[[R1]] {coll.device = 1 : i64}
// CHECK: memref.subview %arg0
// CHECK: memref.subview %arg1
func.func @rank(%x: memref<4xf32>, %y: memref<2xf32>) attributes {coll.ranks = 2 : i64} {
  %comm = mpi.comm_world : !mpi.comm
  %r = mpi.comm_rank(%comm) : i32
  %i = arith.index_cast %r : i32 to index
  %two = arith.constant 2 : index
  %off = arith.muli %i, %two : index
  %v = memref.subview %x[%off] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1], offset: ?>>
  %t = "coll.reduce_scatter"(%x, %y) {devices = array<i64: 0, 1>, kind = "sum", scatter_axis = 0 : i64, operandSegmentSizes = array<i32: 1, 1, 0>}
      : (memref<4xf32>, memref<2xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  memref.copy %v, %y : memref<2xf32, strided<[1], offset: ?>> to memref<2xf32>
  return
}

// -----
// A mutable global is each rank's own (a rank is a process): rank r > 0
// gets a copy, @g_rank<r>; a constant global stays shared.
// CHECK-LABEL: memref.global "private" @scratch : memref<4xf32> = uninitialized
// CHECK: memref.global "private" @scratch_rank1 : memref<4xf32> = uninitialized
// CHECK-NOT: @table_rank1
// CHECK-LABEL: func.func @globals
// CHECK: memref.get_global @table : memref<4xf32>
// CHECK: memref.get_global @table : memref<4xf32>
// CHECK: memref.get_global @scratch : memref<4xf32>
// CHECK: memref.get_global @scratch_rank1 : memref<4xf32>
memref.global "private" @scratch : memref<4xf32> = uninitialized
memref.global "private" constant @table : memref<4xf32> = dense<1.0>
func.func @globals(%x: memref<4xf32>, %y: memref<4xf32>) attributes {coll.ranks = 2 : i64} {
  %t = memref.get_global @table : memref<4xf32>
  %g = memref.get_global @scratch : memref<4xf32>
  memref.copy %x, %g : memref<4xf32> to memref<4xf32>
  %tok = "coll.all_reduce"(%g, %y) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<4xf32>, memref<4xf32>) -> !coll.token
  "coll.wait"(%tok) : (!coll.token) -> ()
  memref.copy %t, %x : memref<4xf32> to memref<4xf32>
  return
}
