// coll-mpi-requests hoists mpi.comm_world and mpi.comm_rank to the entry
// block: upstream's convert-to-llvm (22.1.8) lowers comm_rank with an
// llvm.alloca where it stands, so a rank query in a loop body grew the
// stack at every pass (10^6 passes of this loop: SIGSEGV on rank 0).
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-spmd-to-mpi,coll-to-mpi{implementation=OpenMPI},coll-mpi-static-scratch,coll-to-cpu{tile=0},coll-mpi-requests)' | FileCheck %s
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-spmd-to-mpi,coll-to-mpi{implementation=OpenMPI},coll-mpi-static-scratch,coll-to-cpu{tile=0},coll-mpi-requests,convert-scf-to-cf,convert-to-llvm,reconcile-unrealized-casts)' | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @main(
// CHECK-NEXT: %[[W:.*]] = mpi.comm_world : !mpi.comm
// CHECK-NEXT: %{{.*}} = mpi.comm_rank(%[[W]]) : i32
// CHECK-NOT: mpi.comm_
// CHECK: scf.for
// CHECK-NOT: mpi.comm_
// CHECK: return

// The one alloca (comm_rank's result) is in the entry block, before the loop's first branch.
// LLVM-LABEL: llvm.func @main(
// LLVM: llvm.alloca
// LLVM-NOT: llvm.alloca
// LLVM: llvm.br
// LLVM-NOT: llvm.alloca
// LLVM: llvm.return
module {
  func.func @main(%x: memref<8xf32>, %y: memref<8xf32>) attributes {coll.ranks = 2 : i64, llvm.emit_c_interface} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.constant 1000000 : index
    memref.copy %x, %y : memref<8xf32> to memref<8xf32>
    scf.for %i = %c0 to %n step %c1 {
      %t = "coll.all_reduce"(%y, %y) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<8xf32>, memref<8xf32>) -> !coll.token
      "coll.wait"(%t) : (!coll.token) -> ()
    }
    return
  }
}
