// coll-mpi-overlap on collective matmuls (bench/collective_matmul.py's SPMD
// functions, 2 ranks, ring): the matmul is cut into tiles of rows at the
// collective's chunks. After an all_gather, each tile once its rows are
// there: the rank's own chunk while the peer's is in flight, the peer's
// after its wait. Before a reduce_scatter, each tile right before the first
// op that reads its rows: the chunk sent first, then the rank's own chunk
// while the message moves, before the wait of the peer's partial.
// RUN: split-file %s %t
// RUN: coll-opt %t/gather.mlir --pass-pipeline='builtin.module(coll-spmd-to-mpi{strategy=ring},coll-to-mpi,coll-mpi-overlap)' | FileCheck %s --check-prefix=AG
// RUN: coll-opt %t/scatter.mlir --pass-pipeline='builtin.module(coll-spmd-to-mpi{strategy=ring},coll-to-mpi,coll-mpi-overlap)' | FileCheck %s --check-prefix=RS

// AG-LABEL: func.func @step(
// AG-NOT: linalg.matmul
// AG: case 0 {
// AG: mpi.irecv
// AG: "coll.copy"
// AG: mpi.isend
// AG-NOT: mpi.wait
// AG: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<32x16xf32, strided<[16, 1]>>)
// AG: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<32x64xf32, strided<[64, 1]>>, memref<64x16xf32>)
// AG: mpi.wait
// AG: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<32x16xf32, strided<[16, 1], offset: 512>>)
// AG: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<32x64xf32, strided<[64, 1], offset: 2048>>, memref<64x16xf32>)
// AG: mpi.wait
// AG-NEXT: scf.yield
// AG: case 1 {
// AG: mpi.isend
// AG-NOT: mpi.wait
// AG: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<32x64xf32, strided<[64, 1], offset: 2048>>
// AG: mpi.wait
// AG: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<32x64xf32, strided<[64, 1]>>
// AG: default {
// AG: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<64x64xf32>, memref<64x16xf32>)

// RS-LABEL: func.func @step(
// RS-NOT: linalg.matmul
// RS: case 0 {
// RS: mpi.irecv
// RS-NOT: mpi.isend
// RS: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<32x64xf32, strided<[64, 1], offset: 2048>>, memref<64x16xf32>) outs(%{{.*}} : memref<32x16xf32, strided<[16, 1], offset: 512>>)
// RS: mpi.isend
// RS-NOT: mpi.wait
// RS: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<32x64xf32, strided<[64, 1]>>, memref<64x16xf32>) outs(%{{.*}} : memref<32x16xf32, strided<[16, 1]>>)
// RS: mpi.wait
// RS: "coll.combine"
// RS: mpi.wait
// RS: case 1 {
// RS: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<32x64xf32, strided<[64, 1]>>
// RS: mpi.isend
// RS: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<32x64xf32, strided<[64, 1], offset: 2048>>
// RS: mpi.wait

//--- gather.mlir
module {
func.func @step(%x: memref<32x64xf32>, %w: memref<64x16xf32>, %c: memref<64x16xf32>) attributes {coll.ranks = 2 : i64} {
  %g = memref.alloc() : memref<64x64xf32>
  %t = "coll.all_gather"(%x, %g) {devices = array<i64: 0, 1>, gather_axis = 0 : i64, operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<32x64xf32>, memref<64x64xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<64x16xf32>)
  linalg.matmul ins(%g, %w : memref<64x64xf32>, memref<64x16xf32>) outs(%c : memref<64x16xf32>)
  memref.dealloc %g : memref<64x64xf32>
  return
}
}
//--- scatter.mlir
module {
func.func @step(%a: memref<64x64xf32>, %w: memref<64x16xf32>, %y: memref<32x16xf32>) attributes {coll.ranks = 2 : i64} {
  %p = memref.alloc() : memref<64x16xf32>
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%p : memref<64x16xf32>)
  linalg.matmul ins(%a, %w : memref<64x64xf32>, memref<64x16xf32>) outs(%p : memref<64x16xf32>)
  %t = "coll.reduce_scatter"(%p, %y) {devices = array<i64: 0, 1>, kind = "sum", scatter_axis = 0 : i64, operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<64x16xf32>, memref<32x16xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  memref.dealloc %p : memref<64x16xf32>
  return
}
}
