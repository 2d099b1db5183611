// coll-to-mpi on ring, 3 devices, 14 elements (chunks [0,4) [4,8) [8,14)):
// rank 1's case holds only device 1's ops; it receives only from rank 0 and
// sends only to rank 2 (the ring edges); every rank follows one step order,
// so the first step of every chunk is posted before anything waits. The
// module is as large as the explicit program: 12 copies give 12 sends and
// 12 receives in all, each waited for once. (order=any: the ring whose
// chunk c starts on device c, the step order these checks describe.)
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=ring order=any},coll-to-mpi,canonicalize,cse)' | FileCheck %s
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=ring order=any},coll-to-mpi,canonicalize,cse)' | FileCheck %s --check-prefix=COUNT

// CHECK-LABEL: func.func @all_reduce(%arg0: memref<14xf32>, %arg1: memref<14xf32>)
// CHECK-SAME: coll.max_tag = 3 : i64, coll.rank_inputs = 1 : i64, coll.ranks = 3 : i64
// CHECK: case 1 {
// CHECK-NOT: #coll.device<0
// CHECK-NOT: #coll.device<2
// Tags count the messages between two ranks (k-th from 0 to 1: tag k).
// Step 1: chunk 0 arrives from rank 0 (tag 0), chunk 1 leaves for rank 2 (tag 0).
// CHECK: %[[A:.*]] = mpi.irecv(%[[S:.*]], %c0_i32, %c0_i32, %{{.*}}) : memref<4xf32, #coll.device<1 : i64>>
// CHECK: mpi.isend(%{{.*}}, %c0_i32, %c2_i32, %{{.*}}) : memref<4xf32, strided<[1], offset: 4>, #coll.device<1 : i64>>
// CHECK-NEXT: mpi.wait(%[[A]])
// Step 2: chunk 0 combined in place and forwarded (tag 1), after the step's
// receive is posted (receives first within a step: a message that finds
// its receive posted is not held as unexpected). The last of the 2(N-1) = 4
// messages to rank 2 has tag 3: the largest a ring needs.
// CHECK: "coll.combine"(%[[S]], %{{.*}}, %[[S]])
// CHECK: mpi.irecv(%{{.*}}, %c1_i32, %c0_i32, %{{.*}}) : memref<6xf32, #coll.device<1 : i64>>
// CHECK-NEXT: mpi.isend(%[[S]], %c1_i32, %c2_i32, %{{.*}})
// CHECK: mpi.isend(%{{.*}}, %c3_i32, %c2_i32, %{{.*}})
// CHECK-NOT: #coll.device<0
// CHECK-NOT: #coll.device<2
// CHECK-NOT: mpi.isend(%{{.*}}, %{{.*}}, %c0_i32
// CHECK-NOT: mpi.irecv(%{{.*}}, %{{.*}}, %c2_i32
// CHECK: case 2 {

// COUNT-COUNT-12: mpi.isend
// COUNT-NOT: mpi.isend
// COUNT-LABEL: func.func @coll_mpi_init

// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=ring order=any},coll-to-mpi)' | grep -c mpi.irecv | FileCheck %s --check-prefix=RECV
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=ring order=any},coll-to-mpi)' | grep -c mpi.wait | FileCheck %s --check-prefix=WAIT
// RECV: {{^}}12{{$}}
// WAIT: {{^}}24{{$}}

module {
  func.func @all_reduce(%x0: memref<14xf32>, %x1: memref<14xf32>, %x2: memref<14xf32>,
                        %y0: memref<14xf32>, %y1: memref<14xf32>, %y2: memref<14xf32>) attributes {llvm.emit_c_interface} {
    %t = "coll.all_reduce"(%x0, %x1, %x2, %y0, %y1, %y2) {devices = array<i64: 0, 1, 2>, kind = "sum", operandSegmentSizes = array<i32: 3, 3, 0>}
        : (memref<14xf32>, memref<14xf32>, memref<14xf32>, memref<14xf32>, memref<14xf32>, memref<14xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    return
  }
}
