// coll-to-mpi on rooted collectives, whose ranks hold different buffers:
// each rank's buffers fill slots (read-only ones first, then written ones),
// and where a rank has no buffer in a slot, coll.global_args says -1 (the
// runtime hands it a placeholder, as MPI_Reduce ignores recvbuf off the root).
// RUN: coll-opt %s --split-input-file --pass-pipeline='builtin.module(coll-lower-collectives,coll-to-mpi,canonicalize,cse)' | FileCheck %s

// A reduce to rank 1 of 3 (direct): only the root holds the output, and it
// receives both inputs (tag 0: the first message from each rank) before
// the one combine, in device order (rank 0's, its own, rank 2's); the
// other ranks only send.
// CHECK-LABEL: func.func @reduce(%arg0: memref<6xf32>, %arg1: memref<6xf32>)
// CHECK-SAME: coll.global_args = array<i64: 0, -1, 1, 3, 2, -1>, coll.max_tag = 0 : i64, coll.rank_inputs = 1 : i64, coll.ranks = 3 : i64
// CHECK: case 0 {
// CHECK-NEXT: %[[X:.*]] = memref.memory_space_cast %arg0
// CHECK-NEXT: %[[Q:.*]] = mpi.isend(%[[X]], %c0_i32, %c1_i32, %{{.*}})
// CHECK-NEXT: mpi.wait(%[[Q]])
// CHECK-NEXT: scf.yield
// CHECK: case 1 {
// CHECK: %[[A:.*]] = mpi.irecv(%[[SA:.*]], %c0_i32, %c0_i32, %{{.*}})
// CHECK: %[[B:.*]] = mpi.irecv(%[[SB:.*]], %c0_i32, %c2_i32, %{{.*}})
// CHECK-NEXT: mpi.wait(%[[A]])
// CHECK-NEXT: mpi.wait(%[[B]])
// CHECK: %[[Y:.*]] = memref.memory_space_cast %arg1 : memref<6xf32> to memref<6xf32, #coll.device<1 : i64>>
// CHECK: "coll.combine"(%[[SA]], %{{.*}}, %[[SB]], %[[Y]])
// CHECK: case 2 {
// CHECK-NOT: %arg1
// CHECK: default {

module {
  func.func @reduce(%x0: memref<6xf32>, %x1: memref<6xf32>, %x2: memref<6xf32>, %y: memref<6xf32>) attributes {llvm.emit_c_interface} {
    %t = "coll.reduce"(%x0, %x1, %x2, %y) {devices = array<i64: 0, 1, 2>, kind = "sum", root = 1 : i64, strategy = "direct",
        operandSegmentSizes = array<i32: 3, 1, 0>} : (memref<6xf32>, memref<6xf32>, memref<6xf32>, memref<6xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    return
  }
}

// -----

// A broadcast from a root outside the group: devices 0 and 1 hold the
// outputs, rank 2 only the input, so the program runs on 3 ranks. Ring
// 2 -> 0 -> 1 in two chunks (4 and 6 elements): rank 0 forwards a chunk as
// soon as it has it.
// CHECK-LABEL: func.func @broadcast(%arg0: memref<10xi32>, %arg1: memref<10xi32>)
// CHECK-SAME: coll.global_args = array<i64: -1, 1, -1, 2, 0, -1>, coll.max_tag = 1 : i64, coll.rank_inputs = 1 : i64, coll.ranks = 3 : i64
// CHECK: case 0 {
// CHECK-NOT: %arg0
// CHECK: %[[C0:.*]] = mpi.irecv(%[[H0:.*]], %c0_i32, %c2_i32, %{{.*}}) : memref<4xi32, strided<[1]>, #coll.device<0 : i64>>
// CHECK: %[[C1:.*]] = mpi.irecv(%[[H1:.*]], %c1_i32, %c2_i32, %{{.*}}) : memref<6xi32, strided<[1], offset: 4>, #coll.device<0 : i64>>
// CHECK-NEXT: mpi.wait(%[[C0]])
// CHECK-NEXT: mpi.isend(%[[H0]], %c0_i32, %c1_i32, %{{.*}})
// CHECK-NEXT: mpi.wait(%[[C1]])
// CHECK-NEXT: mpi.isend(%[[H1]], %c1_i32, %c1_i32, %{{.*}})
// CHECK: case 2 {
// CHECK-NOT: mpi.irecv
// CHECK: memref.memory_space_cast %arg0 : memref<10xi32> to memref<10xi32, #coll.device<2 : i64>>
// CHECK-NOT: mpi.irecv
// CHECK: default {

module {
  func.func @broadcast(%x: memref<10xi32>, %y0: memref<10xi32>, %y1: memref<10xi32>) attributes {llvm.emit_c_interface} {
    %t = "coll.broadcast"(%x, %y0, %y1) {devices = array<i64: 0, 1>, root = 2 : i64, strategy = "ring",
        operandSegmentSizes = array<i32: 1, 2, 0>} : (memref<10xi32>, memref<10xi32>, memref<10xi32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    return
  }
}
