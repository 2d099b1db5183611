// coll-to-cpu{nontemporal=B}: in a block whose buffers take at least B
// bytes, a tiled copy that writes a result region nothing reads again (the
// last hops of rhd's allgather here; a copy right after a combine is folded
// into it instead, tests/lit/cpu/fold.mlir) calls coll_copy_streaming:
// aligned non-temporal vector stores, which skip the cache and do not read
// each line before writing it. Other copies stay plain; with nontemporal=0
// (the default) nothing streams.
// rhd on 4 devices, 1000 elements (32000 bytes of arguments, more of
// scratch), tiles of 128; order=any: the rhd of partial sums these checks
// describe.
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=rhd order=any},coll-to-cpu{tile=128 split=0 nontemporal=32000})' | FileCheck %s
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=rhd order=any},coll-to-cpu{tile=128 split=0 nontemporal=99999})' | FileCheck %s --check-prefix=SMALL
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=rhd order=any},coll-to-cpu{tile=128 split=0})' | FileCheck %s --check-prefix=SMALL
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=rhd order=any},coll-to-cpu{tile=128 nontemporal=1},coll-cpu-to-llvm)' | FileCheck %s --check-prefix=LLVM
// RUN: not coll-opt %s --pass-pipeline='builtin.module(coll-to-cpu{nontemporal=-1})' 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK-LABEL: func.func private @coll_copy_streaming(%arg0: !llvm.ptr, %arg1: !llvm.ptr, %arg2: i64)
// CHECK: scf.for
// CHECK: vector.store %{{.*}}, %{{.*}}[%{{.*}}] {alignment = 64 : i64, nontemporal = true} : memref<?xi8>, vector<64xi8>
// CHECK: llvm.fence seq_cst
// CHECK-LABEL: func.func @all_reduce(
// Per tile of the first half: the exchanges into scratch and the combines
// stay plain (each is read again); the two final copies into results stream.
// CHECK: scf.for
// CHECK-COUNT-2: call @coll_copy(
// CHECK-COUNT-2: call @coll_combine_sum_f32_x2(
// CHECK-COUNT-2: call @coll_copy_streaming(
// CHECK-NOT: call
// CHECK: scf.for
// SMALL-NOT: coll_copy_streaming
// SMALL-NOT: _to_
// LLVM: llvm.store %{{.*}}, %{{.*}} {alignment = 64 : i64, nontemporal} : vector<64xi8>, !llvm.ptr
// LLVM: llvm.fence seq_cst
// BAD: error: coll-to-cpu: nontemporal must be 0 (never) or a number of bytes, got -1

module {
  func.func @all_reduce(%x0: memref<1000xf32>, %x1: memref<1000xf32>, %x2: memref<1000xf32>, %x3: memref<1000xf32>,
                        %y0: memref<1000xf32>, %y1: memref<1000xf32>, %y2: memref<1000xf32>, %y3: memref<1000xf32>)
      attributes {llvm.emit_c_interface} {
    %t = "coll.all_reduce"(%x0, %x1, %x2, %x3, %y0, %y1, %y2, %y3)
        {devices = array<i64: 0, 1, 2, 3>, kind = "sum", operandSegmentSizes = array<i32: 4, 4, 0>}
        : (memref<1000xf32>, memref<1000xf32>, memref<1000xf32>, memref<1000xf32>,
           memref<1000xf32>, memref<1000xf32>, memref<1000xf32>, memref<1000xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    return
  }
}
