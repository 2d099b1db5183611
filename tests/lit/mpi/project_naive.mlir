// coll-to-mpi on naive, 2 devices: one function holds one rank's buffers
// (x, y) and serves both ranks; the rank read at run time picks its case.
// Each copy is a send on its source rank and a receive on its target rank
// with a tag unique among the messages between its two ranks; both are
// posted before the first wait, so they overlap, and the combine waits only for the receive it reads.
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=naive},coll-to-mpi,cse)' | FileCheck %s

// CHECK: module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI">}
// CHECK-LABEL: func.func @all_reduce(%arg0: memref<8xf32>, %arg1: memref<8xf32>)
// CHECK-SAME: coll.global_args = array<i64: 0, 2, 1, 3>, coll.max_tag = 0 : i64, coll.rank_inputs = 1 : i64, coll.ranks = 2 : i64
// CHECK: %[[COMM:.*]] = mpi.comm_world : !mpi.comm
// CHECK: %[[RANK:.*]] = mpi.comm_rank(%[[COMM]]) : i32
// CHECK: %[[R:.*]] = arith.index_cast %[[RANK]] : i32 to index
// CHECK: scf.index_switch %[[R]]
// Rank 0 receives x1 into scratch and sends x0 to rank 1, both tag 0: the
// first message each way between the two ranks.
// CHECK: case 0 {
// CHECK: %[[S0:.*]] = "coll.alloc"() : () -> memref<8xf32, #coll.device<0 : i64>>
// CHECK: %[[T0:.*]] = arith.constant 0 : i32
// CHECK: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK: %[[RECV:.*]] = mpi.irecv(%[[S0]], %[[T0]], %[[ONE]], %[[COMM]])
// CHECK: %[[X0:.*]] = memref.memory_space_cast %arg0
// CHECK: %[[SEND:.*]] = mpi.isend(%[[X0]], %[[T0]], %[[ONE]], %[[COMM]])
// CHECK-NEXT: mpi.wait(%[[RECV]])
// CHECK: %[[Y0:.*]] = memref.memory_space_cast %arg1
// CHECK: "coll.combine"(%[[X0]], %[[S0]], %[[Y0]]) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 0>}
// CHECK-NEXT: mpi.wait(%[[SEND]])
// CHECK-NEXT: scf.yield
// Rank 1: the mirror image, with the same tags: it too posts its receive
// first (receives first within a step, whatever the program order).
// CHECK: case 1 {
// CHECK: %[[RECV1:.*]] = mpi.irecv(%{{.*}}, %{{.*}}, %{{.*}}, %[[COMM]]) : memref<8xf32, #coll.device<1 : i64>>
// CHECK: %[[SEND1:.*]] = mpi.isend(%{{.*}}, %{{.*}}, %{{.*}}, %[[COMM]]) : memref<8xf32, #coll.device<1 : i64>>
// CHECK-NEXT: mpi.wait(%[[RECV1]])
// CHECK: "coll.combine"
// CHECK-NEXT: mpi.wait(%[[SEND1]])
// A rank outside the group does nothing.
// CHECK: default {
// CHECK-NEXT: }
// MPI_Init and MPI_Finalize for the runtime, with the !mpi.retval result
// that upstream's lowering needs.
// CHECK-LABEL: func.func @coll_mpi_init() -> i32
// CHECK: mpi.init : !mpi.retval
// CHECK-LABEL: func.func @coll_mpi_finalize() -> i32
// CHECK: mpi.finalize : !mpi.retval

module {
  func.func @all_reduce(%x0: memref<8xf32>, %x1: memref<8xf32>, %y0: memref<8xf32>, %y1: memref<8xf32>) attributes {llvm.emit_c_interface} {
    %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>}
        : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    return
  }
}
