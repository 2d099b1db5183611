// MPI tags: a copy's tag is its index among the messages from its source
// rank to its target rank, in the order every rank posts them (MPI matches
// by source and tag, so that is unique where it matters); a ring all_gather
// on 4 ranks sends 3 messages along each edge: tags 0, 1, 2, whatever the
// buffer size. A program that needs a tag above tag-limit (default 32767,
// the MPI_TAG_UB every MPI guarantees) is refused at the copy, and nothing
// is printed. The runtime checks coll.max_tag against the MPI's own
// MPI_TAG_UB before any message (lowering/mpi/worker.py, the mpi-exe main).
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-collectives,coll-to-mpi,canonicalize,cse)' | FileCheck %s
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-collectives,coll-to-mpi{tag-limit=2},canonicalize,cse)' | FileCheck %s
// RUN: not coll-opt %s --pass-pipeline='builtin.module(coll-lower-collectives,coll-to-mpi{tag-limit=1})' 2>&1 | FileCheck %s --check-prefix=ERR

// CHECK-LABEL: func.func @all_gather(%arg0: memref<3xf32>, %arg1: memref<12xf32>)
// CHECK-SAME: coll.max_tag = 2 : i64
// Rank 1 receives from rank 0 with tags 0, 1, 2 and sends to rank 2 with
// tags 0, 1, 2 (its own block first, then each block it was forwarded),
// each step's receive posted before its send.
// CHECK: case 1 {
// CHECK: mpi.irecv(%{{.*}}, %c0_i32, %c0_i32
// CHECK: mpi.isend(%{{.*}}, %c0_i32, %c2_i32
// CHECK: mpi.irecv(%{{.*}}, %c1_i32, %c0_i32
// CHECK: mpi.isend(%{{.*}}, %c1_i32, %c2_i32
// CHECK: mpi.irecv(%{{.*}}, %c2_i32, %c0_i32
// CHECK: mpi.isend(%{{.*}}, %c2_i32, %c2_i32
// CHECK-NOT: mpi.i{{send|recv}}
// CHECK: case 2 {

// ERR: tags.mlir:[[# @LINE + 5]]:{{[0-9]+}}: error: coll-to-mpi: this copy from rank {{[0-3]}} to rank {{[0-3]}} needs MPI tag 2 (one per message between two ranks), above tag-limit=1; expected at most 2 copies from one rank to another (MPI guarantees only MPI_TAG_UB >= 32767)
// ERR-NOT: module
module {
  func.func @all_gather(%x0: memref<3xf32>, %x1: memref<3xf32>, %x2: memref<3xf32>, %x3: memref<3xf32>,
                        %y0: memref<12xf32>, %y1: memref<12xf32>, %y2: memref<12xf32>, %y3: memref<12xf32>) {
    %t = "coll.all_gather"(%x0, %x1, %x2, %x3, %y0, %y1, %y2, %y3) {devices = array<i64: 0, 1, 2, 3>, gather_axis = 0 : i64, strategy = "ring",
        operandSegmentSizes = array<i32: 4, 4, 0>} : (memref<3xf32>, memref<3xf32>, memref<3xf32>, memref<3xf32>, memref<12xf32>, memref<12xf32>, memref<12xf32>, memref<12xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    return
  }
}

// RUN: not coll-opt %s --pass-pipeline='builtin.module(coll-lower-collectives,coll-to-mpi{tag-limit=-1})' 2>&1 | FileCheck %s --check-prefix=NEG
// NEG: error: coll-to-mpi: tag-limit must be a tag (>= 0), got -1
